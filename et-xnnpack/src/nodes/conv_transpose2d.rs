//! ConvTranspose2d (XNNPACK's deconvolution) on fp32: NHWC, the filter
//! `[groups * group_out, kh, kw, group_in]` as ExecuTorch writes it. Input pixel
//! `(iy, ix)` reaches output `(iy * stride + ky * dilation - pad_top, ...)`; the output is
//! `stride * (in - 1) + adjustment + (k - 1) * dilation + 1 - pad_before - pad_after`
//! along each axis. Run as a gather: each output pixel sums the taps whose input
//! position is whole, so no weights are packed and no scratch is taken.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::{NodeView, INVALID_ID};

use crate::builder::{check_flags, Builder};
use crate::compute::clamp::Clamp;
use crate::frame::{Frame, Step};

type N<'a> = xf::_XNNNodeConv<'a>;

/// The geometry along one axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Axis {
    pub(crate) input: usize,
    pub(crate) output: usize,
    pub(crate) kernel: usize,
    pub(crate) stride: usize,
    pub(crate) dilation: usize,
    pub(crate) pad_before: usize,
}

impl Axis {
    /// The output length of an axis, or `None` when the fields are out of range
    /// (zero kernel, stride or dilation, an adjustment not below the stride, padding
    /// that removes the whole output) or it overflows.
    pub(crate) fn output_len(
        input: usize,
        kernel: usize,
        stride: usize,
        dilation: usize,
        adjustment: usize,
        pads: (usize, usize),
    ) -> Option<usize> {
        if kernel == 0 || stride == 0 || dilation == 0 || adjustment >= stride || input == 0 {
            return None;
        }
        let span = (kernel - 1).checked_mul(dilation)?.checked_add(1)?;
        let full = stride
            .checked_mul(input - 1)?
            .checked_add(adjustment)?
            .checked_add(span)?;
        full.checked_sub(pads.0.checked_add(pads.1)?)
            .filter(|&n| n > 0)
    }

