//! Direct convolution (one group) for inputs with few channels, such as a first layer's
//! 3 colour channels. Its im2col patches would be only `kh * kw * cin` floats (27), so
//! gathering them and running one GEMM per tile cost more than the multiply-adds.
//! Instead each output pixel accumulates, over its taps inside the input and their input
//! channels, the input value times that row of the packed filter (`[kh * kw * cin, cout]`,
//! the GEMM's layout): `BLOCK` output channels at a time in registers, for the `PX`
//! interior pixels [`sweep`] hands over at once. Bias and range are applied on the store.

use core::ops::Range;

use super::clamp::Clamp;
#[cfg(target_arch = "x86_64")]
use super::sweep::Avx2;
use super::sweep::{block, holds_at_least, sweep, Kernel, Portable, BLOCK};
use super::window::Window;

/// The most input channels the direct kernel takes; more make patches long enough for
/// im2col and the GEMM to win.
pub(crate) const MAX_CIN: usize = 4;

/// One convolution: input `[batch, in_h, in_w, cin]`, filter `[kh * kw * cin, cout]`
/// (row-major), optional bias `[cout]`, output `[batch, out_h, out_w, cout]`.
pub(crate) struct Direct<'a> {
    pub(crate) window: &'a Window,
    pub(crate) cin: usize,
    pub(crate) cout: usize,
    pub(crate) x: &'a [f32],
    pub(crate) filter: &'a [f32],
    pub(crate) bias: Option<&'a [f32]>,
    pub(crate) clamp: Clamp,
}

impl Direct<'_> {
    /// Computes output rows `band` of the convolution (rows of all images, as
    /// `Window::out_rows` counts them) into `out`, which starts at the band's first
    /// pixel, with AVX2 and FMA when the CPU has them, with NEON on aarch64.
    ///
    /// # Panics
    /// If a slice is shorter than the window and channels say, or `band` goes past the
    /// output's rows.
    pub(crate) fn run(&self, band: Range<usize>, out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = avx512::Avx512::detect() {
            // SAFETY: `detect` returned the token, so the CPU supports AVX-512F (with
            // AVX2 and FMA); `run_avx512` is safe code compiled with those instructions.
            unsafe { self.run_avx512(k, band, out) };
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

    /// [`Direct::rows`] compiled for AVX2 with the FMA kernel inlined.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn run_avx2(&self, k: Avx2, band: Range<usize>, out: &mut [f32]) {
        self.rows(k, band, out);
    }

    /// [`Direct::rows`] compiled for AVX-512F with its kernel inlined.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn run_avx512(&self, k: avx512::Avx512, band: Range<usize>, out: &mut [f32]) {
        self.rows(k, band, out);
    }

    #[inline(always)]
    fn rows(&self, k: impl Kernel<Self>, band: Range<usize>, out: &mut [f32]) {
        let w = self.window;
        let (cin, cout) = (self.cin, self.cout);
        // The kernels index by these sizes without further checks (see `Kernel`).
        let filter = [w.kernel_h, w.kernel_w, cin, cout];
        assert!(holds_at_least(self.filter.len(), filter));
        assert!(self.bias.is_none_or(|b| b.len() >= cout));
        assert!(holds_at_least(self.x.len(), [w.batch, w.in_h, w.in_w, cin]));
        assert!(band.start <= band.end && band.end <= w.out_rows());
        assert!(holds_at_least(out.len(), [band.len(), w.out_w, cout, 1]));
        sweep(self, w, cout, k, band, out);
    }
}

impl Kernel<Direct<'_>> for Portable {
    #[inline(always)]
    unsafe fn pixels<const P: usize>(
        self,
        d: &Direct<'_>,
        n: usize,
        oh: usize,
        ow: usize,
        (kh, kw): ((usize, usize), (usize, usize)),
        out: &mut [f32],
    ) {
        let w = d.window;
        let (cin, cout) = (d.cin, d.cout);
        let (col, row) = d.window.offsets::<P>(n, oh, ow, kw.0);
        let full = cout - cout % BLOCK;
        for c0 in (0..full).step_by(BLOCK) {
            let mut acc = [d.bias.map_or([0.0; BLOCK], |b| block(b, c0)); P];
            for i in kh.0..kh.1 {
                let r = row(i);
                for j in kw.0..kw.1 {
                    let dj = (j - kw.0) * w.dilation_w;
                    for ci in 0..cin {
                        let wv = block(d.filter, ((i * w.kernel_w + j) * cin + ci) * cout + c0);
                        for (a, &x0) in acc.iter_mut().zip(&col) {
                            let xv = d.x[(r + x0 + dj) * cin + ci];
                            for l in 0..BLOCK {
                                a[l] += xv * wv[l];
                            }
                        }
                    }
                }
            }
            for (p, a) in acc.iter().enumerate() {
                let dst = &mut out[p * cout + c0..p * cout + c0 + BLOCK];
                for (o, &v) in dst.iter_mut().zip(a) {
                    *o = d.clamp.clamp(v);
                }
            }
        }
        tail(d, (n, oh), &col, (kh, kw), full, out);
    }
}

