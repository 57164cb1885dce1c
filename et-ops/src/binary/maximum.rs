//! `aten::maximum.out`: the elementwise larger value, propagating NaN.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Compute;
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise larger of `a` and `b` with broadcasting and type promotion; NaN when
/// either is NaN (unlike `fmin`/`fmax`).
#[kernel("aten::maximum.out", accepts = [all])]
pub fn maximum_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, b)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        binary::<C, C, Sel>(a, b, out, common, |x, y| x.max_nan(y))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn larger_with_nan() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[3], &[1.0f64, f64::NAN, -3.0]).unwrap();
            let b = TensorBuf::from_slice(&[3], &[2.0f64, 0.0, f64::NAN]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
            maximum_out::<AllDtypes>(ctx, &a, &b, &mut out).unwrap();
            let o = out.data::<f64>().unwrap();
            assert_eq!(o[0], 2.0);
            assert!(o[1].is_nan() && o[2].is_nan());
            let i = TensorBuf::from_slice(&[2], &[5i64, -7]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Long, &[2]).unwrap();
            maximum_out::<AllDtypes>(ctx, &i, &i, &mut oi).unwrap();
            assert_eq!(oi.data::<i64>().unwrap(), &[5, -7]);
        });
    }
}
