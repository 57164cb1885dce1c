//! `aten::floor_divide.out`: division rounded toward negative infinity.

use core::sync::atomic::{AtomicBool, Ordering};

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
};

use crate::util::element::{Compute, Num};
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise `floor(a / b)` with broadcasting, keeping integer dtypes (Python's `//`).
/// Floats take the quotient consistent with `remainder` and follow IEEE for a zero
/// divisor; integer division by zero is an error and bools are rejected, as in PyTorch.
#[kernel("aten::floor_divide.out", accepts = [all])]
pub fn floor_divide_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, b)?;
    if common == ScalarType::Bool {
        return Err(KernelError::invalid(
            "floor_divide is not defined for bools",
        ));
    }
    // Atomic so the map may run on several threads (elementwise drivers require `Sync`).
    let zero = AtomicBool::new(false);
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let check = !C::IS_FLOAT;
        let zero = &zero;
        binary::<C, C, Sel>(a, b, out, common, move |x, y| {
            if check && y == C::ZERO {
                zero.store(true, Ordering::Relaxed);
            }
            x.floor_div(y)
        })
    })?;
    if zero.load(Ordering::Relaxed) {
        return Err(KernelError::invalid("integer division by zero"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::TensorBuf;

    #[test]
    fn floors() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[4], &[-7i64, 7, -6, i64::MIN]).unwrap();
            let b = TensorBuf::from_slice(&[4], &[2i64, -2, 3, -1]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Long, &[4]).unwrap();
            floor_divide_out::<AllDtypes>(ctx, &a, &b, &mut out).unwrap();
            assert_eq!(out.data::<i64>().unwrap(), &[-4, -4, -2, i64::MIN]);
            let z = TensorBuf::from_slice(&[], &[0i64]).unwrap();
            assert!(floor_divide_out::<AllDtypes>(ctx, &a, &z, &mut out).is_err());
            let x = TensorBuf::from_slice(&[3], &[-7.5f64, 1.0, -1.0]).unwrap();
            let y = TensorBuf::from_slice(&[3], &[2.0f64, 0.0, 0.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
            floor_divide_out::<AllDtypes>(ctx, &x, &y, &mut o).unwrap();
            assert_eq!(
                o.data::<f64>().unwrap(),
                &[-4.0, f64::INFINITY, f64::NEG_INFINITY]
            );
        });
    }
}
