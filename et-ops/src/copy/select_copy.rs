//! One index along a dim, removing that dim.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, istrides, normalize_dim, wrap_index};

/// `out = self.select(dim, index)`: a negative index counts from the end.
#[kernel("aten::select_copy.int_out")]
pub fn select_copy_int_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    index: i64,
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    if n == 0 {
        return Err(KernelError::invalid(
            "cannot select from a zero-dimensional tensor",
        ));
    }
    let d = normalize_dim(dim, n)?;
    let i = wrap_index(index, input.size(d))?;
    let is = istrides(input)?;
    let mut sizes = [0usize; MAX_DIM];
    let mut strides = [0isize; MAX_DIM];
    let mut m = 0;
    for k in (0..n).filter(|&k| k != d) {
        sizes[m] = input.size(k);
        strides[m] = is[k];
        m += 1;
    }
    copy_view(
        out,
        &sizes[..m],
        input,
        &strides[..m],
        i * input.strides()[d],
    )
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn selects() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[3, 2], &[0i64, 1, 2, 3, 4, 5]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Long, &[2]).unwrap();
        select_copy_int_out(&ctx, &x, 0, -1, &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[4, 5]);
        let mut o = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
        select_copy_int_out(&ctx, &x, 1, 1, &mut o).unwrap();
        assert_eq!(o.data::<i64>().unwrap(), &[1, 3, 5]);
        assert!(select_copy_int_out(&ctx, &x, 1, 2, &mut o).is_err());
        let v = TensorBuf::from_slice(&[2], &[8i64, 9]).unwrap();
        let mut s = TensorBuf::zeros(ScalarType::Long, &[]).unwrap();
        select_copy_int_out(&ctx, &v, 0, 1, &mut s).unwrap();
        assert_eq!(s.data::<i64>().unwrap(), &[9]);
    }
}
