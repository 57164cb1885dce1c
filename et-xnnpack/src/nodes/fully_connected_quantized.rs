//! FullyConnected on quantized values, in XNNPACK's arithmetic:
//!
//! - static (`qint8` input and output, `qcint8` weights, `qcint32` bias): the pointwise
//!   convolution of the input's rows, run by the quantized Conv2d's packed int8 GEMM
//!   (`conv2d_quantized::prepare_dense`);
//! - dynamic (`qdint8` input quantized per row at run time, `qcint8` or `qbint4`
//!   weights, fp32 bias and output): `sum((x - row_zero_point) * w)` times the row's
//!   scale and the channel's (or, for 4-bit weights, each block's) scale, plus the bias,
//!   clamped to the node's range. Weights are packed once at init: per-channel int8
//!   ones for `compute::qd8_gemm` with each channel's weight sum for the zero-point
//!   correction, 4-bit ones for `compute::qb4_gemm`, still half a byte each.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_xnnpack_schema::{Graph, NodeView};

use super::conv2d_quantized::QuantizedConv;
use super::convert::row_params;
use super::convolution::ConvNode;
use super::fully_connected::{filter_dims, read_operands, Operands, F, TRANSPOSE_WEIGHTS};
use crate::builder::{alloc_bound, check_flags, other_family, Builder};
use crate::compute::clamp::Clamp;
use crate::compute::qb4_gemm::{self, Columns, Qb4Gemm, Rows};
use crate::compute::qd8_gemm::{self, DotKernel, Qd8Gemm};
use crate::compute::window::Window;
use crate::elem::{qd8_params_offset, Elem};
use crate::frame::{Frame, Step};
use crate::plain::cast;
use crate::values::Shape;

/// A dynamically quantized FullyConnected: qdint8 rows times int8 weights, fp32 out.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuantizedFc {
    input: u32,
    output: u32,
    weights: Packed,
    /// `padded(out_features)` floats of the weights' packing, zero without a bias.
    bias: *const f32,
    rows: usize,
    in_features: usize,
    out_features: usize,
    /// Weights per scale (`in_features` for per-channel weights).
    block: usize,
    kernel: DotKernel,
    clamp: Clamp,
}

/// A dynamically quantized FullyConnected's weights, packed at init in method memory.
#[derive(Clone, Copy, Debug)]
enum Packed {
    /// Per-channel int8 weights, by `qd8_gemm::pack`, with each channel's weight sum and
    /// scale.
    PerChannel {
        weights: *const i8,
        sums: *const i32,
        scales: *const f32,
    },
    /// 4-bit weights in blocks, by `qb4_gemm::pack`.
    Blockwise {
        weights: *const u8,
        scales: *const u16,
        ksums: *const f32,
    },
}

