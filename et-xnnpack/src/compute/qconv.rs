//! Convolutions on int8 values in XNNPACK's arithmetic (qint8 input and output, per
//! channel int8 weights, int32 bias): per output channel `acc = bias + sum over taps of
//! (x - x_zero_point) * w`, then the fp32 requantization of [`Requant`].
//!
//! Taps outside the input read the input zero point (XNNPACK pads with it), so they add
//! nothing. Conv2d folds `-x_zero_point * sum(w)` into the GEMM's bias at init and
//! multiplies the stored int8s through [`QGemm`]. Depthwise convolutions are
//! [`qdepthwise`](super::qdepthwise)'s.

use core::ops::Range;

use super::cpu::avx2_fma;
use super::qgemm::{pairs, QGemm, MR, MR_AVX512};
use super::window::Window;
use crate::plain::cast_mut;

/// Bytes past a tile's rows that the gather may write (and the next row, or nothing,
/// overwrites): whole 16-byte stores instead of masked ones or calls to `memset` for a
/// few bytes.
const ROW_SLACK: usize = 16;

/// Taps per pixel whose input offsets a GEMM tile finds once for all its groups (any
/// 7x7 window or smaller).
const TILE_TAPS: usize = 49;

/// The offset of a tap outside the input (it reads the input zero point).
const OUTSIDE: usize = usize::MAX;

/// A convolution (any groups) over NHWC int8s, weights `[groups * group_out][k]` with
/// `k = kh * kw * group_in` in (kh, kw, channel) order (XNNPACK's OHWI as stored),
/// packed in `gemm` (each group's after the previous one, see [`QGemm::group`]): tiles
/// of [`MR`] pixels (of [`MR_AVX512`] on the AVX-512 VNNI kernel), group by group.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QConv<'a> {
    pub(crate) gemm: QGemm<'a>,
    pub(crate) window: &'a Window,
    pub(crate) groups: usize,
    pub(crate) group_in: usize,
    pub(crate) group_out: usize,
    pub(crate) x_zero_point: i8,
}

