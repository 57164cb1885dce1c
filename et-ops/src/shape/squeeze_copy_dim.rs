//! `aten::squeeze_copy.dim_out`: remove one dim if its size is 1.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, istrides, normalize_dim};

/// `out = self.squeeze(dim)`, materialized: `dim` is removed if its size is 1 and kept
/// otherwise (not an error, as in PyTorch). A 0-dim tensor accepts dims 0 and -1.
#[kernel("aten::squeeze_copy.dim_out")]
pub fn squeeze_copy_dim_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    let d = normalize_dim(dim, n)?;
    let is = istrides(input)?;
    let mut sizes = [0usize; MAX_DIM];
    let mut strides = [0isize; MAX_DIM];
    let mut m = 0;
    for (i, (&size, &stride)) in input.sizes().iter().zip(&is).enumerate() {
        if i == d && size == 1 {
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
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn squeezes_one_unit_dim() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[1, 3, 1], &[1f32, 2., 3.]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 3]).unwrap();
            squeeze_copy_dim_out(ctx, &x, -1, &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[1., 2., 3.]);
            let mut kept = TensorBuf::zeros(ScalarType::Float, &[1, 3, 1]).unwrap();
            squeeze_copy_dim_out(ctx, &x, 1, &mut kept).unwrap();
            assert!(squeeze_copy_dim_out(ctx, &x, 3, &mut kept).is_err());
            let s = TensorBuf::from_slice(&[], &[4f32]).unwrap();
            let mut os = TensorBuf::zeros(ScalarType::Float, &[]).unwrap();
            squeeze_copy_dim_out(ctx, &s, -1, &mut os).unwrap();
            assert_eq!(os.data::<f32>().unwrap(), &[4.]);
        });
    }
}