/// Output channels `full..` of the pixels at input columns `col` (see
/// [`Kernel::pixels`]): the ones past the last whole block, one at a time.
#[inline(always)]
fn tail<const P: usize>(
    d: &Direct<'_>,
    (n, oh): (usize, usize),
    col: &[usize; P],
    (kh, kw): ((usize, usize), (usize, usize)),
    full: usize,
    out: &mut [f32],
) {
    let w = d.window;
    let (cin, cout) = (d.cin, d.cout);
    let (_, row) = d.window.offsets::<0>(n, oh, 0, 0);
    for co in full..cout {
        for (p, &x0) in col.iter().enumerate() {
            let mut a = d.bias.map_or(0.0, |b| b[co]);
            for i in kh.0..kh.1 {
                let r = row(i);
                for j in kw.0..kw.1 {
                    let at = (r + x0 + (j - kw.0) * w.dilation_w) * cin;
                    let taps = (i * w.kernel_w + j) * cin;
                    for ci in 0..cin {
                        a += d.x[at + ci] * d.filter[(taps + ci) * cout + co];
                    }
                }
            }
            out[p * cout + co] = d.clamp.clamp(a);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use core::arch::x86_64::*;

    use super::{tail, Direct};
    use crate::compute::sweep::{Avx2, Kernel, BLOCK};

    impl Kernel<Direct<'_>> for Avx2 {
        #[inline(always)]
        unsafe fn pixels<const P: usize>(
            self,
            d: &Direct<'_>,
            n: usize,
            oh: usize,
            ow: usize,
            taps: ((usize, usize), (usize, usize)),
            out: &mut [f32],
        ) {
            // SAFETY: an `Avx2` exists only when `detect` found AVX2 and FMA on this
            // CPU; the taps and slices are as `Kernel::pixels` requires (our caller's
            // promise).
            unsafe { pixels::<P>(d, n, oh, ow, taps, out) }
        }
    }

    /// [`Kernel::pixels`] for AVX2 and FMA, reading through raw pointers as the
    /// depthwise kernel does (bounds checks would outnumber the multiply-adds).
    ///
    /// # Safety
    /// The CPU supports AVX2 and FMA, and the [`Kernel::pixels`] requirements hold.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn pixels<const P: usize>(
        d: &Direct<'_>,
        n: usize,
        oh: usize,
        ow: usize,
        (kh, kw): ((usize, usize), (usize, usize)),
        out: &mut [f32],
    ) {
        let w = d.window;
        let (cin, cout) = (d.cin, d.cout);
        let (col, row) = d.window.offsets::<P>(n, oh, ow, kw.0);
        let (lo, hi) = (_mm256_set1_ps(d.clamp.min), _mm256_set1_ps(d.clamp.max));
        let (xp, fp) = (d.x.as_ptr(), d.filter.as_ptr());
        let full = cout - cout % BLOCK;
        for c0 in (0..full).step_by(BLOCK) {
            let init = d.bias.map_or([_mm256_setzero_ps(); 2], |b| {
                let b: &[f32; BLOCK] = b[c0..c0 + BLOCK].try_into().expect("BLOCK floats");
                // SAFETY: `b` is 16 readable floats.
                unsafe { load(b.as_ptr()) }
            });
            let mut acc = [init; P];
            for i in kh.0..kh.1 {
                let r = row(i);
                // SAFETY: input row `i` and columns `col[p] + t * dilation` for `t` below
                // `kw.1 - kw.0` are inside the input for every pixel (the caller's
                // promise), so each `(row + column) * cin + ci` with `ci < cin` is within
                // `x` (`batch * in_h * in_w * cin` floats, asserted in `rows`); filter
                // row `(i * kernel_w + kw.0 + t) * cin + ci` starts at that times `cout`
                // and its floats `c0..c0 + 16` are within `filter`
                // (`kernel_h * kernel_w * cin * cout` floats), as `c0 + 16 <= cout`.
                unsafe {
                    let xs: [*const f32; P] = core::array::from_fn(|p| xp.add((r + col[p]) * cin));
                    let ws = fp.add((i * w.kernel_w + kw.0) * cin * cout + c0);
                    for t in 0..kw.1 - kw.0 {
                        let xt = t * w.dilation_w * cin;
                        let wt = ws.add(t * cin * cout);
                        for ci in 0..cin {
                            let wv = load(wt.add(ci * cout));
                            for (a, &x) in acc.iter_mut().zip(&xs) {
                                let xv = _mm256_broadcast_ss(&*x.add(xt + ci));
                                a[0] = _mm256_fmadd_ps(xv, wv[0], a[0]);
                                a[1] = _mm256_fmadd_ps(xv, wv[1], a[1]);
                            }
                        }
                    }
                }
            }
            for (p, a) in acc.iter().enumerate() {
                let dst: &mut [f32; BLOCK] = (&mut out[p * cout + c0..p * cout + c0 + BLOCK])
                    .try_into()
                    .expect("a block is BLOCK floats");
                // `max(a, lo)` gives `lo` for a NaN `a`, as `Clamp::clamp` does.
                let v = a.map(|v| _mm256_min_ps(_mm256_max_ps(v, lo), hi));
                // SAFETY: `dst` is 16 writable floats: two unaligned 8-float stores.
                unsafe {
                    _mm256_storeu_ps(dst.as_mut_ptr(), v[0]);
                    _mm256_storeu_ps(dst.as_mut_ptr().add(8), v[1]);
                }
            }
        }
        tail(d, (n, oh), &col, (kh, kw), full, out);
    }

    /// The 16 floats at `p` as two vectors.
    ///
    /// # Safety
    /// `p` points to 16 readable floats; the CPU supports AVX.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn load(p: *const f32) -> [__m256; 2] {
        // SAFETY: the caller's promise; unaligned loads need no alignment.
        unsafe { [_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8))] }
    }
}

#[cfg(target_arch = "x86_64")]
#[path = "direct_avx512.rs"]
mod avx512;

#[cfg(target_arch = "aarch64")]
#[path = "direct_neon.rs"]
mod neon;

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
