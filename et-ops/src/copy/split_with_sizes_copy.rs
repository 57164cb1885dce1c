//! Split into pieces of given sizes along a dim.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, TensorListMut, MAX_DIM};

use super::OutList;
use crate::util::layout::{copy_view, istrides, normalize_dim};

/// `out[i] = self.narrow(dim, sum(split_sizes[..i]), split_sizes[i])` for every piece;
/// the sizes must add up to `self.size(dim)`.
#[kernel("aten::split_with_sizes_copy.out")]
pub fn split_with_sizes_copy_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    split_sizes: &[i64],
    dim: i64,
    mut out: TensorListMut<'_>,
) -> KernelResult {
    split_into(input, split_sizes, dim, &mut out)
}

fn split_into(
    input: &Tensor,
    split_sizes: &[i64],
    dim: i64,
    out: &mut impl OutList,
) -> KernelResult {
    let n = input.dim();
    if n == 0 {
        return Err(KernelError::invalid(
            "cannot split a zero-dimensional tensor",
        ));
    }
    let d = normalize_dim(dim, n)?;
    if out.len() != split_sizes.len() {
        return Err(KernelError::invalid("need one out tensor per split size"));
    }
    let mut total = 0usize;
    for &s in split_sizes {
        let s = usize::try_from(s).map_err(|_| KernelError::invalid("negative split size"))?;
        total = total
            .checked_add(s)
            .ok_or(KernelError::invalid("split sizes overflow"))?;
    }
    if total != input.size(d) {
        return Err(KernelError::invalid(
            "split sizes must sum to the dim's size",
        ));
    }
    let strides = istrides(input)?;
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    let mut start = 0usize;
    for (i, &s) in split_sizes.iter().enumerate() {
        let piece = out
            .get_mut(i)
            .ok_or(KernelError::invalid("need one out tensor per split size"))?;
        sizes[d] = s as usize;
        copy_view(
            piece,
            &sizes[..n],
            input,
            &strides[..n],
            start * input.strides()[d],
        )?;
        start += s as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::copy::test_list::List;
    use et_runtime::{ScalarType, TensorBuf};
    use std::vec::Vec;

    #[test]
    fn splits() {
        let v: Vec<i64> = (0..8).collect();
        let x = TensorBuf::from_slice(&[2, 4], &v).unwrap();
        let mut outs = List(std::vec![
            TensorBuf::zeros(ScalarType::Long, &[2, 1]).unwrap(),
            TensorBuf::zeros(ScalarType::Long, &[2, 3]).unwrap(),
        ]);
        split_into(&x, &[1, 3], -1, &mut outs).unwrap();
        assert_eq!(outs.0[0].data::<i64>().unwrap(), &[0, 4]);
        assert_eq!(outs.0[1].data::<i64>().unwrap(), &[1, 2, 3, 5, 6, 7]);
        assert!(split_into(&x, &[2, 3], 1, &mut outs).is_err());
        assert!(split_into(&x, &[1, 3], 0, &mut outs).is_err());
    }
}
