//! `aten::var.correction_out`: variance over dims.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor};

use crate::util::convert::{Storer, Val};
use crate::util::reduction::{
    dim_mask, reduce_spaces, resize_reduced, store_at, unsupported_dtype, val_storer, DimMask,
    Gathered,
};

/// The variance of `self` over `dim` (`None` or `[]`: every dim) with Bessel-style
/// `correction` (default 1): `sum((x - mean)^2) / max(0, N - correction)`, two passes in
/// f64. A non-positive divisor gives inf or NaN, as in PyTorch.
#[kernel("aten::var.correction_out", accepts = [floats])]
pub fn var_correction_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
    out: &mut Tensor,
) -> KernelResult {
    if !input.dtype().is_floating() || out.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "var needs a floating input and an out of its dtype",
        ));
    }
    let correction = correction.map_or(1.0, |c| c.to_f64());
    let mask = dim_mask(dim, input.dim())?;
    resize_reduced(input, mask, keepdim, out)?;
    var_impl::<Sel>(input, mask, correction, out)
}

/// The variance of `input` over `mask` with `correction` into `out` (same dtype).
/// The body of `var.correction` and `var`: one loop for every floating dtype, read as f64
/// through [`Gathered`] and rounded once at the store.
pub(super) fn var_impl<Sel: DtypeSelection>(
    input: &Tensor,
    mask: DimMask,
    correction: f64,
    out: &mut Tensor,
) -> KernelResult {
    if !input.dtype().is_floating() {
        return Err(unsupported_dtype());
    }
    let st = val_storer::<Sel>(out.dtype())?;
    var_in(Gathered::new::<Sel>(input)?, mask, correction, out, st)
}

fn var_in(
    x: Gathered<'_, f64>,
    mask: DimMask,
    correction: f64,
    out: &mut Tensor,
    st: Storer,
) -> KernelResult {
    let (outer, inner) = reduce_spaces(x.tensor(), mask, out);
    let divisor = (inner.numel() as f64 - correction).max(0.0);
    let y = out.bytes_mut()?;
    let mut result = Ok(());
    outer.for_each([0, 0], |[ib, ob]| {
        if result.is_ok() {
            result = x
                .mean_and_squares(&inner, [ib, 0])
                .map(|(_, squares)| store_at(y, &st, ob, Val::Float(squares / divisor)));
        }
    });
    result
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};
    use std::vec;

    #[test]
    fn variances() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x =
            TensorBuf::from_slice(&[2, 4], &[1.0f32, 2.0, 3.0, 4.0, 2.0, 2.0, 2.0, 2.0]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[2]).unwrap();
        var_correction_out::<AllDtypes>(&ctx, &x, Some(&[1]), None, false, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[5.0 / 3.0, 0.0]);
        var_correction_out::<AllDtypes>(&ctx, &x, Some(&[1]), Some(Scalar::Int(0)), false, &mut o)
            .unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[1.25, 0.0]);
        // One element with correction 1: 0 / 0 = NaN.
        let one = TensorBuf::from_slice(&[1], &[3.0f64]).unwrap();
        let mut s = TensorBuf::zeros(ScalarType::Double, &[]).unwrap();
        var_correction_out::<AllDtypes>(&ctx, &one, None, None, false, &mut s).unwrap();
        assert!(s.data::<f64>().unwrap()[0].is_nan());
        let i = TensorBuf::from_slice(&[1], &[3i32]).unwrap();
        let mut io = TensorBuf::zeros(ScalarType::Int, &[]).unwrap();
        assert!(var_correction_out::<AllDtypes>(&ctx, &i, None, None, false, &mut io).is_err());
    }
}
