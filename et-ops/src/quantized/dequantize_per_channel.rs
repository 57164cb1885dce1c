//! `quantized_decomposed::dequantize_per_channel.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use super::{check_dequantize, dequantize_with, resize_like, Params, Scales, Zeros};
use crate::util::layout::normalize_dim;

/// Dequantizes with one (scale, zero point) per index along `axis`: float32 or float64
/// scales (narrowed to float32), int64 or int32 zero points or none (0). A 1-d float64
/// out is computed in float64, as ExecuTorch's 1-d path does; otherwise as per tensor.
#[kernel("quantized_decomposed::dequantize_per_channel.out", accepts = [u8, i8, u16, i16, i32, i64, f16, f32, f64])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn dequantize_per_channel_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    scales: &Tensor,
    zero_points: Option<&Tensor>,
    axis: i64,
    quant_min: i64,
    quant_max: i64,
    dtype: ScalarType,
    out_dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    if input.dim() == 0 {
        return Err(KernelError::invalid(
            "per-channel dequantize needs an input with dims",
        ));
    }
    let axis = normalize_dim(axis, input.dim())?;
    let n = input.size(axis);
    let scales = Scales::of(scales, true, n)?;
    let zeros = Zeros::of(zero_points, true, n)?;
    resize_like(input, out)?;
    check_dequantize(input, quant_min, quant_max, dtype, out_dtype, out)?;
    let wide = input.dim() == 1 && out.dtype() == ScalarType::Double;
    let params = Params::per_channel(scales, zeros, input.strides()[axis], n);
    dequantize_with::<Sel>(input, out, wide, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{AllDtypes, TensorBuf};

    #[test]
    fn per_channel_values() {
        with_ctx(|ctx| {
            // [2, 3] along axis 0 with float32 scales and no zero points...
            let q = TensorBuf::from_slice(&[2, 3], &[1i8, 2, 3, -1, -2, -127]).unwrap();
            let s = TensorBuf::from_slice(&[2], &[0.5f32, 2.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 3]).unwrap();
            dequantize_per_channel_out::<AllDtypes>(
                ctx,
                &q,
                &s,
                None,
                0,
                -127,
                127,
                ScalarType::Char,
                None,
                &mut o,
            )
            .unwrap();
            assert_eq!(
                o.data::<f32>().unwrap(),
                &[0.5, 1.0, 1.5, -2.0, -4.0, -254.0]
            );
            // ...and along axis -1 with float64 scales and int32 zero points.
            let s = TensorBuf::from_slice(&[3], &[1.0f64, 2.0, 3.0]).unwrap();
            let z = TensorBuf::from_slice(&[3], &[1i32, 0, -1]).unwrap();
            dequantize_per_channel_out::<AllDtypes>(
                ctx,
                &q,
                &s,
                Some(&z),
                -1,
                -127,
                127,
                ScalarType::Char,
                None,
                &mut o,
            )
            .unwrap();
            assert_eq!(
                o.data::<f32>().unwrap(),
                &[0.0, 4.0, 12.0, -2.0, -4.0, -378.0]
            );
            // Axis out of range; a scale count that does not match; float16 scales.
            for axis in [2, -3] {
                assert!(dequantize_per_channel_out::<AllDtypes>(
                    ctx,
                    &q,
                    &s,
                    None,
                    axis,
                    -127,
                    127,
                    ScalarType::Char,
                    None,
                    &mut o
                )
                .is_err());
            }
            assert!(dequantize_per_channel_out::<AllDtypes>(
                ctx,
                &q,
                &s,
                None,
                0,
                -127,
                127,
                ScalarType::Char,
                None,
                &mut o
            )
            .is_err());
        });
    }

    #[test]
    fn one_d_float64_multiplies_in_float64() {
        with_ctx(|ctx| {
            let q = TensorBuf::from_slice(&[1], &[3i8]).unwrap();
            let s = TensorBuf::from_slice(&[1], &[0.1f32]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[1]).unwrap();
            dequantize_per_channel_out::<AllDtypes>(
                ctx,
                &q,
                &s,
                None,
                0,
                -128,
                127,
                ScalarType::Char,
                None,
                &mut o,
            )
            .unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[3.0 * 0.1f32 as f64]);
        });
    }
}
