//! AvgPooling2d on fp32: the mean of each window of an NHWC input, as XNNPACK computes it.
//! Padding does not count: a window's sum is multiplied by the reciprocal of how many of
//! its pixels are inside the input (XNNPACK's only padded mode; ExecuTorch lowers
//! `count_include_pad=True` only without padding, and ceil mode not at all). XNNPACK's
//! average pooling has no dilation and no int8 datatype.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use super::pooling::{geometry, KEEP_DIMS};
use crate::builder::{check_flags, Builder};
use crate::compute::clamp::Clamp;
use crate::compute::window::Window;
use crate::frame::{Frame, Step};

type P<'a> = xf::_XNNPooling2D<'a>;

#[derive(Clone, Copy, Debug)]
pub(crate) struct AvgPool {
    input: u32,
    output: u32,
    window: Window,
    channels: usize,
    clamp: Clamp,
}

pub(super) fn prepare(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<AvgPool>, DelegateError> {
    check_flags(b, node.u32(P::VT_FLAGS), KEEP_DIMS)?;
    let input = b.read(node.u32(P::VT_INPUT_ID))?;
    let output = b.write(node.u32(P::VT_OUTPUT_ID), &[input])?;
    let (window, channels) = geometry(b, node, input, output)?;
    if window.dilation_h != 1 || window.dilation_w != 1 {
        return Err(b.fail(
            Error::NotSupported,
            "an AvgPooling2d with dilation (XNNPACK's average pooling has none)",
        ));
    }
    // Padding narrower than the window keeps an input pixel in every window (the first
    // starts at the top padding's end at the latest, the last before the bottom's), so
    // no window divides by zero.
    let right = node.u32(P::VT_PADDING_RIGHT) as usize;
    let bottom = node.u32(P::VT_PADDING_BOTTOM) as usize;
    let (kh, kw) = (window.kernel_h, window.kernel_w);
    if window.pad_top >= kh || bottom >= kh || window.pad_left >= kw || right >= kw {
        return Err(b.fail(
            Error::NotSupported,
            "an AvgPooling2d whose padding is as wide as its window (a window could hold no pixel)",
        ));
    }
    let clamp = Clamp::of(node);
    if clamp.min.is_nan() || clamp.max.is_nan() || clamp.min > clamp.max {
        return Err(b.invalid("the output range is empty"));
    }
    Ok(Step {
        run,
        params: AvgPool {
            input,
            output,
            window,
            channels,
            clamp,
        },
    })
}

/// The input positions `[start, end)` a window starting at padded position `at` and
/// `kernel` wide covers, of an input `len` long after `pad` positions of padding.
#[inline(always)]
fn covered(at: usize, kernel: usize, pad: usize, len: usize) -> (usize, usize) {
    (
        at.saturating_sub(pad),
        (at + kernel).saturating_sub(pad).min(len),
    )
}

/// Average pooling of `x` (`window`'s input, `channels` deep) into `out`.
fn avg_pool(w: &Window, c: usize, clamp: &Clamp, x: &[f32], out: &mut [f32]) {
    for n in 0..w.batch {
        for oh in 0..w.out_h {
            let (h0, h1) = covered(oh * w.stride_h, w.kernel_h, w.pad_top, w.in_h);
            for ow in 0..w.out_w {
                let (w0, w1) = covered(ow * w.stride_w, w.kernel_w, w.pad_left, w.in_w);
                let at = ((n * w.out_h + oh) * w.out_w + ow) * c;
                let acc = &mut out[at..at + c];
                acc.fill(0.0);
                for ih in h0..h1 {
                    for iw in w0..w1 {
                        let src = ((n * w.in_h + ih) * w.in_w + iw) * c;
                        for (a, &v) in acc.iter_mut().zip(&x[src..src + c]) {
                            *a += v;
                        }
                    }
                }
                let scale = 1.0 / ((h1 - h0) * (w1 - w0)) as f32;
                for a in acc.iter_mut() {
                    *a = clamp.clamp(*a * scale);
                }
            }
        }
    }
}

fn run(p: &AvgPool, frame: &Frame<'_>) -> KernelResult {
    let ([x], out) = frame.operands([p.input], p.output)?;
    avg_pool(&p.window, p.channels, &p.clamp, x, out);
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::{vec, vec::Vec};

    fn window(in_hw: (usize, usize), k: (usize, usize), s: usize, pad: [usize; 4]) -> Window {
        let [top, right, bottom, left] = pad;
        Window {
            batch: 2,
            in_h: in_hw.0,
            in_w: in_hw.1,
            out_h: (in_hw.0 + top + bottom - k.0) / s + 1,
            out_w: (in_hw.1 + left + right - k.1) / s + 1,
            kernel_h: k.0,
            kernel_w: k.1,
            stride_h: s,
            stride_w: s,
            dilation_h: 1,
            dilation_w: 1,
            pad_top: top,
            pad_left: left,
        }
    }

    /// The mean over the window's pixels inside the input (count_include_pad=False), in
    /// f64 with signed indices.
    fn reference(w: &Window, c: usize, x: &[f32]) -> Vec<f64> {
        let mut out = Vec::new();
        for n in 0..w.batch {
            for oh in 0..w.out_h {
                for ow in 0..w.out_w {
                    for ch in 0..c {
                        let (mut sum, mut count) = (0.0f64, 0);
                        for kh in 0..w.kernel_h {
                            for kw in 0..w.kernel_w {
                                let ih = (oh * w.stride_h + kh) as isize - w.pad_top as isize;
                                let iw = (ow * w.stride_w + kw) as isize - w.pad_left as isize;
                                if (0..w.in_h as isize).contains(&ih)
                                    && (0..w.in_w as isize).contains(&iw)
                                {
                                    let i = ((n * w.in_h + ih as usize) * w.in_w + iw as usize) * c
                                        + ch;
                                    sum += f64::from(x[i]);
                                    count += 1;
                                }
                            }
                        }
                        out.push(sum / f64::from(count));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn average_excludes_padding_and_clamps() {
        let none = Clamp {
            min: f32::NEG_INFINITY,
            max: f32::INFINITY,
        };
        let cases = [
            window((8, 8), (2, 2), 2, [0, 0, 0, 0]),
            window((7, 5), (3, 3), 2, [1, 1, 1, 1]),
            window((6, 6), (3, 2), 1, [2, 1, 0, 0]),
            window((5, 9), (1, 1), 1, [0, 0, 0, 0]),
        ];
        for w in cases {
            let c = 3;
            let x: Vec<f32> = (0..w.batch * w.in_h * w.in_w * c)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) * 0.125)
                .collect();
            let mut out = vec![0.0f32; w.batch * w.out_h * w.out_w * c];
            avg_pool(&w, c, &none, &x, &mut out);
            for (i, (&got, &want)) in out.iter().zip(&reference(&w, c, &x)).enumerate() {
                assert!(
                    (f64::from(got) - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "{w:?} at {i}: {got} vs {want}"
                );
            }
            let relu6 = Clamp { min: 0.0, max: 1.0 };
            avg_pool(&w, c, &relu6, &x, &mut out);
            for (&got, &want) in out.iter().zip(&reference(&w, c, &x)) {
                assert!((f64::from(got) - want.clamp(0.0, 1.0)).abs() <= 1e-5);
            }
        }
        // A corner of a 3x3 window with padding 1: four pixels, not nine.
        let w = window((2, 2), (3, 3), 1, [1, 1, 1, 1]);
        let x = [1.0, 2.0, 3.0, 6.0, 1.0, 2.0, 3.0, 6.0];
        let mut out = vec![0.0f32; 8];
        avg_pool(&w, 1, &none, &x, &mut out);
        assert_eq!(out[0], 3.0);
    }
}
