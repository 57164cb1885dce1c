//! `aten::rsub.Scalar_out`: `out = other - alpha * self` with a scalar `other`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, ScalarType, Tensor,
};

use crate::util::convert::scalar_opmath;
use crate::util::element::Compute;
use crate::util::elementwise::unary;
use crate::util::promote::{check_alpha, compute_dtype, compute_set, result_type_scalar};

/// Elementwise `out = other - alpha * a` (reversed subtraction), promoted like
/// `sub.Scalar_out`; bool operands are rejected.
#[kernel("aten::rsub.Scalar_out", accepts = [reals])]
pub fn rsub_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    other: Scalar,
    alpha: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    if a.dtype() == ScalarType::Bool || matches!(other, Scalar::Bool(_)) {
        return Err(KernelError::invalid(
            "subtraction is not supported for bool operands",
        ));
    }
    let common = result_type_scalar(a, other)?;
    check_alpha(common, alpha)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let minuend = scalar_opmath::<C, Sel>(other, common)?;
        let alpha = C::from_scalar(alpha);
        unary::<C, C, Sel>(a, out, common, move |x| minuend.sub(x.mul(alpha)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::TensorBuf;

    #[test]
    fn subtracts_from_a_scalar() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3], &[1.0f64, -2.0, 0.25]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
            rsub_scalar_out::<AllDtypes>(ctx, &x, Scalar::Int(1), Scalar::Double(2.0), &mut o)
                .unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[-1.0, 5.0, 0.5]);
            let i = TensorBuf::from_slice(&[2], &[3i32, -4]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
            rsub_scalar_out::<AllDtypes>(ctx, &i, Scalar::Int(10), Scalar::Int(1), &mut oi)
                .unwrap();
            assert_eq!(oi.data::<i32>().unwrap(), &[7, 14]);
        });
    }
}
