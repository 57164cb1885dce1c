//! Conv2d and DepthwiseConv2d on qint8 values (qcint8 per-channel weights, qcint32
//! bias), in XNNPACK's arithmetic (see `compute::qconv`): the requantization scale of
//! channel `c` is `input_scale * weight_scale[c] / output_scale`, computed in that order
//! in f32 as XNNPACK does, and the node's output range is quantized to the output's
//! scale and zero point.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelError, KernelResult};
use et_xnnpack_schema::{Graph, NodeView};

use super::convolution::{ConvNode, N};
use crate::builder::{alloc_bound, graph_numel, graph_shape, Builder};
use crate::compute::clamp::Clamp;
use crate::compute::qconv::QConv;
#[cfg(target_arch = "x86_64")]
use crate::compute::qdepthwise::avx2::{interleave, interleaved_len, MAX_TAPS};
#[cfg(target_arch = "x86_64")]
use crate::compute::qdepthwise::avx512;
use crate::compute::qdepthwise::{Packed, QDepthwise};
use crate::compute::qgemm::{pack_groups, packed_len, padded, vnni_available, QGemm, NR};
use crate::compute::requant::Requant;
use crate::compute::window::Window;
use crate::elem::Elem;
use crate::frame::{Frame, Step, DEPTHWISE_TAP_WORK, MAX_BANDS};
use crate::plain::cast_mut;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The packed GEMM (packed for VNNI, or in int16 pairs), each group's after the
    /// previous one.
    Gemm { vnni: bool },
    /// With the filter packed for the AVX-512 kernel (`avx512::packed_len` words) or
    /// the AVX2 one (`interleaved_len` int16s); both null when the CPU has neither,
    /// the window too many taps or the multiplier is not 1.
    Depthwise {
        avx2: *const i16,
        avx512: *const i32,
    },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct QuantizedConv {
    input: u32,
    output: u32,
    window: Window,
    groups: usize,
    group_in: usize,
    group_out: usize,
    kind: Kind,
    x_zero_point: i8,
    /// `Gemm`: packed by `compute::qgemm` (int16 pairs, or VNNI byte quads), group
    /// after group; `Depthwise`: int8 `[taps][cout]` (as stored).
    weights: *const i16,
    /// Per output channel (`groups * padded(group_out)` for `Gemm`, each group's padded
    /// to whole blocks), adjusted in Conv2d for the zero point (and, for VNNI, the +128
    /// row offset): see `compute::qconv`, `qgemm`.
    bias: *const i32,
    scales: *const f32,
    requant: Requant,
}

impl QuantizedConv {
    /// This convolution writing `output` instead of its own output `input`, with the
    /// integer clamp `[min, max]` of the qint8 Clamp that read `input` (same scale and
    /// zero point) folded into the requantizing store, as XNNPACK fuses min/max into a
    /// convolution's output parameters. `None` if this does not write `input` or the
    /// ranges do not meet.
    pub(crate) fn with_output_clamp(
        &self,
        input: u32,
        output: u32,
        (min, max): (i8, i8),
    ) -> Option<QuantizedConv> {
        if self.output != input {
            return None;
        }
        Some(QuantizedConv {
            output,
            requant: self.requant.narrowed(min, max)?,
            ..*self
        })
    }
}

/// What both kinds check and copy: the int32 bias and the requantization of each
/// output channel, `padded` entries (zero past the channels).
struct Prepared {
    x_zero_point: i32,
    bias: &'static mut [i32],
    scales: &'static mut [f32],
    requant: Requant,
}

