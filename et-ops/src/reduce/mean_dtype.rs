//! `aten::mean.dtype_out`: the mean of every element.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, ScalarType, Tensor};

use super::mean::mean_out;

/// `out = self.mean(dtype=dtype)` over every element, as a 0-dim floating tensor: the
/// same rules as `mean.out` (f64 accumulation, one rounding; an integer input needs a
/// floating `dtype`; an empty tensor gives NaN).
#[kernel("aten::mean.dtype_out", accepts = [reals])]
pub fn mean_dtype_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    dtype: Option<ScalarType>,
    out: &mut Tensor,
) -> KernelResult {
    mean_out::<Sel>(ctx, input, None, false, dtype, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::TensorBuf;

    #[test]
    fn means_everything() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[1i32, 2, 3, 5]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[]).unwrap();
            mean_dtype_out::<AllDtypes>(ctx, &x, Some(ScalarType::Double), &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[2.75]);
            assert!(mean_dtype_out::<AllDtypes>(ctx, &x, None, &mut o).is_err());
        });
    }
}
