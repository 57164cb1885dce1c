//! Reverse the order of elements along dims.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

use crate::util::layout::{copy_view, dims_mask, istrides};

/// `out = self.flip(dims)`: element `i` of a flipped dim reads `size - 1 - i`. Duplicate
/// dims are an error, as in PyTorch.
#[kernel("aten::flip.out")]
pub fn flip_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dims: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    let mask = dims_mask(dims, n)?;
    let mut strides = istrides(input)?;
    // A flipped dim starts at its last element and walks backwards.
    let mut offset = 0usize;
    for (i, s) in strides[..n].iter_mut().enumerate() {
        let size = input.size(i);
        if mask & (1 << i) != 0 && size > 0 {
            offset += (size - 1) * *s as usize;
            *s = -*s;
        }
    }
    copy_view(out, input.sizes(), input, &strides[..n], offset)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn flips() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 3], &[0i32, 1, 2, 3, 4, 5]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Int, &[2, 3]).unwrap();
        flip_out(&ctx, &x, &[1], &mut o).unwrap();
        assert_eq!(o.data::<i32>().unwrap(), &[2, 1, 0, 5, 4, 3]);
        flip_out(&ctx, &x, &[0, -1], &mut o).unwrap();
        assert_eq!(o.data::<i32>().unwrap(), &[5, 4, 3, 2, 1, 0]);
        flip_out(&ctx, &x, &[], &mut o).unwrap();
        assert_eq!(o.data::<i32>().unwrap(), &[0, 1, 2, 3, 4, 5]);
        assert!(flip_out(&ctx, &x, &[1, -1], &mut o).is_err());
    }
}
