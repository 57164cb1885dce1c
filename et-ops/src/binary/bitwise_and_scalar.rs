//! `aten::bitwise_and.Scalar_out`: bitwise and with a scalar.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor,
};

use crate::util::convert::scalar_as;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set, result_type_scalar};

/// Elementwise `a & b` for an integer or bool tensor and an int or bool scalar, which
/// is cast to the result dtype first (a float scalar has no bitwise meaning and is
/// rejected). Integers are sign-extended to int64 and truncated back; bools hold 0 or 1,
/// so their result is logical.
#[kernel("aten::bitwise_and.Scalar_out", accepts = [all])]
pub fn bitwise_and_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    other: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type_scalar(a, other)?;
    if common.is_floating() {
        return Err(KernelError::invalid(
            "bitwise ops need integer or bool operands",
        ));
    }
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64], _C => {
        let b = scalar_as::<i64, Sel>(other, common)?;
        unary::<i64, i64, Sel>(a, out, common, move |a| a & b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, ScalarType, TensorBuf};

    #[test]
    fn ands_with_a_scalar() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[3], &[0b1100i64, -1, 7]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            bitwise_and_scalar_out::<AllDtypes>(ctx, &a, Scalar::Int(0b1010), &mut out).unwrap();
            assert_eq!(out.data::<i64>().unwrap(), &[0b1000, 0b1010, 0b0010]);
            let t = TensorBuf::from_slice(&[2], &[Bool(1), Bool(0)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            bitwise_and_scalar_out::<AllDtypes>(ctx, &t, Scalar::Bool(true), &mut ob).unwrap();
            assert_eq!(ob.data::<Bool>().unwrap(), &[Bool(1), Bool(0)]);
            let r = bitwise_and_scalar_out::<AllDtypes>(ctx, &a, Scalar::Double(1.0), &mut out);
            assert!(r.is_err());
        });
    }
}
