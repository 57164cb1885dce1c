//! `aten::lift_fresh_copy.out`: a copy of a freshly created constant.
//!
//! Export re-traces `lift_fresh_copy` into `clone` before any program can call it, so it
//! is tested by unit tests only.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

use crate::util::layout::{check_same_dtype, copy_same_shape};

/// `out = self`, copied: same dtype and sizes, in `out`'s dim order.
#[kernel("aten::lift_fresh_copy.out")]
pub fn lift_fresh_copy_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn copies() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3], &[1.5f32, -2.0, 0.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
            lift_fresh_copy_out(ctx, &x, &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[1.5, -2.0, 0.0]);
            let mut wrong = TensorBuf::zeros(ScalarType::Double, &[3]).unwrap();
            assert!(lift_fresh_copy_out(ctx, &x, &mut wrong).is_err());
        });
    }
}
