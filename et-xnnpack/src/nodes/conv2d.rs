//! Conv2d: NHWC convolution with groups, strides, dilation and asymmetric padding, as
//! XNNPACK defines it. The filter is `[groups * group_out, kh, kw, group_in]` (OHWI).
//! A 1x1 convolution with unit stride and no padding is one GEMM over the input as is;
//! one with a single group of at most `MAX_CIN` input channels (a first layer) runs
//! `compute::direct` on the filter packed as one row-major `[kh * kw * group_in,
//! group_out]` matrix; any other gathers patches of a tile of output pixels (im2col) and
//! multiplies them, group by group, by the group's weights packed once at init in the
//! panels of `compute::fgemm` (bias and range applied as the tile is stored). Threads
//! split the pixels.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::{Graph, NodeView};

use super::conv2d_pointwise::PointwiseConv;
use super::conv2d_quantized::QuantizedConv;
use super::convolution::{bias_ptr, read_conv, N};
use crate::builder::{alloc_bound, graph_numel, other_family, Builder};
use crate::compute::clamp::Clamp;
use crate::compute::direct::{Direct, MAX_CIN};
use crate::compute::fgemm::{self, Isa, PackedGemm};
use crate::compute::window::Window;
use crate::frame::{Frame, Step, MAX_BANDS};

