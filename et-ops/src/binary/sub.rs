//! `aten::sub.out`: `out = self - alpha * other`.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, ScalarType, Tensor,
};

use crate::util::element::Compute;
use crate::util::elementwise::binary;
use crate::util::promote::{check_alpha, compute_dtype, compute_set, result_type};

/// Elementwise `out = a - alpha * b` with broadcasting and type promotion. Integer
/// results wrap. Bool operands are rejected, as in PyTorch (use `logical_xor`).
#[kernel("aten::sub.out", accepts = [reals])]
pub fn sub_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    alpha: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    if a.dtype() == ScalarType::Bool || b.dtype() == ScalarType::Bool {
        return Err(KernelError::invalid(
            "subtraction is not supported for bool tensors",
        ));
    }
    let common = result_type(a, b)?;
    check_alpha(common, alpha)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        // `y * 1` is exact, so one instantiation serves alpha = 1 too.
        let alpha = C::from_scalar(alpha);
        binary::<C, C, Sel>(a, b, out, common, move |x, y| x.sub(y.mul(alpha)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, TensorBuf};

    #[test]
    fn subtracts() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[1, 4], &[1i64, 2, 3, 4]).unwrap();
            let b = TensorBuf::from_slice(&[4, 1], &[1i64, 2, 3, 4]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Long, &[4, 4]).unwrap();
            sub_out::<AllDtypes>(ctx, &a, &b, Scalar::Int(1), &mut out).unwrap();
            assert_eq!(&out.data::<i64>().unwrap()[..4], &[0, 1, 2, 3]);
            assert_eq!(&out.data::<i64>().unwrap()[12..], &[-3, -2, -1, 0]);
            let u = TensorBuf::from_slice(&[2], &[0u8, 5]).unwrap();
            let v = TensorBuf::from_slice(&[2], &[1u8, 2]).unwrap();
            let mut ou = TensorBuf::zeros(ScalarType::Byte, &[2]).unwrap();
            sub_out::<AllDtypes>(ctx, &u, &v, Scalar::Int(2), &mut ou).unwrap();
            assert_eq!(ou.data::<u8>().unwrap(), &[254, 1]);
            let t = TensorBuf::from_slice(&[1], &[Bool(1)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[1]).unwrap();
            assert!(sub_out::<AllDtypes>(ctx, &t, &t, Scalar::Int(1), &mut ob).is_err());
        });
    }
}
