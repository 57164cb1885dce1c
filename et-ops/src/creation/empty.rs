//! `aten::empty.out`: a tensor of a given shape with unspecified contents.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::sizes_from_i64;

/// `out = torch.empty(size)`: `out` resized to `size`; its contents are left as they are
/// (PyTorch leaves them uninitialized). The memory format is carried by `out`'s layout.
#[kernel("aten::empty.out")]
pub fn empty_out(
    _ctx: &KernelContext<'_>,
    size: &[i64],
    _memory_format: Option<i64>,
    out: &mut Tensor,
) -> KernelResult {
    let mut sizes = [0usize; MAX_DIM];
    let n = sizes_from_i64(size, &mut sizes)?;
    out.resize(&sizes[..n])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, ShapeDynamism, TensorBuf};

    #[test]
    fn resizes() {
        with_ctx(|ctx| {
            let mut o =
                TensorBuf::with_layout(ScalarType::Long, &[4], &[0], ShapeDynamism::Bound).unwrap();
            empty_out(ctx, &[2], None, &mut o).unwrap();
            assert_eq!(o.sizes(), &[2]);
            assert!(empty_out(ctx, &[2, 2], None, &mut o).is_err());
            assert!(empty_out(ctx, &[-2], None, &mut o).is_err());
        });
    }
}
