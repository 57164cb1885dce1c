//! The int8 depthwise convolution (multiplier 1) on AVX2: per output pixel, blocks of 16
//! channels accumulate the taps two at a time in two int32 vectors held in registers
//! (`x - zero_point` in int16 lanes, interleaved with the next tap's and multiplied by
//! weights packed at init in that order with `vpmaddwd`), then requantize in the store.
//! Channels past the last whole block take a per-channel loop.

use core::arch::x86_64::*;
use core::ops::Range;

use super::{product, QDepthwise};
use crate::compute::requant::requant8;

/// The most taps (kernel height times width) [`run`] takes.
pub(crate) const MAX_TAPS: usize = 32;

/// Int16s of the filter of `channels` and `taps` packed by [`interleave`].
pub(crate) fn interleaved_len(channels: usize, taps: usize) -> usize {
    (channels / 16) * taps.div_ceil(2) * 32
}

/// Packs the whole 16-channel blocks of a `[taps][channels]` int8 filter for [`run`]:
/// per block and pair of taps `(2p, 2p + 1)` (the second 0 past the last tap), 32
/// int16s in `vpmaddwd` order. Unpacking two taps' int16 rows interleaves them within
/// each 128-bit lane, so the low unpack holds channels 0-3 and 8-11 and the high one
/// 4-7 and 12-15; the weights follow that order.
pub(crate) fn interleave(filter: &[i8], channels: usize, taps: usize, out: &mut [i16]) {
    let pairs = taps.div_ceil(2);
    let w = |t: usize, ch: usize| {
        if t < taps {
            i16::from(filter[t * channels + ch])
        } else {
            0
        }
    };
    for block in 0..channels / 16 {
        for p in 0..pairs {
            let dst = &mut out[(block * pairs + p) * 32..][..32];
            for v in 0..2 {
                for lane in 0..2 {
                    for j in 0..4 {
                        let ch = block * 16 + lane * 8 + v * 4 + j;
                        let at = v * 16 + lane * 8 + j * 2;
                        dst[at] = w(2 * p, ch);
                        dst[at + 1] = w(2 * p + 1, ch);
                    }
                }
            }
        }
    }
}

/// Computes output rows `band` (`out` from the band's first pixel) from `x` for a
/// depthwise convolution of multiplier 1 and at most
/// [`MAX_TAPS`] taps, with `interleaved` from [`interleave`] and `zero_row` at least
/// `channels` bytes of scratch.
///
/// Every pixel takes all its taps: one outside the input reads `zero_row`, filled with
/// the input zero point, so it adds `(zero_point - zero_point) * w = 0`, as XNNPACK's
/// padding does. That keeps the taps in the fixed pairs the weights are packed in.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn run(
    d: &QDepthwise<'_>,
    interleaved: &[i16],
    x: &[i8],
    band: Range<usize>,
    out: &mut [i8],
    zero_row: &mut [i8],
) {
    let w = d.window;
    let c = d.channels_in;
    let blocks = c / 16;
    let taps_n = w.kernel_h * w.kernel_w;
    let zp16 = i16::from(d.x_zero_point);
    let zpv = _mm256_set1_epi16(zp16);
    assert!(
        taps_n <= MAX_TAPS
            && d.filter.len() >= taps_n * c
            && interleaved.len() >= interleaved_len(c, taps_n)
            && d.bias.len() >= c
            && d.scales.len() >= c
            && zero_row.len() >= c
    );
    let zero_row = &mut zero_row[..c];
    zero_row.fill(d.x_zero_point);
    // Per pixel, where each tap reads: a row of `c` input channels (checked against `x`
    // when listed) or the zero-point row; an odd count pairs the last with the zero row
    // (its packed weights are 0).
    let mut taps = [zero_row.as_ptr(); MAX_TAPS + 1];
    let mut pixel = 0;
    for row in band {
        let (n, oh) = (row / w.out_h, row % w.out_h);
        for ow in 0..w.out_w {
            let y = &mut out[pixel * c..(pixel + 1) * c];
            pixel += 1;
            for kh in 0..w.kernel_h {
                let ih = w.in_row(oh, kh);
                for kw in 0..w.kernel_w {
                    taps[kh * w.kernel_w + kw] = match (ih, w.in_col(ow, kw)) {
                        (Some(ih), Some(iw)) => {
                            let at = ((n * w.in_h + ih) * w.in_w + iw) * c;
                            x[at..at + c].as_ptr()
                        }
                        _ => zero_row.as_ptr(),
                    };
                }
            }
            let taps = &taps[..taps_n.div_ceil(2) * 2];
            for block in 0..blocks {
                let packed = &interleaved[block * taps.len() * 16..][..taps.len() * 16];
                // SAFETY: AVX2 (the caller's contract); block `block < c / 16` is
                // whole, and every tap points to `c` readable bytes.
                unsafe { block_of(d, taps, packed, block * 16, zpv, y) };
            }
            // The channels past the last block.
            for ch in blocks * 16..c {
                let mut acc = d.bias[ch];
                for kh in 0..w.kernel_h {
                    let Some(ih) = w.in_row(oh, kh) else { continue };
                    for kw in 0..w.kernel_w {
                        let Some(iw) = w.in_col(ow, kw) else { continue };
                        let v = x[((n * w.in_h + ih) * w.in_w + iw) * c + ch];
                        let f = d.filter[(kh * w.kernel_w + kw) * c + ch];
                        acc = acc.wrapping_add(i32::from(product(v, zp16, f)));
                    }
                }
                y[ch] = d.requant.apply(acc, d.scales[ch]);
            }
        }
    }
}

