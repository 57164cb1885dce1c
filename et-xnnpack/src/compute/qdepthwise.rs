//! The int8 depthwise convolution in XNNPACK's arithmetic: per output channel `acc =
//! bias + sum over taps of (x - x_zero_point) * w`, then the fp32 requantization of
//! [`Requant`]. The zero point is subtracted from each tap read (in int16, where the
//! difference times a weight always fits) rather than folded into the bias, because
//! the portable loop skips taps outside the input instead of reading padding.

use core::ops::Range;

#[cfg(target_arch = "x86_64")]
use super::cpu::avx2_fma;
use super::requant::Requant;
use super::window::Window;

/// A depthwise convolution: output channel `c` reads input channel `c / multiplier`,
/// filter `[kh * kw][channels_out]` (XNNPACK's `1HWO` as stored).
#[derive(Clone, Copy, Debug)]
pub(crate) struct QDepthwise<'a> {
    pub(crate) window: &'a Window,
    pub(crate) channels_in: usize,
    pub(crate) multiplier: usize,
    pub(crate) x_zero_point: i8,
    pub(crate) filter: &'a [i8],
    /// The filter packed for a SIMD kernel, if any.
    #[cfg_attr(
        not(target_arch = "x86_64"),
        allow(dead_code, reason = "read by the x86-64 kernels only")
    )]
    pub(crate) packed: Packed<'a>,
    /// The bias as stored: the zero point is subtracted from each tap read instead of
    /// folded in (the portable loop skips taps outside the input).
    pub(crate) bias: &'a [i32],
    pub(crate) scales: &'a [f32],
    pub(crate) requant: Requant,
}

/// The filter of a depthwise convolution of multiplier 1 packed at init for the kernel
/// the CPU runs best.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(target_arch = "x86_64"),
    allow(dead_code, reason = "built by the x86-64 packing only")
)]
pub(crate) enum Packed<'a> {
    /// Not packed: the portable loop (or NEON's, which reads the filter as stored).
    None,
    /// By `avx2::interleave`.
    Avx2(&'a [i16]),
    /// By `avx512::pack`, with the bias and scales.
    Avx512(&'a [i32]),
}

impl QDepthwise<'_> {
    /// Scratch bytes [`run`](Self::run) takes: one pixel's int32 accumulators.
    pub(crate) fn scratch_bytes(channels_out: usize) -> usize {
        // Saturating: the bound is read from a payload before it is checked.
        channels_out
            .saturating_mul(4)
            .checked_next_multiple_of(64)
            .unwrap_or(usize::MAX)
    }

    /// Computes output rows `band` (rows of all images, as `Window::out_rows` counts
    /// them) into `out`, which starts at the band's first pixel, from `x`; `acc` holds
    /// at least `channels_out` int32s.
    pub(crate) fn run(&self, x: &[i8], band: Range<usize>, out: &mut [i8], acc: &mut [i32]) {
        assert!(band.start <= band.end && band.end <= self.window.out_rows());
        #[cfg(target_arch = "x86_64")]
        if self.multiplier == 1 && self.window.kernel_h * self.window.kernel_w <= avx2::MAX_TAPS {
            // The accumulators' scratch holds the kernels' zero-point row instead.
            let zero_row = crate::plain::cast_mut::<i32, i8>(&mut *acc);
            match self.packed {
                Packed::Avx512(packed) if super::cpu::vnni() == Some(super::cpu::Vnni::Avx512) => {
                    // SAFETY: `cpu::vnni` found AVX-512 VNNI, which it only reports with
                    // AVX-512F, BW and VL and the OS saving their state.
                    unsafe { avx512::run(self, packed, x, band, out, zero_row) };
                    return;
                }
                Packed::Avx2(interleaved) if avx2_fma() => {
                    // SAFETY: the CPU supports AVX2 and FMA (checked just above).
                    unsafe { avx2::run(self, interleaved, x, band, out, zero_row) };
                    return;
                }
                _ => {}
            }
        }
        #[cfg(target_arch = "aarch64")]
        if self.multiplier == 1 && self.window.kernel_h * self.window.kernel_w <= neon::MAX_TAPS {
            neon::run(self, x, band, out);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if avx2_fma() {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above); the function
            // only compiles the same safe code for that instruction set.
            unsafe { self.run_avx2(x, band, out, acc) };
            return;
        }
        self.run_with(x, band, out, acc);
    }

    /// [`run_with`](Self::run_with) compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_avx2(&self, x: &[i8], band: Range<usize>, out: &mut [i8], acc: &mut [i32]) {
        self.run_with(x, band, out, acc);
    }

    #[inline(always)]
    fn run_with(&self, x: &[i8], band: Range<usize>, out: &mut [i8], acc: &mut [i32]) {
        let w = self.window;
        let (cin, m) = (self.channels_in, self.multiplier);
        let cout = cin * m;
        let acc = &mut acc[..cout];
        let zp = i16::from(self.x_zero_point);
        let mut pixel = 0;
        for row in band {
            let (n, oh) = (row / w.out_h, row % w.out_h);
            for ow in 0..w.out_w {
                acc.copy_from_slice(self.bias);
                for kh in 0..w.kernel_h {
                    let Some(ih) = w.in_row(oh, kh) else { continue };
                    for kw in 0..w.kernel_w {
                        let Some(iw) = w.in_col(ow, kw) else { continue };
                        let src = &x[((n * w.in_h + ih) * w.in_w + iw) * cin..][..cin];
                        let taps = &self.filter[(kh * w.kernel_w + kw) * cout..][..cout];
                        if m == 1 {
                            for ((a, &v), &f) in acc.iter_mut().zip(src).zip(taps) {
                                *a = a.wrapping_add(i32::from(product(v, zp, f)));
                            }
                        } else {
                            for (c, (a, &f)) in acc.iter_mut().zip(taps).enumerate() {
                                let d = product(src[c / m], zp, f);
                                *a = a.wrapping_add(i32::from(d));
                            }
                        }
                    }
                }
                let y = &mut out[pixel * cout..(pixel + 1) * cout];
                pixel += 1;
                for ((y, &a), &s) in y.iter_mut().zip(acc.iter()).zip(self.scales) {
                    *y = self.requant.apply(a, s);
                }
            }
        }
    }
}

/// `(v - zero_point) * f` in int16, where it always fits: `|v - zero_point| <= 255` and
/// `|f| <= 128` give at most 32640. Int16 lanes halve the vector work of int32 ones.
#[inline(always)]
pub(crate) fn product(v: i8, zero_point: i16, f: i8) -> i16 {
    (i16::from(v) - zero_point) * i16::from(f)
}

#[cfg(target_arch = "x86_64")]
#[path = "qdepthwise_avx2.rs"]
pub(crate) mod avx2;

#[cfg(target_arch = "x86_64")]
#[path = "qdepthwise_avx512.rs"]
pub(crate) mod avx512;

#[cfg(target_arch = "aarch64")]
#[path = "neon_qdepthwise.rs"]
pub(crate) mod neon;

#[cfg(test)]
#[path = "qdepthwise_tests.rs"]
mod tests;
