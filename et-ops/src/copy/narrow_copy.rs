//! `aten::narrow_copy.out`: a contiguous range along one dim.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, istrides, normalize_dim};

/// `out = self.narrow(dim, start, length)`: elements `start..start + length` along `dim`.
/// A negative `dim` or `start` counts from the end (ExecuTorch's portable kernel rejects a
/// negative dim; PyTorch's behavior is the spec); the range must lie inside the dim.
#[kernel("aten::narrow_copy.out")]
pub fn narrow_copy_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    start: i64,
    length: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    if n == 0 {
        return Err(KernelError::invalid(
            "cannot narrow a zero-dimensional tensor",
        ));
    }
    let d = normalize_dim(dim, n)?;
    let size = input.size(d) as i64;
    let start = if start < 0 { start + size } else { start };
    let in_range =
        start >= 0 && length >= 0 && start.checked_add(length).is_some_and(|e| e <= size);
    if !in_range {
        return Err(KernelError::invalid("narrow range is outside the dim"));
    }
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    sizes[d] = length as usize;
    let strides = istrides(input)?;
    let offset = start as usize * input.strides()[d];
    copy_view(out, &sizes[..n], input, &strides[..n], offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn narrows() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 4], &[0i32, 1, 2, 3, 4, 5, 6, 7]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[2, 2]).unwrap();
            narrow_copy_out(ctx, &x, -1, 1, 2, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[1, 2, 5, 6]);
            narrow_copy_out(ctx, &x, 1, -2, 2, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[2, 3, 6, 7]);
            assert!(narrow_copy_out(ctx, &x, 1, 3, 2, &mut o).is_err());
            assert!(narrow_copy_out(ctx, &x, 1, -5, 2, &mut o).is_err());
            let mut e = TensorBuf::zeros(ScalarType::Int, &[0, 4]).unwrap();
            narrow_copy_out(ctx, &x, 0, 2, 0, &mut e).unwrap();
        });
    }
}
