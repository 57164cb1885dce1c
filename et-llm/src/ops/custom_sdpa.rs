//! `llama::custom_sdpa.out`: attention of new queries over a KV cache that
//! `update_cache` already filled.

use et_runtime::{kernel, KernelContext, KernelResult, Tensor};

use crate::sdpa::{sdpa_f32, Options};

/// `llama::custom_sdpa.out(Tensor query, Tensor key, Tensor value, SymInt start_pos,
/// Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, float? scale=None,
/// *, Tensor(a!) out)`.
///
/// `query` is [batch, seq_len, heads, head_dim], at cache positions
/// `start_pos..start_pos + seq_len`; `key` and `value` are the caches,
/// [batch, cache_len, kv_heads, head_dim], `heads` a multiple of `kv_heads` (grouped
/// query attention: query head `h` reads KV head `h / (heads / kv_heads)`). Without a
/// mask each query attends to the cache's first `start_pos + seq_len` positions, or with
/// `is_causal` to those up to its own position; a mask ([seq_len, keys], float, added to
/// the scores) makes it attend to the first `keys` positions instead. `scale` defaults to
/// `1 / sqrt(head_dim)`. `out` gets the query's shape. `drpout_p` is ignored, as
/// ExecuTorch ignores it (inference has no dropout).
#[kernel("llama::custom_sdpa.out", dtype = f32)]
#[allow(clippy::too_many_arguments, reason = "the operator's schema")]
pub fn custom_sdpa_out(
    ctx: &KernelContext<'_>,
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    start_pos: i64,
    attn_mask: Option<&Tensor>,
    _dropout_p: f64,
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
    sdpa_f32(ctx, query, key, value, &opts, out)
}
