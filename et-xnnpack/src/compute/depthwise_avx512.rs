//! The depthwise kernel with AVX-512F: 16 channels per zmm register, the filter and bias
//! packed at init in the order the kernel reads them ([`pack`]).
//!
//! Each output row is computed one block of 16 channels at a time. The interior pixels
//! (every tap column inside the input) go in groups of up to [`GROUP`], one accumulator
//! per pixel so that many independent multiply-add chains hide the FMA latency; for each
//! tap row, the row's `K` weights sit in registers, loaded once for the group. The
//! border pixels take their taps clipped to
//! the input, one pixel at a time. A last block of fewer than 16 channels is read and
//! written through a lane mask, so no channel is computed apart.
//!
//! Every output adds its taps in row-major order from the bias with fused multiply-adds,
//! as the AVX2 kernel does, so both give the same bits.

use core::arch::x86_64::*;
use core::ops::Range;

use super::Depthwise;
use crate::compute::sweep::{holds_at_least, interior_cols, taps};
use crate::compute::window::Window;

/// Channels per register.
const LANES: usize = 16;

/// Interior pixels computed together: 8 accumulators, the `K` weights of a tap row and
/// an input column fit the 32 registers with room to spare.
const GROUP: usize = 8;

/// Whether this kernel takes window `w`: a tap row 3 or 5 wide, undilated along it, at
/// stride 1 or 2 (the windows of MobileNet-style networks). Tap rows, their stride and
/// dilation are free. Other windows run the AVX2 kernel.
pub(crate) fn fits(w: &Window) -> bool {
    matches!(w.kernel_w, 3 | 5) && w.dilation_w == 1 && matches!(w.stride_w, 1 | 2)
}

/// Floats [`pack`] writes for `channels` channels of `taps` taps (saturating): for each
/// block of 16 channels (zero past `channels`), the bias, then each tap's 16 weights.
pub(crate) fn packed_len(channels: usize, taps: usize) -> usize {
    channels
        .div_ceil(LANES)
        .saturating_mul(taps.saturating_add(1))
        .saturating_mul(LANES)
}

/// Packs `filter` (`[taps][channels]`) and `bias` (`[channels]`, zero without one) into
/// `out` ([`packed_len`] floats) in the kernel's order.
pub(crate) fn pack(
    channels: usize,
    taps: usize,
    filter: &[f32],
    bias: Option<&[f32]>,
    out: &mut [f32],
) {
    for (b, block) in out.chunks_exact_mut((taps + 1) * LANES).enumerate() {
        for (t, lanes) in block.chunks_exact_mut(LANES).enumerate() {
            for (l, v) in lanes.iter_mut().enumerate() {
                let ch = b * LANES + l;
                *v = match (ch < channels, t) {
                    (false, _) => 0.0,
                    (true, 0) => bias.map_or(0.0, |b| b[ch]),
                    (true, t) => filter[(t - 1) * channels + ch],
                };
            }
        }
    }
}

/// What one block's pixels share: the convolution, the block's first channel, its packed
/// bias and weights, the lanes it has, and the output row.
#[derive(Clone, Copy)]
struct Block<'a> {
    d: &'a Depthwise<'a>,
    c0: usize,
    /// The block's bias, then its weights, `LANES` floats a tap.
    weights: *const f32,
    /// The lanes inside `channels` (all but in a last partial block).
    mask: __mmask16,
    /// Image `n` and output row `oh` of it, and its tap rows inside the input.
    n: usize,
    oh: usize,
    kh: (usize, usize),
    /// The output row's first channel of its first pixel.
    out: *mut f32,
}

/// Computes output rows `band` of `d` into `out` (which starts at the band's first pixel)
/// from `packed` ([`pack`]ed from `d`'s filter and bias).
///
/// # Safety
/// The CPU supports AVX-512F.
///
/// # Panics
/// If `d`'s window does not [`fit`](fits), a slice is shorter than the window, channels
/// and `band` say, or `band` goes past the output's rows.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn rows(d: &Depthwise<'_>, packed: &[f32], band: Range<usize>, out: &mut [f32]) {
    let w = d.window;
    let c = d.channels;
    // The kernel indexes by these sizes without further checks.
    assert!(fits(w));
    assert!(packed.len() >= packed_len(c, w.kernel_h * w.kernel_w));
    assert!(holds_at_least(d.x.len(), [w.batch, w.in_h, w.in_w, c]));
    assert!(band.start <= band.end && band.end <= w.out_rows());
    assert!(holds_at_least(out.len(), [band.len(), w.out_w, c, 1]));
    let per_block = (w.kernel_h * w.kernel_w + 1) * LANES;
    for row in band.clone() {
        let (n, oh) = (row / w.out_h, row % w.out_h);
        let b = Block {
            d,
            c0: 0,
            weights: packed.as_ptr(),
            mask: 0xffff,
            n,
            oh,
            kh: taps(oh, w.stride_h, w.dilation_h, w.pad_top, w.kernel_h, w.in_h),
            // SAFETY: the row's `out_w * c` floats are inside `out` (asserted).
            out: unsafe { out.as_mut_ptr().add((row - band.start) * w.out_w * c) },
        };
        // SAFETY: the CPU has AVX-512F (our caller's promise); the row is as `out_row`
        // requires, checked above.
        unsafe {
            match (w.kernel_w, w.stride_w) {
                (3, 1) => out_row::<3, 1>(b, per_block),
                (3, _) => out_row::<3, 2>(b, per_block),
                (_, 1) => out_row::<5, 1>(b, per_block),
                (_, _) => out_row::<5, 2>(b, per_block),
            }
        }
    }
}

