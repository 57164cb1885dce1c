//! The int8 depthwise convolution (multiplier 1) on AVX-512 (F, BW, VL and VNNI): per
//! output pixel, blocks of 32 channels accumulate the taps two at a time in two int32
//! vectors held in registers, `vpdpwssd` multiplying each pair of taps' int16 inputs
//! (interleaved) by weights packed at init in that order and adding both products to
//! the lane, then requantize in the store.
//!
//! Unlike the AVX2 kernel, the inputs are not offset by the zero point: every pixel
//! reads all its taps (one outside the input reads a row of the zero point), so
//! `sum((x - zp) * w) = sum(x * w) - zp * sum(w)`, and the second term is folded into
//! each block's bias at init. A product of two int8s and the sum of two such fit the
//! int32 lane exactly. The last block of a channel count that is not a multiple of 32
//! reads and writes through byte masks; its packed weights, bias and scales are zero
//! past the channels.

use core::arch::x86_64::*;
use core::ops::Range;

use super::QDepthwise;
use crate::compute::sweep::interior_cols;
use crate::plain::cast_mut;

/// The most taps (kernel height times width) [`run`] takes.
pub(crate) const MAX_TAPS: usize = super::avx2::MAX_TAPS;

/// Channels per block.
const BLOCK: usize = 32;

/// Int32 words of a block's header: 32 biases, then 32 scales (as `f32` bits), both in
/// the accumulators' lane order (see [`channel_of`]).
const HEADER: usize = 2 * BLOCK;

/// Int32 words of a block's weights for one pair of taps: 32 pairs of int16s for each
/// of the two accumulators.
const PAIR: usize = BLOCK;

/// The channel (within its block) in lane `lane` of accumulator `half`. Interleaving
/// two taps' bytes (`vpunpcklbw`/`vpunpckhbw` on 256-bit vectors) works within each
/// 128-bit lane of 16 channels, so the low accumulator holds channels 0-7 and 16-23 and
/// the high one 8-15 and 24-31.
fn channel_of(half: usize, lane: usize) -> usize {
    16 * (lane / 8) + 8 * half + lane % 8
}

/// Int32 words [`pack`] writes for `channels` and `taps` (saturating: the sizes come
/// from a payload).
pub(crate) fn packed_len(channels: usize, taps: usize) -> usize {
    channels
        .div_ceil(BLOCK)
        .saturating_mul(taps.div_ceil(2).saturating_mul(PAIR).saturating_add(HEADER))
}

/// Packs a `[taps][channels]` int8 filter, its bias (the zero-point term folded in)
/// and its requantization scales into `out` ([`packed_len`] words) for [`run`].
pub(crate) fn pack(
    filter: &[i8],
    bias: &[i32],
    scales: &[f32],
    x_zero_point: i8,
    (channels, taps): (usize, usize),
    out: &mut [i32],
) {
    let pairs = taps.div_ceil(2);
    let tap = |t: usize, ch: usize| {
        if t < taps && ch < channels {
            i16::from(filter[t * channels + ch])
        } else {
            0
        }
    };
    let record = HEADER + pairs * PAIR;
    for (block, dst) in out.chunks_exact_mut(record).enumerate() {
        let (header, weights) = dst.split_at_mut(HEADER);
        let (biases, block_scales) = header.split_at_mut(BLOCK);
        let block_scales = cast_mut::<i32, f32>(block_scales);
        let weights = cast_mut::<i32, i16>(weights);
        for half in 0..2 {
            for lane in 0..16 {
                let ch = block * BLOCK + channel_of(half, lane);
                let at = half * 16 + lane;
                if ch < channels {
                    let sum: i32 = (0..taps).map(|t| i32::from(tap(t, ch))).sum();
                    let folded = i32::from(x_zero_point).wrapping_mul(sum);
                    biases[at] = bias[ch].wrapping_sub(folded);
                    block_scales[at] = scales[ch];
                }
                for p in 0..pairs {
                    let w = 2 * (p * 2 * 16 + at);
                    weights[w] = tap(2 * p, ch);
                    weights[w + 1] = tap(2 * p + 1, ch);
                }
            }
        }
    }
}

/// Output pixels the kernel computes at once: independent accumulator chains that hide
/// `vpdpwssd`'s latency, and one load of each weight vector for all of them.
const PIXELS: usize = 4;

