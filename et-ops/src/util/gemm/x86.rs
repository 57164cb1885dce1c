//! x86-64: run-time CPU detection and the AVX2 + FMA and AVX-512F paths.

use super::{blocked, Epilogue, Mat, MatMut, Out, X_BLOCK, X_MR, X_NR, Z_BLOCK, Z_MR, Z_NR};
use core::arch::x86_64::*;
use core::sync::atomic::{AtomicU8, Ordering};

/// The widest micro-kernel this CPU and OS support: 0 not yet checked, 1 portable,
/// 2 AVX2 + FMA, 3 AVX-512F (checked once with `cpuid`, then cached).
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The detected [`Level`](super::Level).
#[inline]
pub(super) fn level() -> super::Level {
    use super::Level;
    let l = match LEVEL.load(Ordering::Relaxed) {
        0 => {
            let l = detect();
            LEVEL.store(l, Ordering::Relaxed);
            l
        }
        l => l,
    };
    match l {
        3 => Level::Avx512,
        2 => Level::Avx2,
        _ => Level::Portable,
    }
}

/// True if the CPU and OS support AVX2 and FMA.
#[inline]
pub(super) fn has_avx2_fma() -> bool {
    cfg!(all(target_feature = "avx2", target_feature = "fma")) || level() >= super::Level::Avx2
}

#[cold]
fn detect() -> u8 {
    let leaf1 = __cpuid(1);
    let fma = leaf1.ecx & (1 << 12) != 0;
    let osxsave = leaf1.ecx & (1 << 27) != 0;
    let avx = leaf1.ecx & (1 << 28) != 0;
    if !(fma && osxsave && avx) || __get_cpuid_max(0).0 < 7 {
        return 1;
    }
    let leaf7 = __cpuid_count(7, 0);
    let avx2 = leaf7.ebx & (1 << 5) != 0;
    let avx512f = leaf7.ebx & (1 << 16) != 0;
    // SAFETY: OSXSAVE is set, so XGETBV is available; `xcr0` only executes it.
    let xcr0 = unsafe { xcr0() };
    // The OS must save xmm and ymm state (bits 1, 2) for AVX, and additionally the
    // opmask and the upper zmm halves and registers (bits 5, 6, 7) for AVX-512.
    let ymm = xcr0 & 0b110 == 0b110;
    let zmm = xcr0 & 0b1110_0110 == 0b1110_0110;
    match (avx2 && ymm, avx512f && zmm) {
        (true, true) => 3,
        (true, false) => 2,
        _ => 1,
    }
}

#[target_feature(enable = "xsave")]
unsafe fn xcr0() -> u64 {
    // SAFETY: the caller checked OSXSAVE, so XGETBV with ecx = 0 is defined.
    unsafe { _xgetbv(0) }
}

/// The blocked driver compiled for AVX2 + FMA with 6x16 micro-kernels.
#[target_feature(enable = "avx2,fma")]
#[allow(
    clippy::too_many_arguments,
    reason = "internal driver; the public API is `sgemm`"
)]
pub(super) fn sgemm_avx2(
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    epilogue: Option<Epilogue<'_>>,
    ap: &mut [f32],
    bp: &mut [f32],
) {
    blocked::<X_MR, X_NR>(
        alpha,
        a,
        b,
        beta,
        c,
        epilogue,
        ap,
        bp,
        X_BLOCK,
        |a, b, ldb, mr, nr, out| {
            // Edge tiles run a kernel with just enough rows (2, 4, 6) and vectors (1, 2).
            match (mr.div_ceil(2), nr > 8) {
                (3, true) => ukr_y::<6, 2>(a, b, ldb, out),
                (3, false) => ukr_y::<6, 1>(a, b, ldb, out),
                (2, true) => ukr_y::<4, 2>(a, b, ldb, out),
                (2, false) => ukr_y::<4, 1>(a, b, ldb, out),
                (_, true) => ukr_y::<2, 2>(a, b, ldb, out),
                (_, false) => ukr_y::<2, 1>(a, b, ldb, out),
            }
        },
        |srcs, panel| pack_rows_t::<X_MR>(srcs, panel),
    );
}