fn prepare_common(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    c: &ConvNode,
    padded: usize,
    depthwise: bool,
) -> Result<Prepared, DelegateError> {
    let cout = c.groups * c.group_out;
    let (Elem::Qs8(x), Elem::Qc8(ws), Elem::Qs8(y)) = (
        b.value(c.input).elem,
        b.value(c.filter).elem,
        b.value(c.output).elem,
    ) else {
        return Err(b.fail(
            Error::NotSupported,
            "this combination of convolution datatypes is not implemented (qint8 x qcint8 -> qint8 is)",
        ));
    };
    // Output channels run along the filter's dim 0 (OHWI) or, depthwise, dim 3 (1HWO).
    let channel_dim = if depthwise { 3 } else { 0 };
    let ws_dim = ws.dim;
    let ws = ws.get();
    if ws.len() != cout || usize::from(ws_dim) != channel_dim {
        return Err(
            b.invalid("the filter's scales do not run along its output channels, one per channel")
        );
    }
    if b.constant_bytes(c.filter)
        .is_none_or(|raw| raw.len() < b.value(c.filter).numel())
    {
        return Err(b.invalid("the filter is not a constant as long as its sizes"));
    }
    let bias = b.alloc::<i32>(padded)?;
    if let Some(v) = c.bias {
        let Elem::Qc32(_) = b.value(v).elem else {
            return Err(b.fail(
                Error::NotSupported,
                "a qint8 convolution's bias is not qcint32",
            ));
        };
        let data = b
            .constant_bytes(v)
            .filter(|d| d.len() >= cout * 4)
            .ok_or_else(|| b.invalid("the bias is not a constant of one int32 per channel"))?;
        for (q, d) in bias.iter_mut().zip(data.chunks_exact(4)).take(cout) {
            *q = i32::from_le_bytes([d[0], d[1], d[2], d[3]]);
        }
    }
    let scales = b.alloc::<f32>(padded)?;
    for (s, &w) in scales.iter_mut().zip(ws) {
        *s = x.scale * w / y.scale;
        // XNNPACK refuses such scales at operator creation.
        if !s.is_finite() || *s >= 256.0 {
            return Err(b.fail(
                Error::NotSupported,
                "a requantization scale is not below 256 (XNNPACK refuses it)",
            ));
        }
    }
    let clamp = Clamp::of(node);
    if clamp.min.is_nan() || clamp.max.is_nan() || clamp.min > clamp.max {
        return Err(b.invalid("the output range is empty"));
    }
    Ok(Prepared {
        x_zero_point: x.zero_point,
        bias,
        scales,
        requant: Requant::new(y.scale, y.zero_point, clamp.min, clamp.max),
    })
}

/// The filter's int8s (checked by `prepare_common`).
fn filter(b: &Builder<'_, '_>, c: &ConvNode) -> Result<&'static [i8], DelegateError> {
    let raw = b
        .constant_bytes(c.filter)
        .ok_or_else(|| b.invalid("the filter is not constant"))?;
    let copy = b.alloc::<i8>(b.value(c.filter).numel())?;
    for (w, &r) in copy.iter_mut().zip(raw) {
        *w = r as i8;
    }
    Ok(copy)
}

fn step(c: &ConvNode, p: Prepared, weights: *const i16, kind: Kind) -> Step<QuantizedConv> {
    Step {
        run,
        params: QuantizedConv {
            input: c.input,
            output: c.output,
            window: c.window,
            groups: c.groups,
            group_in: c.group_in,
            group_out: c.group_out,
            kind,
            // In range: qint8 zero points are checked when the value is read.
            x_zero_point: p.x_zero_point as i8,
            weights,
            bias: p.bias.as_ptr(),
            scales: p.scales.as_ptr(),
            requant: p.requant,
        },
    }
}

/// Conv2d with a qint8 input (`c` read by `convolution::read_conv`).
pub(crate) fn prepare_conv(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    c: &ConvNode,
) -> Result<Step<QuantizedConv>, DelegateError> {
    let w = &c.window;
    let expected = [c.groups * c.group_out, w.kernel_h, w.kernel_w, c.group_in];
    if b.shape(c.filter).dims() != expected {
        return Err(b.invalid("the filter is not [out channels, kh, kw, group input channels]"));
    }
    prepare_dense(b, node, c)
}

