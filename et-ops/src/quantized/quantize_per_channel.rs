//! `quantized_decomposed::quantize_per_channel.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::{check_quantize, quantize_with, resize_like, Params, Scales, Zeros};
use crate::util::layout::normalize_dim;

/// Quantizes with one (scale, zero point) per index along `axis` (negative counts from
/// the end): float64 scales and int64 zero points with `input.size(axis)` values each,
/// as ExecuTorch requires (it aborts on float32 scales).
#[kernel("quantized_decomposed::quantize_per_channel.out", accepts = [u8, i8, u16, i16, i32, i64, f16, f32, f64])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn quantize_per_channel_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    scales: &Tensor,
    zero_points: &Tensor,
    axis: i64,
    quant_min: i64,
    quant_max: i64,
    dtype: ScalarType,
    out: &mut Tensor,
) -> KernelResult {
    if input.dim() == 0 {
        return Err(et_runtime::KernelError::invalid(
            "per-channel quantize needs an input with dims",
        ));
    }
    let axis = normalize_dim(axis, input.dim())?;
    let n = input.size(axis);
    let scales = Scales::of(scales, false, n)?;
    let zeros = Zeros::of(Some(zero_points), false, n)?;
    resize_like(input, out)?;
    check_quantize(input, quant_min, quant_max, dtype, out)?;
    let params = Params::per_channel(scales, zeros, input.strides()[axis], n);
    quantize_with::<Sel>(input, out, quant_min, quant_max, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{AllDtypes, TensorBuf};

    #[test]
    fn per_channel_along_an_axis() {
        with_ctx(|ctx| {
            // [2, 2, 2] along axis 1 (and -2): channel 0 scale 1 zp 0, channel 1 scale 0.5 zp 1.
            let x = [0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
            let x = TensorBuf::from_slice(&[2, 2, 2], &x).unwrap();
            let s = TensorBuf::from_slice(&[2], &[1.0f64, 0.5]).unwrap();
            let z = TensorBuf::from_slice(&[2], &[0i64, 1]).unwrap();
            for axis in [1, -2] {
                let mut o = TensorBuf::zeros(ScalarType::Char, &[2, 2, 2]).unwrap();
                quantize_per_channel_out::<AllDtypes>(
                    ctx,
                    &x,
                    &s,
                    &z,
                    axis,
                    -128,
                    127,
                    ScalarType::Char,
                    &mut o,
                )
                .unwrap();
                assert_eq!(o.data::<i8>().unwrap(), &[0, 1, 5, 7, 4, 5, 13, 15]);
            }
            let mut o = TensorBuf::zeros(ScalarType::Char, &[2, 2, 2]).unwrap();
            let mut call = |s: &TensorBuf, z: &TensorBuf, axis| {
                quantize_per_channel_out::<AllDtypes>(
                    ctx,
                    &x,
                    s,
                    z,
                    axis,
                    -128,
                    127,
                    ScalarType::Char,
                    &mut o,
                )
            };
            // Axis out of range, float32 scales, wrong count.
            assert!(call(&s, &z, 3).is_err());
            assert!(call(&s, &z, -4).is_err());
            let s32 = TensorBuf::from_slice(&[2], &[1.0f32, 0.5]).unwrap();
            assert!(call(&s32, &z, 1).is_err());
            assert!(call(&s, &z, 0).is_ok());
            let s3 = TensorBuf::from_slice(&[3], &[1.0f64, 0.5, 1.0]).unwrap();
            assert!(call(&s3, &z, 1).is_err());
        });
    }

    #[test]
    fn channels_last_finds_each_position_s_channel() {
        with_ctx(|ctx| {
            use et_runtime::ShapeDynamism;
            // [1, 2, 1, 2] in dim order (0, 2, 3, 1): memory holds (w0: c0, c1), (w1: c0,
            // c1). Channel 1 has scale 0.5 and zero point 1.
            let layout = |dtype| {
                TensorBuf::with_layout(dtype, &[1, 2, 1, 2], &[0, 2, 3, 1], ShapeDynamism::Static)
                    .unwrap()
            };
            let mut x = layout(ScalarType::Float);
            x.data_mut::<f32>()
                .unwrap()
                .copy_from_slice(&[1.0, 1.0, 2.0, 2.0]);
            let s = TensorBuf::from_slice(&[2], &[1.0f64, 0.5]).unwrap();
            let z = TensorBuf::from_slice(&[2], &[0i64, 1]).unwrap();
            let mut o = layout(ScalarType::Char);
            quantize_per_channel_out::<AllDtypes>(
                ctx,
                &x,
                &s,
                &z,
                1,
                -128,
                127,
                ScalarType::Char,
                &mut o,
            )
            .unwrap();
            assert_eq!(o.data::<i8>().unwrap(), &[1, 3, 2, 5]);
            // An out in another dim order is refused rather than mis-mapped.
            let mut contiguous = TensorBuf::zeros(ScalarType::Char, &[1, 2, 1, 2]).unwrap();
            let err = quantize_per_channel_out::<AllDtypes>(
                ctx,
                &x,
                &s,
                &z,
                1,
                -128,
                127,
                ScalarType::Char,
                &mut contiguous,
            )
            .unwrap_err();
            assert_eq!(err.message, "out must have the input's dim order");
        });
    }
}