/// The blocked driver compiled for AVX-512F with 12x32 micro-kernels.
#[target_feature(enable = "avx512f,avx2,fma")]
#[allow(
    clippy::too_many_arguments,
    reason = "internal driver; the public API is `sgemm`"
)]
pub(super) fn sgemm_avx512(
    alpha: f32,
    a: Mat<'_, f32>,
    b: Mat<'_, f32>,
    beta: f32,
    c: MatMut<'_, f32>,
    epilogue: Option<Epilogue<'_>>,
    ap: &mut [f32],
    bp: &mut [f32],
) {
    blocked::<Z_MR, Z_NR>(
        alpha,
        a,
        b,
        beta,
        c,
        epilogue,
        ap,
        bp,
        Z_BLOCK,
        |a, b, ldb, mr, nr, out| {
            // Edge tiles run a kernel with just enough rows (4, 8, 12) and vectors (1, 2).
            match (mr.div_ceil(4), nr > 16) {
                (3, true) => ukr_z::<12, 2>(a, b, ldb, out),
                (3, false) => ukr_z::<12, 1>(a, b, ldb, out),
                (2, true) => ukr_z::<8, 2>(a, b, ldb, out),
                (2, false) => ukr_z::<8, 1>(a, b, ldb, out),
                (_, true) => ukr_z::<4, 2>(a, b, ldb, out),
                (_, false) => ukr_z::<4, 1>(a, b, ldb, out),
            }
        },
        |srcs, panel| pack_rows_t::<Z_MR>(srcs, panel),
    );
}

