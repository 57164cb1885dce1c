//! The aarch64 kernel of [`Qb4Gemm`], with `sdot` (FEAT_DotProd): a 64-byte half of a
//! tile is four vectors of 4 channels, and a shift and a mask make `16 * w` of each
//! nibble. `sdot` multiplies signed by signed, so the input is read as it is and each
//! block's `16 * sum((x + 128) * w)` is `sdot(x, 16w) + 128 * sdot(1, 16w)`: the second
//! term is the block's weight sum, computed alongside. The floats then follow x86's
//! `vpdpbusd` kernels, so every kernel gives the definition's bits.

use core::arch::aarch64::*;
use core::ops::Range;

use super::super::cpu::{arm_dot, ArmDot};
use super::super::neon_dot::sdot;
use super::{Qb4Gemm, Rows, OCT_BYTES, TILE};

/// 4-channel vectors in a tile.
const VECTORS: usize = TILE / 4;

impl Qb4Gemm<'_> {
    /// [`tile`](Qb4Gemm::tile) with `sdot`.
    pub(super) fn tile_neon(
        &self,
        x: Rows<'_>,
        rows: Range<usize>,
        tile: usize,
        y: &mut [[f32; TILE]],
    ) {
        assert!(arm_dot() >= ArmDot::DotProd);
        for (r, y) in rows.zip(y) {
            // SAFETY: dotprod (asserted); `product` asserted the lengths the kernel
            // reads, and `r < x.m`.
            unsafe { self.row_sdot(x, r, tile, y) }
        }
    }

    /// # Safety
    /// The CPU has dotprod; the lengths `product` asserts hold and `r < x.m`.
    #[target_feature(enable = "dotprod")]
    unsafe fn row_sdot(&self, x: Rows<'_>, r: usize, tile: usize, y: &mut [f32; TILE]) {
        let (k, blocks, octs_per_block) = (self.k, self.blocks(), self.block / 8);
        let c0 = tile * TILE;
        let (row_scale, zp) = (x.params)(r);
        // SAFETY: the tile's `k / 8` octs of weights, `blocks` rows of scales and
        // `TILE` ksums and biases lie within the packed arrays and row `r`'s `k` inputs
        // within `x` (`product`'s assertions); every input read is at `8 * oct + 0..8 <
        // k`. Stores go to `y`.
        unsafe {
            let weights = self.weights.as_ptr().add(tile * (k / 8) * OCT_BYTES);
            let scales = self.scales.as_ptr().add(tile * blocks * TILE);
            let row = x.data.as_ptr().add(r * k);
            let high = vdupq_n_u8(0xf0);
            let ones = vdupq_n_s8(1);
            let correction = -(zp.wrapping_add(128) as f32);
            let mut acc: [float32x4_t; VECTORS] = core::array::from_fn(|v| {
                let ksum = vmulq_n_f32(vld1q_f32(self.ksums.as_ptr().add(c0 + 4 * v)), 16.0);
                vmulq_n_f32(ksum, correction)
            });
            for b in 0..blocks {
                let mut dot = [vdupq_n_s32(0); VECTORS];
                let mut sum = [vdupq_n_s32(0); VECTORS];
                for o in b * octs_per_block..(b + 1) * octs_per_block {
                    let quad = |at: usize| {
                        vreinterpretq_s8_s32(vdupq_n_s32(
                            row.add(at).cast::<i32>().read_unaligned(),
                        ))
                    };
                    let (xl, xh) = (quad(8 * o), quad(8 * o + 4));
                    let w = weights.add(o * OCT_BYTES);
                    for v in 0..VECTORS {
                        let packed = vld1q_u8(w.add(16 * v));
                        let lo = vreinterpretq_s8_u8(vshlq_n_u8(packed, 4));
                        let hi = vreinterpretq_s8_u8(vandq_u8(packed, high));
                        dot[v] = sdot(sdot(dot[v], lo, xl), hi, xh);
                        sum[v] = sdot(sdot(sum[v], lo, ones), hi, ones);
                    }
                }
                for v in 0..VECTORS {
                    let exact = vaddq_s32(dot[v], vshlq_n_s32(sum[v], 7));
                    let bits = vld1_u16(scales.add(b * TILE + 4 * v));
                    let s = vreinterpretq_f32_u32(vshlq_n_u32(vmovl_u16(bits), 16));
                    acc[v] = vaddq_f32(acc[v], vmulq_f32(vcvtq_f32_s32(exact), s));
                }
            }
            for (v, acc) in acc.into_iter().enumerate() {
                let bias = vld1q_f32(self.bias.as_ptr().add(c0 + 4 * v));
                let out = vaddq_f32(vmulq_n_f32(acc, row_scale / 16.0), bias);
                vst1q_f32(y.as_mut_ptr().add(4 * v), out);
            }
        }
    }
}
