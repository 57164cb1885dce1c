//! aarch64 kernels of the qdint8 GEMM ([`Qd8Gemm`]) of dynamically quantized
//! FullyConnected nodes (the LLM decode loop).
//!
//! The packing's 64-byte rows (16 channels' groups of 4 inputs) are 4 q-registers of 4
//! channels each, the layout `sdot` reads: one broadcast group of 4 inputs meets them in
//! 4 `sdot`s, signed times signed, so the input needs no `+ 128` and each block's sum is
//! corrected by `zero_point` times the block's weight sum (x86's kernels read `x + 128`
//! and correct by `zero_point + 128`: the same integer). Without `dotprod`, `smull`
//! multiplies 8 bytes (two channels' 4) into int16s, exact for int8 times int8, and
//! `sadalp` adds neighbouring products into int32 lanes; an `addp` at the end of a block
//! adds each channel's two lanes.
//!
//! The floats follow the portable kernel's order (one block: times the row's scale,
//! then the channel's; several: each block's sum times its scale, added up, then times
//! the row's scale), with separate multiplies and adds (no fused multiply-add), so every
//! kernel gives the same bits.
//!
//! `smmla` (I8MM) multiplies 2x8 by 8x2 blocks: with one row per call (decode) half of
//! its products would be thrown away, so it does not pay here.

use core::arch::aarch64::*;

use super::cpu::{arm_dot, ArmDot};
use super::neon_dot::sdot;
use super::qd8_gemm::{padded, quads, DotKernel, Qd8Gemm, NR};

/// Which instructions compute a group of 4 inputs against 16 channels.
trait Quad {
    /// The accumulator of one block: 4 channels per int32 vector.
    type Acc: Copy;
    fn zero() -> Self::Acc;
    /// Adds the products of the 4 signed bytes broadcast in `x` and each lane's 4 bytes
    /// of `w` (4 channels).
    ///
    /// # Safety
    /// The CPU has what the implementation uses.
    unsafe fn step(acc: &mut Self::Acc, x: int8x16_t, w: int8x16_t);
    /// The 4 channels' int32 sums.
    fn finish(acc: Self::Acc) -> int32x4_t;
}

/// `sdot`.
struct DotProd;
impl Quad for DotProd {
    type Acc = int32x4_t;
    #[inline(always)]
    fn zero() -> int32x4_t {
        // SAFETY: NEON is aarch64's baseline.
        unsafe { vdupq_n_s32(0) }
    }
    #[inline(always)]
    unsafe fn step(acc: &mut int32x4_t, x: int8x16_t, w: int8x16_t) {
        // SAFETY: dotprod (the caller's contract).
        *acc = unsafe { sdot(*acc, w, x) };
    }
    #[inline(always)]
    fn finish(acc: int32x4_t) -> int32x4_t {
        acc
    }
}

/// `smull` + `sadalp`: lanes of channels 0-1 and 2-3, two per channel.
struct Widening;
impl Quad for Widening {
    type Acc = [int32x4_t; 2];
    #[inline(always)]
    fn zero() -> [int32x4_t; 2] {
        // SAFETY: NEON is aarch64's baseline.
        unsafe { [vdupq_n_s32(0); 2] }
    }
    #[inline(always)]
    unsafe fn step(acc: &mut [int32x4_t; 2], x: int8x16_t, w: int8x16_t) {
        // SAFETY: NEON is aarch64's baseline; registers only. A product of two int8s
        // fits an int16 (at most 128 * 128).
        unsafe {
            acc[0] = vpadalq_s16(acc[0], vmull_s8(vget_low_s8(w), vget_low_s8(x)));
            acc[1] = vpadalq_s16(acc[1], vmull_high_s8(w, x));
        }
    }
    #[inline(always)]
    fn finish(acc: [int32x4_t; 2]) -> int32x4_t {
        // SAFETY: NEON is aarch64's baseline.
        unsafe { vpaddq_s32(acc[0], acc[1]) }
    }
}

