//! `aten::var.out`: variance over dims, with an `unbiased` flag.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::var::var_impl;
use crate::util::reduction::{dim_mask, resize_reduced};

/// The variance of `self` over `dim` (`None` or `[]`: every dim): `sum((x - mean)^2)`
/// divided by `N - 1` when `unbiased`, else by `N` (two passes in f64). A non-positive
/// divisor gives inf or NaN, as in PyTorch.
#[kernel("aten::var.out", accepts = [floats])]
pub fn var_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: Option<&[i64]>,
    unbiased: bool,
    keepdim: bool,
    out: &mut Tensor,
) -> KernelResult {
    if !input.dtype().is_floating() || out.dtype() != input.dtype() {
        return Err(KernelError::invalid(
            "var needs a floating input and an out of its dtype",
        ));
    }
    let correction = if unbiased { 1.0 } else { 0.0 };
    let mask = dim_mask(dim, input.dim())?;
    resize_reduced(input, mask, keepdim, out)?;
    var_impl::<Sel>(input, mask, correction, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn biased_and_unbiased() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[1.0f64, 3.0, 2.0, 2.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[2]).unwrap();
            var_out::<AllDtypes>(ctx, &x, Some(&[1]), true, false, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[2.0, 0.0]);
            var_out::<AllDtypes>(ctx, &x, Some(&[1]), false, false, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[1.0, 0.0]);
            let mut all = TensorBuf::zeros(ScalarType::Double, &[1, 1]).unwrap();
            var_out::<AllDtypes>(ctx, &x, None, false, true, &mut all).unwrap();
            assert_eq!(all.data::<f64>().unwrap(), &[0.5]);
        });
    }
}
