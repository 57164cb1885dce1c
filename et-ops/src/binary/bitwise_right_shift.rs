//! `aten::bitwise_right_shift.Tensor_out`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use super::{shift_right, shift_width};
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise `a >> b` for integer tensors, with broadcasting and type promotion, in
/// the width of the result dtype. A shift amount that is negative or at least that width
/// gives the sign fill (0 or -1), as in PyTorch.
#[kernel("aten::bitwise_right_shift.Tensor_out", accepts = [all])]
pub fn bitwise_right_shift_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, b)?;
    let bits = shift_width(common)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64], _C => {
        binary::<i64, i64, Sel>(a, b, out, common, move |x, s| shift_right(x, s, bits))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn shifts_in_the_dtype_width() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[4], &[-8i32, 8, -1, 5]).unwrap();
            let b = TensorBuf::from_slice(&[4], &[1i32, 40, 31, -1]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Int, &[4]).unwrap();
            bitwise_right_shift_tensor_out::<AllDtypes>(ctx, &a, &b, &mut out).unwrap();
            assert_eq!(out.data::<i32>().unwrap(), &[-4, 0, -1, 0]);
            let x = TensorBuf::from_slice(&[1], &[0x81u8]).unwrap();
            let s = TensorBuf::from_slice(&[1], &[9u8]).unwrap();
            let mut ou = TensorBuf::zeros(ScalarType::Byte, &[1]).unwrap();
            bitwise_right_shift_tensor_out::<AllDtypes>(ctx, &x, &s, &mut ou).unwrap();
            assert_eq!(ou.data::<u8>().unwrap(), &[0]);
            let f = TensorBuf::from_slice(&[1], &[1.0f32]).unwrap();
            let mut of = TensorBuf::zeros(ScalarType::Float, &[1]).unwrap();
            assert!(bitwise_right_shift_tensor_out::<AllDtypes>(ctx, &f, &f, &mut of).is_err());
        });
    }
}
