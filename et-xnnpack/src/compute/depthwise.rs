//! Depthwise convolution with a depth multiplier of 1 over NHWC: output channel `c` is
//! input channel `c` convolved with its own window of filter taps (`[kh, kw, channels]`).
//!
//! NHWC keeps a pixel's channels contiguous, so the kernel vectorizes across channels.
//! [`sweep`] hands it `PX` neighbouring interior pixels of a row at a time (border pixels
//! one at a time, over their taps clipped to the input); for each block of `BLOCK`
//! channels, `PX * BLOCK / 8` independent vector accumulators hide the add latency and
//! each tap's weights are loaded once for the pixels. Bias and the output range are
//! applied as the accumulators are stored.

use core::ops::Range;

use super::clamp::Clamp;
#[cfg(target_arch = "x86_64")]
use super::sweep::Avx2;
use super::sweep::{block, holds_at_least, sweep, Kernel, Portable, BLOCK};
use super::window::Window;

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
    /// The filter and bias packed for the AVX-512 kernel (`avx512::pack`), when the CPU
    /// has AVX-512F and the window [fits](avx512::fits) that kernel; it then runs instead
    /// of the AVX2 one.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code, reason = "x86-64 only"))]
    pub(crate) packed: Option<&'a [f32]>,
}

impl Depthwise<'_> {
    /// Computes output rows `band` of the convolution (rows of all images, as
    /// `Window::out_rows` counts them) into `out`, which starts at the band's first
    /// pixel, with AVX-512F from the packed filter when there is one, else with AVX2 and
    /// FMA when the CPU has them, with NEON on aarch64.
    ///
    /// # Panics
    /// If a slice is shorter than the window and channels say, or `band` goes past the
    /// output's rows.
    pub(crate) fn run(&self, band: Range<usize>, out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(packed) = self.packed.filter(|_| et_ops::gemm::avx512f_available()) {
            // SAFETY: the CPU supports AVX-512F, checked just now.
            unsafe { avx512::rows(self, packed, band, out) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = Avx2::detect() {
            // SAFETY: `detect` returned the token, so the CPU supports AVX2 and FMA;
            // `run_avx2` is safe code compiled with those instructions.
            unsafe { self.run_avx2(k, band, out) };
            return;
        }
        #[cfg(target_arch = "aarch64")]
        self.rows(super::sweep::Neon, band, out);
        #[cfg(not(target_arch = "aarch64"))]
        self.rows(Portable, band, out);
    }

    /// [`Depthwise::rows`] compiled for AVX2 with the FMA kernel inlined.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn run_avx2(&self, k: Avx2, band: Range<usize>, out: &mut [f32]) {
        self.rows(k, band, out);
    }

    #[inline(always)]
    fn rows(&self, k: impl Kernel<Self>, band: Range<usize>, out: &mut [f32]) {
        let w = self.window;
        let c = self.channels;
        // The kernels index by these sizes without further checks (see `Kernel`).
        assert!(holds_at_least(
            self.filter.len(),
            [w.kernel_h, w.kernel_w, c, 1]
        ));
        assert!(self.bias.is_none_or(|b| b.len() >= c));
        assert!(holds_at_least(self.x.len(), [w.batch, w.in_h, w.in_w, c]));
        assert!(band.start <= band.end && band.end <= w.out_rows());
        assert!(holds_at_least(out.len(), [band.len(), w.out_w, c, 1]));
        sweep(self, w, c, k, band, out);
    }
}

impl Kernel<Depthwise<'_>> for Portable {
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
        let (col, row) = w.offsets::<P>(n, oh, ow, kw.0);
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
fn tail<const P: usize>(
    d: &Depthwise<'_>,
    (n, oh): (usize, usize),
    col: &[usize; P],
    (kh, kw): ((usize, usize), (usize, usize)),
    full: usize,
    out: &mut [f32],
) {
    let w = d.window;
    let c = d.channels;
    let (_, row) = w.offsets::<0>(n, oh, 0, 0);
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

#[cfg(target_arch = "x86_64")]
#[path = "depthwise_avx2.rs"]
mod avx2;

#[cfg(target_arch = "x86_64")]
#[path = "depthwise_avx512.rs"]
pub(crate) mod avx512;

#[cfg(target_arch = "aarch64")]
#[path = "depthwise_neon.rs"]
mod neon;

#[cfg(test)]
#[path = "depthwise_tests.rs"]
pub(crate) mod tests;
