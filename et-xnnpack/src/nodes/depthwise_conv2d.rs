//! DepthwiseConv2d: one filter per channel (`groups` = input channels, `group_out`
//! outputs each, the depth multiplier). The filter is `[1, kh, kw, channels_out]` and is
//! used as stored. Each output pixel accumulates its taps over the contiguous channel
//! vector (NHWC keeps channels innermost, so the inner loop vectorizes): 16 channels at
//! a time held in registers across the taps, then bias and range applied on the way out.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_schema::xnnpack::NodeView;

use super::conv2d::{bias_ptr, read_conv, Window};
use super::{register, wrong_params, Clamp, Params, Step};
use crate::exec::Frame;
use crate::plan::Builder;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Depthwise {
    input: u32,
    output: u32,
    window: Window,
    channels_in: usize,
    multiplier: usize,
    filter: *const f32,
    bias: Option<*const f32>,
    clamp: Clamp,
}

fn prepare(b: &mut Builder<'_, '_>, node: &NodeView<'_>) -> Result<Step, DelegateError> {
    let c = read_conv(b, node)?;
    if c.group_in != 1 {
        return Err(b.invalid("a depthwise convolution has more than one input channel per group"));
    }
    let w = &c.window;
    let channels_out = c.groups * c.group_out;
    if w.kernel_h * w.kernel_w > MAX_TAPS {
        return Err(b.fail(
            et_runtime::Error::NotSupported,
            "depthwise windows of more than 256 taps are not supported",
        ));
    }
    if b.shape(c.filter).dims() != [1, w.kernel_h, w.kernel_w, channels_out] {
        return Err(b.invalid("the filter is not [1, kh, kw, channels_out]"));
    }
    let filter = b
        .constant(c.filter)
        .ok_or_else(|| b.invalid("the filter is not 4-byte aligned"))?;
    let filter = filter.as_ptr();
    let bias = bias_ptr(b, c.bias)?;
    Ok(Step {
        run,
        params: Params::Depthwise(Depthwise {
            input: c.input,
            output: c.output,
            window: c.window,
            channels_in: c.groups,
            multiplier: c.group_out,
            filter,
            bias,
            clamp: Clamp::of(node),
        }),
    })
}

register! {
    XNNDepthwiseConv2d => prepare;
}

fn run(step: &Step, frame: &Frame<'_>) -> KernelResult {
    let Params::Depthwise(p) = step.params else {
        return Err(wrong_params());
    };
    let ([x], out) = frame.operands([p.input], p.output)?;
    let w = &p.window;
    let cout = p.channels_in * p.multiplier;
    let taps = w.kernel_h * w.kernel_w;
    // SAFETY: a constant of `taps * cout` floats (checked at init), 4-aligned, read-only.
    let filter = unsafe { core::slice::from_raw_parts(p.filter, taps * cout) };
    // SAFETY: as above, `cout` floats.
    let bias = p
        .bias
        .map(|b| unsafe { core::slice::from_raw_parts(b, cout) });
    let args = Args {
        p: &p,
        x,
        filter,
        bias,
        out,
    };
    #[cfg(target_arch = "x86_64")]
    if et_ops::gemm::avx2_fma_available() {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above).
        unsafe { run_avx2(args) };
        return Ok(());
    }
    depthwise(args);
    Ok(())
}

struct Args<'a> {
    p: &'a Depthwise,
    x: &'a [f32],
    filter: &'a [f32],
    bias: Option<&'a [f32]>,
    out: &'a mut [f32],
}

/// [`depthwise`] compiled for AVX2 (8-wide vectors for the channel blocks).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2(args: Args<'_>) {
    depthwise(args);
}

/// Channels per register block: the block's accumulators stay in registers across taps.
const BLOCK: usize = 16;

/// The largest window this node runs (taps per output pixel); checked at init.
const MAX_TAPS: usize = 256;

#[inline(always)]
fn depthwise(
    Args {
        p,
        x,
        filter,
        bias,
        out,
    }: Args<'_>,
) {
    let w = &p.window;
    let (cin, cout) = (p.channels_in, p.channels_in * p.multiplier);
    let (lo, hi) = (p.clamp.min, p.clamp.max);
    for n in 0..w.batch {
        for oh in 0..w.out_h {
            for ow in 0..w.out_w {
                let at = ((n * w.out_h + oh) * w.out_w + ow) * cout;
                let px = &mut out[at..at + cout];
                // The input and filter offsets of each tap inside the input (padding taps
                // skipped), gathered once per pixel.
                let mut taps = [(0usize, 0usize); MAX_TAPS];
                let mut count = 0;
                for kh in 0..w.kernel_h {
                    let Some(ih) = w.in_row(oh, kh) else { continue };
                    for kw in 0..w.kernel_w {
                        let Some(iw) = w.in_col(ow, kw) else { continue };
                        taps[count] = (
                            ((n * w.in_h + ih) * w.in_w + iw) * cin,
                            (kh * w.kernel_w + kw) * cout,
                        );
                        count += 1;
                    }
                }
                let taps = &taps[..count];
                if p.multiplier != 1 {
                    for (c, v) in px.iter_mut().enumerate() {
                        *v = bias.map_or(0.0, |b| b[c]);
                    }
                    for &(src, wat) in taps {
                        for (c, (a, &f)) in px.iter_mut().zip(&filter[wat..wat + cout]).enumerate()
                        {
                            *a += x[src + c / p.multiplier] * f;
                        }
                    }
                    for v in px.iter_mut() {
                        *v = v.max(lo).min(hi);
                    }
                    continue;
                }
                let full = cout - cout % BLOCK;
                for c0 in (0..full).step_by(BLOCK) {
                    // Fixed-size blocks: the accumulators live in registers across taps.
                    let mut acc = [0f32; BLOCK];
                    if let Some(b) = bias {
                        acc = block(b, c0);
                    }
                    for &(src, wat) in taps {
                        let (xs, ws) = (block(x, src + c0), block(filter, wat + c0));
                        for i in 0..BLOCK {
                            acc[i] += xs[i] * ws[i];
                        }
                    }
                    for (d, a) in px[c0..c0 + BLOCK].iter_mut().zip(acc) {
                        *d = a.max(lo).min(hi);
                    }
                }
                for c in full..cout {
                    let mut a = bias.map_or(0.0, |b| b[c]);
                    for &(src, wat) in taps {
                        a += x[src + c] * filter[wat + c];
                    }
                    px[c] = a.max(lo).min(hi);
                }
            }
        }
    }
}

/// `BLOCK` elements of `v` from `at`, as an array (the caller keeps `at + BLOCK` in range).
#[inline(always)]
fn block(v: &[f32], at: usize) -> [f32; BLOCK] {
    let mut out = [0f32; BLOCK];
    out.copy_from_slice(&v[at..at + BLOCK]);
    out
}
