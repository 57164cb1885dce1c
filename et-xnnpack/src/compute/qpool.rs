//! XNNPACK's int8 max pooling (`s8-maxpool`): the largest int8 of each window over an
//! NHWC input, then clamped to the node's quantized output range. Input and output share
//! quantization, so no arithmetic touches the values. Taps in the padding read the
//! input pixels XNNPACK's indirection picks ([`Window::pool_row`]).

use super::window::Window;

/// Max pooling of `x` (`[batch, in_h, in_w, channels]`, `window`'s input, which has
/// pixels) into `out` (`[batch, out_h, out_w, channels]`), clamped to `[min, max]`.
#[inline(always)]
pub(crate) fn max_pool_s8(
    window: &Window,
    channels: usize,
    (min, max): (i8, i8),
    x: &[i8],
    out: &mut [i8],
) {
    let (w, c) = (window, channels);
    for n in 0..w.batch {
        for oh in 0..w.out_h {
            for ow in 0..w.out_w {
                let at = ((n * w.out_h + oh) * w.out_w + ow) * c;
                let acc = &mut out[at..at + c];
                acc.fill(min);
                for kh in 0..w.kernel_h {
                    let ih = w.pool_row(oh, kh);
                    for kw in 0..w.kernel_w {
                        let src = ((n * w.in_h + ih) * w.in_w + w.pool_col(ow, kw)) * c;
                        for (a, &v) in acc.iter_mut().zip(&x[src..src + c]) {
                            *a = (*a).max(v);
                        }
                    }
                }
                // Starting from `min` clamped from below; the upper bound is left.
                for a in acc.iter_mut() {
                    *a = (*a).min(max);
                }
            }
        }
    }
}

/// [`max_pool_s8`] compiled for AVX2 (32-lane `vpmaxsb`; SSE2 has no signed byte max).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn max_pool_s8_avx2(
    window: &Window,
    channels: usize,
    range: (i8, i8),
    x: &[i8],
    out: &mut [i8],
) {
    max_pool_s8(window, channels, range, x, out);
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::{vec, vec::Vec};

    fn window(in_hw: (usize, usize), k: usize, s: usize, pad: [usize; 4], d: usize) -> Window {
        let [top, right, bottom, left] = pad;
        let span = (k - 1) * d + 1;
        Window {
            batch: 2,
            in_h: in_hw.0,
            in_w: in_hw.1,
            out_h: (in_hw.0 + top + bottom - span) / s + 1,
            out_w: (in_hw.1 + left + right - span) / s + 1,
            kernel_h: k,
            kernel_w: k,
            stride_h: s,
            stride_w: s,
            dilation_h: d,
            dilation_w: d,
            pad_top: top,
            pad_left: left,
        }
    }

    /// The maximum over the window's taps inside the input (every window here has one),
    /// clamped: max pooling as PyTorch defines it, indexed on its own.
    fn reference(w: &Window, c: usize, (lo, hi): (i8, i8), x: &[i8]) -> Vec<i8> {
        let mut out = vec![0i8; w.batch * w.out_h * w.out_w * c];
        for n in 0..w.batch {
            for oh in 0..w.out_h {
                for ow in 0..w.out_w {
                    for ch in 0..c {
                        let mut best = i32::MIN;
                        for kh in 0..w.kernel_h {
                            for kw in 0..w.kernel_w {
                                let ih = (oh * w.stride_h + kh * w.dilation_h) as isize
                                    - w.pad_top as isize;
                                let iw = (ow * w.stride_w + kw * w.dilation_w) as isize
                                    - w.pad_left as isize;
                                if ih < 0
                                    || iw < 0
                                    || ih >= w.in_h as isize
                                    || iw >= w.in_w as isize
                                {
                                    continue;
                                }
                                let v =
                                    x[((n * w.in_h + ih as usize) * w.in_w + iw as usize) * c + ch];
                                best = best.max(i32::from(v));
                            }
                        }
                        assert!(best != i32::MIN, "a window with no input");
                        out[((n * w.out_h + oh) * w.out_w + ow) * c + ch] =
                            best.clamp(i32::from(lo), i32::from(hi)) as i8;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn max_pooling_matches_the_reference_with_padding_dilation_and_clamp() {
        let cases = [
            // SqueezeNet's 3x3 stride 2, ceil mode as extra bottom/right padding.
            (window((9, 9), 3, 2, [0, 1, 1, 0], 1), (-128, 127)),
            (window((7, 6), 2, 2, [0, 0, 0, 0], 1), (-128, 127)),
            (window((6, 7), 3, 1, [1, 1, 1, 1], 1), (-20, 90)),
            (window((8, 8), 3, 2, [2, 2, 2, 2], 2), (-128, 127)),
            (window((5, 9), 2, 1, [1, 0, 0, 1], 3), (0, 127)),
        ];
        for (w, range) in cases {
            let c = 5;
            let x: Vec<i8> = (0..w.batch * w.in_h * w.in_w * c)
                .map(|i| ((i * 89 + 7) % 256) as u8 as i8)
                .collect();
            let mut out = vec![0i8; w.batch * w.out_h * w.out_w * c];
            max_pool_s8(&w, c, range, &x, &mut out);
            assert_eq!(out, reference(&w, c, range, &x), "{w:?}");
            #[cfg(target_arch = "x86_64")]
            if et_ops::gemm::avx2_fma_available() {
                let mut wide = vec![0i8; out.len()];
                // SAFETY: the CPU supports AVX2 and FMA (checked just above).
                unsafe { max_pool_s8_avx2(&w, c, range, &x, &mut wide) };
                assert_eq!(wide, out);
            }
        }
    }
}
