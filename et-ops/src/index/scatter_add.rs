//! `aten::scatter_add.out`: add elements of `src` at positions named by an index.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::scatter_into;
use crate::util::accumulate::Accumulator;
use crate::util::layout::{check_same_dtype, copy_same_shape, istrides};

/// `out = self.scatter_add(dim, index, src)`: a copy of `self` where, for every position
/// `p` of `index`, `src[p]` is added to `out[p with dim replaced by index[p]]` (repeated
/// positions add up). Integers wrap; floats add in their own precision (float16 rounds
/// after each addition, as PyTorch's CPU kernel does); bools or.
#[kernel("aten::scatter_add.out", accepts = [all])]
pub fn scatter_add_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    check_same_dtype(input, src)?;
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)?;
    let acc = Accumulator::new::<Sel>(input.dtype())?;
    let out_strides = istrides(out)?;
    let from = src.bytes()?;
    let to = out.bytes_mut()?;
    scatter_into(input, &out_strides, dim, index, Some(src), |d, s| {
        acc.add(to, d, from, s)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn adds_at_indices() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3], &[1i64, 1, i64::MAX]).unwrap();
            let index = TensorBuf::from_slice(&[4], &[0i64, 0, 2, 1]).unwrap();
            let src = TensorBuf::from_slice(&[4], &[5i64, 6, 1, 2]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[3]).unwrap();
            scatter_add_out::<AllDtypes>(ctx, &x, 0, &index, &src, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[12, 3, i64::MIN]);
        });
    }
}
