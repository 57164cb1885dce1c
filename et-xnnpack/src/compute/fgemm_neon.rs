//! The packed f32 product ([`PackedGemm`]) with NEON: tiles of up to six rows against
//! one 16-channel panel, each row's accumulators four q registers (24 in all, with the
//! panel row's four vectors and the broadcast input value inside the 32 registers).
//!
//! Every output is the bias plus the products in `k` order, each added with one fused
//! multiply-add (`fmla`), as the AVX2 and AVX-512 kernels do: the three give the same
//! bits. NEON is part of every aarch64 CPU, so nothing is detected.

use core::arch::aarch64::*;

use super::{padded, PackedGemm, NR};

/// Rows per tile: 24 accumulators.
const MR: usize = 6;

/// Vectors of four floats in a panel row.
const VECS: usize = NR / 4;

/// [`PackedGemm::rows`] with NEON.
///
/// # Safety
/// The lengths [`PackedGemm::rows`] asserts hold: `a` has `rows * k` floats, `out`
/// `rows * n`, the panels `packed_len(n, k)` and the bias `padded(n)`.
pub(crate) unsafe fn rows(g: &PackedGemm<'_>, a: &[f32], rows: usize, out: &mut [f32]) {
    let mut r = 0;
    while r < rows {
        let count = (rows - r).min(MR);
        // SAFETY: rows `r..r + count` are within `rows`; the lengths are the caller's
        // promise.
        unsafe {
            match count {
                6 => tile::<6>(g, a, r, out),
                5 => tile::<5>(g, a, r, out),
                4 => tile::<4>(g, a, r, out),
                3 => tile::<3>(g, a, r, out),
                2 => tile::<2>(g, a, r, out),
                _ => tile::<1>(g, a, r, out),
            }
        }
        r += count;
    }
}

/// Rows `r0..r0 + R` against every panel.
///
/// # Safety
/// Rows `r0..r0 + R` exist in `a` and `out`; the lengths of [`rows`] hold.
#[inline(always)]
unsafe fn tile<const R: usize>(g: &PackedGemm<'_>, a: &[f32], r0: usize, out: &mut [f32]) {
    let (n, k) = (g.n, g.k);
    // `maxnm`/`minnm` return the number when one operand is NaN, as `f32::max` and
    // `f32::min` do in the portable kernel (a NaN sum becomes `min`).
    // SAFETY: NEON is baseline on aarch64. Row `r0 + r` (`r < R`, inside `rows`) reads
    // `k` floats of `a` from `(r0 + r) * k`, within `rows * k`. Panel `p <
    // padded(n) / NR` reads `k * NR` floats from `p * k * NR`, within
    // `packed_len(n, k)`; its bias `NR` floats from `p * NR`, within `padded(n)`. A
    // whole panel's store writes `NR` floats of row `r0 + r` from channel `p * NR`,
    // inside the row when `p * NR + NR <= n`; a partial one copies `n - p * NR` floats
    // from a local array, also inside the row.
    unsafe {
        let lo = vdupq_n_f32(g.min);
        let hi = vdupq_n_f32(g.max);
        let x = a.as_ptr().add(r0 * k);
        for p in 0..padded(n) / NR {
            let w = g.panels.as_ptr().add(p * k * NR);
            let b = g.bias.as_ptr().add(p * NR);
            let bias: [float32x4_t; VECS] = core::array::from_fn(|v| vld1q_f32(b.add(4 * v)));
            let mut acc = [bias; R];
            for i in 0..k {
                let wi = w.add(i * NR);
                let wv: [float32x4_t; VECS] = core::array::from_fn(|v| vld1q_f32(wi.add(4 * v)));
                for (r, acc) in acc.iter_mut().enumerate() {
                    let xv = vdupq_n_f32(*x.add(r * k + i));
                    for (acc, &wv) in acc.iter_mut().zip(&wv) {
                        *acc = vfmaq_f32(*acc, xv, wv);
                    }
                }
            }
            let c0 = p * NR;
            let valid = (n - c0).min(NR);
            for (r, acc) in acc.into_iter().enumerate() {
                let dst = out.as_mut_ptr().add((r0 + r) * n + c0);
                let v = acc.map(|v| vminnmq_f32(vmaxnmq_f32(v, lo), hi));
                if valid == NR {
                    for (h, v) in v.into_iter().enumerate() {
                        vst1q_f32(dst.add(4 * h), v);
                    }
                } else {
                    let mut lanes = [0.0f32; NR];
                    for (h, v) in v.into_iter().enumerate() {
                        vst1q_f32(lanes.as_mut_ptr().add(4 * h), v);
                    }
                    core::ptr::copy_nonoverlapping(lanes.as_ptr(), dst, valid);
                }
            }
        }
    }
}
