//! `aten::pow.Tensor_Tensor_out`: `out = self ** exponent` elementwise.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Compute;
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise power with broadcasting and type promotion. Floats use C's `pow`;
/// integers exponentiate by squaring with wrap-around, and a negative exponent gives the
/// truncated reciprocal (1 for base 1, ±1 for base -1, else 0), as PyTorch's kernel does.
#[kernel("aten::pow.Tensor_Tensor_out", accepts = [all])]
pub fn pow_tensor_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    exponent: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, exponent)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        binary::<C, C, Sel>(a, exponent, out, common, |x, e| x.power(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn raises_elementwise() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[4], &[2.0f32, -2.0, 4.0, f32::NAN]).unwrap();
            let e = TensorBuf::from_slice(&[4], &[3.0f32, 2.0, 0.5, 0.0]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            pow_tensor_tensor_out::<AllDtypes>(ctx, &a, &e, &mut out).unwrap();
            assert_eq!(out.data::<f32>().unwrap(), &[8.0, 4.0, 2.0, 1.0]);
            let i = TensorBuf::from_slice(&[4], &[2i64, -1, 1, 3]).unwrap();
            let k = TensorBuf::from_slice(&[4], &[-1i64, -3, -5, 4]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Long, &[4]).unwrap();
            pow_tensor_tensor_out::<AllDtypes>(ctx, &i, &k, &mut oi).unwrap();
            assert_eq!(oi.data::<i64>().unwrap(), &[0, -1, 1, 81]);
        });
    }
}
