//! `aten::bitwise_xor.Tensor_out`: bitwise xor of integers, logical xor of bools.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise `a ^ b` for integer and bool tensors (with broadcasting and type
/// promotion). Integers are sign-extended to int64 and truncated back, which keeps every
/// bit of the narrow result; bools hold 0 or 1, so the result is logical.
#[kernel("aten::bitwise_xor.Tensor_out", accepts = [all])]
pub fn bitwise_xor_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, b)?;
    if common.is_floating() {
        return Err(KernelError::invalid(
            "bitwise ops need integer or bool tensors",
        ));
    }
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64], _C => {
        binary::<i64, i64, Sel>(a, b, out, common, |x, y| x ^ y)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, ScalarType, TensorBuf};

    #[test]
    fn xors() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[3], &[0b1100u8, 0xff, 7]).unwrap();
            let b = TensorBuf::from_slice(&[3], &[0b1010u8, 0x0f, 0]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Byte, &[3]).unwrap();
            bitwise_xor_tensor_out::<AllDtypes>(ctx, &a, &b, &mut out).unwrap();
            assert_eq!(out.data::<u8>().unwrap(), &[0b0110, 0xf0, 7]);
            let t = TensorBuf::from_slice(&[2], &[Bool(1), Bool(1)]).unwrap();
            let f = TensorBuf::from_slice(&[2], &[Bool(1), Bool(0)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[2]).unwrap();
            bitwise_xor_tensor_out::<AllDtypes>(ctx, &t, &f, &mut ob).unwrap();
            assert_eq!(ob.data::<Bool>().unwrap(), &[Bool(0), Bool(1)]);
            let x = TensorBuf::from_slice(&[1], &[1.0f32]).unwrap();
            let mut of = TensorBuf::zeros(ScalarType::Float, &[1]).unwrap();
            assert!(bitwise_xor_tensor_out::<AllDtypes>(ctx, &x, &x, &mut of).is_err());
        });
    }
}
