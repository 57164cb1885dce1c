//! `aten::remainder.Scalar_out`: the remainder with the divisor's sign, by a scalar.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor,
};

use crate::util::convert::scalar_as;
use crate::util::element::{Compute, Num};
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set, result_type_scalar};

/// Elementwise `a - other * floor(a / other)` (Python's `%`): the result has the sign of
/// `other`, for integers too (ExecuTorch's portable kernel gives integers C's sign rule;
/// PyTorch's is the spec). An int scalar keeps an integer tensor's dtype, a float scalar
/// makes it float32. An integer zero divisor is an error; a zero float divisor gives NaN.
#[kernel("aten::remainder.Scalar_out", accepts = [all])]
pub fn remainder_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    other: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type_scalar(a, other)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let d = scalar_as::<C, Sel>(other, common)?;
        if !C::IS_FLOAT && d == C::ZERO {
            return Err(KernelError::invalid("integer remainder by zero"));
        }
        unary::<C, C, Sel>(a, out, common, move |x| x.remainder(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn takes_the_divisor_sign() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[4], &[-7i32, 7, -6, 5]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Int, &[4]).unwrap();
            remainder_scalar_out::<AllDtypes>(ctx, &a, Scalar::Int(3), &mut out).unwrap();
            assert_eq!(out.data::<i32>().unwrap(), &[2, 1, 0, 2]);
            remainder_scalar_out::<AllDtypes>(ctx, &a, Scalar::Int(-3), &mut out).unwrap();
            assert_eq!(out.data::<i32>().unwrap(), &[-1, -2, 0, -1]);
            assert!(remainder_scalar_out::<AllDtypes>(ctx, &a, Scalar::Int(0), &mut out).is_err());
            let mut f = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            remainder_scalar_out::<AllDtypes>(ctx, &a, Scalar::Double(2.5), &mut f).unwrap();
            assert_eq!(f.data::<f32>().unwrap(), &[0.5, 2.0, 1.5, 0.0]);
        });
    }
}
