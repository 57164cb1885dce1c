//! aarch64 kernels of the int8 GEMM ([`QGemm`]), for both of its packings.
//!
//! - The quad packing ([`pack_quads`](super::qgemm::pack_quads), chosen when the CPU has
//!   `dotprod`): per group of 4 inputs, 16 channels' 4 bytes in 4 q-registers. The rows
//!   hold `x + 128` (unsigned) and the bias `-128 * sum(w)`, as for x86's `vpdpbusd`.
//!   With I8MM, `usdot` takes them as they are; with `dotprod` alone, `sdot` multiplies
//!   the signed `x` (the row byte with its top bit flipped back) and a second `sdot`
//!   against ones sums each channel's weights, so that `128 * sum(w)` is added back.
//! - The int16-pair packing ([`pack`](super::qgemm::pack), plain NEON): `smlal` and
//!   `smlal2` multiply a broadcast pair of the row by 4 channels' pairs into two
//!   accumulators, whose neighbouring lanes `addp` adds at the end (the `vpmaddwd` of
//!   the AVX2 kernel, split in two).
//!
//! The int32 sums are exact (wrapping like the portable kernel's), and the requantization
//! is `Requant::apply`'s lane by lane, so every kernel gives the portable kernel's bytes.

use core::arch::aarch64::*;

use super::cpu::ArmDot;
use super::neon_dot::{narrow16, requant4, sdot, usdot};
use super::qgemm::{padded, pairs, quads, QGemm, MR, NR};

/// One block's accumulators: `MR` rows of 16 channels in 4 vectors.
type Acc = [[int32x4_t; 4]; MR];

