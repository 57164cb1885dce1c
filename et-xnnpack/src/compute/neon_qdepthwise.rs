//! The int8 depthwise convolution (multiplier 1) on NEON: per output pixel, blocks of 16
//! channels (then one of 8) accumulate every tap inside the input in int32 registers:
//! `ssubl` widens the input bytes less the zero point to int16 (exact: at most 255 in
//! magnitude), `sxtl` the weights, and `smlal`/`smlal2` add their products (at most
//! 255 * 128) to four int32 vectors. The requantization is `Requant::apply`'s, 4 lanes
//! at a time. Channels past the last block take the per-channel loop.
//!
//! The filter is read as stored (`[taps][channels]`, each tap's row already in load
//! order), so nothing is packed at init: widening the weights costs two instructions per
//! 16 channels and tap, and keeps the kernel free of a second copy of the filter.
//! Taps outside the input are skipped, as in the portable loop; no `sdot` level: the
//! differences need 9 bits.

use core::arch::aarch64::*;
use core::ops::Range;

use super::{product, QDepthwise};
use crate::compute::neon_dot::{narrow16, requant4};

/// The most taps (kernel height times width) [`run`] takes; larger kernels take the
/// portable loop.
pub(crate) const MAX_TAPS: usize = 32;

/// One tap inside the input: the `channels_in` bytes it reads and its filter row.
type Tap<'a> = (&'a [i8], &'a [i8]);

/// Computes output rows `band` (`out` from the band's first pixel) from `x` for a
/// depthwise convolution of multiplier 1 and at most [`MAX_TAPS`] taps.
pub(crate) fn run(d: &QDepthwise<'_>, x: &[i8], band: Range<usize>, out: &mut [i8]) {
    let w = d.window;
    let c = d.channels_in;
    let taps_n = w.kernel_h * w.kernel_w;
    assert!(
        d.multiplier == 1
            && taps_n <= MAX_TAPS
            && d.filter.len() >= taps_n * c
            && d.bias.len() >= c
            && d.scales.len() >= c
    );
    let zp16 = i16::from(d.x_zero_point);
    let empty: &[i8] = &[];
    let mut taps: [Tap<'_>; MAX_TAPS] = [(empty, empty); MAX_TAPS];
    let mut pixel = 0;
    for row in band {
        let (n, oh) = (row / w.out_h, row % w.out_h);
        for ow in 0..w.out_w {
            let y = &mut out[pixel * c..(pixel + 1) * c];
            pixel += 1;
            let mut count = 0;
            for kh in 0..w.kernel_h {
                let Some(ih) = w.in_row(oh, kh) else { continue };
                for kw in 0..w.kernel_w {
                    let Some(iw) = w.in_col(ow, kw) else { continue };
                    let at = ((n * w.in_h + ih) * w.in_w + iw) * c;
                    let t = kh * w.kernel_w + kw;
                    taps[count] = (&x[at..at + c], &d.filter[t * c..(t + 1) * c]);
                    count += 1;
                }
            }
            let taps = &taps[..count];
            let mut c0 = 0;
            while c0 + 16 <= c {
                // SAFETY: `c0 + 16 <= c`, the length of every tap's rows, of `y` and at
                // most that of the bias and the scales (asserted).
                unsafe { block16(d, taps, c0, y) };
                c0 += 16;
            }
            if c0 + 8 <= c {
                // SAFETY: as above with `c0 + 8 <= c`.
                unsafe { block8(d, taps, c0, y) };
                c0 += 8;
            }
            for ch in c0..c {
                let acc = taps.iter().fold(d.bias[ch], |acc, &(src, f)| {
                    acc.wrapping_add(i32::from(product(src[ch], zp16, f[ch])))
                });
                y[ch] = d.requant.apply(acc, d.scales[ch]);
            }
        }
    }
}

/// The 16 channels from `c0` of one output pixel `y`.
///
/// # Safety
/// `c0 + 16` is at most the length of `y`, of both rows of every tap, of the bias and of
/// the scales.
#[inline(always)]
unsafe fn block16(d: &QDepthwise<'_>, taps: &[Tap<'_>], c0: usize, y: &mut [i8]) {
    // SAFETY: every load and the store touch channels `c0..c0 + 16` of a slice at least
    // that long (the caller's contract). NEON is aarch64's baseline.
    unsafe {
        let zp = vdupq_n_s8(d.x_zero_point);
        let bias = d.bias.as_ptr().add(c0);
        let mut acc = [0, 4, 8, 12].map(|at| vld1q_s32(bias.add(at)));
        for &(src, f) in taps {
            let xv = vld1q_s8(src.as_ptr().add(c0));
            let wv = vld1q_s8(f.as_ptr().add(c0));
            let (dlo, dhi) = (
                vsubl_s8(vget_low_s8(xv), vget_low_s8(zp)),
                vsubl_high_s8(xv, zp),
            );
            let (wlo, whi) = (vmovl_s8(vget_low_s8(wv)), vmovl_high_s8(wv));
            acc[0] = vmlal_s16(acc[0], vget_low_s16(dlo), vget_low_s16(wlo));
            acc[1] = vmlal_high_s16(acc[1], dlo, wlo);
            acc[2] = vmlal_s16(acc[2], vget_low_s16(dhi), vget_low_s16(whi));
            acc[3] = vmlal_high_s16(acc[3], dhi, whi);
        }
        let (lo, hi) = (vdupq_n_f32(d.requant.lo), vdupq_n_f32(d.requant.hi));
        let out_zp = vdupq_n_s32(d.requant.zero_point);
        let scales = d.scales.as_ptr().add(c0);
        let q =
            [0, 1, 2, 3].map(|v| requant4(acc[v], vld1q_f32(scales.add(4 * v)), lo, hi, out_zp));
        vst1q_s8(y.as_mut_ptr().add(c0), narrow16(q));
    }
}

/// The 8 channels from `c0` of one output pixel `y`.
///
/// # Safety
/// `c0 + 8` is at most the length of `y`, of both rows of every tap, of the bias and of
/// the scales.
#[inline(always)]
unsafe fn block8(d: &QDepthwise<'_>, taps: &[Tap<'_>], c0: usize, y: &mut [i8]) {
    // SAFETY: every load and the store touch channels `c0..c0 + 8` of a slice at least
    // that long (the caller's contract). NEON is aarch64's baseline.
    unsafe {
        let zp = vdup_n_s8(d.x_zero_point);
        let bias = d.bias.as_ptr().add(c0);
        let mut acc = [vld1q_s32(bias), vld1q_s32(bias.add(4))];
        for &(src, f) in taps {
            let dv = vsubl_s8(vld1_s8(src.as_ptr().add(c0)), zp);
            let wv = vmovl_s8(vld1_s8(f.as_ptr().add(c0)));
            acc[0] = vmlal_s16(acc[0], vget_low_s16(dv), vget_low_s16(wv));
            acc[1] = vmlal_high_s16(acc[1], dv, wv);
        }
        let (lo, hi) = (vdupq_n_f32(d.requant.lo), vdupq_n_f32(d.requant.hi));
        let out_zp = vdupq_n_s32(d.requant.zero_point);
        let scales = d.scales.as_ptr().add(c0);
        let q0 = requant4(acc[0], vld1q_f32(scales), lo, hi, out_zp);
        let q1 = requant4(acc[1], vld1q_f32(scales.add(4)), lo, hi, out_zp);
        // The low bytes, as `as i8` truncates (the clamp keeps them within int8).
        let q = vmovn_s16(vmovn_high_s32(vmovn_s32(q0), q1));
        vst1_s8(y.as_mut_ptr().add(c0), q);
    }
}
