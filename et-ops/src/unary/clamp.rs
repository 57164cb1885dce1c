//! `aten::clamp.out`: clamp to scalar bounds.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor,
};

use crate::util::convert::scalar_as;
use crate::util::element::Compute;
use crate::util::element::Num;
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, compute_set, ResultType};

/// Elementwise `min(max(x, min), max)` with optional bounds (at least one must be given).
/// The bounds take part in type promotion like scalar operands (an integer tensor with a
/// float bound gives float32). NaN in the input or a bound propagates; when `min > max`
/// every element becomes `max`, as in PyTorch.
#[kernel("aten::clamp.out", accepts = [all])]
pub fn clamp_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    min: Option<Scalar>,
    max: Option<Scalar>,
    out: &mut Tensor,
) -> KernelResult {
    let mut rt = ResultType::new().tensor(input);
    for s in [min, max].into_iter().flatten() {
        rt = rt.scalar(s);
    }
    let common = rt.finish()?;
    if min.is_none() && max.is_none() {
        return Err(KernelError::invalid("clamp needs a min or a max"));
    }
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        // A missing bound is the widest value (-inf/+inf; int64's range saturates there).
        let bound = |s: Option<Scalar>, none: f64| match s {
            Some(s) => scalar_as::<C, Sel>(s, common),
            None => Ok(C::from_f64(none)),
        };
        let lo = bound(min, f64::NEG_INFINITY)?;
        let hi = bound(max, f64::INFINITY)?;
        // A NaN bound makes every element NaN. One closure for both cases: a branch per
        // element instead of a second copy of the unary driver per compute type.
        let nan_bound = C::IS_FLOAT && (lo.is_nan() || hi.is_nan());
        unary::<C, C, Sel>(input, out, common, move |x| {
            if nan_bound {
                x.max_nan(lo).min_nan(hi)
            } else {
                x.at_least(lo).at_most(hi)
            }
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
    fn clamps() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[4], &[-3.0f32, 0.5, 9.0, f32::NAN]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[4]).unwrap();
            clamp_out::<AllDtypes>(ctx, &x, Some(Scalar::Int(-1)), Some(Scalar::Int(2)), &mut o)
                .unwrap();
            let v = o.data::<f32>().unwrap();
            assert_eq!(&v[..3], &[-1.0, 0.5, 2.0]);
            assert!(v[3].is_nan());
            clamp_out::<AllDtypes>(ctx, &x, None, Some(Scalar::Double(0.0)), &mut o).unwrap();
            assert_eq!(&o.data::<f32>().unwrap()[..3], &[-3.0, 0.0, 0.0]);
            // min > max: everything is max.
            clamp_out::<AllDtypes>(ctx, &x, Some(Scalar::Int(5)), Some(Scalar::Int(1)), &mut o)
                .unwrap();
            assert_eq!(&o.data::<f32>().unwrap()[..3], &[1.0, 1.0, 1.0]);
            assert!(clamp_out::<AllDtypes>(ctx, &x, None, None, &mut o).is_err());
            clamp_out::<AllDtypes>(ctx, &x, Some(Scalar::Double(f64::NAN)), None, &mut o).unwrap();
            assert!(o.data::<f32>().unwrap().iter().all(|v| v.is_nan()));

            let i = TensorBuf::from_slice(&[3], &[-5i64, 1, 7]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            clamp_out::<AllDtypes>(ctx, &i, Some(Scalar::Int(0)), Some(Scalar::Int(6)), &mut oi)
                .unwrap();
            assert_eq!(oi.data::<i64>().unwrap(), &[0, 1, 6]);
            // A float bound promotes an integer tensor to float32.
            let mut of = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            clamp_out::<AllDtypes>(ctx, &i, Some(Scalar::Double(0.5)), None, &mut of).unwrap();
            assert_eq!(of.data::<f32>().unwrap(), &[0.5, 1.0, 7.0]);
            assert!(
                clamp_out::<AllDtypes>(ctx, &i, Some(Scalar::Double(0.5)), None, &mut oi).is_err()
            );
        });
    }
}