/// One output row: border pixels alone, the interior in groups, each pixel or group
/// through every block of channels before the next (the input and output are read and
/// written in order).
///
/// # Safety
/// AVX-512F; `K` and `S` are the window's width and stride; `rows`' assertions hold;
/// `b` is the row's with its first block's `weights` (`per_block` floats a block).
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn out_row<const K: usize, const S: usize>(b: Block<'_>, per_block: usize) {
    let w = b.d.window;
    let (first, last) = interior_cols(w);
    // SAFETY: in every call below `ow` (and the group's pixels) are below `out_w`; pixels
    // in `first..last` have every tap column inside the input, the others get their
    // columns clipped by `single`; `blocks` hands each call a block of the row.
    unsafe {
        for ow in 0..first {
            blocks(b, per_block, |b, masked| match masked {
                false => single::<false>(b, ow),
                true => single::<true>(b, ow),
            });
        }
        let mut ow = first;
        while last - ow >= GROUP {
            blocks(b, per_block, |b, masked| match masked {
                false => group::<K, S, GROUP, false>(b, ow),
                true => group::<K, S, GROUP, true>(b, ow),
            });
            ow += GROUP;
        }
        if last - ow >= GROUP / 2 {
            blocks(b, per_block, |b, masked| match masked {
                false => group::<K, S, { GROUP / 2 }, false>(b, ow),
                true => group::<K, S, { GROUP / 2 }, true>(b, ow),
            });
            ow += GROUP / 2;
        }
        for ow in ow..last {
            blocks(b, per_block, |b, masked| match masked {
                false => group::<K, S, 1, false>(b, ow),
                true => group::<K, S, 1, true>(b, ow),
            });
        }
        for ow in last..w.out_w {
            blocks(b, per_block, |b, masked| match masked {
                false => single::<false>(b, ow),
                true => single::<true>(b, ow),
            });
        }
    }
}

/// Calls `f` with each block of channels of row `b` (from its first block's weights,
/// `per_block` floats a block) and whether it is a last partial block (`mask` then
/// holds its lanes).
///
/// # Safety
/// `b.weights` holds `per_block` floats for each block of `b.d.channels`.
#[inline(always)]
unsafe fn blocks(b: Block<'_>, per_block: usize, mut f: impl FnMut(Block<'_>, bool)) {
    let c = b.d.channels;
    for c0 in (0..c).step_by(LANES) {
        let lanes = (c - c0).min(LANES);
        f(
            Block {
                c0,
                // SAFETY: block `c0 / LANES` is below `c.div_ceil(LANES)` (the caller's
                // promise).
                weights: unsafe { b.weights.add(c0 / LANES * per_block) },
                mask: (((1u32 << lanes) - 1) & 0xffff) as __mmask16,
                ..b
            },
            lanes < LANES,
        );
    }
}

/// The 16 floats at `p`, or the lanes of `mask` of them (the others zero) if `MASKED`.
///
/// # Safety
/// AVX-512F; the floats at `p` of the lanes read are readable.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn load<const MASKED: bool>(p: *const f32, mask: __mmask16) -> __m512 {
    // SAFETY: the caller's promise; a masked load reads only its lanes (and faults on
    // none of the others).
    unsafe {
        if MASKED {
            _mm512_maskz_loadu_ps(mask, p)
        } else {
            _mm512_loadu_ps(p)
        }
    }
}

/// Clamps `v` to the node's range and stores it (its lanes of `mask` if `MASKED`) at `p`.
///
/// # Safety
/// AVX-512F; the floats at `p` of the lanes written are writable.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn store<const MASKED: bool>(d: &Depthwise<'_>, p: *mut f32, mask: __mmask16, v: __m512) {
    let (lo, hi) = (_mm512_set1_ps(d.clamp.min), _mm512_set1_ps(d.clamp.max));
    // `max(v, lo)` gives `lo` for a NaN `v`, as `Clamp::clamp` does.
    let v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    // SAFETY: the caller's promise; a masked store writes only its lanes.
    unsafe {
        if MASKED {
            _mm512_mask_storeu_ps(p, mask, v)
        } else {
            _mm512_storeu_ps(p, v)
        }
    }
}

