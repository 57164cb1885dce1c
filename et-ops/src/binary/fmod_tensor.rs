//! `aten::fmod.Tensor_out`: the remainder with the dividend's sign.

use core::sync::atomic::{AtomicBool, Ordering};

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use crate::util::element::{Compute, Num};
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise `a - b * trunc(a / b)` (C's `fmod`): the result has the sign of `a`. A zero
/// float divisor gives NaN; an integer zero divisor is an error, as in PyTorch.
#[kernel("aten::fmod.Tensor_out", accepts = [all])]
pub fn fmod_tensor_out<Sel: DtypeSelection>(
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
            x.trunc_rem(y)
        })
    })?;
    if zero.load(Ordering::Relaxed) {
        return Err(KernelError::invalid("integer fmod by zero"));
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
    fn takes_the_dividend_sign() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[5], &[-7i64, 7, -7, 7, i64::MIN]).unwrap();
            let b = TensorBuf::from_slice(&[5], &[3i64, -3, -3, 3, -1]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Long, &[5]).unwrap();
            fmod_tensor_out::<AllDtypes>(ctx, &a, &b, &mut out).unwrap();
            assert_eq!(out.data::<i64>().unwrap(), &[-1, 1, -1, 1, 0]);
            let z = TensorBuf::from_slice(&[], &[0i64]).unwrap();
            assert!(fmod_tensor_out::<AllDtypes>(ctx, &a, &z, &mut out).is_err());
            let x = TensorBuf::from_slice(&[4], &[-1.5f32, 5.0, 1.0, f32::INFINITY]).unwrap();
            let y = TensorBuf::from_slice(&[4], &[1.0f32, -3.0, 0.0, 2.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            fmod_tensor_out::<AllDtypes>(ctx, &x, &y, &mut o).unwrap();
            let o = o.data::<f32>().unwrap();
            assert_eq!(&o[..2], &[-0.5, 2.0]);
            assert!(o[2].is_nan() && o[3].is_nan());
        });
    }
}
