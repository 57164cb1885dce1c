//! Convolutions on int8 values in XNNPACK's arithmetic (qint8 input and output, per
//! channel int8 weights, int32 bias): per output channel `acc = bias + sum over taps of
//! (x - x_zero_point) * w`, then the fp32 requantization of [`Requant`].
//!
//! Taps outside the input read the input zero point (XNNPACK pads with it), so they add
//! nothing. Conv2d folds `-x_zero_point * sum(w)` into the bias at init (`QConv::bias`
//! is that adjusted bias) and takes plain dot products of the stored int8s; depthwise
//! subtracts the zero point from each tap it reads (in int16, where the difference
//! times a weight always fits).

use core::ops::Range;

use super::qgemm::{pairs, QGemm, MR};
use super::requant::{dot_i8, Requant};
use super::window::Window;

/// A convolution (any groups) over NHWC int8s, weights `[groups * group_out][k]` with
/// `k = kh * kw * group_in` in (kh, kw, channel) order (XNNPACK's OHWI as stored). One
/// group runs as tiles of [`MR`] pixels through the packed [`QGemm`] (`gemm`); several
/// take a dot product per pixel and channel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QConv<'a> {
    pub(crate) gemm: Option<QGemm<'a>>,
    pub(crate) window: &'a Window,
    pub(crate) groups: usize,
    pub(crate) group_in: usize,
    pub(crate) group_out: usize,
    pub(crate) x_zero_point: i8,
    pub(crate) weights: &'a [i8],
    /// `bias - x_zero_point * sum(w)` per output channel.
    pub(crate) bias: &'a [i32],
    pub(crate) scales: &'a [f32],
    pub(crate) requant: Requant,
}

