//! `aten::minimum.out`: the elementwise smaller value, propagating NaN.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Compute;
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise smaller of `a` and `b` with broadcasting and type promotion; NaN when
/// either is NaN (unlike `fmin`/`fmax`).
#[kernel("aten::minimum.out", accepts = [all])]
pub fn minimum_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, b)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        binary::<C, C, Sel>(a, b, out, common, |x, y| x.min_nan(y))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn smaller_with_nan() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[3], &[1.0f32, f32::NAN, -3.0]).unwrap();
            let b = TensorBuf::from_slice(&[3], &[2.0f32, 0.0, f32::NAN]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            minimum_out::<AllDtypes>(ctx, &a, &b, &mut out).unwrap();
            let o = out.data::<f32>().unwrap();
            assert_eq!(o[0], 1.0);
            assert!(o[1].is_nan() && o[2].is_nan());
            let i = TensorBuf::from_slice(&[2], &[5i32, -7]).unwrap();
            let j = TensorBuf::from_slice(&[], &[0i64]).unwrap();
            let mut oi = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
            minimum_out::<AllDtypes>(ctx, &i, &j, &mut oi).unwrap();
            assert_eq!(oi.data::<i32>().unwrap(), &[0, -7]);
        });
    }
}
