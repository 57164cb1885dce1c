//! `quantized_decomposed::quantize_per_tensor.Tensor_out`.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::{check_quantize, quantize_with, resize_like, Params, Scales, Zeros};

/// `quantize_per_tensor.out` with the scale and zero point given as one-element tensors:
/// a float64 scale and an int64 zero point, what `choose_qparams.tensor` produces and
/// ExecuTorch's kernel requires (a float32 scale is an error there too).
#[kernel("quantized_decomposed::quantize_per_tensor.Tensor_out", accepts = [u8, i8, u16, i16, i32, i64, f16, f32, f64])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn quantize_per_tensor_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    scale: &Tensor,
    zero_point: &Tensor,
    quant_min: i64,
    quant_max: i64,
    dtype: ScalarType,
    out: &mut Tensor,
) -> KernelResult {
    let s = Scales::of(scale, false, 1)?.get(0);
    let z = Zeros::of(Some(zero_point), false, 1)?.get(0);
    resize_like(input, out)?;
    check_quantize(input, quant_min, quant_max, dtype, out)?;
    let params = Params::per_tensor(s, z as i64);
    quantize_with::<Sel>(input, out, quant_min, quant_max, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{AllDtypes, TensorBuf};

    #[test]
    fn tensor_qparams() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3], &[0.5f32, -0.5, 1.5]).unwrap();
            let s = TensorBuf::from_slice(&[1], &[1.0f64]).unwrap();
            let z = TensorBuf::from_slice(&[1], &[3i64]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Char, &[3]).unwrap();
            quantize_per_tensor_tensor_out::<AllDtypes>(
                ctx,
                &x,
                &s,
                &z,
                -128,
                127,
                ScalarType::Char,
                &mut o,
            )
            .unwrap();
            assert_eq!(o.data::<i8>().unwrap(), &[3, 3, 5]);
            // float32 scale, int32 zero point, two scales: errors.
            let s32 = TensorBuf::from_slice(&[1], &[1.0f32]).unwrap();
            let z32 = TensorBuf::from_slice(&[1], &[3i32]).unwrap();
            let s2 = TensorBuf::from_slice(&[2], &[1.0f64, 2.0]).unwrap();
            for (s, z) in [(&s32, &z), (&s, &z32), (&s2, &z)] {
                let r = quantize_per_tensor_tensor_out::<AllDtypes>(
                    ctx,
                    &x,
                    s,
                    z,
                    -128,
                    127,
                    ScalarType::Char,
                    &mut o,
                );
                assert!(r.is_err());
            }
        });
    }
}
