//! `aten::sub.Scalar_out`: `out = self - alpha * other` with a scalar `other`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, ScalarType, Tensor,
};

use crate::util::convert::scalar_opmath;
use crate::util::element::Compute;
use crate::util::elementwise::unary;
use crate::util::promote::{check_alpha, compute_dtype, compute_set, result_type_scalar};

/// Elementwise `out = a - alpha * other`, promoted like `add.Scalar_out`. Integer results
/// wrap. Bool operands are rejected, as in PyTorch.
#[kernel("aten::sub.Scalar_out", accepts = [reals])]
pub fn sub_scalar_out<Sel: DtypeSelection>(
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
        let subtrahend = scalar_opmath::<C, Sel>(other, common)?.mul(C::from_scalar(alpha));
        unary::<C, C, Sel>(a, out, common, move |x| x.sub(subtrahend))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, TensorBuf};

    #[test]
    fn subtracts_a_scalar() {
        with_ctx(|ctx| {
            let i = TensorBuf::from_slice(&[2], &[1i32, i32::MIN]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
            sub_scalar_out::<AllDtypes>(ctx, &i, Scalar::Int(1), Scalar::Int(2), &mut oi).unwrap();
            assert_eq!(oi.data::<i32>().unwrap(), &[-1, i32::MAX - 1]);
            let mut of = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
            sub_scalar_out::<AllDtypes>(ctx, &i, Scalar::Double(0.5), Scalar::Int(1), &mut of)
                .unwrap();
            assert_eq!(of.data::<f32>().unwrap()[0], 0.5);
            let b = TensorBuf::from_slice(&[1], &[Bool(1)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[1]).unwrap();
            let r = sub_scalar_out::<AllDtypes>(ctx, &b, Scalar::Int(1), Scalar::Int(1), &mut ob);
            assert!(r.is_err());
        });
    }
}