/// The input pixel index (`(n * in_h + row) * in_w`) of the start of tap row `i`.
#[inline(always)]
fn tap_row(b: &Block<'_>, i: usize) -> usize {
    let w = b.d.window;
    (b.n * w.in_h + b.oh * w.stride_h + i * w.dilation_h - w.pad_top) * w.in_w
}

/// Interior pixels `ow..ow + P` of the block's row.
///
/// # Safety
/// AVX-512F; `K` and `S` are the window's width and stride; `ow + P <= out_w` and every
/// tap column of those pixels is inside the input; the block is as [`block_row`] needs.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn group<const K: usize, const S: usize, const P: usize, const MASKED: bool>(
    b: Block<'_>,
    ow: usize,
) {
    let d = b.d;
    let (w, c) = (d.window, d.channels);
    // The input column of the group's first tap: interior, so `pad_left` is covered.
    let col0 = ow * S - w.pad_left;
    // SAFETY: the block's bias is its first `LANES` packed floats.
    let mut acc = [unsafe { _mm512_loadu_ps(b.weights) }; P];
    for i in b.kh.0..b.kh.1 {
        // SAFETY: tap row `i` is inside the input (`kh` was clipped to it), and input
        // columns `col0 .. col0 + (P - 1) * S + K` are the group's tap columns, inside
        // the input (the caller's promise); so each column `q`'s channels `c0..` of the
        // lanes read are inside `x`, which holds `batch * in_h * in_w * c` floats. Tap
        // `(i, j)`'s weights are `LANES` floats at `(1 + i * K + j) * LANES`, inside the
        // block's packed floats (`K` is the kernel width).
        unsafe {
            let x = d.x.as_ptr().add((tap_row(&b, i) + col0) * c + b.c0);
            let wrow = b.weights.add((1 + i * K) * LANES);
            let wv: [__m512; K] = core::array::from_fn(|j| _mm512_loadu_ps(wrow.add(j * LANES)));
            // Written per tap and pixel, which the compiler unrolls whole (keeping the
            // accumulators in registers); the loads of a column shared by pixels (pixel
            // `p`'s tap `j + 1` is pixel `p + 1`'s tap `j` at stride 1) are one address
            // and merge. A pixel's taps add in order.
            for (j, &wj) in wv.iter().enumerate() {
                for (p, a) in acc.iter_mut().enumerate() {
                    let xv = load::<MASKED>(x.add((p * S + j) * c), b.mask);
                    *a = _mm512_fmadd_ps(xv, wj, *a);
                }
            }
        }
    }
    for (p, &a) in acc.iter().enumerate() {
        // SAFETY: pixel `ow + p` is below `out_w`, so its block is inside the row.
        unsafe { store::<MASKED>(d, b.out.add((ow + p) * c + b.c0), b.mask, a) };
    }
}

/// Border pixel `ow` of the block's row, over its taps clipped to the input.
///
/// # Safety
/// AVX-512F; `ow < out_w`; the block is as [`block_row`] needs.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn single<const MASKED: bool>(b: Block<'_>, ow: usize) {
    let d = b.d;
    let (w, c) = (d.window, d.channels);
    let kw = taps(ow, w.stride_w, w.dilation_w, w.pad_left, w.kernel_w, w.in_w);
    // SAFETY: the block's bias is its first `LANES` packed floats.
    let mut acc = unsafe { _mm512_loadu_ps(b.weights) };
    for i in b.kh.0..b.kh.1 {
        let r = tap_row(&b, i);
        for j in kw.0..kw.1 {
            let col = ow * w.stride_w + j * w.dilation_w - w.pad_left;
            // SAFETY: tap `(i, j)` is inside the input (`kh` and `kw` were clipped to
            // it), so its pixel's channels of the lanes read are inside `x`; its weights
            // are `LANES` packed floats of the block.
            unsafe {
                let xv = load::<MASKED>(d.x.as_ptr().add((r + col) * c + b.c0), b.mask);
                let wv = _mm512_loadu_ps(b.weights.add((1 + i * w.kernel_w + j) * LANES));
                acc = _mm512_fmadd_ps(xv, wv, acc);
            }
        }
    }
    // SAFETY: pixel `ow` is below `out_w`, so its block is inside the row.
    unsafe { store::<MASKED>(d, b.out.add(ow * c + b.c0), b.mask, acc) };
}
