//! The direct convolution's kernel with AVX-512F: 32 output channels a pass (two zmm
//! registers per pixel) where AVX2 takes 16, and a last part of fewer channels through
//! lane masks, so that no channel is computed apart.
//!
//! Every output adds its taps from the bias in the same order as the AVX2 kernel (tap
//! row, tap column, input channel) with fused multiply-adds, so both give the same bits
//! on the AVX2 kernel's whole blocks of 16 channels (it adds the last few channels one
//! at a time, rounding each product).

use core::arch::x86_64::*;

use super::Direct;
use crate::compute::sweep::Kernel;

/// Channels per register.
const LANES: usize = 16;

/// Proof that the CPU supports AVX-512F (and AVX2 and FMA): only [`Avx512::detect`]
/// makes one.
#[derive(Clone, Copy)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// The token, if this CPU (and OS) supports AVX-512F.
    pub(crate) fn detect() -> Option<Avx512> {
        et_ops::gemm::avx512f_available().then_some(Avx512(()))
    }
}

impl Kernel<Direct<'_>> for Avx512 {
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
        let mut c0 = 0;
        while c0 < d.cout {
            let width = (d.cout - c0).min(2 * LANES);
            // SAFETY: an `Avx512` exists only when `detect` found AVX-512F; the taps and
            // slices are as `Kernel::pixels` requires (our caller's promise), and
            // channels `c0..c0 + width` are within `cout`.
            unsafe {
                if width > LANES {
                    channels::<P, 2>(d, (n, oh, ow), taps, (c0, width), out);
                } else {
                    channels::<P, 1>(d, (n, oh, ow), taps, (c0, width), out);
                }
            }
            c0 += width;
        }
    }
}

/// Output channels `c0..c0 + width` (at most `V` registers of them) of `P` pixels from
/// `(n, oh, ow)`.
///
/// # Safety
/// The CPU supports AVX-512F; the [`Kernel::pixels`] requirements hold; `c0 + width`
/// is at most `cout` and `width` at most `V * 16`.
#[target_feature(enable = "avx512f,avx2,fma")]
#[inline]
unsafe fn channels<const P: usize, const V: usize>(
    d: &Direct<'_>,
    (n, oh, ow): (usize, usize, usize),
    (kh, kw): ((usize, usize), (usize, usize)),
    (c0, width): (usize, usize),
    out: &mut [f32],
) {
    let w = d.window;
    let (cin, cout) = (d.cin, d.cout);
    let (col, row) = w.offsets::<P>(n, oh, ow, kw.0);
    let (lo, hi) = (_mm512_set1_ps(d.clamp.min), _mm512_set1_ps(d.clamp.max));
    let (xp, fp) = (d.x.as_ptr(), d.filter.as_ptr());
    // Lanes of each register inside `width`: masked-off lanes are neither read nor
    // written.
    let masks: [__mmask16; V] = core::array::from_fn(|v| {
        let valid = width.saturating_sub(v * LANES).min(LANES);
        ((1u32 << valid) - 1) as __mmask16
    });
    assert!(out.len() >= (P - 1) * cout + c0 + width);
    let init: [__m512; V] = core::array::from_fn(|v| match d.bias {
        // SAFETY: the bias holds `cout` floats (asserted in `Direct::rows`) and the
        // mask covers channels below `c0 + width <= cout` only.
        Some(b) => unsafe { _mm512_maskz_loadu_ps(masks[v], b.as_ptr().add(c0 + v * LANES)) },
        None => _mm512_setzero_ps(),
    });
    let mut acc = [init; P];
    for i in kh.0..kh.1 {
        let r = row(i);
        // SAFETY: input row `i` and columns `col[p] + t * dilation` for `t` below
        // `kw.1 - kw.0` are inside the input for every pixel (the caller's promise), so
        // each `(row + column) * cin + ci` with `ci < cin` is within `x` (asserted in
        // `Direct::rows`); filter row `(i * kernel_w + kw.0 + t) * cin + ci` starts at
        // that times `cout`, and the masked loads read its channels below
        // `c0 + width <= cout` only.
        unsafe {
            let xs: [*const f32; P] = core::array::from_fn(|p| xp.add((r + col[p]) * cin));
            let ws = fp.add((i * w.kernel_w + kw.0) * cin * cout + c0);
            for t in 0..kw.1 - kw.0 {
                let xt = t * w.dilation_w * cin;
                let wt = ws.add(t * cin * cout);
                for ci in 0..cin {
                    let wv: [__m512; V] = core::array::from_fn(|v| {
                        _mm512_maskz_loadu_ps(masks[v], wt.add(ci * cout + v * LANES))
                    });
                    for (a, &x) in acc.iter_mut().zip(&xs) {
                        let xv = _mm512_set1_ps(*x.add(xt + ci));
                        for (a, &wv) in a.iter_mut().zip(&wv) {
                            *a = _mm512_fmadd_ps(xv, wv, *a);
                        }
                    }
                }
            }
        }
    }
    for (p, a) in acc.iter().enumerate() {
        for (v, &a) in a.iter().enumerate() {
            // `max(a, lo)` gives `lo` for a NaN `a`, as `Clamp::clamp` does.
            let value = _mm512_min_ps(_mm512_max_ps(a, lo), hi);
            // SAFETY: the masked store writes channels below `c0 + width` of pixel `p`,
            // inside `out` by the assert above.
            unsafe {
                let dst = out.as_mut_ptr().add(p * cout + c0 + v * LANES);
                _mm512_mask_storeu_ps(dst, masks[v], value);
            }
        }
    }
}