impl Qd8Gemm<'_> {
    /// [`row`](Qd8Gemm::row) with an aarch64 kernel (`NeonDot` only where
    /// [`arm_dot`] found dotprod); the lengths `row` asserts hold.
    pub(crate) fn row_neon(&self, x: &[i8], row_scale: f32, zero_point: i32, out: &mut [f32]) {
        if self.kernel == DotKernel::NeonDot {
            assert!(arm_dot() >= ArmDot::DotProd);
            // SAFETY: dotprod (asserted), lengths (the caller's contract).
            unsafe { self.row_sdot(x, row_scale, zero_point, out) }
        } else {
            // SAFETY: NEON is aarch64's baseline; lengths as above.
            unsafe { self.row_simd::<Widening>(x, row_scale, zero_point, out) }
        }
    }

    /// # Safety
    /// The CPU has dotprod; the lengths asserted in [`row`](Qd8Gemm::row) hold.
    #[target_feature(enable = "dotprod")]
    unsafe fn row_sdot(&self, x: &[i8], row_scale: f32, zero_point: i32, out: &mut [f32]) {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.row_simd::<DotProd>(x, row_scale, zero_point, out) }
    }

    /// # Safety
    /// The CPU has what `Q` uses; the lengths asserted in [`row`](Qd8Gemm::row) hold.
    #[inline(always)]
    unsafe fn row_simd<Q: Quad>(&self, x: &[i8], row_scale: f32, zero_point: i32, out: &mut [f32]) {
        let (n, k, block, kq) = (self.n, self.k, self.block, quads(self.k));
        let blocks = k / block;
        // A block's quads; with one block, all of them (the last maybe partial).
        let block_quads = if blocks == 1 { kq } else { block / 4 };
        let whole_quads = k / 4;
        // The quad at `q` of `x`: whole quads read directly, the tail (one block only)
        // padded with zeros, which meet zero weights.
        let quad = |q: usize| -> i32 {
            if q < whole_quads {
                // SAFETY: `4 * q + 4 <= k <= x.len()`.
                unsafe { x.as_ptr().add(4 * q).cast::<i32>().read_unaligned() }
            } else {
                let mut tail = [0u8; 4];
                for (t, &v) in tail.iter_mut().zip(&x[4 * q..k]) {
                    *t = v as u8;
                }
                i32::from_le_bytes(tail)
            }
        };
        // SAFETY: the features `Q` needs (the caller's contract). Group `g < padded(n) /
        // NR` reads `kq * 64` weight bytes at `g * kq * 64`, within `weight_bytes(n, k)`;
        // block entries `(g * blocks + b) * NR + 0..16` are within `padded(n) * blocks`;
        // the bias `g * NR + 0..16` within `padded(n)` (all asserted in `row`). Stores go
        // to a local array.
        unsafe {
            let rs = vdupq_n_f32(row_scale);
            let zp = vdupq_n_s32(zero_point);
            for g in 0..padded(n) / NR {
                let w = self.weights.as_ptr().add(g * kq * 4 * NR);
                let mut acc = [vdupq_n_f32(0.0); 4];
                for b in 0..blocks {
                    let mut dot = [Q::zero(); 4];
                    for q in b * block_quads..(b + 1) * block_quads {
                        let xb = vreinterpretq_s8_s32(vdupq_n_s32(quad(q)));
                        let wq = w.add(q * 4 * NR);
                        for (h, dot) in dot.iter_mut().enumerate() {
                            Q::step(dot, xb, vld1q_s8(wq.add(16 * h)));
                        }
                    }
                    let at = (g * blocks + b) * NR;
                    for (h, (acc, dot)) in acc.iter_mut().zip(dot).enumerate() {
                        let sums = vld1q_s32(self.sums.as_ptr().add(at + 4 * h));
                        let fixed = vsubq_s32(Q::finish(dot), vmulq_s32(zp, sums));
                        let d = vcvtq_f32_s32(fixed);
                        let scale = vld1q_f32(self.scales.as_ptr().add(at + 4 * h));
                        *acc = if blocks == 1 {
                            vmulq_f32(vmulq_f32(d, rs), scale)
                        } else {
                            vaddq_f32(*acc, vmulq_f32(d, scale))
                        };
                    }
                }
                let mut lanes = [0.0f32; NR];
                for (h, acc) in acc.into_iter().enumerate() {
                    let v = if blocks == 1 { acc } else { vmulq_f32(acc, rs) };
                    let bias = vld1q_f32(self.bias.as_ptr().add(g * NR + 4 * h));
                    vst1q_f32(lanes.as_mut_ptr().add(4 * h), vaddq_f32(v, bias));
                }
                let c0 = g * NR;
                let valid = (n - c0).min(NR);
                out[c0..c0 + valid].copy_from_slice(&lanes[..valid]);
            }
        }
    }
}

#[cfg(test)]
#[path = "neon_qd8_tests.rs"]
mod tests;
