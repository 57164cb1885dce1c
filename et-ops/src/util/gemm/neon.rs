//! aarch64: the NEON micro-kernels (NEON is part of aarch64's baseline, so no detection).
//!
//! A 12x8 tile in 24 of the 32 q registers (two 4-wide vectors per row), the same shape
//! of loop as the x86 kernels: per step of `k`, two loads of B, 12 broadcasts of A and 24
//! fused multiply-adds. Edge tiles run an instantiation with just enough rows (4, 8, 12)
//! and vectors (1, 2).

use super::{blocked, pack_rows_portable, Epilogue, Mat, MatMut, Out, N_BLOCK, N_MR, N_NR};
use core::arch::aarch64::*;

/// The blocked driver with the 12x8 NEON micro-kernels. A target-feature function only so
/// that the intrinsics are safe calls inside it: NEON is in aarch64's baseline.
#[target_feature(enable = "neon")]
#[allow(
    clippy::too_many_arguments,
    reason = "internal driver; the public API is `sgemm`"
)]
pub(super) fn sgemm_neon(
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    epilogue: Option<Epilogue<'_>>,
    ap: &mut [f32],
    bp: &mut [f32],
) {
    blocked::<N_MR, N_NR>(
        alpha,
        a,
        b,
        beta,
        c,
        epilogue,
        ap,
        bp,
        N_BLOCK,
        |a, b, ldb, mr, nr, out| match (mr.div_ceil(4), nr > 4) {
            (3, true) => ukr_n::<12, 2>(a, b, ldb, out),
            (3, false) => ukr_n::<12, 1>(a, b, ldb, out),
            (2, true) => ukr_n::<8, 2>(a, b, ldb, out),
            (2, false) => ukr_n::<8, 1>(a, b, ldb, out),
            (_, true) => ukr_n::<4, 2>(a, b, ldb, out),
            (_, false) => ukr_n::<4, 1>(a, b, ldb, out),
        },
        pack_rows_portable::<N_MR>,
    );
}

/// The first `ME` rows and `4 * NV` columns of a 12x8 tile.
#[target_feature(enable = "neon")]
#[inline]
fn ukr_n<const ME: usize, const NV: usize>(
    a: &[[f32; N_MR]],
    b: &[f32],
    ldb: usize,
    out: Out<'_, N_MR, N_NR>,
) {
    let mut c = [[vdupq_n_f32(0.0); NV]; ME];
    for (av, brow) in a.iter().zip(b.chunks(ldb)) {
        let Some(bv) = brow.first_chunk::<N_NR>() else {
            break;
        };
        let bb: [float32x4_t; NV] = core::array::from_fn(|v| load4(bv, v));
        for i in 0..ME {
            let x = vdupq_n_f32(av[i]);
            for v in 0..NV {
                c[i][v] = vfmaq_f32(c[i][v], x, bb[v]);
            }
        }
    }
    match out {
        Out::Tile(tile) => {
            for (row, acc) in tile.iter_mut().zip(&c) {
                for (v, &x) in acc.iter().enumerate() {
                    store4(row, v, x);
                }
            }
        }
        Out::C {
            c: dst,
            rs,
            alpha,
            beta,
            map,
        } => {
            let (va, vb) = (vdupq_n_f32(alpha), vdupq_n_f32(beta));
            let bounds = map.map(|m| {
                let (lo, hi) = m.bounds();
                (vdupq_n_f32(lo), vdupq_n_f32(hi))
            });
            for (i, acc) in c.iter().enumerate() {
                let Some(row) = dst
                    .get_mut(i * rs..i * rs + N_NR)
                    .and_then(|r| <&mut [f32; N_NR]>::try_from(r).ok())
                else {
                    return;
                };
                let row_map = map.map(|m| {
                    let (s, t) = m.row(i);
                    (vdupq_n_f32(s), vdupq_n_f32(t))
                });
                for (v, &x) in acc.iter().enumerate() {
                    let mut r = vmulq_f32(va, x);
                    if beta != 0.0 {
                        r = vfmaq_f32(r, vb, load4(row, v));
                    }
                    // The epilogue as `RowEpilogue::one` computes it: `r * s + t` with
                    // two roundings, then `lo` where `lo > r` and `hi` where `r > hi`.
                    // Compare-and-select rather than NEON's max and min, which would turn
                    // a -0.0 against a zero bound into +0.0; comparisons with NaN are
                    // false, so a NaN `r` stays.
                    if let (Some((s, t)), Some((lo, hi))) = (row_map, bounds) {
                        r = vaddq_f32(vmulq_f32(r, s), t);
                        r = vbslq_f32(vcgtq_f32(lo, r), lo, r);
                        r = vbslq_f32(vcgtq_f32(r, hi), hi, r);
                    }
                    store4(row, v, r);
                }
            }
        }
    }
}

/// Vector `v` (0 or 1) of an 8-float row.
#[inline(always)]
fn load4(row: &[f32; N_NR], v: usize) -> float32x4_t {
    let half: &[f32; 4] = if v == 0 {
        row.first_chunk().unwrap_or(&[0.0; 4])
    } else {
        row.last_chunk().unwrap_or(&[0.0; 4])
    };
    // SAFETY: `half` refers to 4 contiguous f32s; `vld1q_f32` has no alignment demand.
    unsafe { vld1q_f32(half.as_ptr()) }
}

/// Stores vector `v` (0 or 1) of an 8-float row.
#[inline(always)]
fn store4(row: &mut [f32; N_NR], v: usize, x: float32x4_t) {
    let half: Option<&mut [f32; 4]> = if v == 0 {
        row.first_chunk_mut()
    } else {
        row.last_chunk_mut()
    };
    if let Some(half) = half {
        // SAFETY: `half` refers to 4 contiguous, exclusively borrowed f32s; `vst1q_f32`
        // has no alignment demand.
        unsafe { vst1q_f32(half.as_mut_ptr(), x) }
    }
}
