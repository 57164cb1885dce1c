//! `aten::unbind_copy.int_out`: every index along a dim, as separate tensors.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, TensorListMut, MAX_DIM};

use super::OutList;
use crate::util::layout::{copy_view, istrides, normalize_dim};

/// `out[i] = self.select(dim, i)` for every `i` along `dim`: one out tensor per index.
#[kernel("aten::unbind_copy.int_out")]
pub fn unbind_copy_int_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    mut out: TensorListMut<'_>,
) -> KernelResult {
    unbind_into(input, dim, &mut out)
}

fn unbind_into(input: &Tensor, dim: i64, out: &mut impl OutList) -> KernelResult {
    let n = input.dim();
    if n == 0 {
        return Err(KernelError::invalid(
            "cannot unbind a zero-dimensional tensor",
        ));
    }
    let d = normalize_dim(dim, n)?;
    if out.len() != input.size(d) {
        return Err(KernelError::invalid(
            "need one out tensor per index of the dim",
        ));
    }
    let is = istrides(input)?;
    let mut sizes = [0usize; MAX_DIM];
    let mut strides = [0isize; MAX_DIM];
    let mut m = 0;
    for k in (0..n).filter(|&k| k != d) {
        sizes[m] = input.size(k);
        strides[m] = is[k];
        m += 1;
    }
    for i in 0..input.size(d) {
        let t = out.get_mut(i).ok_or(KernelError::invalid(
            "need one out tensor per index of the dim",
        ))?;
        copy_view(t, &sizes[..m], input, &strides[..m], i * input.strides()[d])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::copy::test_list::List;
    use et_runtime::{ScalarType, TensorBuf};
    use std::vec;

    #[test]
    fn unbinds() {
        let x = TensorBuf::from_slice(&[2, 3], &[0f64, 1., 2., 3., 4., 5.]).unwrap();
        let mut cols = List(vec![
            TensorBuf::zeros(ScalarType::Double, &[2]).unwrap(),
            TensorBuf::zeros(ScalarType::Double, &[2]).unwrap(),
            TensorBuf::zeros(ScalarType::Double, &[2]).unwrap(),
        ]);
        unbind_into(&x, -1, &mut cols).unwrap();
        assert_eq!(cols.0[2].data::<f64>().unwrap(), &[2., 5.]);
        assert!(unbind_into(&x, 0, &mut cols).is_err());
    }
}