/// The first `ME` rows and `8 * NV` columns of a 6x16 tile: per step, `NV` 8-wide
/// loads of B, `ME` broadcasts of A, `ME * NV` FMAs into ymm accumulators.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn ukr_y<const ME: usize, const NV: usize>(
    a: &[[f32; X_MR]],
    b: &[f32],
    ldb: usize,
    out: Out<'_, X_MR, X_NR>,
) {
    let mut c = [[_mm256_setzero_ps(); NV]; ME];
    for (av, brow) in a.iter().zip(b.chunks(ldb)) {
        let Some(bv) = brow.first_chunk::<X_NR>() else {
            break;
        };
        let bb: [__m256; NV] = core::array::from_fn(|v| load8(bv, v));
        for i in 0..ME {
            let x = _mm256_set1_ps(av[i]);
            for v in 0..NV {
                c[i][v] = _mm256_fmadd_ps(x, bb[v], c[i][v]);
            }
        }
    }
    match out {
        Out::Tile(tile) => {
            for (row, acc) in tile.iter_mut().zip(&c) {
                for (v, &x) in acc.iter().enumerate() {
                    store8(row, v, x);
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
            let (va, vb) = (_mm256_set1_ps(alpha), _mm256_set1_ps(beta));
            let bounds = map.map(|m| {
                let (lo, hi) = m.bounds();
                (_mm256_set1_ps(lo), _mm256_set1_ps(hi))
            });
            for (i, acc) in c.iter().enumerate() {
                let Some(row) = dst
                    .get_mut(i * rs..i * rs + X_NR)
                    .and_then(|r| <&mut [f32; X_NR]>::try_from(r).ok())
                else {
                    return;
                };
                let row_map = map.map(|m| {
                    let (s, t) = m.row(i);
                    (_mm256_set1_ps(s), _mm256_set1_ps(t))
                });
                for (v, &x) in acc.iter().enumerate() {
                    let mut r = _mm256_mul_ps(va, x);
                    if beta != 0.0 {
                        r = _mm256_fmadd_ps(vb, load8(row, v), r);
                    }
                    // The epilogue in registers: `r * s + t` (two roundings, as the batch
                    // norm kernel computes it), then `max(lo, r)` and `min(hi, r)`, whose
                    // operand order keeps a NaN `r` (`RowEpilogue::one`).
                    if let (Some((s, t)), Some((lo, hi))) = (row_map, bounds) {
                        r = _mm256_min_ps(
                            hi,
                            _mm256_max_ps(lo, _mm256_add_ps(_mm256_mul_ps(r, s), t)),
                        );
                    }
                    store8(row, v, r);
                }
            }
        }
    }
}

/// The first `ME` rows and `16 * NV` columns of a 12x32 tile: per step, `NV` 16-wide
/// loads of B, `ME` broadcasts of A (folded into the FMAs), `ME * NV` FMAs into zmm
/// accumulators (24 for the full tile).
#[target_feature(enable = "avx512f")]
#[inline]
fn ukr_z<const ME: usize, const NV: usize>(
    a: &[[f32; Z_MR]],
    b: &[f32],
    ldb: usize,
    out: Out<'_, Z_MR, Z_NR>,
) {
    let mut c = [[_mm512_setzero_ps(); NV]; ME];
    for (av, brow) in a.iter().zip(b.chunks(ldb)) {
        let Some(bv) = brow.first_chunk::<Z_NR>() else {
            break;
        };
        let bb: [__m512; NV] = core::array::from_fn(|v| load16(bv, v));
        for i in 0..ME {
            let x = _mm512_set1_ps(av[i]);
            for v in 0..NV {
                c[i][v] = _mm512_fmadd_ps(x, bb[v], c[i][v]);
            }
        }
    }
    match out {
        Out::Tile(tile) => {
            for (row, acc) in tile.iter_mut().zip(&c) {
                for (v, &x) in acc.iter().enumerate() {
                    store16(row, v, x);
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
            let (va, vb) = (_mm512_set1_ps(alpha), _mm512_set1_ps(beta));
            let bounds = map.map(|m| {
                let (lo, hi) = m.bounds();
                (_mm512_set1_ps(lo), _mm512_set1_ps(hi))
            });
            for (i, acc) in c.iter().enumerate() {
                let Some(row) = dst
                    .get_mut(i * rs..i * rs + Z_NR)
                    .and_then(|r| <&mut [f32; Z_NR]>::try_from(r).ok())
                else {
                    return;
                };
                let row_map = map.map(|m| {
                    let (s, t) = m.row(i);
                    (_mm512_set1_ps(s), _mm512_set1_ps(t))
                });
                for (v, &x) in acc.iter().enumerate() {
                    let mut r = _mm512_mul_ps(va, x);
                    if beta != 0.0 {
                        r = _mm512_fmadd_ps(vb, load16(row, v), r);
                    }
                    // The epilogue in registers: `r * s + t` (two roundings, as the batch
                    // norm kernel computes it), then `max(lo, r)` and `min(hi, r)`, whose
                    // operand order keeps a NaN `r` (`RowEpilogue::one`).
                    if let (Some((s, t)), Some((lo, hi))) = (row_map, bounds) {
                        r = _mm512_min_ps(
                            hi,
                            _mm512_max_ps(lo, _mm512_add_ps(_mm512_mul_ps(r, s), t)),
                        );
                    }
                    store16(row, v, r);
                }
            }
        }
    }
}

/// Packs a full A panel from its `MR` row slices (see `pack_rows_portable`): 4 rows x
/// 8 columns at a time are loaded as four 8-wide vectors and transposed in registers
/// into eight 4-wide column pieces, instead of gathering one element at a time.
#[target_feature(enable = "avx2")]
#[inline]
fn pack_rows_t<const MR: usize>(srcs: &[&[f32]; MR], panel: &mut [[f32; MR]]) {
    let kc = panel.len();
    let groups = MR / 4;
    let mut p = 0;
    while p + 8 <= kc {
        let (Some(cols), true) = (
            panel.get_mut(p..p + 8),
            srcs.iter().all(|s| s.len() >= p + 8),
        ) else {
            break;
        };
        for g in 0..groups {
            let row = |i: usize| -> __m256 {
                let r: &[f32; 8] = srcs[4 * g + i][p..].first_chunk().unwrap_or(&[0.0; 8]);
                // SAFETY: `r` refers to 8 contiguous f32s.
                unsafe { _mm256_loadu_ps(r.as_ptr()) }
            };
            let (a, b, c, d) = (row(0), row(1), row(2), row(3));
            let (t0, t1) = (_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
            let (t2, t3) = (_mm256_unpacklo_ps(c, d), _mm256_unpackhi_ps(c, d));
            // u[j] holds column j (low half) and column j + 4 (high half) of the rows.
            let u = [
                _mm256_shuffle_ps::<0x44>(t0, t2),
                _mm256_shuffle_ps::<0xEE>(t0, t2),
                _mm256_shuffle_ps::<0x44>(t1, t3),
                _mm256_shuffle_ps::<0xEE>(t1, t3),
            ];
            for (j, &v) in u.iter().enumerate() {
                store4(&mut cols[j], 4 * g, _mm256_castps256_ps128(v));
                store4(&mut cols[j + 4], 4 * g, _mm256_extractf128_ps::<1>(v));
            }
        }
        for r in groups * 4..MR {
            for (j, col) in cols.iter_mut().enumerate() {
                col[r] = srcs[r][p + j];
            }
        }
        p += 8;
    }
    for (q, col) in panel.iter_mut().enumerate().skip(p) {
        for (d, src) in col.iter_mut().zip(srcs) {
            *d = src[q];
        }
    }
}

/// Stores 4 floats at `col[at..at + 4]` (nothing if out of range).
#[target_feature(enable = "avx2")]
#[inline]
fn store4<const MR: usize>(col: &mut [f32; MR], at: usize, x: __m128) {
    if let Some(dst) = col
        .get_mut(at..at + 4)
        .and_then(|d| <&mut [f32; 4]>::try_from(d).ok())
    {
        // SAFETY: `dst` refers to 4 contiguous, exclusively borrowed f32s.
        unsafe { _mm_storeu_ps(dst.as_mut_ptr(), x) }
    }
}

/// Loads floats `8 * v .. 8 * v + 8` of a 16-float row (`v` is 0 or 1).
#[target_feature(enable = "avx2")]
#[inline]
fn load8(row: &[f32; 16], v: usize) -> __m256 {
    let half: &[f32; 8] = if v == 0 {
        row.first_chunk().unwrap_or(&[0.0; 8])
    } else {
        row.last_chunk().unwrap_or(&[0.0; 8])
    };
    // SAFETY: `half` refers to 8 contiguous f32s; the unaligned load reads them.
    unsafe { _mm256_loadu_ps(half.as_ptr()) }
}

/// Stores 8 floats at `8 * v` of a 16-float row (`v` is 0 or 1).
#[target_feature(enable = "avx2")]
#[inline]
fn store8(row: &mut [f32; 16], v: usize, x: __m256) {
    let half: Option<&mut [f32; 8]> = if v == 0 {
        row.first_chunk_mut()
    } else {
        row.last_chunk_mut()
    };
    if let Some(half) = half {
        // SAFETY: `half` refers to 8 contiguous, exclusively borrowed f32s.
        unsafe { _mm256_storeu_ps(half.as_mut_ptr(), x) }
    }
}

/// Loads floats `16 * v .. 16 * v + 16` of a 32-float row (`v` is 0 or 1).
#[target_feature(enable = "avx512f")]
#[inline]
fn load16(row: &[f32; 32], v: usize) -> __m512 {
    let half: &[f32; 16] = if v == 0 {
        row.first_chunk().unwrap_or(&[0.0; 16])
    } else {
        row.last_chunk().unwrap_or(&[0.0; 16])
    };
    // SAFETY: `half` refers to 16 contiguous f32s; the unaligned load reads them.
    unsafe { _mm512_loadu_ps(half.as_ptr()) }
}

/// Stores 16 floats at `16 * v` of a 32-float row (`v` is 0 or 1).
#[target_feature(enable = "avx512f")]
#[inline]
fn store16(row: &mut [f32; 32], v: usize, x: __m512) {
    let half: Option<&mut [f32; 16]> = if v == 0 {
        row.first_chunk_mut()
    } else {
        row.last_chunk_mut()
    };
    if let Some(half) = half {
        // SAFETY: `half` refers to 16 contiguous, exclusively borrowed f32s.
        unsafe { _mm512_storeu_ps(half.as_mut_ptr(), x) }
    }
}
