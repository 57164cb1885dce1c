//! The depthwise kernel with AVX2 vectors and FMA: each 16-channel block is two ymm
//! accumulators per pixel, updated with one fused multiply-add per tap instead of a
//! multiply and a dependent add.

use core::arch::x86_64::*;

use super::{tail, Depthwise, Kernel, BLOCK};

/// Proof that the CPU supports AVX2 and FMA: only [`Avx2::detect`] makes one.
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// The token, if this CPU (and OS) supports AVX2 and FMA.
    pub(crate) fn detect() -> Option<Avx2> {
        et_ops::gemm::avx2_fma_available().then_some(Avx2(()))
    }
}

impl Kernel for Avx2 {
    #[inline(always)]
    fn pixels<const P: usize>(
        self,
        d: &Depthwise<'_>,
        n: usize,
        oh: usize,
        ow: usize,
        taps: ((usize, usize), (usize, usize)),
        out: &mut [f32],
    ) {
        // SAFETY: an `Avx2` exists only when `detect` found AVX2 and FMA on this CPU.
        unsafe { pixels::<P>(d, n, oh, ow, taps, out) }
    }
}

/// [`Kernel::pixels`] for AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn pixels<const P: usize>(
    d: &Depthwise<'_>,
    n: usize,
    oh: usize,
    ow: usize,
    (kh, kw): ((usize, usize), (usize, usize)),
    out: &mut [f32],
) {
    let w = d.window;
    let c = d.channels;
    // As in the portable kernel: each pixel's first tap column, unused when `kw` is empty.
    let col: [usize; P] = core::array::from_fn(|p| {
        ((ow + p) * w.stride_w + kw.0 * w.dilation_w).saturating_sub(w.pad_left)
    });
    let row = |k: usize| (n * w.in_h + oh * w.stride_h + k * w.dilation_h - w.pad_top) * w.in_w;
    let (lo, hi) = (_mm256_set1_ps(d.clamp.min), _mm256_set1_ps(d.clamp.max));
    let full = c - c % BLOCK;
    for c0 in (0..full).step_by(BLOCK) {
        let init = d.bias.map_or([_mm256_setzero_ps(); 2], |b| load(b, c0));
        let mut acc = [init; P];
        for i in kh.0..kh.1 {
            let r = row(i);
            for j in kw.0..kw.1 {
                let wv = load(d.filter, (i * w.kernel_w + j) * c + c0);
                let dj = (j - kw.0) * w.dilation_w;
                for (a, &x0) in acc.iter_mut().zip(&col) {
                    let xv = load(d.x, (r + x0 + dj) * c + c0);
                    a[0] = _mm256_fmadd_ps(xv[0], wv[0], a[0]);
                    a[1] = _mm256_fmadd_ps(xv[1], wv[1], a[1]);
                }
            }
        }
        for (p, a) in acc.iter().enumerate() {
            let dst: &mut [f32; BLOCK] = (&mut out[p * c + c0..p * c + c0 + BLOCK])
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

/// The `BLOCK` floats of `v` from `at` as two vectors (one bounds check for the block).
#[target_feature(enable = "avx2")]
#[inline]
fn load(v: &[f32], at: usize) -> [__m256; 2] {
    let s: &[f32; BLOCK] = v[at..at + BLOCK]
        .try_into()
        .expect("a block is BLOCK floats");
    // SAFETY: `s` is 16 readable floats: two unaligned 8-float loads.
    unsafe {
        [
            _mm256_loadu_ps(s.as_ptr()),
            _mm256_loadu_ps(s.as_ptr().add(8)),
        ]
    }
}
