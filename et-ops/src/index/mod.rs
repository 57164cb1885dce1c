//! index operators.

pub mod embedding;
pub mod gather;
pub mod index_put;
pub mod index_put_inplace;
pub mod index_select;
pub mod index_tensor;
pub mod masked_fill;
pub mod masked_scatter;
pub mod masked_select;
pub mod nonzero;
pub mod repeat_interleave;
pub mod scatter_add;
pub mod scatter_src;
pub mod scatter_value;
pub mod select_scatter;
pub mod slice_scatter;
pub mod topk;

use et_runtime::{KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{istrides, normalize_dim, IndexData, Walk};

/// The walk of every scatter: for each position `p` of `index`, calls `write(target,
/// source)` with the element offset of `p`-with-`dim`-replaced-by-`index[p]` in the out
/// tensor (`input`'s sizes, element strides `out_strides`), and the offset of `p` in
/// `src` (0 without a `src`). `index` has `input`'s rank and is no larger
/// than `src` in any dim and than `input` outside `dim`; indices must lie in
/// `0..input.size(dim)`. `write` returns false for an offset out of bounds.
pub(crate) fn scatter_into(
    input: &Tensor,
    out_strides: &[isize; MAX_DIM],
    dim: i64,
    index: &Tensor,
    src: Option<&Tensor>,
    mut write: impl FnMut(usize, usize) -> bool,
) -> KernelResult {
    let n = input.dim();
    let d = normalize_dim(dim, n)?;
    // PyTorch treats 0-dim and 1-dim alike here.
    let k = index.dim();
    if n.max(1) != k.max(1) || src.is_some_and(|s| s.dim().max(1) != k.max(1)) {
        return Err(KernelError::invalid(
            "scatter index and src must have the input's rank",
        ));
    }
    for i in 0..k {
        let fits_src = src.is_none_or(|s| s.dim() < k || index.size(i) <= s.size(i));
        let fits_input = i == d || n < k || index.size(i) <= input.size(i);
        if !fits_src || !fits_input {
            return Err(KernelError::invalid(
                "scatter index is larger than src or self",
            ));
        }
    }
    let idx = IndexData::of(index)?;
    let (xs, is) = (out_strides, istrides(index)?);
    let mut target = [0isize; MAX_DIM];
    if n == k {
        target[..n].copy_from_slice(&xs[..n]);
        target[d] = 0;
    }
    let (size_d, stride_d) = if n == 0 {
        (1, 0)
    } else {
        (input.size(d), xs[d] as usize)
    };
    let mut ss = [0isize; MAX_DIM];
    if let Some(s) = src.filter(|s| s.dim() == k) {
        ss[..k].copy_from_slice(&istrides(s)?[..k]);
    }
    let walk = Walk::new(index.sizes(), [&target[..k], &ss[..k], &is[..k]])?;
    let lens = [
        input.numel().max(1),
        src.map_or(1, |s| s.numel().max(1)),
        index.numel().max(1),
    ];
    let mut ok = true;
    walk.for_each([0, 0, 0], lens, |[t, s, i]| {
        match usize::try_from(idx.get(i)) {
            Ok(v) if v < size_d => ok &= write(t + v * stride_d, s),
            _ => ok = false,
        }
    })?;
    if ok {
        Ok(())
    } else {
        Err(KernelError::invalid("scatter index out of range"))
    }
}

/// The element strides of `t` broadcast to `sizes` (aligned at the last dim; a missing or
/// size-1 dim gets stride 0), for walking several tensors in one logical order.
pub(crate) fn broadcast_strides(t: &Tensor, sizes: &[usize]) -> KernelResult<[usize; MAX_DIM]> {
    let n = sizes.len();
    if t.dim() > n {
        return Err(KernelError::invalid(
            "tensor does not broadcast to the shape",
        ));
    }
    let lead = n - t.dim();
    let mut strides = [0usize; MAX_DIM];
    for d in lead..n {
        let size = t.size(d - lead);
        if size == sizes[d] && size != 1 {
            strides[d] = t.strides()[d - lead];
        } else if size != 1 {
            return Err(KernelError::invalid(
                "tensor does not broadcast to the shape",
            ));
        }
    }
    Ok(strides)
}
