//! `aten::clone.out`: a copy (the legacy, non-dim-order export flow).

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

use crate::util::layout::{check_same_dtype, copy_same_shape};

/// `out = self.clone(memory_format)`: same dtype and sizes, laid out in `out`'s own dim
/// order (which carries the memory format).
#[kernel("aten::clone.out")]
pub fn clone_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    _memory_format: Option<i64>,
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
    use et_runtime::{ScalarType, ShapeDynamism, TensorBuf};

    #[test]
    fn clones_into_the_out_layout() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 2], &[1u8, 2, 3, 4]).unwrap();
            let mut cl =
                TensorBuf::with_layout(ScalarType::Byte, &[2, 2], &[1, 0], ShapeDynamism::Static)
                    .unwrap();
            clone_out(ctx, &x, None, &mut cl).unwrap();
            assert_eq!(cl.data::<u8>().unwrap(), &[1, 3, 2, 4]);
            let mut wrong = TensorBuf::zeros(ScalarType::Char, &[2, 2]).unwrap();
            assert!(clone_out(ctx, &x, None, &mut wrong).is_err());
        });
    }
}