impl QConv<'_> {
    /// The scratch [`run`](Self::run) takes, in 4-byte words: a tile of widened rows
    /// (of the tallest kernel's tile) with [`ROW_SLACK`] bytes after it, and one
    /// gathered patch followed by, for a convolution of several groups of `group_out`
    /// channels (0 for one group), a tile of one group's outputs (spread over the
    /// pixels' channels once stored).
    pub(crate) fn scratch_words(k: usize, group_out: usize) -> (usize, usize) {
        let rows = MR.max(MR_AVX512).saturating_mul(pairs(k));
        let patch = k
            .div_ceil(4)
            .saturating_add(MR.saturating_mul(group_out).div_ceil(4));
        (rows.saturating_add(ROW_SLACK / 4), patch)
    }

    /// [`scratch_words`](Self::scratch_words) in bytes, rounded to the 64 bytes
    /// `Frame::scratch` rounds to.
    pub(crate) fn scratch_bytes(k: usize, group_out: usize) -> usize {
        let (rows, patch) = Self::scratch_words(k, group_out);
        rows.saturating_add(patch)
            .saturating_mul(4)
            .checked_next_multiple_of(64)
            .unwrap_or(usize::MAX)
    }

    /// Computes output pixels `pixels` (of all images, in order) of `[batch, out_h,
    /// out_w, groups * group_out]` into `out`, which starts at the first, from `x`;
    /// `rows` and `patch` are at least [`scratch_words`](Self::scratch_words) long.
    /// Threads split a convolution by pixels, not rows: the GEMM tiles pixels, and a
    /// small image's few rows would not split evenly.
    pub(crate) fn run(
        &self,
        x: &[i8],
        pixels: Range<usize>,
        out: &mut [i8],
        rows: &mut [i16],
        patch: &mut [i8],
    ) {
        let w = self.window;
        assert!(pixels.start <= pixels.end && pixels.end <= w.out_rows() * w.out_w);
        let gemm = &self.gemm;
        #[cfg(target_arch = "x86_64")]
        if self.groups == 1 && gemm.vnni && super::cpu::vnni() == Some(super::cpu::Vnni::Avx512) {
            // SAFETY: `cpu::vnni` found AVX-512 VNNI, which it only reports with
            // AVX-512F, BW and VL and the OS saving their state.
            unsafe { self.run_gemm_avx512(gemm, x, pixels, out, rows) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if avx2_fma() {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above); the function
            // only compiles the same safe code for that instruction set.
            unsafe { self.run_gemm_avx2(gemm, x, pixels, out, rows, patch) };
            return;
        }
        self.run_gemm(gemm, x, pixels, out, rows, patch);
    }

    /// [`run_gemm`](Self::run_gemm) compiled for AVX2 (the widening of rows and the
    /// patch copies vectorize).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_gemm_avx2(
        &self,
        gemm: &QGemm<'_>,
        x: &[i8],
        pixels: Range<usize>,
        out: &mut [i8],
        rows: &mut [i16],
        patch: &mut [i8],
    ) {
        self.run_gemm(gemm, x, pixels, out, rows, patch);
    }

    /// [`run_gemm`](Self::run_gemm) on the AVX-512 VNNI kernel, in tiles of
    /// [`MR_AVX512`] pixels. A pointwise convolution whose rows are whole groups of 4
    /// bytes hands the kernel the input pixels themselves; others fill the tile's rows
    /// (gathering the taps of a wider window straight into them).
    ///
    /// # Safety
    /// The CPU must support AVX-512F, BW, VL and VNNI (the OS saving their state), and
    /// `gemm` be packed for VNNI.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")]
    unsafe fn run_gemm_avx512(
        &self,
        gemm: &QGemm<'_>,
        x: &[i8],
        pixels: Range<usize>,
        out: &mut [i8],
        rows: &mut [i16],
    ) {
        let w = self.window;
        let (cin, cout) = (self.group_in, self.group_out);
        let k = w.kernel_h * w.kernel_w * cin;
        let len = gemm.row_len();
        let direct = w.is_pointwise() && k.is_multiple_of(4);
        let rows = &mut rows[..MR_AVX512 * len + ROW_SLACK / 2];
        let mut first = pixels.start;
        while first < pixels.end {
            let count = (pixels.end - first).min(MR_AVX512);
            let at = first - pixels.start;
            let out = &mut out[at * cout..(at + count) * cout];
            // Rows past `count` repeat the last (read, never stored).
            let mut tile = [core::ptr::null(); MR_AVX512];
            if direct {
                let src = &x[first * cin..(first + count) * cin];
                for (r, row) in tile.iter_mut().enumerate() {
                    *row = src[r.min(count - 1) * cin..].as_ptr();
                }
                // SAFETY: AVX-512 VNNI (this function's contract); `gemm` is packed for
                // VNNI (checked by the caller); each row points to `k = cin` bytes of
                // `x`, which is `quads(k) * 4` as `k` is a multiple of 4.
                unsafe { gemm.tile_avx512::<true>(&tile, count, out) };
            } else {
                let per_image = w.out_h * w.out_w;
                let (n, rest) = (first / per_image, first % per_image);
                let (mut n, mut oh, mut ow) = (n, rest / w.out_w, rest % w.out_w);
                for r in 0..count {
                    if w.is_pointwise() {
                        let pixel = first + r;
                        let dst = &mut rows[r * len..(r + 1) * len];
                        gemm.fill_row(&x[pixel * cin..(pixel + 1) * cin], dst);
                    } else {
                        // The row and what follows: rows are filled in order, so what
                        // the gather writes past row `r` the next row overwrites.
                        let dst = cast_mut::<i16, i8>(&mut rows[r * len..]);
                        // SAFETY: AVX-512 (this function's contract).
                        unsafe { self.gather_unsigned(x, (n, oh, ow), dst, len * 2) };
                    }
                    ow += 1;
                    if ow == w.out_w {
                        ow = 0;
                        oh += 1;
                        if oh == w.out_h {
                            oh = 0;
                            n += 1;
                        }
                    }
                }
                for (r, row) in tile.iter_mut().enumerate() {
                    *row = rows[r.min(count - 1) * len..].as_ptr().cast();
                }
                // SAFETY: as above; each row points to a filled row of `len` int16s,
                // `quads(k) * 4` bytes.
                unsafe { gemm.tile_avx512::<false>(&tile, count, out) };
            }
            first += count;
        }
    }

    /// Output pixels `pixels` (`out` from the first) in tiles of [`MR`], each tile
    /// group by group: each pixel's input (the pixel itself for a pointwise
    /// convolution of one group, else its taps) put in `rows` as the GEMM reads them.
    /// A tile finds where its pixels' taps are once for all its groups. A group of
    /// several stores its tile in the scratch after the patch, then spreads it over the
    /// pixels' channels.
    #[inline(always)]
    fn run_gemm(
        &self,
        gemm: &QGemm<'_>,
        x: &[i8],
        pixels: Range<usize>,
        out: &mut [i8],
        rows: &mut [i16],
        patch: &mut [i8],
    ) {
        let w = self.window;
        let (gin, gout) = (self.group_in, self.group_out);
        let (cin, cout) = (self.groups * gin, self.groups * gout);
        let k = w.kernel_h * w.kernel_w * gin;
        let taps = w.kernel_h * w.kernel_w;
        let len = gemm.row_len();
        let pointwise = w.is_pointwise() && self.groups == 1;
        let tile_out = &mut patch[k..];
        let rows = &mut rows[..MR * len];
        let avx2 = avx2_fma();
        let mut offsets = [[0usize; TILE_TAPS]; MR];
        let mut first = pixels.start;
        while first < pixels.end {
            let count = (pixels.end - first).min(MR);
            let at = first - pixels.start;
            for g in 0..self.groups {
                for (r, offsets) in offsets.iter_mut().enumerate().take(count) {
                    let pixel = first + r;
                    let dst = &mut rows[r * len..(r + 1) * len];
                    if pointwise {
                        gemm.fill_row(&x[pixel * cin..(pixel + 1) * cin], dst);
                        continue;
                    }
                    // Windows of more taps than the cache find them per group, a
                    // cache-full at a time.
                    for from in (0..taps).step_by(TILE_TAPS) {
                        let offsets = &mut offsets[..(taps - from).min(TILE_TAPS)];
                        if g == 0 || taps > TILE_TAPS {
                            self.tap_offsets(pixel, from, cin, offsets);
                        }
                        self.fill_taps(x, offsets, from, g * gin, gemm.vnni, dst);
                    }
                    let filled = k * if gemm.vnni { 1 } else { 2 };
                    cast_mut::<i16, i8>(dst)[filled..].fill(0);
                }
                let group = gemm.group(g);
                if self.groups == 1 {
                    group.tile(rows, count, &mut out[at * cout..(at + count) * cout], avx2);
                } else {
                    let tile_out = &mut tile_out[..count * gout];
                    group.tile(rows, count, tile_out, avx2);
                    for (r, y) in tile_out.chunks_exact(gout).enumerate() {
                        let pixel = (at + r) * cout + g * gout;
                        out[pixel..pixel + gout].copy_from_slice(y);
                    }
                }
            }
            first += count;
        }
    }

    /// Where taps `from..from + offsets.len()` (in (kh, kw) order) of output pixel
    /// `pixel` start in the input (of `cin` channels), [`OUTSIDE`] for a tap outside it.
    #[inline(always)]
    fn tap_offsets(&self, pixel: usize, from: usize, cin: usize, offsets: &mut [usize]) {
        let w = self.window;
        let per_image = w.out_h * w.out_w;
        let (n, rest) = (pixel / per_image, pixel % per_image);
        let (oh, ow) = (rest / w.out_w, rest % w.out_w);
        for (t, offset) in (from..).zip(offsets.iter_mut()) {
            let (kh, kw) = (t / w.kernel_w, t % w.kernel_w);
            *offset = match (w.in_row(oh, kh), w.in_col(ow, kw)) {
                (Some(ih), Some(iw)) => ((n * w.in_h + ih) * w.in_w + iw) * cin,
                _ => OUTSIDE,
            };
        }
    }

    /// Fills taps `from..` of a GEMM row (as `QGemm::fill_row` writes one: bytes
    /// `x + 128` for the VNNI packing, else int16s) with the `group_in` channels from
    /// `channel` of the inputs at `offsets`, the input zero point for a tap outside;
    /// a tap's channels are copied eight at a time.
    #[inline(always)]
    fn fill_taps(
        &self,
        x: &[i8],
        offsets: &[usize],
        from: usize,
        channel: usize,
        vnni: bool,
        row: &mut [i16],
    ) {
        let gin = self.group_in;
        if vnni {
            let bytes = cast_mut::<i16, i8>(row);
            let padding = self.x_zero_point ^ i8::MIN;
            for (t, &offset) in (from..).zip(offsets) {
                let dst = &mut bytes[t * gin..(t + 1) * gin];
                match offset {
                    OUTSIDE => dst.fill(padding),
                    _ => flip_signs(&x[offset + channel..][..gin], dst),
                }
            }
        } else {
            for (t, &offset) in (from..).zip(offsets) {
                let dst = &mut row[t * gin..(t + 1) * gin];
                match offset {
                    OUTSIDE => dst.fill(i16::from(self.x_zero_point)),
                    _ => widen_into(&x[offset + channel..][..gin], dst),
                }
            }
        }
    }

    /// One group's taps of output pixel `(n, oh, ow)` as a VNNI row of `len` bytes at
    /// the start of `row` (see `QGemm::fill_row`): each byte `x + 128`, the input zero
    /// point's where a tap falls outside the input, zero past the taps. Copies whole
    /// taps with the offset applied, where `gather` and `fill_row` would take two
    /// passes. May write up to [`ROW_SLACK`] bytes past the row, so `row` must be that
    /// much longer than `len`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F, BW and VL.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn gather_unsigned(
        &self,
        x: &[i8],
        (n, oh, ow): (usize, usize, usize),
        row: &mut [i8],
        len: usize,
    ) {
        let w = self.window;
        let cin = self.group_in;
        let padding = self.x_zero_point ^ i8::MIN;
        let span = w.kernel_w * cin;
        assert!(w.kernel_h * span <= len && len + ROW_SLACK <= row.len());
        // The tap columns inside the input: a run of them, adjacent in the input when
        // the dilation is 1, so that each tap row copies them at once.
        let inside = (0..w.kernel_w).filter(|&kw| w.in_col(ow, kw).is_some());
        let (first, last) = (inside.clone().min(), inside.max());
        // Tap rows in order, and in each the left padding, the copy and the right
        // padding: every store may run over (16 bytes at a time), into bytes written
        // again later.
        for kh in 0..w.kernel_h {
            let at = kh * span;
            let (Some(ih), Some(first), Some(last)) = (w.in_row(oh, kh), first, last) else {
                // SAFETY: AVX-512F, BW and VL (this function's contract).
                unsafe { fill_over(&mut row[at..], span, padding) };
                continue;
            };
            let pixel = |kw: usize| (n * w.in_h + ih) * w.in_w + w.in_col(ow, kw).unwrap_or(0);
            // SAFETY: AVX-512F, BW and VL (this function's contract), here and in the
            // three blocks below.
            unsafe { fill_over(&mut row[at..], first * cin, padding) };
            if w.dilation_w == 1 {
                let run = (last + 1 - first) * cin;
                let dst = &mut row[at + first * cin..];
                // SAFETY: see above.
                unsafe { copy_unsigned(x, pixel(first) * cin, run, dst) };
            } else {
                for kw in first..=last {
                    let dst = &mut row[at + kw * cin..];
                    // SAFETY: see above.
                    unsafe { copy_unsigned(x, pixel(kw) * cin, cin, dst) };
                }
            }
            let right = at + (last + 1) * cin;
            // SAFETY: see above.
            unsafe { fill_over(&mut row[right..], at + span - right, padding) };
        }
        let tail = w.kernel_h * span;
        // SAFETY: as above.
        unsafe { fill_over(&mut row[tail..], len - tail, 0) };
    }
}

