//! `aten::var_mean.correction_out`: variance and mean over dims in one pass pair.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, Scalar, Tensor};

use crate::util::convert::{Storer, Val};
use crate::util::reduction::{
    dim_mask, resize_reduced, split, store_at, strides_over_input, val_storer, DimMask, Gathered,
};

/// `(var, mean)` of `self` over `dim` (`None` or `[]`: every dim): the mean, and
/// `sum((x - mean)^2) / max(0, N - correction)` with `correction` defaulting to 1, both in
/// f64 (two passes) and rounded once to the input's floating dtype.
#[kernel("aten::var_mean.correction_out", accepts = [floats])]
pub fn var_mean_correction_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
    var: &mut Tensor,
    mean: &mut Tensor,
) -> KernelResult {
    let dt = input.dtype();
    if !dt.is_floating() || var.dtype() != dt || mean.dtype() != dt {
        return Err(KernelError::invalid(
            "var_mean needs a floating input and outs of its dtype",
        ));
    }
    let correction = correction.map_or(1.0, |c| c.to_f64());
    let mask = dim_mask(dim, input.dim())?;
    resize_reduced(input, mask, keepdim, var)?;
    resize_reduced(input, mask, keepdim, mean)?;
    let st = val_storer::<Sel>(dt)?;
    let x = Gathered::new::<Sel>(input)?;
    var_mean_impl(x, mask, correction, var, mean, st)
}

/// One loop for every floating dtype, read as f64 through [`Gathered`].
fn var_mean_impl(
    x: Gathered<'_, f64>,
    mask: DimMask,
    correction: f64,
    var: &mut Tensor,
    mean: &mut Tensor,
    st: Storer,
) -> KernelResult {
    let input = x.tensor();
    let n = input.dim();
    let vs = strides_over_input(var, mask, n);
    let ms = strides_over_input(mean, mask, n);
    let (outer, inner) = split(input.sizes(), [input.strides(), &vs[..n], &ms[..n]], mask);
    let divisor = (inner.numel() as f64 - correction).max(0.0);
    let v = var.bytes_mut()?;
    let m = mean.bytes_mut()?;
    let mut result = Ok(());
    outer.for_each([0, 0, 0], |[ib, vb, mb]| {
        if result.is_ok() {
            result = x.mean_and_squares(&inner, [ib, 0, 0]).map(|(mu, squares)| {
                store_at(v, &st, vb, Val::Float(squares / divisor));
                store_at(m, &st, mb, Val::Float(mu));
            });
        }
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn variance_and_mean() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 4.0, 4.0]).unwrap();
            let mut v = TensorBuf::zeros(ScalarType::Float, &[2, 1]).unwrap();
            let mut m = TensorBuf::zeros(ScalarType::Float, &[2, 1]).unwrap();
            var_mean_correction_out::<AllDtypes>(ctx, &x, Some(&[1]), None, true, &mut v, &mut m)
                .unwrap();
            assert_eq!(v.data::<f32>().unwrap(), &[1.0, 0.0]);
            assert_eq!(m.data::<f32>().unwrap(), &[2.0, 4.0]);
            let mut v0 = TensorBuf::zeros(ScalarType::Float, &[]).unwrap();
            let mut m0 = TensorBuf::zeros(ScalarType::Float, &[]).unwrap();
            let c = Some(Scalar::Int(0));
            var_mean_correction_out::<AllDtypes>(ctx, &x, None, c, false, &mut v0, &mut m0)
                .unwrap();
            assert_eq!(m0.data::<f32>().unwrap(), &[3.0]);
        });
    }
}