/// A qint8 convolution whose filter holds `kh * kw * group_in` weights per output
/// channel (checked by the caller): Conv2d, and a qint8 FullyConnected as the pointwise
/// convolution of its rows ([`Window::pointwise`]). Each group's weights are packed for
/// the GEMM after the previous group's, its biases and scales padded to whole blocks
/// (see `QGemm::group`).
pub(crate) fn prepare_dense(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    c: &ConvNode,
) -> Result<Step<QuantizedConv>, DelegateError> {
    let w = &c.window;
    let k = w.kernel_h * w.kernel_w * c.group_in;
    let (groups, gout) = (c.groups, c.group_out);
    let group_channels = padded(gout);
    let p = prepare_common(b, node, c, groups * group_channels, false)?;
    spread_groups(p.bias, groups, gout, group_channels);
    spread_groups(p.scales, groups, gout, group_channels);
    let raw = b
        .constant_bytes(c.filter)
        .ok_or_else(|| b.invalid("the filter is not constant"))?;
    let packed = b.alloc::<i16>(groups * packed_len(gout, k))?;
    let vnni = vnni_available();
    let weight = |o: usize, i: usize| raw[o * k + i] as i8;
    pack_groups(
        (groups, gout, k),
        weight,
        p.x_zero_point,
        vnni,
        packed,
        p.bias,
    );
    b.scratch(conv_scratch_bytes(k, groups, gout));
    Ok(step(c, p, packed.as_ptr(), Kind::Gemm { vnni }))
}

/// Moves per-channel entries stored one after another (`groups * group_out` of them,
/// from the start of `values`) to where the GEMM reads each group's: `group_channels`
/// apart, zero after each group's own.
fn spread_groups<T: Copy + Default>(
    values: &mut [T],
    groups: usize,
    group_out: usize,
    group_channels: usize,
) {
    // Back to front: every entry moves to an index at least its own.
    for g in (0..groups).rev() {
        for j in (0..group_channels).rev() {
            values[g * group_channels + j] = if j < group_out {
                values[g * group_out + j]
            } else {
                T::default()
            };
        }
    }
}

/// DepthwiseConv2d with a qint8 input.
pub(crate) fn prepare_depthwise(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    c: &ConvNode,
) -> Result<Step<QuantizedConv>, DelegateError> {
    if c.group_in != 1 {
        return Err(b.invalid("a depthwise convolution has more than one input channel per group"));
    }
    let w = &c.window;
    let cout = c.groups * c.group_out;
    if b.shape(c.filter).dims() != [1, w.kernel_h, w.kernel_w, cout] {
        return Err(b.invalid("the filter is not [1, kh, kw, channels_out]"));
    }
    let p = prepare_common(b, node, c, cout, true)?;
    let weights = filter(b, c)?;
    let taps = w.kernel_h * w.kernel_w;
    #[cfg(target_arch = "x86_64")]
    let kind = {
        use crate::compute::cpu::{vnni, Vnni};
        let simd = c.group_out == 1 && taps <= MAX_TAPS;
        let (mut avx2, mut avx512) = (core::ptr::null(), core::ptr::null());
        if simd && vnni() == Some(Vnni::Avx512) {
            let packed = b.alloc::<i32>(avx512::packed_len(cout, taps))?;
            // In range: qint8 zero points are checked when the value is read.
            let zp = p.x_zero_point as i8;
            avx512::pack(weights, p.bias, p.scales, zp, (cout, taps), packed);
            avx512 = packed.as_ptr();
        } else if simd && et_ops::gemm::avx2_fma_available() {
            let packed = b.alloc::<i16>(interleaved_len(cout, taps))?;
            interleave(weights, cout, taps, packed);
            avx2 = packed.as_ptr();
        }
        Kind::Depthwise { avx2, avx512 }
    };
    #[cfg(not(target_arch = "x86_64"))]
    let kind = {
        let _ = taps;
        Kind::Depthwise {
            avx2: core::ptr::null(),
            avx512: core::ptr::null(),
        }
    };
    b.scratch(QDepthwise::scratch_bytes(cout).saturating_mul(MAX_BANDS));
    Ok(step(c, p, weights.as_ptr().cast::<i16>(), kind))
}

/// The scratch bound of a DepthwiseConv2d: the quantized variant's accumulators, one
/// set per band (the fp32 one takes none).
pub(crate) fn depthwise_scratch(graph: &Graph<'_>, node: &NodeView<'_>) -> usize {
    let channels = graph_shape(graph, node.u32(N::VT_OUTPUT_ID)).map_or(0, |s| s.last());
    QDepthwise::scratch_bytes(channels).saturating_mul(MAX_BANDS)
}

