//! `quantized_decomposed::dequantize_per_tensor.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::{check_dequantize, dequantize_with, resize_like, Params};

/// `out = (input - zero_point) * scale`: the int32 difference times the float32 scale
/// (ExecuTorch narrows the scale to float to match fbgemm), stored as the out's float
/// dtype (`out_dtype` when given must name it). `quant_min`/`quant_max` are metadata:
/// checked for order, not applied.
#[kernel("quantized_decomposed::dequantize_per_tensor.out", accepts = [u8, i8, u16, i16, i32, f16, f32, f64])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn dequantize_per_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    scale: f64,
    zero_point: i64,
    quant_min: i64,
    quant_max: i64,
    dtype: ScalarType,
    out_dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    resize_like(input, out)?;
    check_dequantize(input, quant_min, quant_max, dtype, out_dtype, out)?;
    let params = Params::per_tensor(scale, zero_point);
    dequantize_with::<Sel>(input, out, false, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{f16, AllDtypes, TensorBuf};

    #[test]
    fn values_and_dtypes() {
        with_ctx(|ctx| {
            let q = TensorBuf::from_slice(&[4], &[0u8, 10, 255, 128]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            dequantize_per_tensor_out::<AllDtypes>(
                ctx,
                &q,
                0.5,
                128,
                0,
                255,
                ScalarType::Byte,
                None,
                &mut o,
            )
            .unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[-64.0, -59.0, 63.5, 0.0]);
            // The scale is narrowed to float32 first, even for a float64 out.
            let q = TensorBuf::from_slice(&[1], &[3i8]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[1]).unwrap();
            dequantize_per_tensor_out::<AllDtypes>(
                ctx,
                &q,
                0.1,
                0,
                -128,
                127,
                ScalarType::Char,
                Some(ScalarType::Double),
                &mut o,
            )
            .unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[(3.0f32 * 0.1f32) as f64]);
            let mut h = TensorBuf::zeros(ScalarType::Half, &[1]).unwrap();
            dequantize_per_tensor_out::<AllDtypes>(
                ctx,
                &q,
                0.5,
                1,
                -128,
                127,
                ScalarType::Char,
                None,
                &mut h,
            )
            .unwrap();
            assert_eq!(h.data::<f16>().unwrap(), &[f16::from_f32(1.0)]);
        });
    }

    #[test]
    fn rejects_bad_arguments() {
        with_ctx(|ctx| {
            let q = TensorBuf::from_slice(&[1], &[3i8]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[1]).unwrap();
            let mut call = |q: &TensorBuf, qmin, qmax, dtype, od| {
                dequantize_per_tensor_out::<AllDtypes>(
                    ctx, q, 1.0, 0, qmin, qmax, dtype, od, &mut o,
                )
            };
            assert!(call(&q, -128, 127, ScalarType::Byte, None).is_err());
            assert!(call(&q, 1, 0, ScalarType::Char, None).is_err());
            assert!(call(&q, -128, 127, ScalarType::Char, Some(ScalarType::Double)).is_err());
            let ql = TensorBuf::from_slice(&[1], &[3i64]).unwrap();
            assert!(call(&ql, -128, 127, ScalarType::Long, None).is_err());
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[1]).unwrap();
            assert!(dequantize_per_tensor_out::<AllDtypes>(
                ctx,
                &q,
                1.0,
                0,
                -128,
                127,
                ScalarType::Char,
                None,
                &mut oi
            )
            .is_err());
        });
    }
}
