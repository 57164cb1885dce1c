//! The checks and the set-up the SDPA operators share: shapes of the query and the
//! caches, the keys a call may see, the mask, the scale.

use et_runtime::{KernelContext, KernelError, KernelResult, ScalarType, Tensor};

use crate::attention::{F32Rows, I8Rows, Mask, Operand, Problem, Rows, MAX_QUANTIZED_HEAD_DIM};

/// A 4-D operand: its sizes read in the operator's layout, and where its rows are.
#[derive(Clone, Copy, Debug)]
pub(crate) struct View4 {
    pub batch: usize,
    pub seq: usize,
    pub heads: usize,
    pub dim: usize,
    pub rows: Rows,
}

/// Reads `t` as [batch, seq, heads, head_dim] (or [batch, heads, seq, head_dim] when
/// `seq_at_2`); it must be 4-D and contiguous (the rows' elements adjacent).
pub(crate) fn view4(t: &Tensor, seq_at_2: bool, bad: &'static str) -> KernelResult<View4> {
    if t.dim() != 4 || !t.is_contiguous() {
        return Err(KernelError::invalid(bad));
    }
    let (s, st) = (t.sizes(), t.strides());
    let (sd, hd) = if seq_at_2 { (2, 1) } else { (1, 2) };
    Ok(View4 {
        batch: s[0],
        seq: s[sd],
        heads: s[hd],
        dim: s[3],
        rows: Rows {
            batch: st[0],
            seq: st[sd],
            head: st[hd],
        },
    })
}

/// A position argument (`start_pos`) as an index: never negative.
pub(crate) fn position(start_pos: i64, negative: &'static str) -> KernelResult<usize> {
    usize::try_from(start_pos).map_err(|_| KernelError::invalid(negative))
}

/// The arguments every SDPA operator has besides its tensors.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Options<'a> {
    pub start_pos: i64,
    pub attn_mask: Option<&'a Tensor>,
    pub is_causal: bool,
    pub scale: Option<f64>,
    pub seq_at_2: bool,
}

/// The checked geometry of one call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan<'a> {
    pub q: View4,
    pub k: View4,
    pub v: View4,
    pub start_pos: usize,
    pub keys: usize,
    pub mask: Option<Mask<'a>>,
    pub scale: f32,
}

/// Checks the query against the caches and works out which keys the call sees.
///
/// Without a mask a query sees the cache's filled prefix, `start_pos + seq_len` keys
/// (the later of them hidden by `is_causal`); with one it sees as many keys as the mask
/// has columns (ExecuTorch requires the cache's full length; a shorter mask is accepted
/// and simply skips the tail).
pub(crate) fn plan<'a>(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    opts: &Options<'a>,
) -> KernelResult<Plan<'a>> {
    let q = view4(
        query,
        opts.seq_at_2,
        "sdpa: query must be a contiguous 4-D tensor [batch, seq, heads, head_dim]",
    )?;
    let k = view4(
        key,
        opts.seq_at_2,
        "sdpa: key cache must be a contiguous 4-D tensor [batch, cache_len, kv_heads, head_dim]",
    )?;
    let v = view4(
        value,
        opts.seq_at_2,
        "sdpa: value cache must be a contiguous 4-D tensor [batch, cache_len, kv_heads, head_dim]",
    )?;
    if key.sizes() != value.sizes() {
        return Err(KernelError::invalid(
            "sdpa: key and value caches must have the same shape",
        ));
    }
    if q.batch != k.batch {
        return Err(KernelError::invalid(
            "sdpa: query and key/value caches must have the same batch size",
        ));
    }
    if q.dim != k.dim {
        return Err(KernelError::invalid(
            "sdpa: query and key/value caches must have the same head_dim",
        ));
    }
    if k.heads == 0 || q.heads % k.heads != 0 {
        return Err(KernelError::invalid(
            "sdpa: query heads must be a multiple of the key/value heads",
        ));
    }
    let start_pos = position(opts.start_pos, "sdpa: start_pos must not be negative")?;
    let end = start_pos.checked_add(q.seq);
    if end.is_none_or(|end| end > k.seq) {
        return Err(KernelError::invalid(
            "sdpa: start_pos + seq_len exceeds the key/value cache length",
        ));
    }
    let scale = opts
        .scale
        .unwrap_or_else(|| 1.0 / libm::sqrt(q.dim.max(1) as f64)) as f32;
    let (keys, mask) = match opts.attn_mask {
        None => (start_pos + q.seq, None),
        Some(m) => {
            if opts.is_causal {
                return Err(KernelError::invalid(
                    "sdpa: attn_mask and is_causal cannot both be set",
                ));
            }
            if m.dtype() != ScalarType::Float {
                return Err(KernelError::invalid("sdpa: attn_mask must be float32"));
            }
            if m.dim() != 2 || !m.is_contiguous() {
                return Err(KernelError::invalid(
                    "sdpa: attn_mask must be a contiguous 2-D tensor [seq_len, keys]",
                ));
            }
            if m.size(0) != q.seq {
                return Err(KernelError::invalid(
                    "sdpa: attn_mask must have one row per query position (seq_len)",
                ));
            }
            if m.size(1) > k.seq {
                return Err(KernelError::invalid(
                    "sdpa: attn_mask has more columns than the key/value cache has positions",
                ));
            }
            let mask = Mask {
                data: m.data::<f32>()?,
                row_stride: m.size(1),
            };
            (m.size(1), Some(mask))
        }
    };
    Ok(Plan {
        q,
        k,
        v,
        start_pos,
        keys,
        mask,
        scale,
    })
}

