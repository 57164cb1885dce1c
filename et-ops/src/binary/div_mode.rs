//! `aten::div.out_mode`: division with an optional rounding mode.

use core::sync::atomic::{AtomicBool, Ordering};

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use crate::util::element::Compute;
use crate::util::element::Float;
use crate::util::element::Num;
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set, float_compute_set, result_type, to_float};

/// `out = a / b` rounded as `rounding_mode` says: `None` is true division (integers
/// promote to float32), `"trunc"` rounds toward zero and `"floor"` toward negative
/// infinity, both keeping integer dtypes. Floats follow IEEE for a zero divisor; integer
/// division by zero is an error, as in PyTorch.
#[kernel("aten::div.out_mode", accepts = [all])]
pub fn div_out_mode<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    rounding_mode: Option<&str>,
    out: &mut Tensor,
) -> KernelResult {
    let floor = match rounding_mode {
        None => {
            let common = to_float(result_type(a, b)?);
            return et_switch!(in float_compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
                binary::<C, C, Sel>(a, b, out, common, Float::div)
            });
        }
        Some("trunc") => false,
        Some("floor") => true,
        Some(_) => {
            return Err(KernelError::invalid(
                "rounding_mode must be none, \"trunc\" or \"floor\"",
            ))
        }
    };
    let common = result_type(a, b)?;
    // Integer division by zero is reported after the pass; the closure only notes it.
    // Atomic so the map may run on several threads (elementwise drivers require `Sync`).
    let zero = AtomicBool::new(false);
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        let check = !C::IS_FLOAT;
        let zero = &zero;
        // One closure for both modes (a branch per element instead of a second copy of
        // the binary driver per compute type).
        binary::<C, C, Sel>(a, b, out, common, move |x, y| {
            if check && y == C::ZERO {
                zero.store(true, Ordering::Relaxed);
            }
            if floor {
                x.floor_div(y)
            } else {
                x.trunc_div(y)
            }
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
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn rounds_by_mode() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[4], &[-7i32, 7, -2, 5]).unwrap();
            let b = TensorBuf::from_slice(&[4], &[2i32, -2, 4, 5]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Int, &[4]).unwrap();
            div_out_mode::<AllDtypes>(ctx, &a, &b, Some("floor"), &mut out).unwrap();
            assert_eq!(out.data::<i32>().unwrap(), &[-4, -4, -1, 1]);
            div_out_mode::<AllDtypes>(ctx, &a, &b, Some("trunc"), &mut out).unwrap();
            assert_eq!(out.data::<i32>().unwrap(), &[-3, -3, 0, 1]);
            let mut of = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            div_out_mode::<AllDtypes>(ctx, &a, &b, None, &mut of).unwrap();
            assert_eq!(of.data::<f32>().unwrap(), &[-3.5, -3.5, -0.5, 1.0]);
            let z = TensorBuf::from_slice(&[1], &[0i32]).unwrap();
            assert!(div_out_mode::<AllDtypes>(ctx, &a, &z, Some("floor"), &mut out).is_err());
            assert!(div_out_mode::<AllDtypes>(ctx, &a, &b, Some("round"), &mut out).is_err());

            let x = TensorBuf::from_slice(&[4], &[-7.5f32, 7.5, -0.5, 1.0]).unwrap();
            let y = TensorBuf::from_slice(&[4], &[2.0f32, -2.0, 4.0, 0.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            div_out_mode::<AllDtypes>(ctx, &x, &y, Some("floor"), &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[-4.0, -4.0, -1.0, f32::INFINITY]);
            div_out_mode::<AllDtypes>(ctx, &x, &y, Some("trunc"), &mut o).unwrap();
            let t = o.data::<f32>().unwrap();
            assert_eq!(t, &[-3.0, -3.0, -0.0, f32::INFINITY]);
            assert!(t[2].is_sign_negative());
        });
    }
}