/// The scratch of a quantized Conv2d with `k` inputs per output and `groups` groups of
/// `group_out` outputs: a tile of rows and a patch (and for several groups a tile of
/// one group's outputs) per band.
fn conv_scratch_bytes(k: usize, groups: usize, group_out: usize) -> usize {
    let group_out = if groups > 1 { group_out } else { 0 };
    QConv::scratch_bytes(k, group_out).saturating_mul(MAX_BANDS)
}

/// The scratch bound of a quantized Conv2d (see [`conv_scratch_bytes`]).
pub(crate) fn conv_scratch(_: &Graph<'_>, node: &NodeView<'_>) -> usize {
    let f = |vt| node.u32(vt) as usize;
    let k = f(N::VT_KERNEL_HEIGHT)
        .saturating_mul(f(N::VT_KERNEL_WIDTH))
        .saturating_mul(f(N::VT_GROUP_INPUT_CHANNELS));
    conv_scratch_bytes(k, f(N::VT_GROUPS), f(N::VT_GROUP_OUTPUT_CHANNELS))
}

/// The bound of what `prepare_dense` allocates for `groups` groups of `group_out`
/// output channels of `k` weights: the bias and scales and the packed int16 panels,
/// each group's padded to the GEMM's blocks.
pub(crate) fn dense_packed(groups: usize, group_out: usize, k: usize) -> usize {
    let padded = group_out
        .div_ceil(NR)
        .saturating_mul(NR)
        .saturating_mul(groups);
    let panels = padded.saturating_mul(k.div_ceil(2)).saturating_mul(2);
    alloc_bound(padded, 4)
        .saturating_mul(2)
        .saturating_add(alloc_bound(panels, 2))
}

/// The packed-memory bound of a qint8 Conv2d: [`dense_packed`] of its groups and
/// filter (`[groups * group_out, kh, kw, group_in]`).
pub(crate) fn conv_packed(graph: &Graph<'_>, node: &NodeView<'_>) -> usize {
    let filter = graph_shape(graph, node.u32(N::VT_FILTER_ID));
    let cout = filter.map_or(0, |s| s.dims().first().copied().unwrap_or(0));
    let k = graph_numel(graph, node.u32(N::VT_FILTER_ID)) / cout.max(1);
    let groups = (node.u32(N::VT_GROUPS) as usize).max(1);
    dense_packed(groups, cout / groups, k)
}

/// The packed-memory bound of a qint8 DepthwiseConv2d (filter `[1, kh, kw, cout]`): bias
/// and scales, the int8 copy of the filter and the larger of its two SIMD forms (the
/// AVX2 kernel's interleaved int16s, the AVX-512 one's blocks).
pub(crate) fn depthwise_packed(graph: &Graph<'_>, node: &NodeView<'_>) -> usize {
    let filter = graph_shape(graph, node.u32(N::VT_FILTER_ID));
    let numel = graph_numel(graph, node.u32(N::VT_FILTER_ID));
    let cout = filter.map_or(0, |s| s.last());
    let taps = numel / cout.max(1);
    let interleaved = (cout / 16)
        .saturating_mul(taps.div_ceil(2))
        .saturating_mul(32);
    // `avx512::packed_len`, written out: the bound is computed on every target.
    let blocks = cout
        .div_ceil(32)
        .saturating_mul(taps.div_ceil(2).saturating_mul(32).saturating_add(64));
    alloc_bound(cout, 4)
        .saturating_mul(2)
        .saturating_add(alloc_bound(numel, 1))
        .saturating_add(alloc_bound(interleaved, 2).max(alloc_bound(blocks, 4)))
}

