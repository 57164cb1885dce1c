//! Tile a tensor.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_same_dtype, istrides, Walk, MAX_WALK_DIM};

/// `out = self.repeat(repeats)`: `repeats` may add leading dims; output dim `k` has
/// `repeats[k] * size[k]` elements.
///
/// Each output dim `k` is walked as two dims, (repeat `r`, element `i`), with output
/// strides `(stride_k * size_k, stride_k)` and input strides `(0, in_stride_k)`: one
/// strided copy, whatever the output's dim order.
#[kernel("aten::repeat.out")]
pub fn repeat_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    repeats: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    let n = repeats.len();
    let m = input.dim();
    if n > MAX_DIM || n < m {
        return Err(KernelError::invalid(
            "repeat needs at least as many repeats as the input has dims",
        ));
    }
    let lead = n - m;
    let is = istrides(input)?;
    let mut sizes = [0usize; MAX_DIM];
    for (k, &r) in repeats.iter().enumerate() {
        let r = usize::try_from(r).map_err(|_| KernelError::invalid("negative repeat"))?;
        let s = if k < lead { 1 } else { input.size(k - lead) };
        sizes[k] = r
            .checked_mul(s)
            .ok_or(KernelError::invalid("repeat size overflows"))?;
    }
    out.resize(&sizes[..n])?;
    if out.numel() == 0 {
        return Ok(());
    }
    let os = istrides(out)?;
    let mut wsizes = [0usize; MAX_WALK_DIM];
    let mut dst = [0isize; MAX_WALK_DIM];
    let mut src = [0isize; MAX_WALK_DIM];
    for k in 0..n {
        let (s, st) = if k < lead {
            (1, 0)
        } else {
            (input.size(k - lead), is[k - lead])
        };
        // `out` is non-empty, so every repeat count and size is at least 1.
        wsizes[2 * k] = sizes[k] / s;
        wsizes[2 * k + 1] = s;
        dst[2 * k] = os[k] * s as isize;
        dst[2 * k + 1] = os[k];
        src[2 * k] = 0;
        src[2 * k + 1] = st;
    }
    let walk = Walk::copy(&wsizes[..2 * n], &dst[..2 * n], &src[..2 * n])?;
    let elem = input.dtype().element_size();
    let src_bytes = input.bytes()?;
    walk.move_bytes(elem, out.bytes_mut()?, 0, src_bytes, 0)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn tiles() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 2], &[1u8, 2, 3, 4]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Byte, &[4, 6]).unwrap();
        repeat_out(&ctx, &x, &[2, 3], &mut o).unwrap();
        assert_eq!(
            o.data::<u8>().unwrap(),
            &[1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4]
        );
        let mut o = TensorBuf::zeros(ScalarType::Byte, &[2, 2, 2]).unwrap();
        repeat_out(&ctx, &x, &[2, 1, 1], &mut o).unwrap();
        assert_eq!(o.data::<u8>().unwrap(), &[1, 2, 3, 4, 1, 2, 3, 4]);
        let mut o = TensorBuf::zeros(ScalarType::Byte, &[0, 2]).unwrap();
        repeat_out(&ctx, &x, &[0, 1], &mut o).unwrap();
        assert!(repeat_out(&ctx, &x, &[2], &mut o).is_err());
    }
}
