//! `llama::custom_quantized_sdpa.out`: `custom_sdpa` over an int8 KV cache quantized per
//! token and head.

use et_runtime::{kernel, KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use crate::sdpa::{attend, i8_rows, plan, prepare_out, sdpa_f32, Options};

/// `llama::custom_quantized_sdpa.out(Tensor query, Tensor key, Tensor value, SymInt
/// start_pos, Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False,
/// float? scale=None, Tensor? q_zero_points=None, Tensor? q_scales=None,
/// Tensor? k_zero_points=None, Tensor? k_scales=None, Tensor? v_zero_points=None,
/// Tensor? v_scales=None, bool is_seq_at_dim_2=False, *, Tensor(a!) out)`.
///
/// With int8 `query`, `key` and `value`, each comes with int8 zero points and float
/// scales of its shape but a last dim of 1 (one pair per token and head), all six
/// required; element `x` stands for `(x - zero_point) * scale`, and `out` is float32.
/// With float32 operands the quantization parameters are ignored and the call is
/// `custom_sdpa`. `is_seq_at_dim_2` reads every operand (and writes `out`) as
/// [batch, heads, seq, head_dim] instead of [batch, seq, heads, head_dim]. Otherwise as
/// [`custom_sdpa_out`](super::custom_sdpa_out).
#[kernel("llama::custom_quantized_sdpa.out", accepts = [i8, f32])]
#[allow(clippy::too_many_arguments, reason = "the operator's schema")]
pub fn custom_quantized_sdpa_out(
    ctx: &KernelContext<'_>,
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    start_pos: i64,
    attn_mask: Option<&Tensor>,
    _dropout_p: f64,
    is_causal: bool,
    scale: Option<f64>,
    q_zero_points: Option<&Tensor>,
    q_scales: Option<&Tensor>,
    k_zero_points: Option<&Tensor>,
    k_scales: Option<&Tensor>,
    v_zero_points: Option<&Tensor>,
    v_scales: Option<&Tensor>,
    is_seq_at_dim_2: bool,
    out: &mut Tensor,
) -> KernelResult {
    let opts = Options {
        start_pos,
        attn_mask,
        is_causal,
        scale,
        seq_at_2: is_seq_at_dim_2,
    };
    if query.dtype() == ScalarType::Float {
        return sdpa_f32(ctx, query, key, value, &opts, out);
    }
    if query.dtype() != ScalarType::Char
        || key.dtype() != ScalarType::Char
        || value.dtype() != ScalarType::Char
    {
        return Err(KernelError::invalid(
            "custom_quantized_sdpa: query, key and value must be all int8 or all float32",
        ));
    }
    let p = plan(query, key, value, &opts)?;
    let seq_at_2 = is_seq_at_dim_2;
    let operands = (
        i8_rows(
            query,
            &p.q,
            q_zero_points,
            q_scales,
            seq_at_2,
            "custom_quantized_sdpa: an int8 query needs q_zero_points and q_scales",
            "custom_quantized_sdpa: q_zero_points (int8) and q_scales (float32) must be the query's shape with a last dim of 1",
        )?,
        i8_rows(
            key,
            &p.k,
            k_zero_points,
            k_scales,
            seq_at_2,
            "custom_quantized_sdpa: an int8 key cache needs k_zero_points and k_scales",
            "custom_quantized_sdpa: k_zero_points (int8) and k_scales (float32) must be the key cache's shape with a last dim of 1",
        )?,
        i8_rows(
            value,
            &p.v,
            v_zero_points,
            v_scales,
            seq_at_2,
            "custom_quantized_sdpa: an int8 value cache needs v_zero_points and v_scales",
            "custom_quantized_sdpa: v_zero_points (int8) and v_scales (float32) must be the value cache's shape with a last dim of 1",
        )?,
    );
    let out = prepare_out(query, out)?;
    attend(ctx, &p, operands, is_causal, seq_at_2, out);
    Ok(())
}
