//! Embedding lookup: rows of a table gathered by index.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_same_dtype, istrides, IndexData, Walk};

/// `out[i.., :] = weight[indices[i..], :]`: `out` has `indices`' shape plus the row
/// length. Indices must be in `0..weight.size(0)` (PyTorch does not wrap negatives here).
/// `padding_idx`, `scale_grad_by_freq` and `sparse` only affect gradients.
#[kernel("aten::embedding.out")]
pub fn embedding_out(
    _ctx: &KernelContext<'_>,
    weight: &Tensor,
    indices: &Tensor,
    _padding_idx: i64,
    _scale_grad_by_freq: bool,
    _sparse: bool,
    out: &mut Tensor,
) -> KernelResult {
    if weight.dim() != 2 {
        return Err(KernelError::invalid("embedding weight must be 2-D"));
    }
    check_same_dtype(weight, out)?;
    let k = indices.dim();
    if k + 1 > MAX_DIM {
        return Err(KernelError::invalid("too many dims"));
    }
    let (rows, width) = (weight.size(0), weight.size(1));
    let mut sizes = [0usize; MAX_DIM];
    sizes[..k].copy_from_slice(indices.sizes());
    sizes[k] = width;
    out.resize(&sizes[..k + 1])?;

    let idx = IndexData::of(indices)?;
    let (os, is, ws) = (istrides(out)?, istrides(indices)?, istrides(weight)?);
    // Pairs (out row base, index offset) over the index positions...
    let positions = Walk::new(indices.sizes(), [&os[..k], &is[..k]])?;
    // ...and one row copy, re-based per position.
    let row = Walk::copy(&[width], &os[k..k + 1], &ws[1..2])?;
    let elem = weight.dtype().element_size();
    let src = weight.bytes()?;
    let dst = out.bytes_mut()?;
    let lens = [dst.len() / elem.max(1), indices.numel()];
    let mut result = Ok(());
    positions.for_each([0, 0], lens, |[o, i]| {
        if result.is_err() {
            return;
        }
        let r = idx.get(i);
        result = match usize::try_from(r) {
            Ok(r) if r < rows => row.move_bytes(elem, dst, o, src, r * weight.strides()[0]),
            _ => Err(KernelError::invalid("embedding index out of range")),
        };
    })?;
    result
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn looks_up_rows() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let w = TensorBuf::from_slice(&[3, 2], &[0f32, 1., 10., 11., 20., 21.]).unwrap();
        let i = TensorBuf::from_slice(&[2, 2], &[2i64, 0, 1, 1]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 2, 2]).unwrap();
        embedding_out(&ctx, &w, &i, -1, false, false, &mut o).unwrap();
        assert_eq!(
            o.data::<f32>().unwrap(),
            &[20., 21., 0., 1., 10., 11., 10., 11.]
        );
        let i32s = TensorBuf::from_slice(&[2], &[1i32, 2]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
        embedding_out(&ctx, &w, &i32s, -1, false, false, &mut o).unwrap();
        assert_eq!(o.data::<f32>().unwrap(), &[10., 11., 20., 21.]);
        let bad = TensorBuf::from_slice(&[2], &[3i64, -1]).unwrap();
        assert!(embedding_out(&ctx, &w, &bad, -1, false, false, &mut o).is_err());
    }
}