impl QConv<'_> {
    /// The scratch [`run`](Self::run) takes, in 4-byte words: a tile of widened rows
    /// and one gathered patch.
    pub(crate) fn scratch_words(k: usize) -> (usize, usize) {
        (MR.saturating_mul(pairs(k)), k.div_ceil(4))
    }

    /// [`scratch_words`](Self::scratch_words) in bytes, rounded to the 64 bytes
    /// `Frame::scratch` rounds to.
    pub(crate) fn scratch_bytes(k: usize) -> usize {
        let (rows, patch) = Self::scratch_words(k);
        rows.saturating_add(patch)
            .saturating_mul(4)
            .checked_next_multiple_of(64)
            .unwrap_or(usize::MAX)
    }

    /// Computes output rows `band` (rows of all images, as `Window::out_rows` counts
    /// them) of `[batch, out_h, out_w, groups * group_out]` into `out`, which starts at
    /// the band's first pixel, from `x`; `rows` and `patch` are at least
    /// [`scratch_words`](Self::scratch_words) long.
    pub(crate) fn run(
        &self,
        x: &[i8],
        band: Range<usize>,
        out: &mut [i8],
        rows: &mut [i16],
        patch: &mut [i8],
    ) {
        let w = self.window;
        assert!(band.start <= band.end && band.end <= w.out_rows());
        let pixels = band.start * w.out_w..band.end * w.out_w;
        if let Some(gemm) = self.gemm {
            #[cfg(target_arch = "x86_64")]
            if avx2() {
                // SAFETY: the CPU supports AVX2 and FMA (checked just above); the
                // function only compiles the same safe code for that instruction set.
                unsafe { self.run_gemm_avx2(&gemm, x, pixels, out, rows, patch) };
                return;
            }
            self.run_gemm(&gemm, x, pixels, out, rows, patch);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if et_ops::gemm::avx2_fma_available() {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above); the function
            // only compiles the same safe code for that instruction set.
            unsafe { self.run_avx2(x, pixels, out, patch) };
            return;
        }
        self.run_with(x, pixels, out, patch);
    }

    /// [`run_with`](Self::run_with) compiled for AVX2 (the dot products become 16-lane
    /// `vpmaddwd`).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_avx2(&self, x: &[i8], pixels: Range<usize>, out: &mut [i8], patch: &mut [i8]) {
        self.run_with(x, pixels, out, patch);
    }

    /// [`run_gemm`](Self::run_gemm) compiled for AVX2 (the widening of rows and the
    /// patch copies vectorize).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_gemm_avx2(
        &self,
        gemm: &QGemm<'_>,
        x: &[i8],
        pixels: Range<usize>,
        out: &mut [i8],
        rows: &mut [i16],
        patch: &mut [i8],
    ) {
        self.run_gemm(gemm, x, pixels, out, rows, patch);
    }

    /// One group: output pixels `pixels` (`out` from the first) in tiles of [`MR`],
    /// each pixel's input (the pixel itself for a pointwise convolution, else its
    /// gathered patch) put in `rows` as the GEMM reads them.
    #[inline(always)]
    fn run_gemm(
        &self,
        gemm: &QGemm<'_>,
        x: &[i8],
        pixels: Range<usize>,
        out: &mut [i8],
        rows: &mut [i16],
        patch: &mut [i8],
    ) {
        let w = self.window;
        let (cin, cout) = (self.group_in, self.group_out);
        let k = w.kernel_h * w.kernel_w * cin;
        let len = gemm.row_len();
        let pointwise = w.is_pointwise();
        let patch = &mut patch[..k];
        let rows = &mut rows[..MR * len];
        let avx2 = avx2();
        let mut first = pixels.start;
        while first < pixels.end {
            let count = (pixels.end - first).min(MR);
            for r in 0..count {
                let pixel = first + r;
                let dst = &mut rows[r * len..(r + 1) * len];
                if pointwise {
                    gemm.fill_row(&x[pixel * cin..(pixel + 1) * cin], dst);
                } else {
                    let (n, rest) = (pixel / (w.out_h * w.out_w), pixel % (w.out_h * w.out_w));
                    self.gather(x, (n, rest / w.out_w, rest % w.out_w), 0, cin, patch);
                    gemm.fill_row(patch, dst);
                }
            }
            let at = first - pixels.start;
            gemm.tile(rows, count, &mut out[at * cout..(at + count) * cout], avx2);
            first += count;
        }
    }

    #[inline(always)]
    fn run_with(&self, x: &[i8], pixels: Range<usize>, out: &mut [i8], patch: &mut [i8]) {
        let w = self.window;
        let (gin, gout) = (self.group_in, self.group_out);
        let (cin, cout) = (self.groups * gin, self.groups * gout);
        let k = w.kernel_h * w.kernel_w * gin;
        let pointwise = w.is_pointwise() && self.groups == 1;
        let patch = &mut patch[..k];
        let start = pixels.start;
        for pixel in pixels {
            let at = pixel - start;
            let y = &mut out[at * cout..(at + 1) * cout];
            if pointwise {
                self.channels(&x[pixel * cin..(pixel + 1) * cin], 0, y);
                continue;
            }
            let (n, rest) = (pixel / (w.out_h * w.out_w), pixel % (w.out_h * w.out_w));
            for g in 0..self.groups {
                self.gather(x, (n, rest / w.out_w, rest % w.out_w), g, cin, patch);
                self.channels(patch, g, &mut y[g * gout..(g + 1) * gout]);
            }
        }
    }

    /// Group `g`'s outputs of one pixel from its patch.
    #[inline(always)]
    fn channels(&self, patch: &[i8], g: usize, y: &mut [i8]) {
        let k = patch.len();
        for (j, y) in y.iter_mut().enumerate() {
            let o = g * self.group_out + j;
            let acc = self.bias[o].wrapping_add(dot_i8(patch, &self.weights[o * k..o * k + k]));
            *y = self.requant.apply(acc, self.scales[o]);
        }
    }

    /// The taps of output pixel `(n, oh, ow)` for group `g`, the input zero point where a
    /// tap falls outside the input.
    #[inline(always)]
    fn gather(
        &self,
        x: &[i8],
        (n, oh, ow): (usize, usize, usize),
        g: usize,
        cin: usize,
        patch: &mut [i8],
    ) {
        let w = self.window;
        let gin = self.group_in;
        let mut at = 0;
        for kh in 0..w.kernel_h {
            let ih = w.in_row(oh, kh);
            for kw in 0..w.kernel_w {
                let dst = &mut patch[at..at + gin];
                at += gin;
                match (ih, w.in_col(ow, kw)) {
                    (Some(ih), Some(iw)) => {
                        let src = ((n * w.in_h + ih) * w.in_w + iw) * cin + g * gin;
                        dst.copy_from_slice(&x[src..src + gin]);
                    }
                    _ => dst.fill(self.x_zero_point),
                }
            }
        }
    }
}

/// `(v - zero_point) * f` in int16, where it always fits: `|v - zero_point| <= 255` and
/// `|f| <= 128` give at most 32640. Int16 lanes halve the vector work of int32 ones.
#[inline(always)]
pub(crate) fn product(v: i8, zero_point: i16, f: i8) -> i16 {
    (i16::from(v) - zero_point) * i16::from(f)
}