    /// The input index tap `k` reads for output `o`, if any.
    #[inline(always)]
    fn source(&self, o: usize, k: usize) -> Option<usize> {
        let t = (o + self.pad_before).checked_sub(k * self.dilation)?;
        (t % self.stride == 0 && t / self.stride < self.input).then_some(t / self.stride)
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Deconv {
    input: u32,
    output: u32,
    filter: *const f32,
    bias: Option<*const f32>,
    batch: usize,
    y: Axis,
    x: Axis,
    groups: usize,
    group_in: usize,
    group_out: usize,
    clamp: Clamp,
}

pub(super) fn prepare(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Deconv>, DelegateError> {
    check_flags(b, node.u32(N::VT_FLAGS), 0)?;
    let input = b.read(node.u32(N::VT_INPUT1_ID))?;
    let filter = b.read(node.u32(N::VT_FILTER_ID))?;
    let bias_id = node.u32(N::VT_BIAS_ID);
    let bias = if bias_id == INVALID_ID {
        None
    } else {
        Some(b.read(bias_id)?)
    };
    let output = b.write(
        node.u32(N::VT_OUTPUT_ID),
        &[input, filter, bias.unwrap_or(filter)],
    )?;
    let f = |vt| node.u32(vt) as usize;
    let (groups, group_in, group_out) = (
        f(N::VT_GROUPS),
        f(N::VT_GROUP_INPUT_CHANNELS),
        f(N::VT_GROUP_OUTPUT_CHANNELS),
    );
    let (is, os) = (b.shape(input), b.shape(output));
    if is.rank() != 4 || os.rank() != 4 {
        return Err(b.invalid("a transposed convolution's input or output is not 4-D (NHWC)"));
    }
    let (kh, kw) = (f(N::VT_KERNEL_HEIGHT), f(N::VT_KERNEL_WIDTH));
    let out_h = Axis::output_len(
        is.dims()[1],
        kh,
        f(N::VT_SUBSAMPLING_HEIGHT),
        f(N::VT_DILATION_HEIGHT),
        f(N::VT_ADJUSTMENT_HEIGHT),
        (f(N::VT_PADDING_TOP), f(N::VT_PADDING_BOTTOM)),
    );
    let out_w = Axis::output_len(
        is.dims()[2],
        kw,
        f(N::VT_SUBSAMPLING_WIDTH),
        f(N::VT_DILATION_WIDTH),
        f(N::VT_ADJUSTMENT_WIDTH),
        (f(N::VT_PADDING_LEFT), f(N::VT_PADDING_RIGHT)),
    );
    let (Some(out_h), Some(out_w)) = (out_h, out_w) else {
        return Err(b.invalid(
            "the transposed convolution's window is empty, its adjustment is not below its stride, or its padding removes the output",
        ));
    };
    let channels_out = groups.checked_mul(group_out);
    if groups == 0 || groups.checked_mul(group_in) != Some(is.dims()[3]) {
        return Err(b.invalid("the input channels differ from groups * group_input_channels"));
    }
    if channels_out.is_none_or(|c| os.dims() != [is.dims()[0], out_h, out_w, c]) {
        return Err(b.invalid("the output's sizes differ from what the window and channels give"));
    }
    if b.shape(filter).dims() != [channels_out.unwrap_or(0), kh, kw, group_in] {
        return Err(b.invalid("the filter is not [out channels, kh, kw, group input channels]"));
    }
    let filter_data = b.constant(filter).ok_or_else(|| {
        b.fail(
            Error::NotSupported,
            "a filter computed at run time (or not 4-byte aligned) is not supported",
        )
    })?;
    if let Some(bias) = bias {
        if !b.value(bias).is_constant() || Some(b.value(bias).numel()) != channels_out {
            return Err(b.invalid("the bias is not a constant with one element per output channel"));
        }
    }
    let filter_ptr = filter_data.as_ptr();
    let bias = super::convolution::bias_ptr(b, bias)?;
    let axis = |input, output, kernel, stride, dilation, pad_before| Axis {
        input,
        output,
        kernel,
        stride,
        dilation,
        pad_before,
    };
    Ok(Step {
        run,
        params: Deconv {
            input,
            output,
            filter: filter_ptr,
            bias,
            batch: is.dims()[0],
            y: axis(
                is.dims()[1],
                out_h,
                kh,
                f(N::VT_SUBSAMPLING_HEIGHT),
                f(N::VT_DILATION_HEIGHT),
                f(N::VT_PADDING_TOP),
            ),
            x: axis(
                is.dims()[2],
                out_w,
                kw,
                f(N::VT_SUBSAMPLING_WIDTH),
                f(N::VT_DILATION_WIDTH),
                f(N::VT_PADDING_LEFT),
            ),
            groups,
            group_in,
            group_out,
            clamp: Clamp::of(node),
        },
    })
}

fn run(p: &Deconv, frame: &Frame<'_>) -> KernelResult {
    let ([x], out) = frame.operands([p.input], p.output)?;
    let channels_out = p.groups * p.group_out;
    let filter_len = channels_out * p.y.kernel * p.x.kernel * p.group_in;
    // SAFETY: a constant of `filter_len` floats (its sizes were checked at init),
    // 4-aligned, in program data that outlives the method and is never written.
    let filter = unsafe { core::slice::from_raw_parts(p.filter, filter_len) };
    // SAFETY: as for the filter: a checked constant of one float per output channel.
    let bias = p
        .bias
        .map(|b| unsafe { core::slice::from_raw_parts(b, channels_out) });
    deconvolve(p, x, filter, bias, out);
    p.clamp.apply(out);
    Ok(())
}

/// The transposed convolution of `x` into `out`, before the clamp.
fn deconvolve(p: &Deconv, x: &[f32], filter: &[f32], bias: Option<&[f32]>, out: &mut [f32]) {
    let channels_in = p.groups * p.group_in;
    let channels_out = p.groups * p.group_out;
    let (kh, kw, gi) = (p.y.kernel, p.x.kernel, p.group_in);
    let pixels_in = p.y.input * p.x.input;
    for (n, image) in out
        .chunks_exact_mut(p.y.output * p.x.output * channels_out)
        .enumerate()
        .take(p.batch)
    {
        let x = &x[n * pixels_in * channels_in..][..pixels_in * channels_in];
        for (pixel, acc) in image.chunks_exact_mut(channels_out).enumerate() {
            let (oy, ox) = (pixel / p.x.output, pixel % p.x.output);
            match bias {
                Some(b) => acc.copy_from_slice(b),
                None => acc.fill(0.0),
            }
            for ky in 0..kh {
                let Some(iy) = p.y.source(oy, ky) else {
                    continue;
                };
                for kx in 0..kw {
                    let Some(ix) = p.x.source(ox, kx) else {
                        continue;
                    };
                    let src = &x[(iy * p.x.input + ix) * channels_in..][..channels_in];
                    for g in 0..p.groups {
                        let xs = &src[g * gi..][..gi];
                        for o in g * p.group_out..(g + 1) * p.group_out {
                            let w = &filter[((o * kh + ky) * kw + kx) * gi..][..gi];
                            let dot: f32 = xs.iter().zip(w).map(|(a, b)| a * b).sum();
                            acc[o] += dot;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::{vec, vec::Vec};

    /// The definition as a scatter: every input pixel adds its weighted copy of the
    /// kernel into the full (unpadded) output, which is then cropped by the padding.
    #[allow(clippy::too_many_arguments)]
    fn reference(
        x: &[f32],
        [n, ih, iw]: [usize; 3],
        w: &[f32],
        [groups, gi, go, kh, kw]: [usize; 5],
        [sh, sw, dh, dw]: [usize; 4],
        [pt, pl]: [usize; 2],
        [oh, ow]: [usize; 2],
    ) -> Vec<f32> {
        let (ci, co) = (groups * gi, groups * go);
        let mut out = vec![0.0f64; n * oh * ow * co];
        for b in 0..n {
            for y in 0..ih {
                for xx in 0..iw {
                    for g in 0..groups {
                        for o in 0..go {
                            for ky in 0..kh {
                                for kx in 0..kw {
                                    let oy = (y * sh + ky * dh) as isize - pt as isize;
                                    let ox = (xx * sw + kx * dw) as isize - pl as isize;
                                    if oy < 0 || ox < 0 || oy >= oh as isize || ox >= ow as isize {
                                        continue;
                                    }
                                    let oc = g * go + o;
                                    for i in 0..gi {
                                        let xv = x[((b * ih + y) * iw + xx) * ci + g * gi + i];
                                        let wv = w[((oc * kh + ky) * kw + kx) * gi + i];
                                        out[((b * oh + oy as usize) * ow + ox as usize) * co
                                            + oc] += xv as f64 * wv as f64;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        out.into_iter().map(|v| v as f32).collect()
    }

    #[test]
    fn matches_the_scatter_definition() {
        // (batch, ih, iw, groups, gi, go, kh, kw, sh, sw, dh, dw, pads t/b/l/r, adj h/w)
        let cases: [[usize; 18]; 5] = [
            [1, 5, 6, 1, 4, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1],
            [2, 3, 4, 2, 3, 2, 2, 3, 1, 2, 2, 1, 0, 0, 0, 0, 0, 1],
            [1, 1, 1, 1, 2, 3, 4, 4, 3, 3, 1, 1, 0, 0, 0, 0, 2, 0],
            [1, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0],
            [1, 3, 3, 1, 2, 2, 3, 2, 2, 3, 2, 2, 2, 1, 0, 3, 1, 2],
        ];
        for c in cases {
            let [n, ih, iw, groups, gi, go, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, ah, aw] = c;
            let oh = Axis::output_len(ih, kh, sh, dh, ah, (pt, pb)).unwrap();
            let ow = Axis::output_len(iw, kw, sw, dw, aw, (pl, pr)).unwrap();
            let x: Vec<f32> = (0..n * ih * iw * groups * gi)
                .map(|i| ((i * 29 % 17) as f32 - 8.0) * 0.125)
                .collect();
            let w: Vec<f32> = (0..groups * go * kh * kw * gi)
                .map(|i| ((i * 13 % 11) as f32 - 5.0) * 0.25)
                .collect();
            let axis = |input, output, kernel, stride, dilation, pad_before| Axis {
                input,
                output,
                kernel,
                stride,
                dilation,
                pad_before,
            };
            let p = Deconv {
                input: 0,
                output: 1,
                filter: w.as_ptr(),
                bias: None,
                batch: n,
                y: axis(ih, oh, kh, sh, dh, pt),
                x: axis(iw, ow, kw, sw, dw, pl),
                groups,
                group_in: gi,
                group_out: go,
                clamp: Clamp {
                    min: f32::NEG_INFINITY,
                    max: f32::INFINITY,
                },
            };
            let mut out = vec![f32::NAN; n * oh * ow * groups * go];
            deconvolve(&p, &x, &w, None, &mut out);
            let want = reference(
                &x,
                [n, ih, iw],
                &w,
                [groups, gi, go, kh, kw],
                [sh, sw, dh, dw],
                [pt, pl],
                [oh, ow],
            );
            for (g, w) in out.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{c:?}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn output_sizes_follow_xnnpack() {
        // PyTorch's ConvTranspose2d(k=3, s=2, p=1, output_padding=1) doubles 5 to 10.
        assert_eq!(Axis::output_len(5, 3, 2, 1, 1, (1, 1)), Some(10));
        // An adjustment must stay below the stride; zero strides and kernels are refused.
        assert_eq!(Axis::output_len(5, 3, 2, 1, 2, (1, 1)), None);
        assert_eq!(Axis::output_len(5, 3, 0, 1, 0, (0, 0)), None);
        assert_eq!(Axis::output_len(5, 0, 1, 1, 0, (0, 0)), None);
        // Padding that removes everything.
        assert_eq!(Axis::output_len(1, 1, 1, 1, 0, (1, 0)), None);
        assert_eq!(Axis::output_len(usize::MAX, 3, 2, 1, 0, (0, 0)), None);
    }
}
