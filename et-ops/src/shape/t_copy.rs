//! `aten::t_copy.out`: the matrix transpose.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, istrides};

/// `out = self.t()`, materialized: a 2-d tensor is transposed, a 0-d or 1-d tensor copied;
/// more dims are an error, as in PyTorch.
#[kernel("aten::t_copy.out")]
pub fn t_copy_out(_ctx: &KernelContext<'_>, input: &Tensor, out: &mut Tensor) -> KernelResult {
    let n = input.dim();
    if n > 2 {
        return Err(KernelError::invalid(
            "t() expects a tensor of at most 2 dims",
        ));
    }
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    let mut strides = istrides(input)?;
    if n == 2 {
        sizes.swap(0, 1);
        strides.swap(0, 1);
    }
    copy_view(out, &sizes[..n], input, &strides[..n], 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn transposes_matrices_only() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 3], &[0i64, 1, 2, 3, 4, 5]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[3, 2]).unwrap();
            t_copy_out(ctx, &x, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 3, 1, 4, 2, 5]);
            let v = TensorBuf::from_slice(&[3], &[7i64, 8, 9]).unwrap();
            let mut ov = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            t_copy_out(ctx, &v, &mut ov).unwrap();
            assert_eq!(ov.data::<i64>().unwrap(), &[7, 8, 9]);
            let c = TensorBuf::zeros(ScalarType::Long, &[1, 1, 1]).unwrap();
            let mut oc = TensorBuf::zeros(ScalarType::Long, &[1, 1, 1]).unwrap();
            assert!(t_copy_out(ctx, &c, &mut oc).is_err());
        });
    }
}
