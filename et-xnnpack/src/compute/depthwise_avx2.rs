//! The depthwise kernel with AVX2 vectors and FMA: each 16-channel block is two ymm
//! accumulators per pixel, updated with one fused multiply-add per tap instead of a
//! multiply and a dependent add.

use core::arch::x86_64::*;

use super::{tail, Depthwise};
use crate::compute::sweep::{Avx2, Kernel, BLOCK};

impl Kernel<Depthwise<'_>> for Avx2 {
    #[inline(always)]
    unsafe fn pixels<const P: usize>(
        self,
        d: &Depthwise<'_>,
        n: usize,
        oh: usize,
        ow: usize,
        taps: ((usize, usize), (usize, usize)),
        out: &mut [f32],
    ) {
        // SAFETY: an `Avx2` exists only when `detect` found AVX2 and FMA on this CPU; the
        // taps and slices are as `Kernel::pixels` requires, which our caller promised.
        unsafe { pixels::<P>(d, n, oh, ow, taps, out) }
    }
}

/// [`Kernel::pixels`] for AVX2 and FMA. The input and filter are read through raw
/// pointers: with checked indexing the bounds checks and index arithmetic outnumbered
/// the multiply-adds several to one in this loop.
///
/// # Safety
/// The CPU supports AVX2 and FMA, and the [`Kernel::pixels`] requirements hold.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn pixels<const P: usize>(
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
    let (lo, hi) = (_mm256_set1_ps(d.clamp.min), _mm256_set1_ps(d.clamp.max));
    let (xp, fp) = (d.x.as_ptr(), d.filter.as_ptr());
    // Floats between one tap column and the next, in the input and in the filter.
    let (xstep, fstep) = (w.dilation_w * c, c);
    let full = c - c % BLOCK;
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
            // `kw.1 - kw.0` are inside the input for every pixel (the caller's promise),
            // so each `(row + column) * c + c0` plus the block's 16 floats is within `x`
            // (`x` holds `batch * in_h * in_w * c` floats, asserted in `rows`); likewise
            // filter tap `(i, kw.0 + t)` at `(i * kernel_w + kw.0 + t) * c + c0` plus 16
            // is within `filter` (`kernel_h * kernel_w * c` floats), as `c0 + 16 <= c`.
            // So every pointer offset stays inside its slice and every load reads 16
            // initialized floats.
            unsafe {
                let xs: [*const f32; P] = core::array::from_fn(|p| xp.add((r + col[p]) * c + c0));
                let ws = fp.add((i * w.kernel_w + kw.0) * c + c0);
                for t in 0..kw.1 - kw.0 {
                    let wv = load(ws.add(t * fstep));
                    for (a, &x) in acc.iter_mut().zip(&xs) {
                        let xv = load(x.add(t * xstep));
                        a[0] = _mm256_fmadd_ps(xv[0], wv[0], a[0]);
                        a[1] = _mm256_fmadd_ps(xv[1], wv[1], a[1]);
                    }
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
