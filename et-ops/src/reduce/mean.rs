//! `aten::mean.out`: arithmetic mean over dims.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, ScalarType, Tensor,
};

use crate::util::convert::{Storer, Val};
use crate::util::element::Num;
use crate::util::reduction::{
    dim_mask, narrow, reduce_spaces, resize_reduced, store_at, unsupported_dtype, val_storer,
    DimMask, Gathered,
};

/// The mean of `self` over `dim` (`None` or `[]`: every dim) into a floating `out`
/// (accumulated in f64, divided once, rounded once). A given `dtype` must equal the
/// out's. An empty reduction is NaN (0/0), as in PyTorch.
#[kernel("aten::mean.out", accepts = [reals])]
pub fn mean_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    if dtype.is_some_and(|d| d != out.dtype()) {
        return Err(KernelError::invalid(
            "mean out dtype differs from the dtype argument",
        ));
    }
    if !out.dtype().is_floating() || (dtype.is_none() && !input.dtype().is_floating()) {
        return Err(KernelError::invalid(
            "mean needs a floating input or an explicit floating dtype",
        ));
    }
    let mask = dim_mask(dim, input.dim())?;
    resize_reduced(input, mask, keepdim, out)?;
    let st = val_storer::<Sel>(out.dtype())?;
    if const { narrow(Sel::SET) } {
        return et_switch!(Sel, input.dtype(), @reals, T => mean_typed::<T>(input, mask, out, st));
    }
    if input.dtype() == ScalarType::Bool {
        return Err(unsupported_dtype());
    }
    mean_impl(input, Gathered::<f64>::new::<Sel>(input)?, mask, out, st)
}

fn mean_impl(
    input: &Tensor,
    x: Gathered<'_, f64>,
    mask: DimMask,
    out: &mut Tensor,
    st: Storer,
) -> KernelResult {
    let (outer, inner) = reduce_spaces(input, mask, out);
    let count = inner.numel() as f64;
    let y = out.bytes_mut()?;
    let mut result = Ok(());
    outer.for_each([0, 0], |[ib, ob]| {
        let mut acc = 0.0f64;
        if result.is_ok() {
            result = x.each(&inner, [ib, 0], |v| acc += v);
        }
        store_at(y, &st, ob, Val::Float(acc / count));
    });
    result
}

/// The loop of narrow selections: one per selected dtype, reading elements directly.
fn mean_typed<T: Num>(input: &Tensor, mask: DimMask, out: &mut Tensor, st: Storer) -> KernelResult {
    let (outer, inner) = reduce_spaces(input, mask, out);
    let count = inner.numel() as f64;
    let x = input.data::<T>()?;
    let y = out.bytes_mut()?;
    outer.for_each([0, 0], |[ib, ob]| {
        let mut acc = 0.0f64;
        inner.for_each_run([ib, 0], |[s, _], len, [step, _]| {
            for k in 0..len {
                acc += x[s + k * step].to_f64();
            }
        });
        store_at(y, &st, ob, Val::Float(acc / count));
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, TensorBuf};
    use std::vec;

    #[test]
    fn means() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[1, 2, 2, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.0])
            .unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 2, 1, 1]).unwrap();
        mean_out::<AllDtypes>(&ctx, &x, Some(&[-1, -2]), true, None, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[2.5, 6.75]);
        let mut all = TensorBuf::zeros(ScalarType::Float, &[]).unwrap();
        mean_out::<AllDtypes>(&ctx, &x, None, false, None, &mut all).unwrap();
        assert_eq!(all.data::<f32>().unwrap(), &[4.625]);
        // Integer input needs an explicit dtype.
        let i = TensorBuf::from_slice(&[2], &[1i64, 2]).unwrap();
        assert!(mean_out::<AllDtypes>(&ctx, &i, None, false, None, &mut all).is_err());
        mean_out::<AllDtypes>(&ctx, &i, None, false, Some(ScalarType::Float), &mut all).unwrap();
        assert_eq!(all.data::<f32>().unwrap(), &[1.5]);
        let e = TensorBuf::zeros(ScalarType::Float, &[0]).unwrap();
        mean_out::<AllDtypes>(&ctx, &e, None, false, None, &mut all).unwrap();
        assert!(all.data::<f32>().unwrap()[0].is_nan());
    }
}
