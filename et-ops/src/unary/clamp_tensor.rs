//! `aten::clamp.Tensor_out`: clamp to tensor bounds.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use crate::util::element::Compute;
use crate::util::elementwise::ternary;
use crate::util::promote::{compute_dtype, compute_set, ResultType};

/// Elementwise `min(max(x, min), max)` with optional tensor bounds (at least one), all
/// three broadcast together and promoted to their common dtype. NaN in the input or in a
/// bound propagates; where `min > max` the result is `max`, as in PyTorch.
#[kernel("aten::clamp.Tensor_out", accepts = [all])]
pub fn clamp_tensor_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    min: Option<&Tensor>,
    max: Option<&Tensor>,
    out: &mut Tensor,
) -> KernelResult {
    let mut rt = ResultType::new().tensor(input);
    for t in [min, max].into_iter().flatten() {
        rt = rt.tensor(t);
    }
    let common = rt.finish()?;
    let (lo, hi) = match (min, max) {
        (None, None) => return Err(KernelError::invalid("clamp needs a min or a max")),
        // A missing bound is stood in for by the input (same shape, values unused), so
        // one ternary loop per compute type serves all three forms: the one-bound forms
        // used to instantiate the binary driver twice more.
        (lo, hi) => (lo.unwrap_or(input), hi.unwrap_or(input)),
    };
    let (has_lo, has_hi) = (min.is_some(), max.is_some());
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        ternary::<C, C, Sel>(input, lo, hi, out, common, move |x: C, lo, hi| {
            let y = if has_lo { x.max_nan(lo) } else { x };
            if has_hi { y.min_nan(hi) } else { y }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn clamps_to_tensors() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[4], &[-2.0f32, 0.5, 3.0, f32::NAN]).unwrap();
            let lo = TensorBuf::from_slice(&[4], &[-1.0f32, 1.0, f32::NAN, 0.0]).unwrap();
            let hi = TensorBuf::from_slice(&[], &[2.0f32]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            clamp_tensor_out::<AllDtypes>(ctx, &x, Some(&lo), Some(&hi), &mut o).unwrap();
            let v = o.data::<f32>().unwrap();
            assert_eq!(&v[..2], &[-1.0, 1.0]);
            assert!(v[2].is_nan() && v[3].is_nan());
            // min > max gives max.
            let big = TensorBuf::from_slice(&[], &[5.0f32]).unwrap();
            clamp_tensor_out::<AllDtypes>(ctx, &x, Some(&big), Some(&hi), &mut o).unwrap();
            assert_eq!(&o.data::<f32>().unwrap()[..3], &[2.0, 2.0, 2.0]);
            // One bound.
            let i = TensorBuf::from_slice(&[3], &[-5i64, 0, 5]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            let three = TensorBuf::from_slice(&[1], &[3i64]).unwrap();
            clamp_tensor_out::<AllDtypes>(ctx, &i, None, Some(&three), &mut oi).unwrap();
            assert_eq!(oi.data::<i64>().unwrap(), &[-5, 0, 3]);
            assert!(clamp_tensor_out::<AllDtypes>(ctx, &i, None, None, &mut oi).is_err());
        });
    }
}