fn run(p: &QuantizedConv, frame: &Frame<'_>) -> KernelResult {
    let w = &p.window;
    let cout = p.groups * p.group_out;
    let k = w.kernel_h * w.kernel_w * p.group_in;
    let channels = if matches!(p.kind, Kind::Gemm { .. }) {
        p.groups * padded(p.group_out)
    } else {
        cout
    };
    // SAFETY: `channels` int32s and floats written at init in method memory, read-only
    // since, living as long as the plan.
    let (bias, scales) = unsafe {
        (
            core::slice::from_raw_parts(p.bias, channels),
            core::slice::from_raw_parts(p.scales, channels),
        )
    };
    let x = frame.input::<i8>(p.input)?;
    let out = frame.output::<i8>(p.output)?;
    if let Kind::Depthwise { avx2, avx512 } = p.kind {
        // SAFETY: `k * cout` int8s (k = taps) copied at init, read-only since.
        let filter = unsafe { core::slice::from_raw_parts(p.weights.cast::<i8>(), k * cout) };
        #[cfg(target_arch = "x86_64")]
        let packed = if !avx512.is_null() {
            // SAFETY: `avx512::packed_len(cout, k)` words packed at init, read-only since.
            Packed::Avx512(unsafe {
                core::slice::from_raw_parts(avx512, avx512::packed_len(cout, k))
            })
        } else if !avx2.is_null() {
            // SAFETY: `interleaved_len(cout, k)` int16s packed at init, read-only since.
            Packed::Avx2(unsafe { core::slice::from_raw_parts(avx2, interleaved_len(cout, k)) })
        } else {
            Packed::None
        };
        #[cfg(not(target_arch = "x86_64"))]
        let packed = {
            let _ = (avx2, avx512);
            Packed::None
        };
        // Sized at init by `QDepthwise::scratch_bytes` (4 bytes per output channel)
        // times the bands.
        let depthwise = QDepthwise {
            window: w,
            channels_in: p.groups,
            multiplier: p.group_out,
            x_zero_point: p.x_zero_point,
            filter,
            packed,
            bias,
            scales,
            requant: p.requant,
        };
        let per_row = w.out_w * cout;
        let work = per_row * w.kernel_h * w.kernel_w * DEPTHWISE_TAP_WORK;
        return frame.split(
            w.out_rows(),
            work,
            (out, per_row),
            cout,
            |band, out, acc| depthwise.run(x, band, out, cast_mut::<f32, i32>(acc)),
        );
    }
    let Kind::Gemm { vnni } = p.kind else {
        return Err(KernelError::new(
            Error::Internal,
            "a depthwise convolution's step reached the GEMM",
        ));
    };
    let len = p.groups * packed_len(p.group_out, k);
    // SAFETY: `len` int16s packed at init (`packed_len` per group), read-only since.
    let packed = unsafe { core::slice::from_raw_parts(p.weights, len) };
    let gemm = QGemm {
        vnni,
        k,
        n: p.group_out,
        packed,
        bias,
        scales,
        requant: p.requant,
    };
    // Sized at init by `conv_scratch_bytes`: `QConv::scratch_bytes` per band.
    let (rows, patch) = QConv::scratch_words(k, if p.groups > 1 { p.group_out } else { 0 });
    let pixels = w.out_rows() * w.out_w;
    if (pixels, p.groups) == (1, 1) {
        // One pixel (a fully connected node's single row): bands of whole blocks of
        // output channels, each reading its own part of the weights.
        let (group_in, x_zero_point) = (p.group_in, p.x_zero_point);
        return frame.split_by(cout, NR, k, (out, 1), rows + patch, |band, out, scratch| {
            let Some(gemm) = gemm.channels(band.clone()) else {
                return;
            };
            let conv = QConv {
                gemm,
                window: w,
                groups: 1,
                group_in,
                group_out: band.len(),
                x_zero_point,
            };
            let (rows, patch) = scratch.split_at_mut(rows);
            conv.run(
                x,
                0..1,
                out,
                cast_mut::<f32, i16>(rows),
                cast_mut::<f32, i8>(patch),
            );
        });
    }
    let conv = QConv {
        gemm,
        window: w,
        groups: p.groups,
        group_in: p.group_in,
        group_out: p.group_out,
        x_zero_point: p.x_zero_point,
    };
    frame.split(
        pixels,
        cout * k,
        (out, cout),
        rows + patch,
        |band, out, scratch| {
            let (rows, patch) = scratch.split_at_mut(rows);
            conv.run(
                x,
                band,
                out,
                cast_mut::<f32, i16>(rows),
                cast_mut::<f32, i8>(patch),
            );
        },
    )
}
