//! `aten::transpose_copy.int_out`: swap two dims.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, istrides, normalize_dim};

/// `out = self.transpose(dim0, dim1)`, materialized (negative dims count from the end; a
/// 0-dim tensor accepts dims 0 and -1 and is copied).
#[kernel("aten::transpose_copy.int_out")]
pub fn transpose_copy_int_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim0: i64,
    dim1: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    let (a, b) = (normalize_dim(dim0, n)?, normalize_dim(dim1, n)?);
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    let mut strides = istrides(input)?;
    if n > 0 {
        sizes.swap(a, b);
        strides.swap(a, b);
    }
    copy_view(out, &sizes[..n], input, &strides[..n], 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn swaps_dims() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 1, 3], &[0i32, 1, 2, 3, 4, 5]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[3, 1, 2]).unwrap();
            transpose_copy_int_out(ctx, &x, 0, -1, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[0, 3, 1, 4, 2, 5]);
            let mut same = TensorBuf::zeros(ScalarType::Int, &[2, 1, 3]).unwrap();
            transpose_copy_int_out(ctx, &x, 1, 1, &mut same).unwrap();
            assert_eq!(same.data::<i32>().unwrap(), &[0, 1, 2, 3, 4, 5]);
            assert!(transpose_copy_int_out(ctx, &x, 0, 3, &mut o).is_err());
        });
    }
}
