//! `aten::bitwise_not.out`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
};

use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set};

/// Elementwise bitwise complement of an integer tensor; logical not of a bool tensor
/// (whose elements are 0 or 1, so `!x` would not be a bool). Floats are rejected.
#[kernel("aten::bitwise_not.out", accepts = [all])]
pub fn bitwise_not_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = input.dtype();
    if common.is_floating() {
        return Err(KernelError::invalid(
            "bitwise_not needs an integer or bool tensor",
        ));
    }
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64], _C => {
        if common == ScalarType::Bool {
            unary::<i64, i64, Sel>(input, out, common, |x| (x == 0) as i64)
        } else {
            unary::<i64, i64, Sel>(input, out, common, |x| !x)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, TensorBuf};

    #[test]
    fn complements() {
        with_ctx(|ctx| {
            let b = TensorBuf::from_slice(&[2], &[Bool(1), Bool(0)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            bitwise_not_out::<AllDtypes>(ctx, &b, &mut ob).unwrap();
            assert_eq!(ob.data::<Bool>().unwrap(), &[Bool(0), Bool(1)]);
            let i = TensorBuf::from_slice(&[3], &[0i32, -1, 5]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[3]).unwrap();
            bitwise_not_out::<AllDtypes>(ctx, &i, &mut oi).unwrap();
            assert_eq!(oi.data::<i32>().unwrap(), &[-1, 0, -6]);
            let u = TensorBuf::from_slice(&[1], &[5u8]).unwrap();
            let mut ou = TensorBuf::zeros(ScalarType::Byte, &[1]).unwrap();
            bitwise_not_out::<AllDtypes>(ctx, &u, &mut ou).unwrap();
            assert_eq!(ou.data::<u8>().unwrap(), &[250]);
        });
    }
}