/// Computes output rows `band` (`out` from the band's first pixel) from `x` for a
/// depthwise convolution of multiplier 1 and at most [`MAX_TAPS`] taps, with `packed`
/// from [`pack`] and `zero_row` at least `channels` bytes of scratch.
///
/// # Safety
/// The CPU must support AVX-512F, BW, VL and VNNI (the OS saving their state).
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")]
pub(crate) unsafe fn run(
    d: &QDepthwise<'_>,
    packed: &[i32],
    x: &[i8],
    band: Range<usize>,
    out: &mut [i8],
    zero_row: &mut [i8],
) {
    let w = d.window;
    let c = d.channels_in;
    let taps_n = w.kernel_h * w.kernel_w;
    assert!(
        taps_n <= MAX_TAPS
            && packed.len() >= packed_len(c, taps_n)
            && zero_row.len() >= c
            && out.len() >= (band.end - band.start) * w.out_w * c
    );
    let zero_row = &mut zero_row[..c];
    zero_row.fill(d.x_zero_point);
    let zero = zero_row.as_ptr();
    // Each tap row's first input pixel, if the row is inside the input.
    let mut tap_rows = [None; MAX_TAPS];
    // Where each tap of a pixel reads `c` channels: inside `x`, or the zero-point row.
    let tap = |tap_rows: &[Option<usize>; MAX_TAPS], ow: usize, kh: usize, kw: usize| match (
        tap_rows[kh],
        w.in_col(ow, kw),
    ) {
        (Some(at), Some(iw)) => x[(at + iw) * c..][..c].as_ptr(),
        _ => zero,
    };
    // The output columns whose taps all lie inside the input's columns.
    let (first, last) = interior_cols(w);
    let inside = first..last;
    // An odd count of taps pairs the last with the zero row (its weights are 0): every
    // pixel overwrites the others.
    let mut taps = [[zero; MAX_TAPS + 1]; PIXELS];
    let mut pixel = 0;
    for row in band {
        let (n, oh) = (row / w.out_h, row % w.out_h);
        for (kh, at) in tap_rows.iter_mut().enumerate().take(w.kernel_h) {
            *at = w.in_row(oh, kh).map(|ih| (n * w.in_h + ih) * w.in_w);
        }
        let all_rows = tap_rows[..w.kernel_h].iter().all(Option::is_some);
        let mut ow = 0;
        while ow < w.out_w {
            let count = if w.out_w - ow >= PIXELS { PIXELS } else { 1 };
            if all_rows && inside.contains(&ow) && inside.contains(&(ow + count - 1)) {
                // Every tap inside: each row's taps are `dilation_w` pixels apart.
                for (i, taps) in taps.iter_mut().enumerate().take(count) {
                    let col = (ow + i) * w.stride_w - w.pad_left;
                    for (kh, row_taps) in taps
                        .chunks_exact_mut(w.kernel_w)
                        .take(w.kernel_h)
                        .enumerate()
                    {
                        let first = tap_rows[kh].unwrap_or(0) + col;
                        let span = ((w.kernel_w - 1) * w.dilation_w + 1) * c;
                        let src = &x[first * c..][..span];
                        for (kw, t) in row_taps.iter_mut().enumerate() {
                            *t = src[kw * w.dilation_w * c..].as_ptr();
                        }
                    }
                }
            } else {
                for (i, taps) in taps.iter_mut().enumerate().take(count) {
                    for kh in 0..w.kernel_h {
                        for kw in 0..w.kernel_w {
                            taps[kh * w.kernel_w + kw] = tap(&tap_rows, ow + i, kh, kw);
                        }
                    }
                }
            }
            let y = out[pixel * c..][..count * c].as_mut_ptr();
            // SAFETY: AVX-512 (the caller's contract); every tap points to `c` readable
            // bytes, `y` to `count * c` writable ones, and `packed` holds the blocks of
            // `c` channels and `taps_n` taps (asserted above).
            unsafe {
                if count == PIXELS {
                    pixels::<PIXELS>(d, &taps, taps_n.div_ceil(2), packed, c, y);
                } else {
                    pixels::<1>(d, &taps, taps_n.div_ceil(2), packed, c, y);
                }
            }
            pixel += count;
            ow += count;
        }
    }
}

