//! The direct kernel with NEON: output channels in chunks of eight (two q registers per
//! pixel: 12 accumulators for the six-pixel interior group), then one chunk of four,
//! then the scalar [`tail`]. Each input value is broadcast and multiplied into its
//! filter row with a fused multiply-add (`fmla`), as in the AVX2 kernel; the portable
//! kernel's separate multiply and add differ in the last bits, within the tolerance
//! both are tested at.

use core::arch::aarch64::*;

use super::{tail, Direct};
use crate::compute::sweep::{Kernel, Neon};

impl Kernel<Direct<'_>> for Neon {
    #[inline(always)]
    unsafe fn pixels<const P: usize>(
        self,
        d: &Direct<'_>,
        n: usize,
        oh: usize,
        ow: usize,
        taps: ((usize, usize), (usize, usize)),
        out: &mut [f32],
    ) {
        let cout = d.cout;
        let (col, _) = d.window.offsets::<P>(n, oh, ow, taps.1 .0);
        let eights = cout - cout % 8;
        for c0 in (0..eights).step_by(8) {
            // SAFETY: `c0 + 8 <= cout`, and the `Kernel::pixels` requirements hold (our
            // caller's promise).
            unsafe { chunk::<P, 2>(d, (n, oh, ow), taps, c0, out) };
        }
        let fours = cout - cout % 4;
        if fours > eights {
            // SAFETY: `eights + 4 == fours <= cout`; as above.
            unsafe { chunk::<P, 1>(d, (n, oh, ow), taps, eights, out) };
        }
        tail(d, (n, oh), &col, taps, fours, out);
    }
}

/// Output channels `c0..c0 + 4 * V` of pixels `ow..ow + P` of row `oh` of image `n`
/// into `out` (from the first pixel).
///
/// # Safety
/// `c0 + 4 * V <= cout`; the [`Kernel::pixels`] requirements hold.
#[inline(always)]
unsafe fn chunk<const P: usize, const V: usize>(
    d: &Direct<'_>,
    (n, oh, ow): (usize, usize, usize),
    ((kh0, kh1), (kw0, kw1)): ((usize, usize), (usize, usize)),
    c0: usize,
    out: &mut [f32],
) {
    let w = d.window;
    let (cin, cout) = (d.cin, d.cout);
    let (col, row) = d.window.offsets::<P>(n, oh, ow, kw0);
    // SAFETY: NEON is aarch64's baseline, and the intrinsic only makes a register value.
    let zero = unsafe { vdupq_n_f32(0.0) };
    let init = d.bias.map_or([zero; V], |b| {
        let b = &b[c0..c0 + 4 * V];
        // SAFETY: `b` holds `4 * V` floats.
        core::array::from_fn(|v| unsafe { vld1q_f32(b.as_ptr().add(4 * v)) })
    });
    let mut acc = [init; P];
    let (xp, fp) = (d.x.as_ptr(), d.filter.as_ptr());
    for i in kh0..kh1 {
        let r = row(i);
        // SAFETY: input row `i` and columns `col[p] + t * dilation_w` for `t` below
        // `kw1 - kw0` are inside the input for every pixel (the caller's promise), so
        // each `(row + column) * cin + ci` with `ci < cin` is within `x`
        // (`batch * in_h * in_w * cin` floats, asserted in `Direct::rows`); filter row
        // `(i * kernel_w + kw0 + t) * cin + ci` starts at that times `cout`, and its
        // floats `c0..c0 + 4 * V` are within `filter` (`kernel_h * kernel_w * cin * cout`
        // floats), as `c0 + 4 * V <= cout`. NEON is aarch64's baseline.
        unsafe {
            let xs: [*const f32; P] = core::array::from_fn(|p| xp.add((r + col[p]) * cin));
            let ws = fp.add((i * w.kernel_w + kw0) * cin * cout + c0);
            for t in 0..kw1 - kw0 {
                let xt = t * w.dilation_w * cin;
                let wt = ws.add(t * cin * cout);
                for ci in 0..cin {
                    let wr = wt.add(ci * cout);
                    let wv: [float32x4_t; V] = core::array::from_fn(|v| vld1q_f32(wr.add(4 * v)));
                    for (a, &x) in acc.iter_mut().zip(&xs) {
                        let xv = vld1q_dup_f32(x.add(xt + ci));
                        for (a, &wv) in a.iter_mut().zip(&wv) {
                            *a = vfmaq_f32(*a, xv, wv);
                        }
                    }
                }
            }
        }
    }
    // `maxnm` gives `min` for a NaN sum, as `Clamp::clamp` does.
    // SAFETY: NEON is aarch64's baseline; the intrinsics only make register values.
    let (lo, hi) = unsafe { (vdupq_n_f32(d.clamp.min), vdupq_n_f32(d.clamp.max)) };
    for (p, a) in acc.iter().enumerate() {
        let dst = &mut out[p * cout + c0..p * cout + c0 + 4 * V];
        for (v, &a) in a.iter().enumerate() {
            // SAFETY: `dst` holds `4 * V` floats, so floats `4 * v..4 * v + 4` are inside.
            unsafe {
                vst1q_f32(
                    dst.as_mut_ptr().add(4 * v),
                    vminnmq_f32(vmaxnmq_f32(a, lo), hi),
                )
            };
        }
    }
}
