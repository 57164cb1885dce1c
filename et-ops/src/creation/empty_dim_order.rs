//! `dim_order_ops::_empty_dim_order.out`: an uninitialized tensor in a given dim order.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_dim_order_arg, sizes_from_i64};

/// `out = torch.empty(size)` laid out in `dim_order` (which must be `out`'s dim order):
/// `out` resized to `size`, its contents left as they are.
#[kernel("dim_order_ops::_empty_dim_order.out")]
pub fn empty_dim_order_out(
    _ctx: &KernelContext<'_>,
    size: &[i64],
    dim_order: Option<&[i64]>,
    out: &mut Tensor,
) -> KernelResult {
    check_dim_order_arg(dim_order, out)?;
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
    fn resizes_in_its_dim_order() {
        with_ctx(|ctx| {
            let mut o = TensorBuf::with_layout(
                ScalarType::Float,
                &[1, 2, 2, 2],
                &[0, 2, 3, 1],
                ShapeDynamism::Static,
            )
            .unwrap();
            empty_dim_order_out(ctx, &[1, 2, 2, 2], Some(&[0, 2, 3, 1]), &mut o).unwrap();
            empty_dim_order_out(ctx, &[1, 2, 2, 2], None, &mut o).unwrap();
            let r = empty_dim_order_out(ctx, &[1, 2, 2, 2], Some(&[0, 1, 2, 3]), &mut o);
            assert!(r.is_err());
        });
    }
}