/// All `c` channels of `P` output pixels in blocks of 32 (the last through byte masks),
/// pixel `i` reading `pairs` pairs of taps from `taps[i]` and written at `y + i * c`.
///
/// # Safety
/// The CPU must support AVX-512F, BW, VL and VNNI; each of the first `2 * pairs` taps of
/// the first `P` pixels points to `c` readable bytes, `y` to `P * c` writable ones;
/// `packed` holds `c.div_ceil(32)` records of [`HEADER`] words and [`PAIR`] per pair.
#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")]
#[inline]
unsafe fn pixels<const P: usize>(
    d: &QDepthwise<'_>,
    taps: &[[*const i8; MAX_TAPS + 1]; PIXELS],
    pairs: usize,
    packed: &[i32],
    c: usize,
    y: *mut i8,
) {
    let record = HEADER + pairs * PAIR;
    let lo = _mm512_set1_ps(d.requant.lo);
    let hi = _mm512_set1_ps(d.requant.hi);
    let zp = _mm512_set1_epi32(d.requant.zero_point);
    let mut c0 = 0;
    let mut header = packed.as_ptr();
    // SAFETY: the loads read block records inside `packed` and, through `mask`, only
    // channels `c0..c` of each tap row; the stores write only channels `c0..c` of each
    // pixel (the caller's contract).
    unsafe {
        while c0 < c {
            let mask: __mmask32 = if c - c0 >= BLOCK {
                !0
            } else {
                (1 << (c - c0)) - 1
            };
            let weights = header.add(HEADER).cast::<i16>();
            let bias_lo = _mm512_loadu_si512(header.cast());
            let bias_hi = _mm512_loadu_si512(header.add(16).cast());
            let mut acc = [[bias_lo, bias_hi]; P];
            for p in 0..pairs {
                let w = weights.add(p * 2 * PAIR);
                let w_lo = _mm512_loadu_si512(w.cast());
                let w_hi = _mm512_loadu_si512(w.add(PAIR).cast());
                for (acc, taps) in acc.iter_mut().zip(taps) {
                    let x0 = _mm256_maskz_loadu_epi8(mask, taps[2 * p].add(c0));
                    let x1 = _mm256_maskz_loadu_epi8(mask, taps[2 * p + 1].add(c0));
                    // The two taps' bytes interleaved, then widened: int16 pairs.
                    let x_lo = _mm512_cvtepi8_epi16(_mm256_unpacklo_epi8(x0, x1));
                    let x_hi = _mm512_cvtepi8_epi16(_mm256_unpackhi_epi8(x0, x1));
                    acc[0] = _mm512_dpwssd_epi32(acc[0], x_lo, w_lo);
                    acc[1] = _mm512_dpwssd_epi32(acc[1], x_hi, w_hi);
                }
            }
            let scales = header.add(BLOCK).cast::<f32>();
            let (scale_lo, scale_hi) = (_mm512_loadu_ps(scales), _mm512_loadu_ps(scales.add(16)));
            for (i, acc) in acc.iter().enumerate() {
                let q_lo = requant16(acc[0], scale_lo, lo, hi, zp);
                let q_hi = requant16(acc[1], scale_hi, lo, hi, zp);
                // Back to channel order: groups of 8 channels alternate between the two.
                let dst = y.add(i * c + c0);
                _mm_mask_storeu_epi8(dst, mask as __mmask16, _mm_unpacklo_epi64(q_lo, q_hi));
                let rest = (mask >> 16) as __mmask16;
                _mm_mask_storeu_epi8(dst.add(16), rest, _mm_unpackhi_epi64(q_lo, q_hi));
            }
            c0 += BLOCK;
            header = header.add(record);
        }
    }
}

/// [`Requant::apply`](super::Requant::apply) on 16 lanes (`lo`, `hi` and `zp` its
/// bounds and zero point), narrowed to bytes: the clamp keeps every value inside int8,
/// so the saturating narrowing changes none.
#[target_feature(enable = "avx512f")]
#[inline]
fn requant16(acc: __m512i, scale: __m512, lo: __m512, hi: __m512, zp: __m512i) -> __m128i {
    let v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), scale);
    let v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    _mm512_cvtsepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), zp))
}
