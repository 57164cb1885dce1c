//! `aten::logical_and.out`.

use et_runtime::kernel;
use et_runtime::{et_switch, Bool, DtypeSelection, KernelContext, KernelResult, Tensor};

use crate::util::element::Num;
use crate::util::elementwise::binary;
use crate::util::promote::{compute_dtype, compute_set, result_type};

/// Elementwise `(a != 0) && (b != 0)` for any input dtypes, with broadcasting (NaN counts
/// as true). The out tensor may have any dtype and receives 0 or 1.
#[kernel("aten::logical_and.out", accepts = [all])]
pub fn logical_and_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    let common = result_type(a, b)?;
    et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
        binary::<C, Bool, Sel>(a, b, out, common, |x, y| {
            Bool::from(x.to_bool() && y.to_bool())
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
    fn ands_truth() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[4], &[0.0f32, 1.0, -3.0, f32::NAN]).unwrap();
            let b = TensorBuf::from_slice(&[4], &[1.0f32, 0.0, 0.5, 2.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Bool, &[4]).unwrap();
            logical_and_out::<AllDtypes>(ctx, &a, &b, &mut o).unwrap();
            assert_eq!(
                o.data::<Bool>().unwrap(),
                &[Bool(0), Bool(0), Bool(1), Bool(1)]
            );
            let t = TensorBuf::from_slice(&[2, 1], &[Bool(1), Bool(0)]).unwrap();
            let u = TensorBuf::from_slice(&[2], &[Bool(1), Bool(0)]).unwrap();
            let mut ob = TensorBuf::zeros(ScalarType::Bool, &[2, 2]).unwrap();
            logical_and_out::<AllDtypes>(ctx, &t, &u, &mut ob).unwrap();
            assert_eq!(
                ob.data::<Bool>().unwrap(),
                &[Bool(1), Bool(0), Bool(0), Bool(0)]
            );
        });
    }
}
