//! The walk over a convolution's output pixels shared by the direct kernels (depthwise,
//! few-channel), which differ only in what they compute for a pixel.
//!
//! Each output row is split into the interior, pixels whose every tap column is inside
//! the input, computed `PX` at a time with no padding checks, and the few border pixels
//! at either end, computed one at a time over their taps clipped to the input (padding
//! contributes nothing, so its taps are skipped). Rows near the top and bottom clip
//! their tap rows the same way.

use core::ops::Range;

use super::window::Window;

/// Output pixels computed together in the interior (with 16 channels, 12 of the 16 AVX2
/// registers hold accumulators).
pub(crate) const PX: usize = 6;

/// The group size for interiors narrower than `PX`.
const PX_NARROW: usize = 4;

/// Output channels per register block (two 8-wide AVX2 vectors).
#[cfg_attr(
    target_arch = "aarch64",
    allow(
        dead_code,
        reason = "on aarch64 the portable kernels run in the tests only, against the NEON ones"
    )
)]
pub(crate) const BLOCK: usize = 16;

/// Computes output pixels of a convolution `D`: `pixels::<P>(d, n, oh, ow, (kh, kw), out)`
/// writes pixels `ow..ow + P` of row `oh` of image `n` into `out` (from the first pixel's
/// first channel), over filter rows `kh.0..kh.1` and columns `kw.0..kw.1`.
pub(crate) trait Kernel<D>: Copy {
    /// # Safety
    /// `n < batch`, `oh < out_h`, `ow + P <= out_w`; every tap in `kh` x `kw` of every one
    /// of the pixels is inside the input (not padding); `d`'s input, filter and bias
    /// slices and `out` hold at least what `D` asserts before calling [`sweep`].
    unsafe fn pixels<const P: usize>(
        self,
        d: &D,
        n: usize,
        oh: usize,
        ow: usize,
        taps: ((usize, usize), (usize, usize)),
        out: &mut [f32],
    );
}

/// Kernels in plain arrays, which the compiler vectorizes for the build's target.
#[cfg_attr(
    target_arch = "aarch64",
    allow(
        dead_code,
        reason = "on aarch64 the portable kernels run in the tests only, against the NEON ones"
    )
)]
#[derive(Clone, Copy)]
pub(crate) struct Portable;

/// Proof that the CPU supports AVX2 and FMA: only [`Avx2::detect`] makes one.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// The token, if this CPU (and OS) supports AVX2 and FMA.
    pub(crate) fn detect() -> Option<Avx2> {
        et_ops::gemm::avx2_fma_available().then_some(Avx2(()))
    }
}

/// aarch64's hand-written NEON kernels; NEON is the baseline there, so no detection.
#[cfg(target_arch = "aarch64")]
#[derive(Clone, Copy)]
pub(crate) struct Neon;

/// True when `len` is at least the product of `dims` (false if the product overflows).
pub(crate) fn holds_at_least(len: usize, dims: [usize; 4]) -> bool {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .is_some_and(|size| len >= size)
}