/// Whether the AVX2 kernels may run.
fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        et_ops::gemm::avx2_fma_available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A depthwise convolution: output channel `c` reads input channel `c / multiplier`,
/// filter `[kh * kw][channels_out]` (XNNPACK's `1HWO` as stored).
#[derive(Clone, Copy, Debug)]
pub(crate) struct QDepthwise<'a> {
    pub(crate) window: &'a Window,
    pub(crate) channels_in: usize,
    pub(crate) multiplier: usize,
    pub(crate) x_zero_point: i8,
    pub(crate) filter: &'a [i8],
    /// The filter packed by `qdepthwise_avx2::interleave` for the AVX2 kernel (empty
    /// when not packed: the portable loop runs).
    #[cfg_attr(
        not(target_arch = "x86_64"),
        allow(dead_code, reason = "read by the x86-64 kernel only")
    )]
    pub(crate) interleaved: &'a [i16],
    /// The bias as stored: the zero point is subtracted from each tap read instead of
    /// folded in (the portable loop skips taps outside the input).
    pub(crate) bias: &'a [i32],
    pub(crate) scales: &'a [f32],
    pub(crate) requant: Requant,
}

impl QDepthwise<'_> {
    /// Scratch bytes [`run`](Self::run) takes: one pixel's int32 accumulators.
    pub(crate) fn scratch_bytes(channels_out: usize) -> usize {
        // Saturating: the bound is read from a payload before it is checked.
        channels_out
            .saturating_mul(4)
            .checked_next_multiple_of(64)
            .unwrap_or(usize::MAX)
    }

    /// Computes output rows `band` (rows of all images, as `Window::out_rows` counts
    /// them) into `out`, which starts at the band's first pixel, from `x`; `acc` holds
    /// at least `channels_out` int32s.
    pub(crate) fn run(&self, x: &[i8], band: Range<usize>, out: &mut [i8], acc: &mut [i32]) {
        assert!(band.start <= band.end && band.end <= self.window.out_rows());
        #[cfg(target_arch = "x86_64")]
        if self.multiplier == 1
            && self.window.kernel_h * self.window.kernel_w <= super::qdepthwise_avx2::MAX_TAPS
            && !self.interleaved.is_empty()
            && avx2()
        {
            // The accumulators' scratch holds the kernel's zero-point row instead.
            let zero_row = crate::plain::cast_mut::<i32, i8>(acc);
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            unsafe { super::qdepthwise_avx2::run(self, self.interleaved, x, band, out, zero_row) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if avx2() {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above); the function
            // only compiles the same safe code for that instruction set.
            unsafe { self.run_avx2(x, band, out, acc) };
            return;
        }
        self.run_with(x, band, out, acc);
    }

    /// [`run_with`](Self::run_with) compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_avx2(&self, x: &[i8], band: Range<usize>, out: &mut [i8], acc: &mut [i32]) {
        self.run_with(x, band, out, acc);
    }

    #[inline(always)]
    fn run_with(&self, x: &[i8], band: Range<usize>, out: &mut [i8], acc: &mut [i32]) {
        let w = self.window;
        let (cin, m) = (self.channels_in, self.multiplier);
        let cout = cin * m;
        let acc = &mut acc[..cout];
        let zp = i16::from(self.x_zero_point);
        let mut pixel = 0;
        for row in band {
            let (n, oh) = (row / w.out_h, row % w.out_h);
            for ow in 0..w.out_w {
                acc.copy_from_slice(self.bias);
                for kh in 0..w.kernel_h {
                    let Some(ih) = w.in_row(oh, kh) else { continue };
                    for kw in 0..w.kernel_w {
                        let Some(iw) = w.in_col(ow, kw) else { continue };
                        let src = &x[((n * w.in_h + ih) * w.in_w + iw) * cin..][..cin];
                        let taps = &self.filter[(kh * w.kernel_w + kw) * cout..][..cout];
                        if m == 1 {
                            for ((a, &v), &f) in acc.iter_mut().zip(src).zip(taps) {
                                *a = a.wrapping_add(i32::from(product(v, zp, f)));
                            }
                        } else {
                            for (c, (a, &f)) in acc.iter_mut().zip(taps).enumerate() {
                                let d = product(src[c / m], zp, f);
                                *a = a.wrapping_add(i32::from(d));
                            }
                        }
                    }
                }
                let y = &mut out[pixel * cout..(pixel + 1) * cout];
                pixel += 1;
                for ((y, &a), &s) in y.iter_mut().zip(acc.iter()).zip(self.scales) {
                    *y = self.requant.apply(a, s);
                }
            }
        }
    }
}

/// `bias[o] - x_zero_point * sum(w[o])` for weights of `k` per output channel: what the
/// kernels start each accumulator from.
pub(crate) fn fold_zero_point(bias: &mut [i32], weights: &[i8], k: usize, x_zero_point: i32) {
    for (b, w) in bias.iter_mut().zip(weights.chunks_exact(k.max(1))) {
        let sum: i32 = w.iter().map(|&v| i32::from(v)).sum();
        *b = b.wrapping_sub(x_zero_point.wrapping_mul(sum));
    }
}

#[cfg(test)]
#[path = "qconv_tests.rs"]
mod tests;
