//! Depthwise convolution with a depth multiplier of 1 over NHWC: output channel `c` is
//! input channel `c` convolved with its own window of filter taps (`[kh, kw, channels]`).
//!
//! NHWC keeps a pixel's channels contiguous, so the kernel vectorizes across channels.
//! Each step computes `PX` neighbouring output pixels of one row for a block of `BLOCK`
//! channels: `PX * BLOCK / 8` independent vector accumulators hide the add latency, and
//! each tap's weights are loaded once for the `PX` pixels. Pixels whose window lies
//! inside the input (the interior) take that path with no padding checks; the few at the
//! left and right borders, and the top and bottom rows, take the same code with their
//! tap ranges clipped (padding taps contribute nothing, so they are skipped).
//! Bias and the output range are applied as the accumulators are stored.

use super::window::Window;
use crate::nodes::Clamp;

/// Channels per register block (two 8-wide AVX2 vectors).
const BLOCK: usize = 16;

/// Output pixels computed together per block.
const PX: usize = 4;

/// One depthwise convolution: input `[batch, in_h, in_w, channels]`, filter
/// `[kernel_h, kernel_w, channels]`, optional bias `[channels]`, output
/// `[batch, out_h, out_w, channels]`.
pub(crate) struct Depthwise<'a> {
    pub(crate) window: &'a Window,
    pub(crate) channels: usize,
    pub(crate) x: &'a [f32],
    pub(crate) filter: &'a [f32],
    pub(crate) bias: Option<&'a [f32]>,
    pub(crate) clamp: Clamp,
}

impl Depthwise<'_> {
    /// Computes the convolution into `out`, with AVX2 and FMA when the CPU has them.
    ///
    /// # Panics
    /// If a slice is shorter than the window and channels say.
    pub(crate) fn run(&self, out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = avx2::Avx2::detect() {
            // SAFETY: `detect` returned the token, so the CPU supports AVX2 and FMA;
            // `run_avx2` is safe code compiled with those instructions.
            unsafe { self.run_avx2(k, out) };
            return;
        }
        self.rows(Portable, out);
    }

    /// [`Depthwise::rows`] compiled for AVX2 with the FMA kernel inlined.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn run_avx2(&self, k: avx2::Avx2, out: &mut [f32]) {
        self.rows(k, out);
    }

    #[inline(always)]
    fn rows(&self, k: impl Kernel, out: &mut [f32]) {
        let w = self.window;
        let c = self.channels;
        // The kernels index by these sizes without further checks (see `Kernel`).
        let holds = |len: usize, dims: [usize; 4]| {
            dims.iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .is_some_and(|size| len >= size)
        };
        assert!(holds(self.filter.len(), [w.kernel_h, w.kernel_w, c, 1]));
        assert!(self.bias.is_none_or(|b| b.len() >= c));
        assert!(holds(self.x.len(), [w.batch, w.in_h, w.in_w, c]));
        assert!(holds(out.len(), [w.batch, w.out_h, w.out_w, c]));
        // The interior: output columns whose every tap column is inside the input.
        let first = w.pad_left.div_ceil(w.stride_w).min(w.out_w);
        let span = (w.kernel_w - 1) * w.dilation_w;
        let last = (w.in_w + w.pad_left)
            .checked_sub(span + 1)
            .map_or(0, |m| m / w.stride_w + 1)
            .clamp(first, w.out_w);
        for n in 0..w.batch {
            for oh in 0..w.out_h {
                let kh = taps(oh, w.stride_h, w.dilation_h, w.pad_top, w.kernel_h, w.in_h);
                let row_out = (n * w.out_h + oh) * w.out_w;
                let pixel = |ow: usize| {
                    let kw = taps(ow, w.stride_w, w.dilation_w, w.pad_left, w.kernel_w, w.in_w);
                    (kh, kw)
                };
                let at = |ow: usize, out: &mut [f32]| {
                    let out = &mut out[(row_out + ow) * c..];
                    // SAFETY: `taps` clipped the window to the input; `ow < out_w`.
                    unsafe { k.pixels::<1>(self, n, oh, ow, pixel(ow), out) };
                };
                for ow in 0..first {
                    at(ow, out);
                }
                let mut ow = first;
                while ow < last && last - first >= PX {
                    // The last group ends at `last`, overlapping the one before rather
                    // than leaving a few pixels to the one-pixel kernel: recomputing a
                    // pixel writes the same values.
                    let start = ow.min(last - PX);
                    let taps = (kh, (0, w.kernel_w));
                    let out = &mut out[(row_out + start) * c..];
                    // SAFETY: `start + PX <= last <= out_w`; the pixels are interior (every
                    // tap column inside the input) and `kh` was clipped to the input.
                    unsafe { k.pixels::<PX>(self, n, oh, start, taps, out) };
                    ow = start + PX;
                }
                for ow in ow..w.out_w {
                    at(ow, out);
                }
            }
        }
    }
}

