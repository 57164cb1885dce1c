//! aarch64's int8 dot-product instructions, as inline functions over NEON vectors.
//!
//! Rust's `vdotq_s32` and `vusdotq_s32` intrinsics are not stable yet, so each
//! instruction is one `asm!` line: the register allocator still places the operands,
//! and `pure, nomem` lets the compiler schedule and hoist them like intrinsics.

use core::arch::aarch64::*;
use core::arch::asm;

/// `sdot`: each int32 lane of `acc` plus the dot product of the 4 signed bytes of the
/// same lane of `a` and `b`, exactly (no saturation; the sum wraps like `i32`).
///
/// # Safety
/// The CPU has FEAT_DotProd; call it from a function with `dotprod` enabled so that the
/// assembler accepts it.
#[inline(always)]
pub(crate) unsafe fn sdot(acc: int32x4_t, a: int8x16_t, b: int8x16_t) -> int32x4_t {
    let mut acc = acc;
    // SAFETY: the instruction reads and writes registers only; the caller guarantees
    // the CPU has it.
    unsafe {
        asm!(
            "sdot {acc:v}.4s, {a:v}.16b, {b:v}.16b",
            acc = inout(vreg) acc,
            a = in(vreg) a,
            b = in(vreg) b,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    acc
}

/// `usdot`: each int32 lane of `acc` plus the dot product of the 4 unsigned bytes of
/// `unsigned`'s lane and the 4 signed bytes of `signed`'s, exactly (x86's `vpdpbusd`).
///
/// # Safety
/// The CPU has FEAT_I8MM; call it from a function with `i8mm` enabled.
#[inline(always)]
pub(crate) unsafe fn usdot(acc: int32x4_t, unsigned: int8x16_t, signed: int8x16_t) -> int32x4_t {
    let mut acc = acc;
    // SAFETY: the instruction reads and writes registers only; the caller guarantees
    // the CPU has it.
    unsafe {
        asm!(
            "usdot {acc:v}.4s, {u:v}.16b, {s:v}.16b",
            acc = inout(vreg) acc,
            u = in(vreg) unsigned,
            s = in(vreg) signed,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    acc
}

/// XNNPACK's fp32 requantization of 4 accumulators (already holding the bias), as
/// `Requant::apply` does it lane by lane: times the scale, clamped to `[lo, hi]`,
/// rounded half to even with the magic-number addition, plus the zero point. `fmaxnm` and
/// `fminnm` return the number when one operand is NaN, as `f32::max` and `f32::min` do.
#[inline(always)]
pub(crate) fn requant4(
    acc: int32x4_t,
    scale: float32x4_t,
    lo: float32x4_t,
    hi: float32x4_t,
    zero_point: int32x4_t,
) -> int32x4_t {
    const MAGIC: f32 = 12_582_912.0;
    // SAFETY: NEON is part of aarch64's baseline; these intrinsics touch registers only.
    unsafe {
        let v = vmulq_f32(vcvtq_f32_s32(acc), scale);
        let v = vminnmq_f32(vmaxnmq_f32(v, lo), hi);
        let rounded = vsubq_s32(
            vreinterpretq_s32_f32(vaddq_f32(v, vdupq_n_f32(MAGIC))),
            vdupq_n_s32(MAGIC.to_bits() as i32),
        );
        vaddq_s32(rounded, zero_point)
    }
}

/// The low bytes of 16 int32 lanes (4 vectors), as `as i8` truncates.
#[inline(always)]
pub(crate) fn narrow16(v: [int32x4_t; 4]) -> int8x16_t {
    // SAFETY: NEON is part of aarch64's baseline; registers only.
    unsafe {
        let lo = vmovn_high_s32(vmovn_s32(v[0]), v[1]);
        let hi = vmovn_high_s32(vmovn_s32(v[2]), v[3]);
        vmovn_high_s16(vmovn_s16(lo), hi)
    }
}
