//! Whole slices picked by a vector of indices.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_same_dtype, istrides, normalize_dim, IndexData, Walk};

/// `out = self.index_select(dim, index)`: slice `j` of `out` along `dim` is slice
/// `index[j]` of `self`. `index` is a vector (or a one-element scalar) of int64/int32;
/// as in PyTorch, negative indices are out of range here.
#[kernel("aten::index_select.out")]
pub fn index_select_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    index: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    if index.dim() > 1 {
        return Err(KernelError::invalid("index_select index must be a vector"));
    }
    let n = input.dim();
    let d = normalize_dim(dim, n)?;
    let count = index.numel();
    let idx = IndexData::of(index)?;
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    let (size_d, stride_d) = if n == 0 {
        // A 0-dim input is a one-element vector whose result keeps the 0-dim shape.
        if count != 1 {
            return Err(KernelError::invalid(
                "index_select of a scalar needs one index",
            ));
        }
        (1, 0)
    } else {
        sizes[d] = count;
        (input.size(d), input.strides()[d])
    };
    out.resize(&sizes[..n])?;
    // The slab at one index: every dim but `d`, in both tensors.
    let (is, os) = (istrides(input)?, istrides(out)?);
    let mut slab = [0usize; MAX_DIM];
    let mut dst = [0isize; MAX_DIM];
    let mut src = [0isize; MAX_DIM];
    let mut m = 0;
    for k in (0..n).filter(|&k| k != d) {
        slab[m] = input.size(k);
        dst[m] = os[k];
        src[m] = is[k];
        m += 1;
    }
    let walk = Walk::copy(&slab[..m], &dst[..m], &src[..m])?;
    let out_stride_d = if n == 0 { 0 } else { out.strides()[d] };
    let elem = input.dtype().element_size();
    let src_bytes = input.bytes()?;
    let dst_bytes = out.bytes_mut()?;
    // The index vector's own stride (1, or anything for a single element).
    let istride = index.strides().first().copied().unwrap_or(0);
    for j in 0..count {
        let i = idx.get(j * istride);
        let i = match usize::try_from(i) {
            Ok(i) if i < size_d => i,
            _ => return Err(KernelError::invalid("index_select index out of range")),
        };
        walk.move_bytes(elem, dst_bytes, j * out_stride_d, src_bytes, i * stride_d)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn selects_slices() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let v: std::vec::Vec<f64> = (0..15).map(f64::from).collect();
        let x = TensorBuf::from_slice(&[5, 3], &v).unwrap();
        let i = TensorBuf::from_slice(&[3], &[4i64, 0, 4]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Double, &[3, 3]).unwrap();
        index_select_out(&ctx, &x, 0, &i, &mut o).unwrap();
        assert_eq!(
            o.data::<f64>().unwrap(),
            &[12., 13., 14., 0., 1., 2., 12., 13., 14.]
        );
        let i = TensorBuf::from_slice(&[2], &[2i32, 0]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Double, &[5, 2]).unwrap();
        index_select_out(&ctx, &x, -1, &i, &mut o).unwrap();
        assert_eq!(o.data::<f64>().unwrap()[..4], [2., 0., 5., 3.]);
        let bad = TensorBuf::from_slice(&[1], &[-1i64]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Double, &[1, 3]).unwrap();
        assert!(index_select_out(&ctx, &x, 0, &bad, &mut o).is_err());
    }
}
