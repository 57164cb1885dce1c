//! Insert a size-1 dim.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, istrides, normalize_insert_dim};

/// `out = self.unsqueeze(dim)`, materialized; `dim` is in `-(n+1)..=n`.
#[kernel("aten::unsqueeze_copy.out")]
pub fn unsqueeze_copy_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    if n + 1 > MAX_DIM {
        return Err(KernelError::invalid("too many dims"));
    }
    let d = normalize_insert_dim(dim, n)?;
    let is = istrides(input)?;
    let mut sizes = [1usize; MAX_DIM];
    // The new dim has one element, so its stride is never used.
    let mut strides = [0isize; MAX_DIM];
    for (i, (&size, &stride)) in input.sizes().iter().zip(&is).enumerate() {
        let j = if i < d { i } else { i + 1 };
        sizes[j] = size;
        strides[j] = stride;
    }
    copy_view(out, &sizes[..n + 1], input, &strides[..n + 1], 0)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn inserts_dims() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[4], &[1i64, 2, 3, 4]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Long, &[1, 4]).unwrap();
        unsqueeze_copy_out(&ctx, &x, -2, &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[1, 2, 3, 4]);
        let mut o = TensorBuf::zeros(ScalarType::Long, &[4, 1]).unwrap();
        unsqueeze_copy_out(&ctx, &x, -1, &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[1, 2, 3, 4]);
        assert!(unsqueeze_copy_out(&ctx, &x, 2, &mut o).is_err());
        let s = TensorBuf::from_slice(&[], &[5i64]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Long, &[1]).unwrap();
        unsqueeze_copy_out(&ctx, &s, 0, &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[5]);
    }
}
