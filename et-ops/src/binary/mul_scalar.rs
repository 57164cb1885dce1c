//! `aten::mul.Scalar_out`: `out = self * other` with a scalar `other`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use crate::util::convert::scalar_opmath;
use crate::util::element::Compute;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set, result_type_scalar};

/// Elementwise product with a scalar. An int scalar keeps an integer tensor's dtype, a
/// float scalar with an integer tensor gives float32 (PyTorch's scalar promotion).
#[kernel("aten::mul.Scalar_out", accepts = [all])]
pub fn mul_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    other: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type_scalar(a, other)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let s = scalar_opmath::<C, Sel>(other, common)?;
        unary::<C, C, Sel>(a, out, common, move |x| x.mul(s))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn scales() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[3], &[1.0f32, -2.0, 4.0]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            mul_scalar_out::<AllDtypes>(ctx, &a, Scalar::Double(0.5), &mut out).unwrap();
            assert_eq!(out.data::<f32>().unwrap(), &[0.5, -1.0, 2.0]);
            let i = TensorBuf::from_slice(&[2], &[3i32, -5]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
            mul_scalar_out::<AllDtypes>(ctx, &i, Scalar::Int(3), &mut oi).unwrap();
            assert_eq!(oi.data::<i32>().unwrap(), &[9, -15]);
            let mut of = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
            mul_scalar_out::<AllDtypes>(ctx, &i, Scalar::Double(0.5), &mut of).unwrap();
            assert_eq!(of.data::<f32>().unwrap(), &[1.5, -2.5]);
            assert!(mul_scalar_out::<AllDtypes>(ctx, &i, Scalar::Double(0.5), &mut oi).is_err());
        });
    }
}
