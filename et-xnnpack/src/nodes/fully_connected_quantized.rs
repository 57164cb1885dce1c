//! FullyConnected on quantized values, in XNNPACK's arithmetic:
//!
//! - static (`qint8` input and output, `qcint8` weights, `qcint32` bias): the pointwise
//!   convolution of the input's rows, run by the quantized Conv2d's packed int8 GEMM
//!   (`conv2d_quantized::prepare_dense`);
//! - dynamic (`qdint8` input quantized per row at run time, `qcint8` or `qbint4`
//!   weights, fp32 bias and output): `sum((x - row_zero_point) * w)` times the row's
//!   scale and the channel's (or, for 4-bit weights, each block's) scale, plus the bias,
//!   clamped to the node's range. Weights are unpacked once at init to int8 rows
//!   `[out][in]` (4-bit ones less their zero point 8), with each channel's (or block's)
//!   weight sum for the zero-point correction.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_schema::xnnpack::NodeView;

use super::conv2d::{ConvNode, Window};
use super::convert::row_params;
use super::fully_connected::{read_operands, Operands};
use super::{wrong_params, Clamp, Params, Step};
use crate::compute::requant::dot_i8;
use crate::exec::Frame;
use crate::plain::cast;
use crate::plan::Shape;
use crate::plan::{qd8_params_offset, Builder, Elem, Scales};

/// A dynamically quantized FullyConnected: qdint8 rows times int8 weights, fp32 out.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuantizedFc {
    input: u32,
    output: u32,
    /// `[out][in]` int8 weights in method memory.
    weights: *const i8,
    /// The weight sum of each output channel's each block (`[out][in / block]`).
    weight_sums: *const i32,
    rows: usize,
    in_features: usize,
    out_features: usize,
    /// One scale per block of `block` weights of a channel (`in_features` for
    /// per-channel weights).
    weight_scales: Scales,
    block: usize,
    bias: Option<*const f32>,
    clamp: Clamp,
}

/// Prepares a FullyConnected whose input `input` (already read) is quantized: statically
/// (qint8, run as a pointwise convolution) or, with `DYNAMIC`, at run time (qdint8). The
/// other family's path is refused, so each registration links only its own code.
pub(crate) fn prepare<const DYNAMIC: bool>(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    input: u32,
    flags: u32,
) -> Result<Step, DelegateError> {
    if flags != 0 {
        return Err(b.fail(
            Error::NotSupported,
            "a quantized FullyConnected with transposed weights is not implemented",
        ));
    }
    let Operands {
        input,
        filter,
        bias,
        output,
        rows,
        in_features,
        out_features,
    } = read_operands(b, node, input, false, true)?;
    let dynamic = matches!(b.value(input).elem, Elem::Qd8 { .. });
    if dynamic != DYNAMIC {
        return Err(super::other_family(b));
    }
    if let (false, Elem::Qs8(_), Elem::Qc8(_), Elem::Qs8(_)) = (
        DYNAMIC,
        b.value(input).elem,
        b.value(filter).elem,
        b.value(output).elem,
    ) {
        let conv = ConvNode {
            input,
            output,
            filter,
            bias,
            window: Window::pointwise(rows),
            groups: 1,
            group_in: in_features,
            group_out: out_features,
            quantized: true,
        };
        return super::conv2d_quantized::prepare_dense(b, node, &conv);
    }
    let not_constant = || {
        b.fail(
            Error::NotSupported,
            "quantized weights computed at run time are not implemented",
        )
    };
    let raw = b.constant_bytes(filter).ok_or_else(not_constant)?;
    let filter_elem = b.value(filter).elem;
    // Elements per weight scale: a 4-bit weight's block, else the whole row.
    let block = match filter_elem {
        Elem::Qb4 { block, .. } => block as usize,
        _ => in_features.max(1),
    };
    let blocks = in_features / block;
    let weights = b.alloc::<i8>(out_features * in_features)?;
    let weight_sums = b.alloc::<i32>(out_features * blocks)?;
    match filter_elem {
        Elem::Qc8(_) => {
            for (w, &r) in weights.iter_mut().zip(raw) {
                *w = r as i8;
            }
        }
        Elem::Qb4 { .. } => {
            // Two per byte, the even index in the low nibble, zero point 8.
            for (pair, &r) in weights.chunks_exact_mut(2).zip(raw) {
                pair[0] = (r & 0x0f) as i8 - 8;
                pair[1] = (r >> 4) as i8 - 8;
            }
        }
        _ => {
            return Err(b.fail(
                Error::NotSupported,
                "the weights' datatype is not qcint8 or qbint4",
            ))
        }
    }
    for (sum, part) in weight_sums.iter_mut().zip(weights.chunks_exact(block)) {
        *sum = part.iter().map(|&w| i32::from(w)).sum();
    }
    let (
        Elem::Qd8 { .. },
        Elem::Qc8(weight_scales)
        | Elem::Qb4 {
            scales: weight_scales,
            ..
        },
        Elem::F32,
    ) = (b.value(input).elem, filter_elem, b.value(output).elem)
    else {
        return Err(b.fail(
            Error::NotSupported,
            "this combination of FullyConnected datatypes is not implemented (qint8 x qcint8 -> qint8, qdint8 x qcint8 or qbint4 -> fp32 are)",
        ));
    };
    // One set of row parameters per row of the product: a qdint8 input quantized over
    // more than its last dim has fewer sets than rows.
    if b.value(input).rows() != rows {
        return Err(b.fail(
            Error::NotSupported,
            "a qdint8 FullyConnected input quantized over more than its last dim",
        ));
    }
    if weight_scales.get().len() != out_features * blocks {
        return Err(b.invalid("the weights do not have one scale per channel or block"));
    }
    let bias = match bias {
        None => None,
        Some(v) => Some(
            b.constant(v)
                .ok_or_else(|| b.fail(Error::NotSupported, "the bias is not an fp32 constant"))?
                .as_ptr(),
        ),
    };
    Ok(Step {
        run,
        params: Params::QuantizedFc(QuantizedFc {
            input,
            output,
            weights: weights.as_ptr(),
            weight_sums: weight_sums.as_ptr(),
            rows,
            in_features,
            out_features,
            weight_scales,
            block,
            bias,
            clamp: Clamp::of(node),
        }),
    })
}