/// The quantized families (`DYNAMIC`: qdint8, else qint8): this file's step, or (qint8)
/// the quantized Conv2d's (`S` is either).
pub(super) fn prepare<const DYNAMIC: bool, S>(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<S, DelegateError>
where
    S: From<Step<QuantizedFc>> + From<Step<QuantizedConv>>,
{
    let flags = node.u32(F::VT_FLAGS);
    check_flags(b, flags, TRANSPOSE_WEIGHTS)?;
    let input = b.read_any(node.u32(F::VT_INPUT1_ID))?;
    if b.value(input).elem == Elem::F32 {
        return Err(other_family(b));
    }
    prepare_from_input::<DYNAMIC, S>(b, node, input, flags)
}

/// The packed-memory bound of a quantized FullyConnected: the pointwise convolution's
/// (qint8 input) or `compute::qd8_gemm`'s or `compute::qb4_gemm`'s packed weights, their
/// sums or scales and the padded bias (qdint8 input; a block of 4-bit weights is at least
/// XNNPACK's minimum of 32, other weights have one scale per channel).
pub(super) fn packed(graph: &Graph<'_>, node: &NodeView<'_>) -> usize {
    let (n, k) = filter_dims(graph, node);
    let datatype = |id: u32| graph.value(id as usize).ok().map(|v| v.datatype.name());
    if datatype(node.u32(F::VT_INPUT1_ID)) != Some("qdint8") {
        return super::conv2d_quantized::dense_packed(1, n, k);
    }
    if datatype(node.u32(F::VT_FILTER_ID)) == Some("qbint4") {
        let padded = qb4_gemm::padded(n);
        return alloc_bound(qb4_gemm::weight_bytes(n, k), 1)
            .saturating_add(alloc_bound(qb4_gemm::scale_count(n, k, 32), 2))
            .saturating_add(alloc_bound(padded, 4).saturating_mul(2));
    }
    let padded = qd8_gemm::padded(n);
    alloc_bound(qd8_gemm::weight_bytes(n, k), 1)
        .saturating_add(alloc_bound(padded, 4).saturating_mul(3))
}

/// Prepares a FullyConnected whose input `input` (already read) is quantized: statically
/// (qint8, run as a pointwise convolution) or, with `DYNAMIC`, at run time (qdint8). The
/// other family's path is refused, so each registration links only its own code.
fn prepare_from_input<const DYNAMIC: bool, S>(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    input: u32,
    flags: u32,
) -> Result<S, DelegateError>
where
    S: From<Step<QuantizedFc>> + From<Step<QuantizedConv>>,
{
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
        return Err(other_family(b));
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
        return super::conv2d_quantized::prepare_dense(b, node, &conv).map(S::from);
    }
    let not_constant = || {
        b.fail(
            Error::NotSupported,
            "quantized weights computed at run time are not implemented",
        )
    };
    let raw = b.constant_bytes(filter).ok_or_else(not_constant)?;
    let filter_elem = b.value(filter).elem;
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
    // Elements per weight scale: a 4-bit weight's block, else the whole row.
    let (block, weight_bits) = match filter_elem {
        Elem::Qb4 { block, .. } => (block as usize, 4),
        _ => (in_features.max(1), 8),
    };
    // XNNPACK's own condition on blockwise weights, which the packing relies on (blocks
    // of whole quads).
    if weight_bits == 4 && !qb4_gemm::supported(in_features, block) {
        return Err(b.invalid(
            "4-bit weights' block size is not a multiple of 32 dividing the input features",
        ));
    }
    let blocks = in_features / block;
    // One set of row parameters per row of the product: a qdint8 input quantized over
    // more than its last dim has fewer sets than rows.
    if b.value(input).rows() != rows {
        return Err(b.fail(
            Error::NotSupported,
            "a qdint8 FullyConnected input quantized over more than its last dim",
        ));
    }
    let weight_scales = weight_scales.get();
    if weight_scales.len() != out_features * blocks {
        return Err(b.invalid("the weights do not have one scale per channel or block"));
    }
    let needed = match weight_bits {
        4 => out_features * in_features / 2,
        _ => out_features * in_features,
    };
    if raw.len() < needed {
        return Err(b.invalid("the weights are shorter than their sizes"));
    }
    let (weights, padded) = if weight_bits == 4 {
        let n = out_features;
        let weights = b.alloc::<u8>(qb4_gemm::weight_bytes(n, in_features))?;
        let scales = b.alloc::<u16>(qb4_gemm::scale_count(n, in_features, block))?;
        let ksums = b.alloc::<f32>(qb4_gemm::padded(n))?;
        // The scales were read from bfloat16s: their top halves are those bits.
        let scale = |c: usize, blk: usize| (weight_scales[c * blocks + blk].to_bits() >> 16) as u16;
        // XNNPACK's bytes: two weights each, the even index in the low nibble, as
        // `w + 8`.
        qb4_gemm::pack_xnnpack((n, in_features, block), raw, scale, weights, scales, ksums);
        let packed = Packed::Blockwise {
            weights: weights.as_ptr(),
            scales: scales.as_ptr(),
            ksums: ksums.as_ptr(),
        };
        (packed, qb4_gemm::padded(n))
    } else {
        let padded = qd8_gemm::padded(out_features);
        let weights = b.alloc::<i8>(qd8_gemm::weight_bytes(out_features, in_features))?;
        let sums = b.alloc::<i32>(padded)?;
        let scales = b.alloc::<f32>(padded)?;
        qd8_gemm::pack(
            (out_features, in_features, block),
            |c, i| raw[c * in_features + i] as i8,
            |c, _| weight_scales[c],
            weights,
            sums,
            scales,
        );
        let packed = Packed::PerChannel {
            weights: weights.as_ptr(),
            sums: sums.as_ptr(),
            scales: scales.as_ptr(),
        };
        (packed, padded)
    };
    let padded_bias = b.alloc::<f32>(padded)?;
    if let Some(v) = bias {
        let bias = b
            .constant(v)
            .ok_or_else(|| b.fail(Error::NotSupported, "the bias is not an fp32 constant"))?;
        if bias.len() < out_features {
            return Err(b.invalid("the bias is shorter than the output features"));
        }
        padded_bias[..out_features].copy_from_slice(&bias[..out_features]);
    }
    Ok(S::from(Step {
        run,
        params: QuantizedFc {
            input,
            output,
            weights,
            bias: padded_bias.as_ptr(),
            rows,
            in_features,
            out_features,
            block,
            kernel: DotKernel::detect(weight_bits),
            clamp: Clamp::of(node),
        },
    }))
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

fn run(p: &QuantizedFc, frame: &Frame<'_>) -> KernelResult {
    let (k, n) = (p.in_features, p.out_features);
    // The rows of this execute (fewer than planned under a dynamic input).
    let m = frame.rows(p.input);
    debug_assert!(m <= p.rows);
    let short = || et_runtime::KernelError::new(Error::Internal, "qdint8 value too small");
    let x = frame.input::<i8>(p.input)?;
    let params_at = qd8_params_offset(m * k).unwrap_or(usize::MAX);
    let (data, params) = x.split_at_checked(params_at).ok_or_else(short)?;
    let params = cast::<i8, u8>(params);
    let out = frame.output::<f32>(p.output)?;
    let out = out.get_mut(..m * n).ok_or_else(short)?;
    let data = data.get(..m * k).ok_or_else(short)?;
    if params.len() < m * 8 {
        return Err(short());
    }
    match p.weights {
        Packed::Blockwise {
            weights,
            scales,
            ksums,
        } => {
            let padded = qb4_gemm::padded(n);
            // SAFETY: the packed weights, scales and ksums and the padded bias were
            // allocated with these lengths and written at init in method memory,
            // read-only since, living as long as the plan.
            let gemm = unsafe {
                Qb4Gemm {
                    n,
                    k,
                    block: p.block,
                    weights: core::slice::from_raw_parts(weights, qb4_gemm::weight_bytes(n, k)),
                    scales: core::slice::from_raw_parts(
                        scales,
                        qb4_gemm::scale_count(n, k, p.block),
                    ),
                    ksums: core::slice::from_raw_parts(ksums, padded),
                    bias: core::slice::from_raw_parts(p.bias, padded),
                    kernel: p.kernel,
                }
            };
            let row_params = |r: usize| row_params(params, r);
            let rows = Rows {
                data,
                m,
                params: &row_params,
            };
            let out = Columns::new(out, m, n).ok_or_else(short)?;
            // Bands of whole tiles of output channels, each reading its part of the
            // weights once for every row.
            let clamp = p.clamp;
            frame.split_by(
                n,
                qb4_gemm::TILE,
                m * k,
                (&mut [0u8; 0], 0),
                0,
                |band, _, _| {
                    gemm.product(rows, band, clamp, &out);
                },
            )
        }
        Packed::PerChannel {
            weights,
            sums,
            scales,
        } => {
            let padded = qd8_gemm::padded(n);
            // SAFETY: as above, for `qd8_gemm::pack`'s arrays.
            let gemm = unsafe {
                Qd8Gemm {
                    n,
                    k,
                    block: k,
                    weights: core::slice::from_raw_parts(weights, qd8_gemm::weight_bytes(n, k)),
                    sums: core::slice::from_raw_parts(sums, padded),
                    scales: core::slice::from_raw_parts(scales, padded),
                    bias: core::slice::from_raw_parts(p.bias, padded),
                    kernel: p.kernel,
                }
            };
            per_channel(&gemm, frame, data, params, m, out, p.clamp)
        }
    }
}

/// Per-channel int8 weights: bands of rows, or for one row bands of whole groups of
/// output channels.
fn per_channel(
    gemm: &Qd8Gemm<'_>,
    frame: &Frame<'_>,
    data: &[i8],
    params: &[u8],
    m: usize,
    out: &mut [f32],
    clamp: Clamp,
) -> KernelResult {
    let (n, k) = (gemm.n, gemm.k);
    if m != 1 {
        return frame.split(m, n * k, (out, n), 0, |band, out, _| {
            let rows = data[band.start * k..].chunks_exact(k);
            for (r, (row, y)) in (band.start..).zip(rows.zip(out.chunks_exact_mut(n))) {
                let (row_scale, zero_point) = row_params(params, r);
                gemm.row(row, row_scale, zero_point, y);
                clamp.apply(y);
            }
        });
    }
    let (row_scale, zero_point) = row_params(params, 0);
    frame.split_by(n, qd8_gemm::NR, k, (out, 1), 0, |band, y, _| {
        if let Some(part) = gemm.channels(band) {
            part.row(data, row_scale, zero_point, y);
            clamp.apply(y);
        }
    })
}