/// Resizes `out` to the query's shape and checks it can take the f32 result.
pub(crate) fn prepare_out<'o>(query: &Tensor, out: &'o mut Tensor) -> KernelResult<&'o mut [f32]> {
    if out.dtype() != ScalarType::Float {
        return Err(KernelError::invalid("sdpa: out must be float32"));
    }
    out.resize(query.sizes())?;
    if !out.is_contiguous() {
        return Err(KernelError::invalid("sdpa: out must be contiguous"));
    }
    out.data_mut::<f32>()
}

/// Runs the attention of a checked plan over any operands.
pub(crate) fn attend<Q: Operand, K: Operand, V: Operand>(
    ctx: &KernelContext<'_>,
    plan: &Plan<'_>,
    (q, k, v): (Q, K, V),
    causal: bool,
    seq_at_2: bool,
    out: &mut [f32],
) {
    if out.is_empty() || plan.q.dim == 0 {
        return;
    }
    let problem = Problem {
        q,
        k,
        v,
        seq: plan.q.seq,
        heads: plan.q.heads,
        kv_heads: plan.k.heads,
        dim: plan.q.dim,
        start_pos: plan.start_pos,
        keys: plan.keys,
        causal,
        mask: plan.mask,
        scale: plan.scale,
        out_seq_first: !seq_at_2,
    };
    problem.run(ctx, out);
}

/// The float attention of `custom_sdpa` (and the float case of the others).
pub(crate) fn sdpa_f32(
    ctx: &KernelContext<'_>,
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    opts: &Options<'_>,
    out: &mut Tensor,
) -> KernelResult {
    if query.dtype() != ScalarType::Float
        || key.dtype() != ScalarType::Float
        || value.dtype() != ScalarType::Float
    {
        return Err(KernelError::invalid(
            "sdpa: query, key and value must all be float32",
        ));
    }
    let plan = plan(query, key, value, opts)?;
    let operands = (
        F32Rows {
            data: query.data::<f32>()?,
            rows: plan.q.rows,
            dim: plan.q.dim,
        },
        F32Rows {
            data: key.data::<f32>()?,
            rows: plan.k.rows,
            dim: plan.k.dim,
        },
        F32Rows {
            data: value.data::<f32>()?,
            rows: plan.v.rows,
            dim: plan.v.dim,
        },
    );
    let out = prepare_out(query, out)?;
    attend(ctx, &plan, operands, opts.is_causal, opts.seq_at_2, out);
    Ok(())
}

/// An int8 operand and its per-row quantization parameters, checked: the scales and
/// zero points have the operand's rank and sizes except a last dim of 1.
pub(crate) fn i8_rows<'a>(
    t: &'a Tensor,
    view: &View4,
    zero_points: Option<&'a Tensor>,
    scales: Option<&'a Tensor>,
    seq_at_2: bool,
    missing: &'static str,
    bad: &'static str,
) -> KernelResult<I8Rows<'a>> {
    let (Some(zp), Some(sc)) = (zero_points, scales) else {
        return Err(KernelError::invalid(missing));
    };
    if t.dtype() != ScalarType::Char
        || zp.dtype() != ScalarType::Char
        || sc.dtype() != ScalarType::Float
        || zp.sizes() != sc.sizes()
        || zp.dim() != 4
        || zp.sizes()[..3] != t.sizes()[..3]
        || zp.size(3) != 1
    {
        return Err(KernelError::invalid(bad));
    }
    let params = view4(zp, seq_at_2, bad)?.rows;
    if view4(sc, seq_at_2, bad)?.rows.seq != params.seq {
        return Err(KernelError::invalid(bad));
    }
    if view.dim > MAX_QUANTIZED_HEAD_DIM {
        return Err(KernelError::unsupported(
            "custom_quantized_sdpa: head_dim above 512 is not supported",
        ));
    }
    Ok(I8Rows {
        data: t.data::<i8>()?,
        rows: view.rows,
        dim: view.dim,
        scales: sc.data::<f32>()?,
        zero_points: zp.data::<i8>()?,
        params,
    })
}