impl QuantizedFc {
    /// The output value and its sizes for this execute's input sizes: the input's rows
    /// by the output features.
    pub(crate) fn reshape(
        &self,
        shape: &dyn Fn(u32) -> Shape,
    ) -> Result<(u32, Shape), &'static str> {
        let out = crate::dynamic::rows_by(shape(self.input), shape(self.output), self.in_features)?;
        Ok((self.output, out))
    }
}

fn run(step: &Step, frame: &Frame<'_>) -> KernelResult {
    let Params::QuantizedFc(p) = step.params else {
        return Err(wrong_params());
    };
    let (k, n, block) = (p.in_features, p.out_features, p.block);
    // The rows of this execute (fewer than planned under a dynamic input).
    let m = frame.rows(p.input);
    debug_assert!(m <= p.rows);
    let blocks = k / block.max(1);
    // SAFETY: `n * k` int8s, `n * blocks` int32s and (with a bias) `n` floats of a
    // constant, written or checked at init in method memory, read-only since, living as
    // long as the plan.
    let (weights, sums, bias) = unsafe {
        (
            core::slice::from_raw_parts(p.weights, n * k),
            core::slice::from_raw_parts(p.weight_sums, n * blocks),
            p.bias.map(|b| core::slice::from_raw_parts(b, n)),
        )
    };
    let x = frame.input::<i8>(p.input)?;
    let params_at = qd8_params_offset(m * k).unwrap_or(usize::MAX);
    let (data, params) = x
        .split_at_checked(params_at)
        .ok_or(et_runtime::KernelError::new(
            Error::Internal,
            "qdint8 value too small",
        ))?;
    let scales = p.weight_scales.get();
    let params = cast::<i8, u8>(params);
    let out = frame.output::<f32>(p.output)?;
    let rows = data.chunks_exact(k).zip(out.chunks_exact_mut(n)).take(m);
    for (r, (row, y)) in rows.enumerate() {
        let (row_scale, zero_point) = row_params(params, r);
        for (o, y) in y.iter_mut().enumerate() {
            let w = &weights[o * k..o * k + k];
            let correct = |blk: usize| zero_point * sums[o * blocks + blk];
            // XNNPACK's order: per channel, the integer sum times the row's scale then
            // the channel's; per block, each block's sum times its scale, then the row's.
            let acc = if blocks == 1 {
                (dot_i8(row, w) - correct(0)) as f32 * row_scale * scales[o]
            } else {
                let mut acc = 0.0f32;
                for blk in 0..blocks {
                    let span = blk * block..(blk + 1) * block;
                    let dot = dot_i8(&row[span.clone()], &w[span]) - correct(blk);
                    acc += dot as f32 * scales[o * blocks + blk];
                }
                acc * row_scale
            };
            *y = acc + bias.map_or(0.0, |b| b[o]);
        }
        p.clamp.apply(y);
    }
    Ok(())
}
