//! `aten::diagonal_copy.out`: a diagonal of two dims.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, istrides, normalize_dim};

/// `out = self.diagonal(offset, dim1, dim2)`, materialized: the elements `[i, i + offset]`
/// of dims `(dim1, dim2)` (`[i - offset, i]` for a negative offset), as a new last dim
/// after the other dims in order. An offset past the matrix gives an empty diagonal.
#[kernel("aten::diagonal_copy.out")]
pub fn diagonal_copy_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    offset: i64,
    dim1: i64,
    dim2: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    if n < 2 {
        return Err(KernelError::invalid("diagonal needs at least 2 dims"));
    }
    let (d1, d2) = (normalize_dim(dim1, n)?, normalize_dim(dim2, n)?);
    if d1 == d2 {
        return Err(KernelError::invalid("diagonal dims must differ"));
    }
    let is = istrides(input)?;
    let (rows, cols) = (input.size(d1) as i64, input.size(d2) as i64);
    // The diagonal's length and its first element (row, column).
    let (len, first) = if offset >= 0 {
        (rows.min(cols.saturating_sub(offset)), (0, offset))
    } else {
        (
            rows.saturating_add(offset).min(cols),
            (offset.saturating_neg(), 0),
        )
    };
    let len = len.max(0) as usize;
    let start = if len == 0 {
        0
    } else {
        first.0 as usize * input.strides()[d1] + first.1 as usize * input.strides()[d2]
    };
    let mut sizes = [0usize; MAX_DIM];
    let mut strides = [0isize; MAX_DIM];
    let mut m = 0;
    for k in (0..n).filter(|&k| k != d1 && k != d2) {
        sizes[m] = input.size(k);
        strides[m] = is[k];
        m += 1;
    }
    sizes[m] = len;
    strides[m] = is[d1] + is[d2];
    copy_view(out, &sizes[..=m], input, &strides[..=m], start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn diagonals() {
        with_ctx(|ctx| {
            let x =
                TensorBuf::from_slice(&[3, 4], &[0i64, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            diagonal_copy_out(ctx, &x, 0, 0, 1, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 5, 10]);
            diagonal_copy_out(ctx, &x, 1, 0, 1, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[1, 6, 11]);
            let mut o2 = TensorBuf::zeros(ScalarType::Long, &[2]).unwrap();
            diagonal_copy_out(ctx, &x, -1, 0, 1, &mut o2).unwrap();
            assert_eq!(o2.data::<i64>().unwrap(), &[4, 9]);
            diagonal_copy_out(ctx, &x, 0, 1, 0, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 5, 10]);
            let mut e = TensorBuf::zeros(ScalarType::Long, &[0]).unwrap();
            diagonal_copy_out(ctx, &x, 9, 0, 1, &mut e).unwrap();
            assert!(diagonal_copy_out(ctx, &x, 0, 1, -1, &mut o).is_err());
        });
    }
}