impl QGemm<'_> {
    /// [`tile`](QGemm::tile) on aarch64 with the kernels of `level` (at most
    /// [`arm_dot`](super::cpu::arm_dot); the quad packing needs `dotprod`). The lengths
    /// `tile` asserts hold.
    pub(crate) fn tile_neon(&self, rows: &[i16], count: usize, out: &mut [i8], level: ArmDot) {
        assert!(level <= super::cpu::arm_dot() && (!self.vnni || level >= ArmDot::DotProd));
        if !self.vnni {
            // SAFETY: NEON is aarch64's baseline; the lengths are `tile`'s contract.
            unsafe { self.tile_pairs(rows, count, out) }
        } else if level == ArmDot::I8mm {
            // SAFETY: the CPU has I8MM and dotprod (asserted); lengths as above.
            unsafe { self.tile_usdot(rows, count, out) }
        } else {
            // SAFETY: the CPU has dotprod (asserted); lengths as above.
            unsafe { self.tile_sdot(rows, count, out) }
        }
    }

    /// # Safety
    /// The CPU has I8MM; the lengths asserted in [`tile`](QGemm::tile) hold; the
    /// weights are packed in quads.
    #[target_feature(enable = "dotprod,i8mm")]
    unsafe fn tile_usdot(&self, rows: &[i16], count: usize, out: &mut [i8]) {
        let kq = quads(self.k);
        let x = rows.as_ptr().cast::<i32>();
        for block in 0..padded(self.n) / NR {
            // SAFETY: `packed` holds `padded(n) / NR` blocks of `kq * 4 * NR` bytes and
            // `rows` `MR` rows of `kq` quads (asserted in `tile`): the quad `q < kq` of
            // block `block` and of row `r < MR` is inside them. I8MM per this contract.
            unsafe {
                let w = self.packed.as_ptr().cast::<i8>().add(block * kq * 4 * NR);
                let mut acc: Acc = [[vdupq_n_s32(0); 4]; MR];
                for q in 0..kq {
                    let wq = w.add(q * 4 * NR);
                    let wv = [0, 16, 32, 48].map(|at| vld1q_s8(wq.add(at)));
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let xb = vreinterpretq_s8_s32(vld1q_dup_s32(x.add(r * kq + q)));
                        for (acc, &wv) in acc.iter_mut().zip(&wv) {
                            *acc = usdot(*acc, xb, wv);
                        }
                    }
                }
                self.store_neon(block, &acc, count, out);
            }
        }
    }

    /// # Safety
    /// The CPU has dotprod; the lengths asserted in [`tile`](QGemm::tile) hold; the
    /// weights are packed in quads.
    #[target_feature(enable = "dotprod")]
    unsafe fn tile_sdot(&self, rows: &[i16], count: usize, out: &mut [i8]) {
        let kq = quads(self.k);
        let x = rows.as_ptr().cast::<i32>();
        // SAFETY: as in `tile_usdot` (dotprod instead of I8MM).
        unsafe {
            let top_bits = vdupq_n_s8(i8::MIN);
            let ones = vdupq_n_s8(1);
            for block in 0..padded(self.n) / NR {
                let w = self.packed.as_ptr().cast::<i8>().add(block * kq * 4 * NR);
                let mut acc: Acc = [[vdupq_n_s32(0); 4]; MR];
                let mut weight_sums = [vdupq_n_s32(0); 4];
                for q in 0..kq {
                    let wq = w.add(q * 4 * NR);
                    let wv = [0, 16, 32, 48].map(|at| vld1q_s8(wq.add(at)));
                    for (sum, &wv) in weight_sums.iter_mut().zip(&wv) {
                        *sum = sdot(*sum, wv, ones);
                    }
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let biased = vreinterpretq_s8_s32(vld1q_dup_s32(x.add(r * kq + q)));
                        let xb = veorq_s8(biased, top_bits);
                        for (acc, &wv) in acc.iter_mut().zip(&wv) {
                            *acc = sdot(*acc, xb, wv);
                        }
                    }
                }
                // `(x + 128) * w` summed is `x * w` summed plus `128 * sum(w)`.
                let added = weight_sums.map(|s| vshlq_n_s32::<7>(s));
                for acc in acc.iter_mut() {
                    for (acc, &added) in acc.iter_mut().zip(&added) {
                        *acc = vaddq_s32(*acc, added);
                    }
                }
                self.store_neon(block, &acc, count, out);
            }
        }
    }

    /// # Safety
    /// The lengths asserted in [`tile`](QGemm::tile) hold; the weights are packed in
    /// int16 pairs.
    unsafe fn tile_pairs(&self, rows: &[i16], count: usize, out: &mut [i8]) {
        let kp = pairs(self.k);
        let x = rows.as_ptr().cast::<i32>();
        for block in 0..padded(self.n) / NR {
            // SAFETY: NEON is aarch64's baseline.
            let mut acc: Acc = [[unsafe { vdupq_n_s32(0) }; 4]; MR];
            // Half a block at a time: 8 channels' two accumulators per row fill 16
            // registers, leaving room for the weights and the row.
            for half in 0..2 {
                // SAFETY: `packed` holds `padded(n) / NR` blocks of `kp * 2 * NR` int16s
                // and `rows` `MR` rows of `kp` pairs (asserted in `tile`): pair `p < kp`
                // of block `block` (16 int16s at `16 * half`) and of row `r < MR` are
                // inside them. NEON is in aarch64's baseline.
                unsafe {
                    let w = self.packed.as_ptr().add(block * kp * 2 * NR + 16 * half);
                    // Per row and weight vector: products of channels 0-1, then 2-3.
                    let mut lanes = [[[vdupq_n_s32(0); 2]; 2]; MR];
                    for p in 0..kp {
                        let wp = w.add(p * 2 * NR);
                        let wv = [vld1q_s16(wp), vld1q_s16(wp.add(8))];
                        for (r, lanes) in lanes.iter_mut().enumerate() {
                            let xb = vreinterpretq_s16_s32(vld1q_dup_s32(x.add(r * kp + p)));
                            for (lanes, &wv) in lanes.iter_mut().zip(&wv) {
                                lanes[0] = vmlal_s16(lanes[0], vget_low_s16(xb), vget_low_s16(wv));
                                lanes[1] = vmlal_high_s16(lanes[1], xb, wv);
                            }
                        }
                    }
                    for (acc, lanes) in acc.iter_mut().zip(&lanes) {
                        for (v, lanes) in lanes.iter().enumerate() {
                            acc[2 * half + v] = vpaddq_s32(lanes[0], lanes[1]);
                        }
                    }
                }
            }
            // SAFETY: `bias` and `scales` hold `padded(n)` entries (asserted in `tile`).
            unsafe { self.store_neon(block, &acc, count, out) };
        }
    }

    /// Adds the bias to block `block`'s accumulators, requantizes them and stores the
    /// `count` rows' valid channels.
    ///
    /// # Safety
    /// `bias` and `scales` hold `padded(n)` entries.
    #[inline(always)]
    unsafe fn store_neon(&self, block: usize, acc: &Acc, count: usize, out: &mut [i8]) {
        let n = self.n;
        let c0 = block * NR;
        let valid = (n - c0).min(NR);
        // SAFETY: the loads read channels `c0..c0 + 16` with `c0 + 16 <= padded(n)`,
        // within `bias` and `scales` (the caller's contract); the store writes 16 bytes
        // into an array of 16. NEON is in aarch64's baseline.
        unsafe {
            let lo = vdupq_n_f32(self.requant.lo);
            let hi = vdupq_n_f32(self.requant.hi);
            let zp = vdupq_n_s32(self.requant.zero_point);
            let bias = [0, 4, 8, 12].map(|at| vld1q_s32(self.bias.as_ptr().add(c0 + at)));
            let scale = [0, 4, 8, 12].map(|at| vld1q_f32(self.scales.as_ptr().add(c0 + at)));
            for (r, acc) in acc.iter().enumerate().take(count) {
                let q = [0, 1, 2, 3]
                    .map(|v| requant4(vaddq_s32(acc[v], bias[v]), scale[v], lo, hi, zp));
                let mut bytes = [0i8; NR];
                vst1q_s8(bytes.as_mut_ptr(), narrow16(q));
                out[r * n + c0..r * n + c0 + valid].copy_from_slice(&bytes[..valid]);
            }
        }
    }
}

#[cfg(test)]
#[path = "neon_qgemm_tests.rs"]
mod tests;