/// The 16 channels from `c0` of one output pixel `y`: pairs of `taps` (each pointing to
/// a row of `channels_in` bytes) times the block's `packed` weights (16 int16s per tap).
///
/// # Safety
/// The CPU must support AVX2 and FMA; `c0 + 16 <= channels_in`; every tap points to
/// `channels_in` readable bytes; `taps.len()` is even.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn block_of(
    d: &QDepthwise<'_>,
    taps: &[*const i8],
    packed: &[i16],
    c0: usize,
    zpv: __m256i,
    y: &mut [i8],
) {
    let lo = _mm256_set1_ps(d.requant.lo);
    let hi = _mm256_set1_ps(d.requant.hi);
    let out_zp = _mm256_set1_epi32(d.requant.zero_point);
    // SAFETY: reads channels `c0..c0 + 16` of the bias, the scales and the tap rows
    // (`channels_in` long each), and 32 int16s per pair of `packed` (`taps.len() * 16`
    // long): the caller's contract.
    unsafe {
        let b0 = _mm256_loadu_si256(d.bias.as_ptr().add(c0).cast());
        let b1 = _mm256_loadu_si256(d.bias.as_ptr().add(c0 + 8).cast());
        // The unpack order: channels 0-3 and 8-11, then 4-7 and 12-15.
        let mut acc0 = _mm256_permute2x128_si256(b0, b1, 0x20);
        let mut acc1 = _mm256_permute2x128_si256(b0, b1, 0x31);
        for (p, pair) in taps.chunks_exact(2).enumerate() {
            let x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pair[0].add(c0).cast()));
            let x1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pair[1].add(c0).cast()));
            let (x0, x1) = (_mm256_sub_epi16(x0, zpv), _mm256_sub_epi16(x1, zpv));
            let w = packed.as_ptr().add(p * 32);
            let w0 = _mm256_loadu_si256(w.cast());
            let w1 = _mm256_loadu_si256(w.add(16).cast());
            // Each product is at most 255 * 128 and a lane adds two: exact in int32.
            acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), w0));
            acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), w1));
        }
        let s0 = _mm256_loadu_ps(d.scales.as_ptr().add(c0));
        let s1 = _mm256_loadu_ps(d.scales.as_ptr().add(c0 + 8));
        let q0 = requant8(acc0, _mm256_permute2f128_ps(s0, s1, 0x20), lo, hi, out_zp);
        let q1 = requant8(acc1, _mm256_permute2f128_ps(s0, s1, 0x31), lo, hi, out_zp);
        // Within int8 after the clamp, so the saturating packs keep the values; packing
        // the two unpack orders per 128-bit lane gives channels 0-7 | 8-15.
        let q = _mm256_packs_epi32(q0, q1);
        let q = _mm_packs_epi16(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        _mm_storeu_si128(y[c0..c0 + 16].as_mut_ptr().cast(), q);
    }
}
