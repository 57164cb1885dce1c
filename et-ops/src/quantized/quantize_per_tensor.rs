//! `quantized_decomposed::quantize_per_tensor.out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::{check_quantize, quantize_with, resize_like, Params};

/// `out = clamp(zero_point + round_half_even(input / scale), quant_min, quant_max)` with
/// ExecuTorch's float32 steps (see the module docs). Input float16/32/64; out uint8,
/// int8, uint16, int16 or int32, equal to `dtype`.
#[kernel("quantized_decomposed::quantize_per_tensor.out", accepts = [u8, i8, u16, i16, i32, f16, f32, f64])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn quantize_per_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    scale: f64,
    zero_point: i64,
    quant_min: i64,
    quant_max: i64,
    dtype: ScalarType,
    out: &mut Tensor,
) -> KernelResult {
    resize_like(input, out)?;
    check_quantize(input, quant_min, quant_max, dtype, out)?;
    let params = Params::per_tensor(scale, zero_point);
    quantize_with::<Sel>(input, out, quant_min, quant_max, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{AllDtypes, TensorBuf};

    fn q(x: &[f32], scale: f64, zp: i64, qmin: i64, qmax: i64, dtype: ScalarType) -> TensorBuf {
        with_ctx(|ctx| {
            let input = TensorBuf::from_slice(&[x.len()], x).unwrap();
            let mut out = TensorBuf::zeros(dtype, &[x.len()]).unwrap();
            quantize_per_tensor_out::<AllDtypes>(
                ctx, &input, scale, zp, qmin, qmax, dtype, &mut out,
            )
            .unwrap();
            out
        })
    }

    #[test]
    fn ties_round_to_even_and_saturate() {
        // x / 0.5: 0.5, 1.5, 2.5, -0.5, -1.5 are exact ties.
        let out = q(
            &[0.25, 0.75, 1.25, -0.25, -0.75, 100.0, -100.0, 0.0],
            0.5,
            0,
            -128,
            127,
            ScalarType::Char,
        );
        assert_eq!(out.data::<i8>().unwrap(), &[0, 2, 2, 0, -2, 127, -128, 0]);
    }

    #[test]
    fn zero_point_and_narrow_range() {
        // uint8 with zero point 10 and a [0, 20] range.
        let out = q(
            &[0.0, 1.0, -1.0, 5.0, -5.0],
            0.1,
            10,
            0,
            20,
            ScalarType::Byte,
        );
        assert_eq!(out.data::<u8>().unwrap(), &[10, 20, 0, 20, 0]);
        // int16 and int32 outs; NaN converts to 0 (Rust's saturating conversion, as
        // AArch64 does; C++ leaves it undefined), then clamps.
        let out = q(
            &[3.0, f32::NAN, 1e30],
            1.0,
            2,
            -1000,
            1000,
            ScalarType::Short,
        );
        assert_eq!(out.data::<i16>().unwrap(), &[5, 0, 1000]);
        let out = q(
            &[-7.5],
            1.0,
            0,
            i32::MIN as i64,
            i32::MAX as i64,
            ScalarType::Int,
        );
        assert_eq!(out.data::<i32>().unwrap(), &[-8]);
    }

    #[test]
    fn rejects_bad_arguments() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2], &[1.0f32, 2.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Char, &[2]).unwrap();
            let call = |x: &TensorBuf, qmin, qmax, dtype, o: &mut TensorBuf| {
                quantize_per_tensor_out::<AllDtypes>(ctx, x, 1.0, 0, qmin, qmax, dtype, o)
            };
            // dtype argument differs from out, range outside int8, min > max.
            assert!(call(&x, -128, 127, ScalarType::Byte, &mut o).is_err());
            assert!(call(&x, -129, 127, ScalarType::Char, &mut o).is_err());
            let err = call(&x, 5, 4, ScalarType::Char, &mut o).unwrap_err();
            assert_eq!(err.message, "quant_min is greater than quant_max");
            // Integer input, int64 out.
            let xi = TensorBuf::from_slice(&[2], &[1i32, 2]).unwrap();
            let err = call(&xi, -128, 127, ScalarType::Char, &mut o).unwrap_err();
            assert_eq!(err.error, et_runtime::Error::InvalidArgument);
            assert_eq!(
                err.message,
                "quantize input must be float16, float32 or float64"
            );
            let mut ol = TensorBuf::zeros(ScalarType::Long, &[2]).unwrap();
            assert!(call(&x, -128, 127, ScalarType::Long, &mut ol).is_err());
            // Empty input is fine.
            let e = TensorBuf::from_slice::<f32>(&[0], &[]).unwrap();
            let mut oe = TensorBuf::zeros(ScalarType::Char, &[0]).unwrap();
            assert!(call(&e, -128, 127, ScalarType::Char, &mut oe).is_ok());
        });
    }
}
