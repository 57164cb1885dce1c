//! `aten::sum.IntList_out`: sum over dims.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use crate::util::convert::{Storer, Val};
use crate::util::element::Num;
use crate::util::reduction::{
    dim_mask, reduce_spaces, resize_reduced, store_at, val_storer, DimMask, Gathered,
};

/// Sums `self` over `dim` (`None` or `[]`: every dim) into `out`, whose dtype rules the
/// accumulation: floating outs accumulate in f64, integral and bool outs in wrapping i64
/// (so int32 inputs summed into the default int64 out never overflow early). A given
/// `dtype` must equal the out's. An empty reduction is 0.
#[kernel("aten::sum.IntList_out", accepts = [all])]
pub fn sum_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    if dtype.is_some_and(|d| d != out.dtype()) {
        return Err(KernelError::invalid(
            "sum out dtype differs from the dtype argument",
        ));
    }
    let mask = dim_mask(dim, input.dim())?;
    resize_reduced(input, mask, keepdim, out)?;
    let st = val_storer::<Sel>(out.dtype())?;
    if out.dtype().is_floating() {
        let x = Gathered::<f64>::new::<Sel>(input)?;
        sum_impl(x, mask, out, st, |a, b| a + b, Val::Float)
    } else {
        let x = Gathered::<i64>::new::<Sel>(input)?;
        sum_impl(x, mask, out, st, i64::wrapping_add, Val::Int)
    }
}

/// One loop per accumulator type, whatever the input's dtype (see [`Gathered`]).
fn sum_impl<A: Num>(
    x: Gathered<'_, A>,
    mask: DimMask,
    out: &mut Tensor,
    st: Storer,
    add: fn(A, A) -> A,
    val: fn(A) -> Val,
) -> KernelResult {
    let (outer, inner) = reduce_spaces(x.tensor(), mask, out);
    let y = out.bytes_mut()?;
    let mut result = Ok(());
    outer.for_each([0, 0], |[ib, ob]| {
        let mut acc = A::ZERO;
        if result.is_ok() {
            result = x.each(&inner, [ib, 0], |v| acc = add(acc, v));
        }
        store_at(y, &st, ob, val(acc));
    });
    result
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, TensorBuf};
    use std::vec;

    #[test]
    fn sums() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let mut all = TensorBuf::zeros(ScalarType::Float, &[]).unwrap();
        sum_out::<AllDtypes>(&ctx, &x, Some(&[]), false, None, &mut all).unwrap();
        assert_eq!(all.data::<f32>().unwrap(), &[21.0]);
        let mut rows = TensorBuf::zeros(ScalarType::Float, &[2, 1]).unwrap();
        sum_out::<AllDtypes>(&ctx, &x, Some(&[-1]), true, None, &mut rows).unwrap();
        assert_eq!(rows.data::<f32>().unwrap(), &[6.0, 15.0]);
        // int32 -> int64 without overflow; bool -> int64 counts.
        let i = TensorBuf::from_slice(&[2], &[i32::MAX, i32::MAX]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Long, &[]).unwrap();
        sum_out::<AllDtypes>(&ctx, &i, None, false, None, &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[2 * i32::MAX as i64]);
        let b = TensorBuf::from_slice(
            &[3],
            &[
                et_runtime::Bool(1),
                et_runtime::Bool(0),
                et_runtime::Bool(1),
            ],
        )
        .unwrap();
        sum_out::<AllDtypes>(&ctx, &b, None, false, None, &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[2]);
        // Empty reduction, dtype mismatch, duplicate dims.
        let e = TensorBuf::zeros(ScalarType::Float, &[0, 2]).unwrap();
        let mut eo = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
        sum_out::<AllDtypes>(&ctx, &e, Some(&[0]), false, None, &mut eo).unwrap();
        assert_eq!(eo.data::<f32>().unwrap(), &[0.0, 0.0]);
        assert!(
            sum_out::<AllDtypes>(&ctx, &x, None, false, Some(ScalarType::Double), &mut all)
                .is_err()
        );
        assert!(sum_out::<AllDtypes>(&ctx, &x, Some(&[0, -2]), false, None, &mut rows).is_err());
    }
}