/// Computes output pixels: `pixels::<P>(d, n, oh, ow, (kh, kw), out)` writes pixels
/// `ow..ow + P` of row `oh` of image `n` into `out` (from the first pixel's first
/// channel), over filter rows `kh.0..kh.1` and columns `kw.0..kw.1`.
pub(crate) trait Kernel: Copy {
    /// # Safety
    /// `n < batch`, `oh < out_h`, `ow + P <= out_w`; every tap in `kh` x `kw` of every one
    /// of the pixels is inside the input (not padding); `d.x`, `d.filter`, `d.bias` and
    /// `out` hold at least what [`Depthwise::rows`] asserts.
    unsafe fn pixels<const P: usize>(
        self,
        d: &Depthwise<'_>,
        n: usize,
        oh: usize,
        ow: usize,
        taps: ((usize, usize), (usize, usize)),
        out: &mut [f32],
    );
}

/// The kernel in plain arrays, which the compiler vectorizes for the build's target.
#[derive(Clone, Copy)]
struct Portable;

impl Kernel for Portable {
    #[inline(always)]
    unsafe fn pixels<const P: usize>(
        self,
        d: &Depthwise<'_>,
        n: usize,
        oh: usize,
        ow: usize,
        (kh, kw): ((usize, usize), (usize, usize)),
        out: &mut [f32],
    ) {
        let w = d.window;
        let c = d.channels;
        // Input columns of each pixel's first tap (inside the input when `kw` is not
        // empty; otherwise unused, hence saturating).
        let col: [usize; P] = core::array::from_fn(|p| {
            ((ow + p) * w.stride_w + kw.0 * w.dilation_w).saturating_sub(w.pad_left)
        });
        let row = |k: usize| (n * w.in_h + oh * w.stride_h + k * w.dilation_h - w.pad_top) * w.in_w;
        let full = c - c % BLOCK;
        for c0 in (0..full).step_by(BLOCK) {
            let mut acc = [d.bias.map_or([0.0; BLOCK], |b| block(b, c0)); P];
            for i in kh.0..kh.1 {
                let r = row(i);
                for j in kw.0..kw.1 {
                    let wv = block(d.filter, (i * w.kernel_w + j) * c + c0);
                    let dj = (j - kw.0) * w.dilation_w;
                    for (a, &x0) in acc.iter_mut().zip(&col) {
                        let xv = block(d.x, (r + x0 + dj) * c + c0);
                        for l in 0..BLOCK {
                            a[l] += xv[l] * wv[l];
                        }
                    }
                }
            }
            for (p, a) in acc.iter().enumerate() {
                let dst = &mut out[p * c + c0..p * c + c0 + BLOCK];
                for (o, &v) in dst.iter_mut().zip(a) {
                    *o = d.clamp.clamp(v);
                }
            }
        }
        tail(d, (n, oh), &col, (kh, kw), full, out);
    }
}

/// Channels `full..` of the pixels at input columns `col` (see [`Kernel::pixels`]): the
/// ones past the last whole block, one at a time.
#[inline(always)]
pub(crate) fn tail<const P: usize>(
    d: &Depthwise<'_>,
    (n, oh): (usize, usize),
    col: &[usize; P],
    (kh, kw): ((usize, usize), (usize, usize)),
    full: usize,
    out: &mut [f32],
) {
    let w = d.window;
    let c = d.channels;
    let row = |k: usize| (n * w.in_h + oh * w.stride_h + k * w.dilation_h - w.pad_top) * w.in_w;
    for ch in full..c {
        for (p, &x0) in col.iter().enumerate() {
            let mut a = d.bias.map_or(0.0, |b| b[ch]);
            for i in kh.0..kh.1 {
                let r = row(i);
                for j in kw.0..kw.1 {
                    let xi = (r + x0 + (j - kw.0) * w.dilation_w) * c + ch;
                    a += d.x[xi] * d.filter[(i * w.kernel_w + j) * c + ch];
                }
            }
            out[p * c + ch] = d.clamp.clamp(a);
        }
    }
}

/// The range of taps `k` (`first..end`) of output position `o` along one axis whose input
/// position `o * stride + k * dilation - pad` lies in `0..size`. Contiguous because the
/// position grows with `k`; empty (`first == end`) when every tap is padding.
#[inline(always)]
fn taps(
    o: usize,
    stride: usize,
    dilation: usize,
    pad: usize,
    kernel: usize,
    size: usize,
) -> (usize, usize) {
    let base = o * stride;
    let first = pad.saturating_sub(base).div_ceil(dilation).min(kernel);
    // Taps with `base + k * dilation < pad + size`.
    let end = (pad + size)
        .checked_sub(base)
        .map_or(0, |room| room.div_ceil(dilation))
        .clamp(first, kernel);
    (first, end)
}

/// `BLOCK` elements of `v` from `at`, as an array (one bounds check for the block).
#[inline(always)]
pub(crate) fn block(v: &[f32], at: usize) -> [f32; BLOCK] {
    let mut out = [0f32; BLOCK];
    out.copy_from_slice(&v[at..at + BLOCK]);
    out
}

#[cfg(target_arch = "x86_64")]
#[path = "depthwise_avx2.rs"]
mod avx2;

#[cfg(test)]
#[path = "depthwise_tests.rs"]
mod tests;
