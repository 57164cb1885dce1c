//! `aten::remainder.Tensor_out`: the remainder with the divisor's sign.

use core::sync::atomic::{AtomicBool, Ordering};

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use crate::util::element::Compute;
use crate::util::element::Num;
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise `a - b * floor(a / b)` (Python's `%`): the result has the sign of `b`.
/// Floats use `fmod` and shift by `b` when the signs differ; a zero float divisor gives
/// NaN; an integer zero divisor is an error, as in PyTorch.
#[kernel("aten::remainder.Tensor_out", accepts = [all])]
pub fn remainder_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, b)?;
    // Atomic so the map may run on several threads (elementwise drivers require `Sync`).
    let zero = AtomicBool::new(false);
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let check = !C::IS_FLOAT;
        let zero = &zero;
        binary::<C, C, Sel>(a, b, out, common, move |x, y| {
            if check && y == C::ZERO {
                zero.store(true, Ordering::Relaxed);
            }
            x.remainder(y)
        })
    })?;
    if zero.load(Ordering::Relaxed) {
        return Err(KernelError::invalid("integer remainder by zero"));
    }
    Ok(())
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
            let a = TensorBuf::from_slice(&[4], &[-1i32, 4, -3, 5]).unwrap();
            let b = TensorBuf::from_slice(&[4], &[3i32, 3, -2, -5]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Int, &[4]).unwrap();
            remainder_tensor_out::<AllDtypes>(ctx, &a, &b, &mut out).unwrap();
            assert_eq!(out.data::<i32>().unwrap(), &[2, 1, -1, 0]);
            let z = TensorBuf::from_slice(&[], &[0i32]).unwrap();
            assert!(remainder_tensor_out::<AllDtypes>(ctx, &a, &z, &mut out).is_err());
            let x = TensorBuf::from_slice(&[3], &[-1.5f64, 5.0, 1.0]).unwrap();
            let y = TensorBuf::from_slice(&[3], &[1.0f64, -3.0, 0.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
            remainder_tensor_out::<AllDtypes>(ctx, &x, &y, &mut o).unwrap();
            let o = o.data::<f64>().unwrap();
            assert_eq!(&o[..2], &[0.5, -1.0]);
            assert!(o[2].is_nan());
        });
    }
}
