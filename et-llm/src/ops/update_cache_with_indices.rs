//! `llama::update_cache_with_indices.out`: writes new keys or values into a KV cache at
//! given positions (a ring buffer, or scattered positions).

use et_runtime::{kernel, KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use super::update_cache::check_cache;

/// `llama::update_cache_with_indices.out(Tensor value, Tensor(a!) cache, SymInt
/// start_pos, Tensor indices, *, Tensor(b!) out)`.
///
/// Copies position `s` of batch `b` of `value` [batch, seq_len, heads, head_dim] to
/// position `indices[b, s]` of `cache` [batch, cache_len, heads, head_dim]. `indices` is
/// int64 [batch, seq_len]; every index must be in `0..cache_len`, checked before anything
/// is written, so a bad index leaves the cache unchanged. `start_pos` is unused (as in
/// ExecuTorch: the indices say where). Any dtype for `value` and `cache` (the copy is
/// bytewise); `out` is a placeholder.
#[kernel("llama::update_cache_with_indices.out", accepts = [all])]
pub fn update_cache_with_indices_out(
    _ctx: &KernelContext<'_>,
    value: &Tensor,
    cache: &mut Tensor,
    _start_pos: i64,
    indices: &Tensor,
    _out: &mut Tensor,
) -> KernelResult {
    let w = check_cache(value, cache)?;
    if indices.dtype() != ScalarType::Long {
        return Err(KernelError::invalid(
            "update_cache_with_indices: indices must be int64",
        ));
    }
    if indices.dim() != 2 || !indices.is_contiguous() {
        return Err(KernelError::invalid(
            "update_cache_with_indices: indices must be a contiguous 2-D tensor [batch, seq_len]",
        ));
    }
    if indices.sizes() != [w.batch, w.seq] {
        return Err(KernelError::invalid(
            "update_cache_with_indices: indices must be [batch, seq_len] of value",
        ));
    }
    let idx = indices.data::<i64>()?;
    if idx
        .iter()
        .any(|&i| usize::try_from(i).map_or(true, |i| i >= w.cache_len))
    {
        return Err(KernelError::invalid(
            "update_cache_with_indices: an index is outside 0..cache_len",
        ));
    }
    let src = value.bytes()?;
    let dst = cache.bytes_mut()?;
    let n = w.token_bytes;
    for (t, &pos) in idx.iter().enumerate() {
        let b = t / w.seq.max(1);
        let to = (b * w.cache_len + pos as usize) * n;
        dst[to..to + n].copy_from_slice(&src[t * n..(t + 1) * n]);
    }
    Ok(())
}
