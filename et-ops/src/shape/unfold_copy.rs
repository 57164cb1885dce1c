//! `aten::unfold_copy.out`: sliding windows along a dim.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, istrides, normalize_dim};

/// `out = self.unfold(dimension, size, step)`, materialized: dim `dimension` becomes the
/// `(len - size) / step + 1` window starts, and a new last dim of `size` holds each
/// window. `size` must not exceed the dim's length and `step` must be positive; a 0-dim
/// input is one window of its single element.
#[kernel("aten::unfold_copy.out")]
pub fn unfold_copy_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dimension: i64,
    size: i64,
    step: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    if n >= MAX_DIM {
        return Err(KernelError::invalid("too many dims"));
    }
    let d = normalize_dim(dimension, n)?;
    let len = if n == 0 { 1 } else { input.size(d) };
    let size = usize::try_from(size)
        .ok()
        .filter(|&s| s <= len)
        .ok_or(KernelError::invalid("unfold size must fit the dim"))?;
    let step = usize::try_from(step)
        .ok()
        .filter(|&s| s > 0)
        .ok_or(KernelError::invalid("unfold step must be positive"))?;
    let is = istrides(input)?;
    let mut sizes = [0usize; MAX_DIM];
    let mut strides = [0isize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    strides[..n].copy_from_slice(&is[..n]);
    let along = if n == 0 { 1 } else { is[d] };
    if n > 0 {
        sizes[d] = (len - size) / step + 1;
        strides[d] = along * step as isize;
    }
    sizes[n] = size;
    strides[n] = along;
    copy_view(out, &sizes[..=n], input, &strides[..=n], 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn windows() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[5], &[0i64, 1, 2, 3, 4]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[2, 2]).unwrap();
            unfold_copy_out(ctx, &x, 0, 2, 2, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 1, 2, 3]);
            let mut o3 = TensorBuf::zeros(ScalarType::Long, &[3, 3]).unwrap();
            unfold_copy_out(ctx, &x, -1, 3, 1, &mut o3).unwrap();
            assert_eq!(o3.data::<i64>().unwrap(), &[0, 1, 2, 1, 2, 3, 2, 3, 4]);
            assert!(unfold_copy_out(ctx, &x, 0, 6, 1, &mut o).is_err());
            assert!(unfold_copy_out(ctx, &x, 0, 2, 0, &mut o).is_err());
        });
    }
}
