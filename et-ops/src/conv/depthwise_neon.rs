//! The nine-tap sum of the 3x3 depthwise planes ([`fused9`](super::fused9)) with NEON:
//! four vectors (16 outputs) per step, each its own chain of adds, so a core overlaps
//! the nine dependent adds of one vector with the others'; the nine taps stay in
//! registers. Each output is `b + t[0] * s[0][i] + ... + t[8] * s[8][i]` added left to
//! right with separate multiplies and adds, as the portable loop (and its AVX2
//! recompile) does: the same bits on every target.

use core::arch::aarch64::*;

use super::fused9_portable;

/// Outputs per step: four vectors of four.
const STEP: usize = 16;

/// `out[i] = b + sum_k t[k] * s[k][i]` over nine slices at least `out.len()` long.
#[inline(always)]
pub(super) fn fused9(out: &mut [f32], s: [&[f32]; 9], t: &[f32; 9], b: f32) {
    let n = out.len();
    let s = s.map(|x| &x[..n]);
    let steps = n / STEP;
    // SAFETY: NEON is aarch64's baseline. Every slice in `s` holds `n` floats (just
    // cut to `n`, which panics if one is shorter) and `out` holds `n`; step `j <
    // n / STEP` reads and writes floats `j * STEP..(j + 1) * STEP`, inside all of them.
    unsafe {
        let taps = t.map(|t| vdupq_n_f32(t));
        let bias = vdupq_n_f32(b);
        let (src, dst) = (s.map(|x| x.as_ptr()), out.as_mut_ptr());
        for j in 0..steps {
            let at = j * STEP;
            let mut acc: [float32x4_t; 4] = core::array::from_fn(|v| {
                vaddq_f32(bias, vmulq_f32(taps[0], vld1q_f32(src[0].add(at + 4 * v))))
            });
            // Spelled out tap by tap: as a loop, the compiler kept it rolled and
            // reloaded each tap and slice pointer from the stack.
            add_tap(&mut acc, taps[1], src[1].add(at));
            add_tap(&mut acc, taps[2], src[2].add(at));
            add_tap(&mut acc, taps[3], src[3].add(at));
            add_tap(&mut acc, taps[4], src[4].add(at));
            add_tap(&mut acc, taps[5], src[5].add(at));
            add_tap(&mut acc, taps[6], src[6].add(at));
            add_tap(&mut acc, taps[7], src[7].add(at));
            add_tap(&mut acc, taps[8], src[8].add(at));
            for (v, a) in acc.into_iter().enumerate() {
                vst1q_f32(dst.add(at + 4 * v), a);
            }
        }
    }
    let done = steps * STEP;
    fused9_portable(&mut out[done..], s.map(|x| &x[done..]), t, b);
}

/// `acc[v] += tap * x[4 * v..4 * v + 4]`, a multiply then an add.
///
/// # Safety
/// `x` points to `STEP` readable floats.
#[inline(always)]
unsafe fn add_tap(acc: &mut [float32x4_t; 4], tap: float32x4_t, x: *const f32) {
    for (v, a) in acc.iter_mut().enumerate() {
        // SAFETY: `4 * v + 4 <= STEP` floats from `x`, the caller's promise; NEON is
        // aarch64's baseline.
        *a = unsafe { vaddq_f32(*a, vmulq_f32(tap, vld1q_f32(x.add(4 * v)))) };
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;

    #[test]
    fn gives_the_portable_loops_bits() {
        let mut seed = 12_345u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        };
        let taps: [f32; 9] = core::array::from_fn(|_| next());
        // Lengths below one step, whole steps, and steps with a tail of every size.
        for n in [0, 1, 3, 4, 15, 16, 17, 31, 32, 45, 100] {
            // Slices longer than the output, as the phase layout's are.
            let src: Vec<Vec<f32>> = (0..9)
                .map(|_| (0..n + 5).map(|_| next()).collect())
                .collect();
            let s: [&[f32]; 9] = core::array::from_fn(|k| &src[k][..]);
            let mut want: Vec<f32> = std::vec![f32::NAN; n];
            fused9_portable(&mut want, s, &taps, 0.25);
            let mut got: Vec<f32> = std::vec![f32::NAN; n];
            fused9(&mut got, s, &taps, 0.25);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "{n} outputs");
        }
    }
}
