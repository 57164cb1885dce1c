//! Remove size-1 dims.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, dims_mask, istrides};

/// `out = self.squeeze(dims)`, materialized: each listed dim is removed if its size is 1
/// and kept otherwise (not an error, as in PyTorch).
#[kernel("aten::squeeze_copy.dims_out")]
pub fn squeeze_copy_dims_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dims: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    let mask = dims_mask(dims, n)?;
    let is = istrides(input)?;
    let mut sizes = [0usize; MAX_DIM];
    let mut strides = [0isize; MAX_DIM];
    let mut m = 0;
    for (i, (&size, &stride)) in input.sizes().iter().zip(&is).enumerate() {
        if mask & (1 << i) != 0 && size == 1 {
            continue;
        }
        sizes[m] = size;
        strides[m] = stride;
        m += 1;
    }
    copy_view(out, &sizes[..m], input, &strides[..m], 0)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn squeezes_only_unit_dims() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[1, 3, 1], &[1f32, 2., 3.]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 3]).unwrap();
        squeeze_copy_dims_out(&ctx, &x, &[-1, 1], &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[1., 2., 3.]);
        let mut o = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
        squeeze_copy_dims_out(&ctx, &x, &[0, 2], &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[1., 2., 3.]);
        assert!(squeeze_copy_dims_out(&ctx, &x, &[3], &mut o).is_err());
        let s = TensorBuf::from_slice(&[], &[4f32]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[]).unwrap();
        squeeze_copy_dims_out(&ctx, &s, &[0], &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[4.]);
    }
}
