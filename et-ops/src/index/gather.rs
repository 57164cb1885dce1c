//! Elements picked along one dim by an index tensor of the output's shape.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_same_dtype, istrides, normalize_dim, IndexData, Walk};

/// `out[i][j][k] = self[i][index[i][j][k]][k]` (for `dim == 1`; likewise for any dim).
/// `index` has `self`'s rank and no larger size in any other dim; indices must be in
/// `0..self.size(dim)` (negative ones are out of range, as in PyTorch).
#[kernel("aten::gather.out")]
pub fn gather_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    index: &Tensor,
    _sparse_grad: bool,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    let n = input.dim();
    let d = normalize_dim(dim, n)?;
    // PyTorch treats 0-dim and 1-dim alike here.
    if n.max(1) != index.dim().max(1) {
        return Err(KernelError::invalid(
            "gather index must have the input's rank",
        ));
    }
    let k = index.dim();
    if n == k {
        for i in (0..n).filter(|&i| i != d) {
            if index.size(i) > input.size(i) {
                return Err(KernelError::invalid(
                    "gather index is larger than the input",
                ));
            }
        }
    }
    out.resize(index.sizes())?;
    let idx = IndexData::of(index)?;
    let (os, xs, is) = (istrides(out)?, istrides(input)?, istrides(index)?);
    let (size_d, stride_d) = if n == 0 {
        (1, 0)
    } else {
        (input.size(d), xs[d])
    };
    // Operands: out, input (without the gathered dim), index. A 0-dim input with a
    // one-element 1-D index reads its only element.
    let mut src = [0isize; MAX_DIM];
    if n == k {
        src[..n].copy_from_slice(&xs[..n]);
        src[d] = 0;
    }
    let walk = Walk::new(index.sizes(), [&os[..k], &src[..k], &is[..k]])?;
    let elem = input.dtype().element_size();
    let src_bytes = input.bytes()?;
    let lens = [out.numel(), input.numel(), index.numel()];
    let dst_bytes = out.bytes_mut()?;
    let mut bad = false;
    walk.for_each([0, 0, 0], lens, |[o, s, i]| {
        let v = idx.get(i);
        match usize::try_from(v) {
            Ok(v) if v < size_d => {
                let from = (s as isize + v as isize * stride_d) as usize * elem;
                let to = o * elem;
                match (
                    dst_bytes.get_mut(to..to + elem),
                    src_bytes.get(from..from + elem),
                ) {
                    (Some(a), Some(b)) => a.copy_from_slice(b),
                    _ => bad = true,
                }
            }
            _ => bad = true,
        }
    })?;
    if bad {
        return Err(KernelError::invalid("gather index out of range"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn gathers() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[2, 3], &[1i32, 2, 3, 4, 5, 6]).unwrap();
        let i = TensorBuf::from_slice(&[2, 2], &[2i64, 0, 1, 1]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Int, &[2, 2]).unwrap();
        gather_out(&ctx, &x, 1, &i, false, &mut o).unwrap();
        assert_eq!(o.data::<i32>().unwrap(), &[3, 1, 5, 5]);
        let i = TensorBuf::from_slice(&[1, 3], &[1i64, 0, 1]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Int, &[1, 3]).unwrap();
        gather_out(&ctx, &x, 0, &i, false, &mut o).unwrap();
        assert_eq!(o.data::<i32>().unwrap(), &[4, 2, 6]);
        let bad = TensorBuf::from_slice(&[1, 1], &[3i64]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Int, &[1, 1]).unwrap();
        assert!(gather_out(&ctx, &x, 1, &bad, false, &mut o).is_err());
    }
}
