//! `aten::as_strided_copy.out`: a materialized strided view of the input's memory.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, sizes_from_i64};

/// `out = self.as_strided(size, stride, storage_offset)`, materialized: element `i` of
/// `out` is the input's memory element `storage_offset + sum(i[d] * stride[d])`. Strides
/// and the offset count elements of the input's memory (its dim order as stored) and
/// must be non-negative; every position read must lie inside the input. Overlapping
/// positions (a zero or small stride) read the same element more than once.
#[kernel("aten::as_strided_copy.out")]
pub fn as_strided_copy_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    size: &[i64],
    stride: &[i64],
    storage_offset: Option<i64>,
    out: &mut Tensor,
) -> KernelResult {
    if size.len() != stride.len() {
        return Err(KernelError::invalid("as_strided needs one stride per size"));
    }
    let mut sizes = [0usize; MAX_DIM];
    let n = sizes_from_i64(size, &mut sizes)?;
    let mut strides = [0isize; MAX_DIM];
    for (slot, &s) in strides.iter_mut().zip(stride) {
        *slot = isize::try_from(s)
            .ok()
            .filter(|s| *s >= 0)
            .ok_or(KernelError::invalid(
                "as_strided strides must be non-negative",
            ))?;
    }
    let offset = usize::try_from(storage_offset.unwrap_or(0))
        .map_err(|_| KernelError::invalid("as_strided storage offset must be non-negative"))?;
    // `copy_view` checks that every offset it reads lies inside the input.
    copy_view(out, &sizes[..n], input, &strides[..n], offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn strided_windows() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[6], &[0i64, 1, 2, 3, 4, 5]).unwrap();
            // Overlapping sliding windows of 3 with step 1, starting at element 1.
            let mut out = TensorBuf::zeros(ScalarType::Long, &[3, 3]).unwrap();
            as_strided_copy_out(ctx, &x, &[3, 3], &[1, 1], Some(1), &mut out).unwrap();
            assert_eq!(out.data::<i64>().unwrap(), &[1, 2, 3, 2, 3, 4, 3, 4, 5]);
            // A transposed view.
            let mut t = TensorBuf::zeros(ScalarType::Long, &[3, 2]).unwrap();
            as_strided_copy_out(ctx, &x, &[3, 2], &[1, 3], None, &mut t).unwrap();
            assert_eq!(t.data::<i64>().unwrap(), &[0, 3, 1, 4, 2, 5]);
            // Past the end, negative stride, mismatched lists: errors.
            assert!(as_strided_copy_out(ctx, &x, &[3, 3], &[1, 1], Some(4), &mut out).is_err());
            assert!(as_strided_copy_out(ctx, &x, &[3, 3], &[-1, 1], None, &mut out).is_err());
            assert!(as_strided_copy_out(ctx, &x, &[3, 3], &[1], None, &mut out).is_err());
        });
    }
}
