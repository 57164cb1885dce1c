//! DepthwiseConv2d: one filter per channel (`groups` = input channels, `group_out`
//! outputs each, the depth multiplier). The filter is `[1, kh, kw, channels_out]` and is
//! used as stored. A multiplier of 1 (the common case) runs the register-blocked kernel
//! in `compute::depthwise`; other multipliers a direct loop over each output's taps.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::{Graph, NodeView};

use super::conv2d_quantized::QuantizedConv;
use super::convolution::{bias_ptr, read_conv, N};
use crate::builder::{alloc_bound, other_family, Builder};
use crate::compute::clamp::Clamp;
use crate::compute::depthwise::Depthwise as Kernel;
use crate::compute::window::Window;
use crate::frame::{Frame, Step, DEPTHWISE_TAP_WORK};

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
    /// The filter and bias in the AVX-512 kernel's order (`packed_len(channels, taps)`
    /// floats of method memory), when that kernel runs this node.
    packed: Option<*const f32>,
}

/// Whether [`prepare`] packs the filter for the AVX-512 kernel: on x86-64 CPUs with
/// AVX-512F, for a depth multiplier of 1 and a window that kernel takes.
fn packs(window: &Window, multiplier: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        multiplier == 1
            && crate::compute::depthwise::avx512::fits(window)
            && et_ops::gemm::avx512f_available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (window, multiplier);
        false
    }
}

/// The floats the AVX-512 kernel's packing of `channels` channels of `taps` takes.
fn packed_len(channels: usize, taps: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        crate::compute::depthwise::avx512::packed_len(channels, taps)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (channels, taps);
        0
    }
}

/// The packed-memory bound of an fp32 DepthwiseConv2d: its filter and bias packed for
/// the AVX-512 kernel (taken only on CPUs with AVX-512F; bounded regardless).
pub(super) fn packed(_: &Graph<'_>, node: &NodeView<'_>) -> usize {
    let f = |vt| node.u32(vt) as usize;
    let taps = f(N::VT_KERNEL_HEIGHT).saturating_mul(f(N::VT_KERNEL_WIDTH));
    let channels = f(N::VT_GROUPS).saturating_mul(f(N::VT_GROUP_OUTPUT_CHANNELS));
    alloc_bound(packed_len(channels, taps), 4)
}

pub(super) fn prepare(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Depthwise>, DelegateError> {
    let c = read_conv(b, node)?;
    if c.quantized {
        return Err(other_family(b));
    }
    if c.group_in != 1 {
        return Err(b.invalid("a depthwise convolution has more than one input channel per group"));
    }
    let w = &c.window;
    let channels_out = c.groups * c.group_out;
    if b.shape(c.filter).dims() != [1, w.kernel_h, w.kernel_w, channels_out] {
        return Err(b.invalid("the filter is not [1, kh, kw, channels_out]"));
    }
    let filter = b
        .constant(c.filter)
        .ok_or_else(|| b.invalid("the filter is not 4-byte aligned"))?;
    let bias = bias_ptr(b, c.bias)?;
    let packed = if packs(w, c.group_out) {
        let taps = w.kernel_h * w.kernel_w;
        let out = b.alloc::<f32>(packed_len(channels_out, taps))?;
        let bias = c.bias.and_then(|v| b.constant(v));
        let bias = bias
            .map(|s| {
                s.get(..channels_out)
                    .ok_or_else(|| b.invalid("the bias is too short"))
            })
            .transpose()?;
        #[cfg(target_arch = "x86_64")]
        crate::compute::depthwise::avx512::pack(channels_out, taps, filter, bias, out);
        #[cfg(not(target_arch = "x86_64"))]
        let _ = bias;
        Some(out.as_ptr())
    } else {
        None
    };
    let filter = filter.as_ptr();
    Ok(Step {
        run,
        params: Depthwise {
            input: c.input,
            output: c.output,
            window: c.window,
            channels_in: c.groups,
            multiplier: c.group_out,
            filter,
            bias,
            clamp: Clamp::of(node),
            packed,
        },
    })
}

/// The qint8 family: `conv2d_quantized`'s depthwise kernel.
pub(super) fn prepare_qint8(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<QuantizedConv>, DelegateError> {
    let c = read_conv(b, node)?;
    if !c.quantized {
        return Err(other_family(b));
    }
    super::conv2d_quantized::prepare_depthwise(b, node, &c)
}

fn run(p: &Depthwise, frame: &Frame<'_>) -> KernelResult {
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
    if p.multiplier == 1 {
        let depthwise = Kernel {
            window: w,
            channels: cout,
            x,
            filter,
            bias,
            clamp: p.clamp,
            // SAFETY: packed at init in method memory, `packed_len(cout, taps)` floats,
            // read-only since.
            packed: p
                .packed
                .map(|f| unsafe { core::slice::from_raw_parts(f, packed_len(cout, taps)) }),
        };
        let per_row = w.out_w * cout;
        frame.split(
            w.out_rows(),
            per_row * taps * DEPTHWISE_TAP_WORK,
            (out, per_row),
            0,
            |band, out, _| depthwise.run(band, out),
        )?;
    } else {
        multiplied(p, x, filter, bias, out);
    }
    Ok(())
}

/// A depth multiplier above 1: output channel `c` reads input channel `c / multiplier`.
/// No model this backend is measured on has one, so this is the direct loop.
fn multiplied(p: &Depthwise, x: &[f32], filter: &[f32], bias: Option<&[f32]>, out: &mut [f32]) {
    let w = &p.window;
    let (cin, cout) = (p.channels_in, p.channels_in * p.multiplier);
    for n in 0..w.batch {
        for oh in 0..w.out_h {
            for ow in 0..w.out_w {
                let at = ((n * w.out_h + oh) * w.out_w + ow) * cout;
                let px = &mut out[at..at + cout];
                for (c, v) in px.iter_mut().enumerate() {
                    *v = bias.map_or(0.0, |b| b[c]);
                }
                for kh in 0..w.kernel_h {
                    let Some(ih) = w.in_row(oh, kh) else { continue };
                    for kw in 0..w.kernel_w {
                        let Some(iw) = w.in_col(ow, kw) else { continue };
                        let src = &x[((n * w.in_h + ih) * w.in_w + iw) * cin..][..cin];
                        let taps = &filter[(kh * w.kernel_w + kw) * cout..][..cout];
                        for (c, (a, &f)) in px.iter_mut().zip(taps).enumerate() {
                            *a += src[c / p.multiplier] * f;
                        }
                    }
                }
                for v in px.iter_mut() {
                    *v = p.clamp.clamp(*v);
                }
            }
        }
    }
}