/// Runs `k` over the output pixels of rows `band` of `w` (rows of all images, as
/// [`Window::out_rows`] counts them) into `out`, which starts at the band's first pixel
/// (`channels` floats per pixel). The caller has checked the slice sizes
/// `Kernel::pixels` relies on.
#[inline(always)]
pub(crate) fn sweep<D, K: Kernel<D>>(
    d: &D,
    w: &Window,
    channels: usize,
    k: K,
    band: Range<usize>,
    out: &mut [f32],
) {
    let c = channels;
    let (first, last) = interior_cols(w);
    for row in band.clone() {
        let (n, oh) = (row / w.out_h, row % w.out_h);
        let kh = taps(oh, w.stride_h, w.dilation_h, w.pad_top, w.kernel_h, w.in_h);
        let row_out = (row - band.start) * w.out_w;
        let at = |ow: usize, out: &mut [f32]| {
            let kw = taps(ow, w.stride_w, w.dilation_w, w.pad_left, w.kernel_w, w.in_w);
            let out = &mut out[(row_out + ow) * c..];
            // SAFETY: `taps` clipped the window to the input; `ow < out_w`.
            unsafe { k.pixels::<1>(d, n, oh, ow, (kh, kw), out) };
        };
        for ow in 0..first {
            at(ow, out);
        }
        // Rows too narrow for one group of `PX` (7 wide, say) take smaller groups.
        let (row, interior_cols) = ((n, oh, kh), (first, last));
        let dst = &mut out[row_out * c..];
        let ow = if last - first >= PX {
            interior::<D, K, PX>(d, w, k, row, interior_cols, dst, c)
        } else {
            interior::<D, K, PX_NARROW>(d, w, k, row, interior_cols, dst, c)
        };
        for ow in ow..w.out_w {
            at(ow, out);
        }
    }
}

/// The interior output columns `first..last` of `w`: those whose every tap column is
/// inside the input.
#[inline(always)]
pub(crate) fn interior_cols(w: &Window) -> (usize, usize) {
    let first = w.pad_left.div_ceil(w.stride_w).min(w.out_w);
    let span = (w.kernel_w - 1) * w.dilation_w;
    let last = (w.in_w + w.pad_left)
        .checked_sub(span + 1)
        .map_or(0, |m| m / w.stride_w + 1)
        .clamp(first, w.out_w);
    (first, last)
}

/// Runs `k` over the interior pixels `first..last` of row `oh` of image `n` (tap rows
/// `kh`) in groups of `G` (`out` from the row's first pixel, `c` floats per pixel);
/// returns where it stopped: `last`, or `first` when the interior is narrower than `G`.
#[inline(always)]
fn interior<D, K: Kernel<D>, const G: usize>(
    d: &D,
    w: &Window,
    k: K,
    (n, oh, kh): (usize, usize, (usize, usize)),
    (first, last): (usize, usize),
    out: &mut [f32],
    c: usize,
) -> usize {
    let mut ow = first;
    while ow < last && last - first >= G {
        // The last group ends at `last`, overlapping the one before rather than leaving a
        // few pixels to the one-pixel kernel: recomputing a pixel writes the same values.
        let start = ow.min(last - G);
        let taps = (kh, (0, w.kernel_w));
        // SAFETY: `start + G <= last <= out_w`; the pixels are interior (every tap column
        // inside the input) and `kh` was clipped to the input by the caller.
        unsafe { k.pixels::<G>(d, n, oh, start, taps, &mut out[start * c..]) };
        ow = start + G;
    }
    ow
}

/// The range of taps `k` (`first..end`) of output position `o` along one axis whose input
/// position `o * stride + k * dilation - pad` lies in `0..size`. Contiguous because the
/// position grows with `k`; empty (`first == end`) when every tap is padding.
#[inline(always)]
pub(crate) fn taps(
    o: usize,
    stride: usize,
    dilation: usize,
    pad: usize,
    kernel: usize,
    size: usize,
) -> (usize, usize) {
    let base = o * stride;
    let first = pad.saturating_sub(base).div_ceil(dilation).min(kernel);
    // Taps with `base + k * dilation < pad + size`.
    let end = (pad + size)
        .checked_sub(base)
        .map_or(0, |room| room.div_ceil(dilation))
        .clamp(first, kernel);
    (first, end)
}

/// `BLOCK` elements of `v` from `at`, as an array (one bounds check for the block).
#[cfg_attr(
    target_arch = "aarch64",
    allow(
        dead_code,
        reason = "on aarch64 the portable kernels run in the tests only, against the NEON ones"
    )
)]
#[inline(always)]
pub(crate) fn block(v: &[f32], at: usize) -> [f32; BLOCK] {
    let mut out = [0f32; BLOCK];
    out.copy_from_slice(&v[at..at + BLOCK]);
    out
}
