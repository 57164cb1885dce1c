//! `quantized_decomposed::dequantize_per_tensor.Tensor_out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::{check_dequantize, dequantize_with, resize_like, Params, Scales, Zeros};

/// `dequantize_per_tensor.out` with the scale and zero point given as one-element
/// tensors: a float64 scale and an int64 zero point, as ExecuTorch requires.
#[kernel("quantized_decomposed::dequantize_per_tensor.Tensor_out", accepts = [u8, i8, u16, i16, i32, i64, f16, f32, f64])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn dequantize_per_tensor_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    scale: &Tensor,
    zero_point: &Tensor,
    quant_min: i64,
    quant_max: i64,
    dtype: ScalarType,
    out_dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    let s = Scales::of(scale, false, 1)?.get(0);
    let z = Zeros::of(Some(zero_point), false, 1)?.get(0);
    resize_like(input, out)?;
    check_dequantize(input, quant_min, quant_max, dtype, out_dtype, out)?;
    let params = Params::per_tensor(s, z as i64);
    dequantize_with::<Sel>(input, out, false, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{AllDtypes, TensorBuf};

    #[test]
    fn tensor_qparams() {
        with_ctx(|ctx| {
            let q = TensorBuf::from_slice(&[2], &[-5i8, 7]).unwrap();
            let s = TensorBuf::from_slice(&[], &[0.25f64]).unwrap();
            let z = TensorBuf::from_slice(&[], &[-1i64]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
            dequantize_per_tensor_tensor_out::<AllDtypes>(
                ctx,
                &q,
                &s,
                &z,
                -128,
                127,
                ScalarType::Char,
                None,
                &mut o,
            )
            .unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[-1.0, 2.0]);
            let s32 = TensorBuf::from_slice(&[], &[0.25f32]).unwrap();
            assert!(dequantize_per_tensor_tensor_out::<AllDtypes>(
                ctx,
                &q,
                &s32,
                &z,
                -128,
                127,
                ScalarType::Char,
                None,
                &mut o
            )
            .is_err());
        });
    }
}
