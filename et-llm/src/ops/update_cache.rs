//! `llama::update_cache.out`: writes new keys or values into a KV cache in place.

use et_runtime::{kernel, KernelContext, KernelError, KernelResult, Tensor};

use crate::sdpa::position;

/// The geometry of a cache write, checked: `value` [batch, seq_len, heads, head_dim]
/// against `cache` [batch, cache_len, heads, head_dim], same dtype, both contiguous.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CacheWrite {
    pub batch: usize,
    pub seq: usize,
    pub cache_len: usize,
    /// Bytes of one position (heads x head_dim elements).
    pub token_bytes: usize,
}

pub(crate) fn check_cache(value: &Tensor, cache: &Tensor) -> KernelResult<CacheWrite> {
    if value.dim() != 4 || !value.is_contiguous() {
        return Err(KernelError::invalid(
            "update_cache: value must be a contiguous 4-D tensor [batch, seq_len, heads, head_dim]",
        ));
    }
    if cache.dim() != 4 || !cache.is_contiguous() {
        return Err(KernelError::invalid(
            "update_cache: cache must be a contiguous 4-D tensor [batch, cache_len, heads, head_dim]",
        ));
    }
    if value.dtype() != cache.dtype() {
        return Err(KernelError::invalid(
            "update_cache: value and cache must have the same dtype",
        ));
    }
    let (v, c) = (value.sizes(), cache.sizes());
    if v[0] != c[0] {
        return Err(KernelError::invalid(
            "update_cache: value and cache must have the same batch size",
        ));
    }
    if v[2] != c[2] || v[3] != c[3] {
        return Err(KernelError::invalid(
            "update_cache: value and cache must have the same heads and head_dim",
        ));
    }
    Ok(CacheWrite {
        batch: v[0],
        seq: v[1],
        cache_len: c[1],
        token_bytes: v[2] * v[3] * value.dtype().element_size(),
    })
}

/// `llama::update_cache.out(Tensor value, Tensor(a!) cache, SymInt start_pos, *,
/// Tensor(b!) out)`.
///
/// Copies `value` [batch, seq_len, heads, head_dim] into `cache`
/// [batch, cache_len, heads, head_dim] at positions `start_pos..start_pos + seq_len` of
/// every batch. Any dtype (the two must match): the copy is bytewise. `start_pos` must be
/// inside the cache and `start_pos + seq_len` at most `cache_len`, else the call fails
/// and the cache is unchanged. `out` is a placeholder the exporter adds (ExecuTorch's
/// kernel leaves it alone too).
#[kernel("llama::update_cache.out", accepts = [all])]
pub fn update_cache_out(
    _ctx: &KernelContext<'_>,
    value: &Tensor,
    cache: &mut Tensor,
    start_pos: i64,
    _out: &mut Tensor,
) -> KernelResult {
    let w = check_cache(value, cache)?;
    let start = position(start_pos, "update_cache: start_pos must not be negative")?;
    if start >= w.cache_len || start + w.seq > w.cache_len {
        return Err(KernelError::invalid(
            "update_cache: start_pos + seq_len exceeds the cache length",
        ));
    }
    let src = value.bytes()?;
    let dst = cache.bytes_mut()?;
    let run = w.seq * w.token_bytes;
    for b in 0..w.batch {
        let to = (b * w.cache_len + start) * w.token_bytes;
        dst[to..to + run].copy_from_slice(&src[b * run..(b + 1) * run]);
    }
    Ok(())
}