/// `dst` = `src + 128` as unsigned bytes (`src ^ 0x80`), eight bytes at a time.
#[inline(always)]
fn flip_signs(src: &[i8], dst: &mut [i8]) {
    const SIGNS: u64 = 0x8080_8080_8080_8080;
    let (mut s, mut d) = (src.chunks_exact(8), dst.chunks_exact_mut(8));
    for (s8, d8) in (&mut s).zip(&mut d) {
        let v = u64::from_ne_bytes(core::array::from_fn(|i| s8[i] as u8)) ^ SIGNS;
        for (d, b) in d8.iter_mut().zip(v.to_ne_bytes()) {
            *d = b as i8;
        }
    }
    for (d, &v) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *d = v ^ i8::MIN;
    }
}

/// `dst` = `src` widened to int16s.
#[inline(always)]
fn widen_into(src: &[i8], dst: &mut [i16]) {
    for (d, &v) in dst.iter_mut().zip(src) {
        *d = i16::from(v);
    }
}

/// `dst[..len]` = `src[from..from + len] + 128` as unsigned bytes, 16 at a time in
/// whole stores: the bytes of `dst` up to the next multiple of 16 past `len` take
/// garbage, so `dst` must be that long. Loads past `src`'s end are masked off.
///
/// # Safety
/// The CPU must support AVX-512F, BW and VL.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
#[inline]
unsafe fn copy_unsigned(src: &[i8], from: usize, len: usize, dst: &mut [i8]) {
    use core::arch::x86_64::*;
    assert!(from + len <= src.len() && len.next_multiple_of(16) <= dst.len());
    let sign = _mm_set1_epi8(i8::MIN);
    for at in (0..len).step_by(16) {
        let left = src.len() - (from + at);
        // SAFETY: a full load reads `src[from + at..][..16]`, in bounds when 16 bytes
        // are left; else the mask covers only the bytes left (masked-off bytes are not
        // read). The store writes `dst[at..at + 16]`, in bounds by the assert above.
        unsafe {
            let p = src.as_ptr().add(from + at);
            let v = if left >= 16 {
                _mm_loadu_si128(p.cast())
            } else {
                _mm_maskz_loadu_epi8((1 << left) - 1, p)
            };
            _mm_storeu_si128(dst.as_mut_ptr().add(at).cast(), _mm_xor_si128(v, sign));
        }
    }
}

/// `dst[..len]` = `value`, in whole 16-byte stores (`dst` up to the next multiple of 16
/// past `len` takes them too, so it must be that long); nothing for a `len` of 0.
///
/// # Safety
/// The CPU must support AVX-512F, BW and VL.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
#[inline]
unsafe fn fill_over(dst: &mut [i8], len: usize, value: i8) {
    use core::arch::x86_64::*;
    assert!(len.next_multiple_of(16) <= dst.len());
    let v = _mm_set1_epi8(value);
    for at in (0..len).step_by(16) {
        // SAFETY: writes `dst[at..at + 16]`, in bounds by the assert above.
        unsafe { _mm_storeu_si128(dst.as_mut_ptr().add(at).cast(), v) };
    }
}

#[cfg(test)]
#[path = "qconv_tests.rs"]
pub(crate) mod tests;
