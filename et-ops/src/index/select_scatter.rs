//! `aten::select_scatter.out`: embed a tensor at one index of a dim.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{
    check_same_dtype, copy_same_shape, istrides, normalize_dim, wrap_index, Walk,
};

/// `out = self.select_scatter(src, dim, index)`: a copy of `self` whose slice
/// `out.select(dim, index)` is `src` (which must have that slice's sizes and `self`'s
/// dtype). A negative index counts from the end.
#[kernel("aten::select_scatter.out")]
pub fn select_scatter_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    src: &Tensor,
    dim: i64,
    index: i64,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    check_same_dtype(input, src)?;
    let n = input.dim();
    if n == 0 {
        return Err(KernelError::invalid(
            "cannot select from a zero-dimensional tensor",
        ));
    }
    let d = normalize_dim(dim, n)?;
    let i = wrap_index(index, input.size(d))?;
    let mut sizes = [0usize; MAX_DIM];
    let mut m = 0;
    for k in (0..n).filter(|&k| k != d) {
        sizes[m] = input.size(k);
        m += 1;
    }
    if src.sizes() != &sizes[..m] {
        return Err(KernelError::invalid(
            "select_scatter src must have the selected slice's sizes",
        ));
    }
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)?;
    let os = istrides(out)?;
    let mut dst = [0isize; MAX_DIM];
    for (k, j) in (0..n).filter(|&j| j != d).enumerate() {
        dst[k] = os[j];
    }
    let ss = istrides(src)?;
    let walk = Walk::copy(&sizes[..m], &dst[..m], &ss[..m])?;
    let base = i * os[d] as usize;
    let elem = src.dtype().element_size();
    walk.move_bytes(elem, out.bytes_mut()?, base, src.bytes()?, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn embeds_a_slice() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 3], &[0i64; 6]).unwrap();
            let col = TensorBuf::from_slice(&[2], &[7i64, 8]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[2, 3]).unwrap();
            select_scatter_out(ctx, &x, &col, 1, -1, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 0, 7, 0, 0, 8]);
            let row = TensorBuf::from_slice(&[3], &[1i64, 2, 3]).unwrap();
            select_scatter_out(ctx, &x, &row, 0, 1, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 0, 0, 1, 2, 3]);
            assert!(select_scatter_out(ctx, &x, &col, 0, 1, &mut o).is_err());
        });
    }
}
