//! `aten::bitwise_right_shift.Tensor_Scalar_out`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use super::{shift_right, shift_width};
use crate::util::convert::scalar_as;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set, result_type_scalar};

/// Elementwise `a >> other` for an integer tensor and an int scalar (cast to the
/// tensor's dtype first), in the width of that dtype. A shift amount that is negative or
/// at least that width gives the sign fill (0 or -1), as in PyTorch.
#[kernel("aten::bitwise_right_shift.Tensor_Scalar_out", accepts = [all])]
pub fn bitwise_right_shift_tensor_scalar_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    other: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type_scalar(a, other)?;
    let bits = shift_width(common)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64], _C => {
        let s = scalar_as::<i64, Sel>(other, common)?;
        unary::<i64, i64, Sel>(a, out, common, move |x| shift_right(x, s, bits))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn shifts_by_a_scalar() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[4], &[0i64, -1, 3, 5]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Long, &[4]).unwrap();
            bitwise_right_shift_tensor_scalar_out::<AllDtypes>(ctx, &a, Scalar::Int(1), &mut out)
                .unwrap();
            assert_eq!(out.data::<i64>().unwrap(), &[0, -1, 1, 2]);
            let x = TensorBuf::from_slice(&[1], &[-128i8]).unwrap();
            let mut o8 = TensorBuf::zeros(ScalarType::Char, &[1]).unwrap();
            bitwise_right_shift_tensor_scalar_out::<AllDtypes>(ctx, &x, Scalar::Int(8), &mut o8)
                .unwrap();
            assert_eq!(o8.data::<i8>().unwrap(), &[-1]);
        });
    }
}
