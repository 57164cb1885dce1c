//! `aten::any.dims_out`: whether any element along some dims is non-zero.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::any::any_over;
use crate::util::reduction::dim_mask;

/// True where any element of `self` along `dim` (`None` or `[]`: every dim) is non-zero
/// (NaN counts), as bool (uint8 for a uint8 input). An empty reduction is false.
#[kernel("aten::any.dims_out", accepts = [all])]
pub fn any_dims_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
    out: &mut Tensor,
) -> KernelResult {
    let mask = dim_mask(dim, input.dim())?;
    any_over::<Sel>(input, mask, keepdim, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{Bool, ScalarType, TensorBuf};

    #[test]
    fn any_along_dims() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2, 2], &[0i64, 0, 0, 0, 0, 1, 0, 0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Bool, &[2, 1, 1]).unwrap();
            any_dims_out::<AllDtypes>(ctx, &x, Some(&[1, -1]), true, &mut o).unwrap();
            assert_eq!(o.data::<Bool>().unwrap(), &[Bool(0), Bool(1)]);
            let mut all = TensorBuf::zeros(ScalarType::Bool, &[]).unwrap();
            any_dims_out::<AllDtypes>(ctx, &x, None, false, &mut all).unwrap();
            assert_eq!(all.data::<Bool>().unwrap(), &[Bool(1)]);
        });
    }
}
