//! `aten::split_copy.Tensor_out`: split into equal pieces along a dim.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, TensorListMut, MAX_DIM};

use super::OutList;
use crate::util::layout::{copy_view, istrides, normalize_dim};

/// `out[i] = self.narrow(dim, i * split_size, split_size)`, the last piece holding what
/// is left. There must be exactly one out tensor per piece: `ceil(size / split_size)`,
/// and one (empty) piece for an empty dim, as PyTorch splits it.
#[kernel("aten::split_copy.Tensor_out")]
pub fn split_copy_tensor_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    split_size: i64,
    dim: i64,
    mut out: TensorListMut<'_>,
) -> KernelResult {
    split_even(input, split_size, dim, &mut out)
}

fn split_even(input: &Tensor, split_size: i64, dim: i64, out: &mut impl OutList) -> KernelResult {
    let n = input.dim();
    if n == 0 {
        return Err(KernelError::invalid(
            "cannot split a zero-dimensional tensor",
        ));
    }
    let d = normalize_dim(dim, n)?;
    let size = input.size(d);
    let piece = usize::try_from(split_size)
        .ok()
        .filter(|&p| p > 0 || size == 0)
        .ok_or(KernelError::invalid("split size must be positive"))?;
    let pieces = if size == 0 { 1 } else { size.div_ceil(piece) };
    if out.len() != pieces {
        return Err(KernelError::invalid("need one out tensor per split piece"));
    }
    let strides = istrides(input)?;
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    for i in 0..pieces {
        let start = i * piece;
        sizes[d] = piece.min(size - start);
        let t = out
            .get_mut(i)
            .ok_or(KernelError::invalid("need one out tensor per split piece"))?;
        copy_view(
            t,
            &sizes[..n],
            input,
            &strides[..n],
            start * input.strides()[d],
        )?;
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
    fn splits_evenly_with_a_short_tail() {
        let x = TensorBuf::from_slice(&[5, 1], &[0i64, 1, 2, 3, 4]).unwrap();
        let mut outs = List(vec![
            TensorBuf::zeros(ScalarType::Long, &[2, 1]).unwrap(),
            TensorBuf::zeros(ScalarType::Long, &[2, 1]).unwrap(),
            TensorBuf::zeros(ScalarType::Long, &[1, 1]).unwrap(),
        ]);
        split_even(&x, 2, 0, &mut outs).unwrap();
        assert_eq!(outs.0[0].data::<i64>().unwrap(), &[0, 1]);
        assert_eq!(outs.0[2].data::<i64>().unwrap(), &[4]);
        assert!(split_even(&x, 3, 0, &mut outs).is_err());
        assert!(split_even(&x, 0, 0, &mut outs).is_err());
        let e = TensorBuf::zeros(ScalarType::Long, &[0]).unwrap();
        let mut one = List(vec![TensorBuf::zeros(ScalarType::Long, &[0]).unwrap()]);
        split_even(&e, 0, 0, &mut one).unwrap();
    }
}