/// Output pixels per im2col tile for patches of `k` floats: about 64 KiB of patches, so
/// a tile stays in cache, and 64 to 600 rows. Short patches (a first layer's 27) get long
/// tiles: each tile is one GEMM call, whose fixed costs a 64-row tile would not repay.
fn tile_rows(k: usize) -> usize {
    (16 * 1024 / k.max(1)).clamp(64, 600) / 12 * 12
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Conv {
    input: u32,
    output: u32,
    window: Window,
    groups: usize,
    group_in: usize,
    group_out: usize,
    weights: Weights,
    clamp: Clamp,
    isa: Isa,
}

/// A convolution's weights as its kernel reads them.
#[derive(Clone, Copy, Debug)]
enum Weights {
    /// The direct kernel's (one group): the filter row-major `[kh * kw * group_in,
    /// group_out]` and the bias constant, if any.
    Direct {
        filter: *const f32,
        bias: Option<*const f32>,
    },
    /// The packed GEMM's, per group: `fgemm::packed_len(group_out, k)` floats of panels
    /// and `fgemm::padded(group_out)` of bias (zero without one).
    Panels {
        panels: *const f32,
        bias: *const f32,
    },
}

/// The fp32 family: this file's step, or the pointwise GEMM's (`S` is either).
pub(super) fn prepare<S: From<Step<Conv>> + From<Step<PointwiseConv>>>(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<S, DelegateError> {
    let c = read_conv(b, node)?;
    if c.quantized {
        return Err(other_family(b));
    }
    let w = &c.window;
    let taps = w.kernel_h * w.kernel_w;
    let k = taps * c.group_in;
    let expected = [c.groups * c.group_out, w.kernel_h, w.kernel_w, c.group_in];
    if b.shape(c.filter).dims() != expected {
        return Err(b.invalid("the filter is not [out channels, kh, kw, group input channels]"));
    }
    let filter = b
        .constant(c.filter)
        .ok_or_else(|| b.invalid("the filter is not 4-byte aligned"))?;
    if w.is_pointwise() && c.groups == 1 {
        return super::conv2d_pointwise::prepare(b, node, &c, filter).map(S::from);
    }
    let weights = if is_direct(w, c.groups, c.group_in) {
        let packed = b.alloc::<f32>(k * c.group_out)?;
        for o in 0..c.group_out {
            for (row, &v) in filter[o * k..][..k].iter().enumerate() {
                packed[row * c.group_out + o] = v;
            }
        }
        Weights::Direct {
            filter: packed.as_ptr(),
            bias: bias_ptr(b, c.bias)?,
        }
    } else {
        let (len, channels) = (
            fgemm::packed_len(c.group_out, k),
            fgemm::padded(c.group_out),
        );
        let packed = b.alloc::<f32>(c.groups * len)?;
        let bias = b.alloc::<f32>(c.groups * channels)?;
        let constant = match c.bias {
            Some(v) => Some(
                b.constant(v)
                    .and_then(|src| src.get(..c.groups * c.group_out))
                    .ok_or_else(|| {
                        b.invalid(
                            "the bias is not 4-byte aligned constant of one float per channel",
                        )
                    })?,
            ),
            None => None,
        };
        for g in 0..c.groups {
            let first = g * c.group_out;
            let weight = |o: usize, i: usize| filter[(first + o) * k + i];
            fgemm::pack(c.group_out, k, weight, &mut packed[g * len..(g + 1) * len]);
            if let Some(src) = constant {
                bias[g * channels..][..c.group_out]
                    .copy_from_slice(&src[first..first + c.group_out]);
            }
        }
        b.scratch(scratch_bytes(k, c.groups, c.group_out));
        Weights::Panels {
            panels: packed.as_ptr(),
            bias: bias.as_ptr(),
        }
    };
    Ok(S::from(Step {
        run,
        params: Conv {
            input: c.input,
            output: c.output,
            window: c.window,
            groups: c.groups,
            group_in: c.group_in,
            group_out: c.group_out,
            weights,
            clamp: Clamp::of(node),
            isa: Isa::detect(),
        },
    }))
}

/// The floats of one band's scratch: a tile of patches, and for several groups a tile of
/// one group's outputs (spread over the pixels' channels once computed).
fn band_floats(k: usize, groups: usize, group_out: usize) -> usize {
    let tile = tile_rows(k);
    let outputs = if groups > 1 {
        tile.saturating_mul(group_out)
    } else {
        0
    };
    tile.saturating_mul(k).saturating_add(outputs)
}

fn scratch_bytes(k: usize, groups: usize, group_out: usize) -> usize {
    // Saturating: the estimate runs on the payload's fields before `prepare` checks them.
    band_floats(k, groups, group_out)
        .checked_next_multiple_of(16)
        .unwrap_or(usize::MAX)
        .saturating_mul(4 * MAX_BANDS)
}

pub(super) fn scratch(_: &Graph<'_>, node: &NodeView<'_>) -> usize {
    let f = |vt| node.u32(vt) as usize;
    let k = f(N::VT_KERNEL_HEIGHT)
        .saturating_mul(f(N::VT_KERNEL_WIDTH))
        .saturating_mul(f(N::VT_GROUP_INPUT_CHANNELS));
    // Tiles of patches (the direct and pointwise kernels take none).
    scratch_bytes(k, f(N::VT_GROUPS), f(N::VT_GROUP_OUTPUT_CHANNELS))
}

/// The qint8 family: `conv2d_quantized`'s int8 GEMM.
pub(super) fn prepare_qint8(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<QuantizedConv>, DelegateError> {
    let c = read_conv(b, node)?;
    if !c.quantized {
        return Err(other_family(b));
    }
    super::conv2d_quantized::prepare_conv(b, node, &c)
}

/// The packed-memory bound of an fp32 Conv2d: its filter, repacked once.
pub(super) fn packed(graph: &Graph<'_>, node: &NodeView<'_>) -> usize {
    let f = |vt| node.u32(vt) as usize;
    let (cin, cout) = (
        f(N::VT_GROUP_INPUT_CHANNELS),
        f(N::VT_GROUP_OUTPUT_CHANNELS),
    );
    let groups = f(N::VT_GROUPS);
    let k = f(N::VT_KERNEL_HEIGHT)
        .saturating_mul(f(N::VT_KERNEL_WIDTH))
        .saturating_mul(cin);
    // Any path's: the pointwise panels and padded bias, the filter repacked for the
    // direct kernel, or each group's panels and padded bias.
    let panels = alloc_bound(groups.saturating_mul(fgemm::packed_len(cout, k)), 4)
        .saturating_add(alloc_bound(groups.saturating_mul(fgemm::padded(cout)), 4));
    alloc_bound(graph_numel(graph, node.u32(N::VT_FILTER_ID)), 4)
        .max(super::conv2d_pointwise::packed_bound(cout, cin))
        .max(panels)
}

fn run(p: &Conv, frame: &Frame<'_>) -> KernelResult {
    let ([x], out) = frame.operands([p.input], p.output)?;
    let w = &p.window;
    let (gin, gout) = (p.group_in, p.group_out);
    let (cin, cout) = (p.groups * gin, p.groups * gout);
    let k = w.kernel_h * w.kernel_w * gin;
    let pixels = w.batch * w.out_h * w.out_w;
    let (panels, bias) = match p.weights {
        Weights::Panels { panels, bias } => (panels, bias),
        Weights::Direct { filter, bias } => {
            // SAFETY: packed at init, `k * cout` floats, read-only since.
            let filter = unsafe { core::slice::from_raw_parts(filter, k * cout) };
            // SAFETY: a constant of `cout` floats (checked at init), 4-aligned, read-only.
            let bias = bias.map(|b| unsafe { core::slice::from_raw_parts(b, cout) });
            let direct = Direct {
                window: w,
                cin,
                cout,
                x,
                filter,
                bias,
                clamp: p.clamp,
            };
            let per_row = w.out_w * cout;
            return frame.split(
                w.out_rows(),
                per_row * k,
                (out, per_row),
                0,
                |band, out, _| direct.run(band, out),
            );
        }
    };
    let (len, channels) = (fgemm::packed_len(gout, k), fgemm::padded(gout));
    // SAFETY: packed at init in method memory, `groups` times `len` floats of panels and
    // `channels` floats of bias, read-only since, living as long as the plan.
    let (panels, bias) = unsafe {
        (
            core::slice::from_raw_parts(panels, p.groups * len),
            core::slice::from_raw_parts(bias, p.groups * channels),
        )
    };
    let (groups, clamp, isa) = (p.groups, p.clamp, p.isa);
    let group = |g: usize| PackedGemm {
        n: gout,
        k,
        panels: &panels[g * len..(g + 1) * len],
        bias: &bias[g * channels..(g + 1) * channels],
        min: clamp.min,
        max: clamp.max,
        isa,
    };
    let tile = tile_rows(k);
    let per_image = w.out_h * w.out_w;
    frame.split(
        pixels,
        cout * k,
        (out, cout),
        band_floats(k, groups, gout),
        |band, out, scratch| {
            let (patches, outputs) = scratch.split_at_mut(tile * k);
            let mut start = band.start;
            while start < band.end {
                let rows = tile.min(band.end - start);
                let at = start - band.start;
                for g in 0..groups {
                    for r in 0..rows {
                        let (n, rest) = ((start + r) / per_image, (start + r) % per_image);
                        let (oh, ow) = (rest / w.out_w, rest % w.out_w);
                        let patch = &mut patches[r * k..(r + 1) * k];
                        gather_patch(x, w, cin, g * gin, gin, n, oh, ow, patch);
                    }
                    if groups == 1 {
                        group(0).rows(patches, rows, &mut out[at * cout..(at + rows) * cout]);
                        continue;
                    }
                    let outputs = &mut outputs[..rows * gout];
                    group(g).rows(patches, rows, outputs);
                    for (r, y) in outputs.chunks_exact(gout).enumerate() {
                        let pixel = (at + r) * cout + g * gout;
                        out[pixel..pixel + gout].copy_from_slice(y);
                    }
                }
                start += rows;
            }
        },
    )
}

/// Whether a convolution runs the direct kernel: one group of few input channels, where
/// im2col's patches would be too short to repay gathering them for a GEMM.
fn is_direct(w: &Window, groups: usize, group_in: usize) -> bool {
    groups == 1 && group_in <= MAX_CIN && !w.is_pointwise()
}

/// The patch of output pixel `(n, oh, ow)` for channels `c0..c0 + len` of each tap, in
/// the packed filter's row order (tap-major, then channel); zeros where the window
/// covers padding.
#[allow(
    clippy::too_many_arguments,
    reason = "one pixel's coordinates and its channel range"
)]
#[inline]
fn gather_patch(
    x: &[f32],
    w: &Window,
    cin: usize,
    c0: usize,
    len: usize,
    n: usize,
    oh: usize,
    ow: usize,
    patch: &mut [f32],
) {
    // With unit dilation and every channel, a kernel row whose taps are all inside the
    // input is one contiguous run of `kernel_w * cin` input floats.
    let whole_rows = w.dilation_w == 1 && len == cin;
    let row_len = w.kernel_w * len;
    let inside = w.in_col(ow, 0).is_some() && w.in_col(ow, w.kernel_w - 1).is_some();
    for kh in 0..w.kernel_h {
        let row = w.in_row(oh, kh);
        if let (true, true, Some(ih)) = (whole_rows, inside, row) {
            let iw = w.in_col(ow, 0).unwrap_or(0);
            let at = ((n * w.in_h + ih) * w.in_w + iw) * cin;
            copy(&mut patch[kh * row_len..][..row_len], &x[at..at + row_len]);
            continue;
        }
        for kw in 0..w.kernel_w {
            let dst = &mut patch[(kh * w.kernel_w + kw) * len..][..len];
            match (row, w.in_col(ow, kw)) {
                (Some(ih), Some(iw)) => {
                    let at = ((n * w.in_h + ih) * w.in_w + iw) * cin + c0;
                    copy(dst, &x[at..at + len]);
                }
                _ => dst.fill(0.0),
            }
        }
    }
}

/// `dst.copy_from_slice(src)`, inline for short runs of few channels (a `memcpy` call
/// per handful of floats cost more than the copy).
#[inline(always)]
fn copy(dst: &mut [f32], src: &[f32]) {
    if dst.len() < 32 {
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = v;
        }
    } else {
        dst.copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    /// Every patch of every output pixel against a per-tap, per-channel gather.
    fn check(w: Window, cin: usize, c0: usize, len: usize) {
        let x: Vec<f32> = (0..w.batch * w.in_h * w.in_w * cin)
            .map(|i| i as f32 + 1.0)
            .collect();
        let k = w.kernel_h * w.kernel_w * len;
        let mut patch = std::vec![f32::NAN; k];
        for n in 0..w.batch {
            for oh in 0..w.out_h {
                for ow in 0..w.out_w {
                    gather_patch(&x, &w, cin, c0, len, n, oh, ow, &mut patch);
                    for kh in 0..w.kernel_h {
                        for kw in 0..w.kernel_w {
                            for c in 0..len {
                                let ih = (oh * w.stride_h + kh * w.dilation_h) as isize
                                    - w.pad_top as isize;
                                let iw = (ow * w.stride_w + kw * w.dilation_w) as isize
                                    - w.pad_left as isize;
                                let inside = (0..w.in_h as isize).contains(&ih)
                                    && (0..w.in_w as isize).contains(&iw);
                                let want = if inside {
                                    let (ih, iw) = (ih as usize, iw as usize);
                                    x[((n * w.in_h + ih) * w.in_w + iw) * cin + c0 + c]
                                } else {
                                    0.0
                                };
                                let got = patch[(kh * w.kernel_w + kw) * len + c];
                                assert_eq!(got, want, "{w:?} pixel {n},{oh},{ow} tap {kh},{kw}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments, reason = "test geometry, spelled out")]
    fn window(
        batch: usize,
        (in_h, in_w): (usize, usize),
        (kernel_h, kernel_w): (usize, usize),
        (stride_h, stride_w): (usize, usize),
        (dilation_h, dilation_w): (usize, usize),
        [top, right, bottom, left]: [usize; 4],
    ) -> Window {
        let out = |size: usize, pad: usize, k: usize, d: usize, s: usize| {
            (size + pad - ((k - 1) * d + 1)) / s + 1
        };
        Window {
            batch,
            in_h,
            in_w,
            out_h: out(in_h, top + bottom, kernel_h, dilation_h, stride_h),
            out_w: out(in_w, left + right, kernel_w, dilation_w, stride_w),
            kernel_h,
            kernel_w,
            stride_h,
            stride_w,
            dilation_h,
            dilation_w,
            pad_top: top,
            pad_left: left,
        }
    }

    #[test]
    fn patches_match_a_per_tap_gather() {
        // A first layer: 3 channels, stride 2, padding on the bottom and right only.
        check(
            window(2, (9, 8), (3, 3), (2, 2), (1, 1), [0, 1, 1, 0]),
            3,
            0,
            3,
        );
        // Symmetric padding, stride 1, wide channel runs (the `copy_from_slice` path).
        check(
            window(1, (5, 6), (3, 3), (1, 1), (1, 1), [1, 1, 1, 1]),
            40,
            0,
            40,
        );
        // Dilation and a channel subset (a group): taps one at a time.
        check(
            window(1, (7, 7), (3, 2), (1, 2), (2, 3), [2, 1, 0, 3]),
            6,
            2,
            3,
        );
        check(
            window(1, (4, 5), (2, 3), (1, 1), (1, 1), [1, 2, 1, 2]),
            6,
            3,
            3,
        );
    }
}
