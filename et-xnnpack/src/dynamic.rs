//! Dynamic shapes: a program exported with a dynamic dim (an LLM's token count) gives the
//! delegate graph its upper bound, and each call passes tensors of at most those sizes.
//! Every value's bytes are planned for its bound; an execute whose inputs are smaller
//! works out each node's output sizes in order (each node kind's `reshape`, built on the
//! rules here) and the steps run on those. Only the node kinds an LLM's delegates use
//! have a rule (elementwise, FullyConnected, reshape and copy, concatenation, the
//! dynamic quantization); a graph with another kind runs at its planned sizes only.

use crate::values::Shape;

/// `a` and `b` broadcast (sizes aligned at the innermost dim, a 1 stretching), at the
/// rank of the planned output `bound`, which they may not exceed.
pub(crate) fn broadcast(a: Shape, b: Shape, bound: Shape) -> Result<Shape, &'static str> {
    let mut out = bound;
    let rank = bound.rank();
    for d in 0..rank {
        let from_end = rank - d;
        let size = |s: &Shape| {
            if from_end <= s.rank() {
                s.dims()[s.rank() - from_end]
            } else {
                1
            }
        };
        let (x, y) = (size(&a), size(&b));
        let n = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return Err("an elementwise node's dynamic input sizes do not broadcast"),
        };
        if n > bound.dims()[d] {
            return Err("a dynamic size exceeds the delegate graph's bound");
        }
        out.set(d, n);
    }
    Ok(out)
}

/// A FullyConnected's output: the input's rows (all its dims but the last) by the
/// planned output features.
pub(crate) fn rows_by(
    input: Shape,
    bound: Shape,
    in_features: usize,
) -> Result<Shape, &'static str> {
    let rows = input.numel().unwrap_or(0) / in_features.max(1);
    let mut out = bound;
    if bound.rank() == input.rank() {
        for d in 0..bound.rank().saturating_sub(1) {
            out.set(d, input.dims()[d]);
        }
        return Ok(out);
    }
    // A flattening FullyConnected ([.., in] to [rows, out]): the outer dim takes the rows.
    if bound.rank() == 2 && rows <= bound.dims()[0] {
        out.set(0, rows);
        return Ok(out);
    }
    Err("a FullyConnected's dynamic input does not map onto its output")
}

/// A reshape's (or copy's) output for an input of `input`'s sizes: the planned output
/// `bound` when the input has its planned element count; otherwise `bound` with its
/// outermost dim that is not 1 scaled to hold the input's elements. That is where the
/// dynamic dim of an LLM's reshapes is (the token dim, ahead of the head and head_dim
/// dims a reshape splits or joins); an input it does not fit is refused.
pub(crate) fn reshaped(input: Shape, bound: Shape) -> Result<Shape, &'static str> {
    let n = input.numel().unwrap_or(0);
    let planned = bound.numel().unwrap_or(0);
    if n == planned {
        return Ok(bound);
    }
    let refuse = "a reshape's dynamic input does not map onto its output";
    let d = bound.dims().iter().position(|&s| s != 1).ok_or(refuse)?;
    let rest = planned / bound.dims()[d];
    if rest == 0 || !n.is_multiple_of(rest) || n / rest > bound.dims()[d] {
        return Err(refuse);
    }
    let mut out = bound;
    out.set(d, n / rest);
    Ok(out)
}
