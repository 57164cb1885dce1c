//! The int8 depthwise convolution (multiplier 1) on AVX2: per output pixel, blocks of 16
//! channels accumulate every in-bounds tap in two int32 vectors held in registers (the
//! product `(x - zero_point) * w` in int16 lanes, where it always fits), then requantize
//! in the store. Channels past the last whole block take the portable loop.

use core::arch::x86_64::*;

use super::qconv::{product, QDepthwise};

/// Requantizes 8 int32 accumulators (bias included): [`Requant::apply`] on 8 lanes
/// (scale, clamp, the conversion's default round half to even, zero point).
///
/// [`Requant::apply`]: super::requant::Requant::apply
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn requant8(
    acc: __m256i,
    scale: __m256,
    lo: __m256,
    hi: __m256,
    zp: __m256i,
) -> __m256i {
    let v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), scale);
    let v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    _mm256_add_epi32(_mm256_cvtps_epi32(v), zp)
}

/// The most taps (kernel height times width) [`run`] takes.
pub(crate) const MAX_TAPS: usize = 32;

/// Computes `out` from `x` for a depthwise convolution of multiplier 1 and at most
/// [`MAX_TAPS`] taps.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn run(d: &QDepthwise<'_>, x: &[i8], out: &mut [i8]) {
    let w = d.window;
    let c = d.channels_in;
    let blocks = c / 16;
    let zp16 = i16::from(d.x_zero_point);
    let zpv = _mm256_set1_epi16(zp16);
    assert!(
        w.kernel_h * w.kernel_w <= MAX_TAPS
            && d.filter.len() >= w.kernel_h * w.kernel_w * c
            && d.bias.len() >= c
            && d.scales.len() >= c
    );
    // Per pixel, the in-bounds taps: where each reads the input and the filter (whole
    // rows of `c` channels, checked against the slices when listed).
    let mut taps = [(0usize, 0usize); MAX_TAPS];
    let mut pixel = 0;
    for n in 0..w.batch {
        for oh in 0..w.out_h {
            for ow in 0..w.out_w {
                let y = &mut out[pixel * c..(pixel + 1) * c];
                pixel += 1;
                let mut count = 0;
                for kh in 0..w.kernel_h {
                    let Some(ih) = w.in_row(oh, kh) else { continue };
                    for kw in 0..w.kernel_w {
                        let Some(iw) = w.in_col(ow, kw) else { continue };
                        let at = ((n * w.in_h + ih) * w.in_w + iw) * c;
                        assert!(at + c <= x.len());
                        taps[count] = (at, (kh * w.kernel_w + kw) * c);
                        count += 1;
                    }
                }
                let taps = &taps[..count];
                // Two blocks at a time where there are (more work per tap visited),
                // then the last one.
                let mut block = 0;
                while block + 2 <= blocks {
                    // SAFETY: AVX2 (the caller's contract); blocks `block` and
                    // `block + 1` are whole (`block + 2 <= c / 16`).
                    unsafe { blocks_of::<2>(d, x, taps, block * 16, zpv, y) };
                    block += 2;
                }
                if block < blocks {
                    // SAFETY: as above, block `block < c / 16` is whole.
                    unsafe { blocks_of::<1>(d, x, taps, block * 16, zpv, y) };
                }
                // The channels past the last block.
                for ch in blocks * 16..c {
                    let mut acc = d.bias[ch];
                    for &(at, tap) in taps {
                        let v = product(x[at + ch], zp16, d.filter[tap + ch]);
                        acc = acc.wrapping_add(i32::from(v));
                    }
                    y[ch] = d.requant.apply(acc, d.scales[ch]);
                }
            }
        }
    }
}

/// `B` blocks of 16 channels from `c0` of one output pixel `y`, over its in-bounds `taps`
/// (`(input offset, filter offset)` of whole rows of `channels_in`).
///
/// # Safety
/// The CPU must support AVX2 and FMA; `c0 + 16 * B <= channels_in`, and every tap's
/// rows lie within `x` and the filter (checked by [`run`]).
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn blocks_of<const B: usize>(
    d: &QDepthwise<'_>,
    x: &[i8],
    taps: &[(usize, usize)],
    c0: usize,
    zpv: __m256i,
    y: &mut [i8],
) {
    let lo = _mm256_set1_ps(d.requant.lo);
    let hi = _mm256_set1_ps(d.requant.hi);
    let out_zp = _mm256_set1_epi32(d.requant.zero_point);
    // SAFETY: every pointer read covers channels `c0..c0 + 16 * B` of a bias, scales,
    // input or filter row of `channels_in` entries (the caller's contract).
    unsafe {
        let bias = d.bias.as_ptr().add(c0);
        let mut acc = [[_mm256_setzero_si256(); 2]; B];
        for (i, acc) in acc.iter_mut().enumerate() {
            acc[0] = _mm256_loadu_si256(bias.add(16 * i).cast());
            acc[1] = _mm256_loadu_si256(bias.add(16 * i + 8).cast());
        }
        for &(at, tap) in taps {
            for (i, acc) in acc.iter_mut().enumerate() {
                let src = x.as_ptr().add(at + c0 + 16 * i);
                let f = d.filter.as_ptr().add(tap + c0 + 16 * i);
                let xv = _mm256_cvtepi8_epi16(_mm_loadu_si128(src.cast()));
                let wv = _mm256_cvtepi8_epi16(_mm_loadu_si128(f.cast()));
                let p = _mm256_mullo_epi16(_mm256_sub_epi16(xv, zpv), wv);
                let p0 = _mm256_cvtepi16_epi32(_mm256_castsi256_si128(p));
                let p1 = _mm256_cvtepi16_epi32(_mm256_extracti128_si256(p, 1));
                acc[0] = _mm256_add_epi32(acc[0], p0);
                acc[1] = _mm256_add_epi32(acc[1], p1);
            }
        }
        for (i, acc) in acc.iter().enumerate() {
            let scales = d.scales.as_ptr().add(c0 + 16 * i);
            let q0 = requant8(acc[0], _mm256_loadu_ps(scales), lo, hi, out_zp);
            let q1 = requant8(acc[1], _mm256_loadu_ps(scales.add(8)), lo, hi, out_zp);
            // Within int8 after the clamp: the saturating packs keep the values; the lane
            // permute undoes packs' 128-bit interleave.
            let q = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xd8);
            let q = _mm_packs_epi16(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
            let at = c0 + 16 * i;
            _mm_storeu_si128(y[at..at + 16].as_mut_ptr().cast(), q);
        }
    }
}
