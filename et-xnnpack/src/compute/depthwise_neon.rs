//! The depthwise kernel with NEON: channels in chunks of eight (two q registers per
//! pixel, so the six-pixel interior group keeps its 12 accumulators, the tap's weights
//! and the input vectors in registers), then one chunk of four, then the scalar
//! [`tail`]. Each tap is one fused multiply-add (`fmla`), as in the AVX2 kernel: the
//! sums differ from the portable kernel's separate multiply and add in the last bits,
//! within the tolerance both are tested at.

use core::arch::aarch64::*;

use super::{tail, Depthwise};
use crate::compute::sweep::{Kernel, Neon};

impl Kernel<Depthwise<'_>> for Neon {
    #[inline(always)]
    unsafe fn pixels<const P: usize>(
        self,
        d: &Depthwise<'_>,
        n: usize,
        oh: usize,
        ow: usize,
        (kh, kw): ((usize, usize), (usize, usize)),
        out: &mut [f32],
    ) {
        let w = d.window;
        let c = d.channels;
        let (col, _) = w.offsets::<P>(n, oh, ow, kw.0);
        let pixels = Pixels {
            d,
            n,
            oh,
            col,
            taps: (kh, kw),
        };
        let eights = c - c % 8;
        for c0 in (0..eights).step_by(8) {
            // SAFETY: `c0 + 8 <= c`, and the `Kernel::pixels` requirements hold (our
            // caller's promise).
            unsafe { pixels.chunk::<2>(c0, out) };
        }
        let fours = c - c % 4;
        if fours > eights {
            // SAFETY: `eights + 4 == fours <= c`; as above.
            unsafe { pixels.chunk::<1>(eights, out) };
        }
        tail(d, (n, oh), &col, (kh, kw), fours, out);
    }
}

/// The `P` pixels one [`Kernel::pixels`] call computes.
struct Pixels<'a, 'd, const P: usize> {
    d: &'a Depthwise<'d>,
    n: usize,
    oh: usize,
    /// Input column of each pixel's first tap.
    col: [usize; P],
    taps: ((usize, usize), (usize, usize)),
}

impl<const P: usize> Pixels<'_, '_, P> {
    /// Channels `c0..c0 + 4 * V` of the pixels into `out` (from the first pixel).
    ///
    /// # Safety
    /// `c0 + 4 * V <= channels`; the [`Kernel::pixels`] requirements hold.
    #[inline(always)]
    unsafe fn chunk<const V: usize>(&self, c0: usize, out: &mut [f32]) {
        let d = self.d;
        let w = d.window;
        let c = d.channels;
        let ((kh0, kh1), (kw0, kw1)) = self.taps;
        // SAFETY: NEON is aarch64's baseline, and the intrinsic only makes a register
        // value.
        let zero = unsafe { vdupq_n_f32(0.0) };
        let init = d.bias.map_or([zero; V], |b| {
            let b = &b[c0..c0 + 4 * V];
            // SAFETY: `b` holds `4 * V` floats.
            core::array::from_fn(|v| unsafe { vld1q_f32(b.as_ptr().add(4 * v)) })
        });
        let mut acc = [init; P];
        let (xp, fp) = (d.x.as_ptr(), d.filter.as_ptr());
        // Floats between one tap column and the next, in the input and in the filter.
        let (xstep, fstep) = (w.dilation_w * c, c);
        for i in kh0..kh1 {
            let r =
                (self.n * w.in_h + self.oh * w.stride_h + i * w.dilation_h - w.pad_top) * w.in_w;
            // SAFETY: input row `i` and columns `col[p] + t * dilation_w` for `t` below
            // `kw1 - kw0` are inside the input for every pixel (the caller's promise), so
            // each `(row + column) * c + c0` plus the chunk's `4 * V` floats is within `x`
            // (`batch * in_h * in_w * c` floats, asserted in `Depthwise::rows`); filter
            // tap `(i, kw0 + t)` at `(i * kernel_w + kw0 + t) * c + c0` plus `4 * V` is
            // within `filter` (`kernel_h * kernel_w * c` floats), as `c0 + 4 * V <= c`.
            // So every pointer stays inside its slice and every load reads initialized
            // floats; NEON is aarch64's baseline.
            unsafe {
                let xs: [*const f32; P] =
                    core::array::from_fn(|p| xp.add((r + self.col[p]) * c + c0));
                let ws = fp.add((i * w.kernel_w + kw0) * c + c0);
                for t in 0..kw1 - kw0 {
                    let wt = ws.add(t * fstep);
                    let wv: [float32x4_t; V] = core::array::from_fn(|v| vld1q_f32(wt.add(4 * v)));
                    for (a, &x) in acc.iter_mut().zip(&xs) {
                        let xt = x.add(t * xstep);
                        for (v, (a, &wv)) in a.iter_mut().zip(&wv).enumerate() {
                            *a = vfmaq_f32(*a, vld1q_f32(xt.add(4 * v)), wv);
                        }
                    }
                }
            }
        }
        // `maxnm` gives `min` for a NaN sum, as `Clamp::clamp`'s `f32::max` does.
        // SAFETY: NEON is aarch64's baseline; the intrinsics only make register values.
        let (lo, hi) = unsafe { (vdupq_n_f32(d.clamp.min), vdupq_n_f32(d.clamp.max)) };
        for (p, a) in acc.iter().enumerate() {
            let dst = &mut out[p * c + c0..p * c + c0 + 4 * V];
            for (v, &a) in a.iter().enumerate() {
                // SAFETY: `dst` holds `4 * V` floats, so floats `4 * v..4 * v + 4` are
                // inside it.
                unsafe {
                    vst1q_f32(
                        dst.as_mut_ptr().add(4 * v),
                        vminnmq_f32(vmaxnmq_f32(a, lo), hi),
                    )
                };
            }
        }
    }
}
