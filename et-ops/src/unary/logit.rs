//! `aten::logit.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::{Compute, Float};
use crate::util::elementwise::unary;
use crate::util::promote::{compute_dtype, float_compute_set, to_float};

/// Elementwise `ln(z / (1 - z))`, where `z` is the input clamped to `[eps, 1 - eps]` when
/// `eps` is given and not negative (a NaN input stays NaN), else the input itself. Bool
/// and integer inputs give float32; float16 computes in float32.
#[kernel("aten::logit.out", accepts = [all])]
pub fn logit_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    eps: Option<f64>,
    out: &mut Tensor,
) -> KernelResult {
    let common = to_float(input.dtype());
    let bounds = eps.filter(|e| *e >= 0.0).map(|e| (e, 1.0 - e));
    et_switch!(in float_compute_set(Sel::SET), compute_dtype(common), [f32, f64], C => {
        let bounds = bounds.map(|(lo, hi)| (C::c(lo), C::c(hi)));
        let one = C::c(1.0);
        unary::<C, C, Sel>(input, out, common, move |x: C| {
            let z = match bounds {
                Some((lo, hi)) => x.at_least(lo).at_most(hi),
                None => x,
            };
            Float::ln(z / (one - z))
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
    fn log_odds() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[5], &[0.5f64, 0.75, 0.0, 1.0, f64::NAN]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[5]).unwrap();
            logit_out::<AllDtypes>(ctx, &x, None, &mut o).unwrap();
            let v = o.data::<f64>().unwrap();
            assert_eq!(v[0], 0.0);
            assert_eq!(v[1], libm::log(3.0));
            assert_eq!((v[2], v[3]), (f64::NEG_INFINITY, f64::INFINITY));
            assert!(v[4].is_nan());
            logit_out::<AllDtypes>(ctx, &x, Some(0.25), &mut o).unwrap();
            let v = o.data::<f64>().unwrap();
            assert_eq!(v[2], libm::log(0.25 / 0.75));
            assert_eq!(v[3], libm::log(3.0));
            assert!(v[4].is_nan());
            // A negative eps means no clamping.
            logit_out::<AllDtypes>(ctx, &x, Some(-1.0), &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap()[2], f64::NEG_INFINITY);
        });
    }
}
