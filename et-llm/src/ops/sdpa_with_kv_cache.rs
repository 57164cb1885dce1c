//! `llama::sdpa_with_kv_cache.out`: the older fused operator, a cache update of the new
//! keys and values followed by `custom_sdpa` over the caches.

use et_runtime::{kernel, KernelContext, KernelError, KernelResult, Tensor};

use super::update_cache::check_cache;
use crate::sdpa::{plan, sdpa_f32, Options};

/// `llama::sdpa_with_kv_cache.out(Tensor query, Tensor key, Tensor value,
/// Tensor(a!) key_cache, Tensor(b!) value_cache, SymInt start_pos, SymInt seq_len,
/// Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, float? scale=None,
/// *, Tensor(c!) out)`.
///
/// Writes `key` and `value` ([batch, seq_len, kv_heads, head_dim]) into the caches at
/// `start_pos` (as `update_cache`), then computes `custom_sdpa(query, key_cache,
/// value_cache, start_pos, attn_mask, drpout_p, is_causal, scale)` into `out`. `seq_len`
/// must be the sequence length of `query`, `key` and `value`. Every check runs before
/// the caches are written, so a failing call leaves them unchanged.
#[kernel("llama::sdpa_with_kv_cache.out", dtype = f32)]
#[allow(clippy::too_many_arguments, reason = "the operator's schema")]
pub fn sdpa_with_kv_cache_out(
    ctx: &KernelContext<'_>,
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    key_cache: &mut Tensor,
    value_cache: &mut Tensor,
    start_pos: i64,
    seq_len: i64,
    attn_mask: Option<&Tensor>,
    dropout_p: f64,
    is_causal: bool,
    scale: Option<f64>,
    out: &mut Tensor,
) -> KernelResult {
    let opts = Options {
        start_pos,
        attn_mask,
        is_causal,
        scale,
        seq_at_2: false,
    };
    let p = plan(query, key_cache, value_cache, &opts)?;
    let kw = check_cache(key, key_cache)?;
    let vw = check_cache(value, value_cache)?;
    if usize::try_from(seq_len) != Ok(p.q.seq) || kw.seq != p.q.seq || vw.seq != p.q.seq {
        return Err(KernelError::invalid(
            "sdpa_with_kv_cache: seq_len must equal the sequence length of query, key and value",
        ));
    }
    // `plan` bounded start_pos + seq_len by the cache length: the writes fit.
    super::update_cache_out(ctx, key, key_cache, start_pos, out)?;
    super::update_cache_out(ctx, value, value_cache, start_pos, out)?;
    sdpa_f32(ctx, query, key_cache, value_cache, &opts, out)?;
    let _ = dropout_p;
    Ok(())
}
