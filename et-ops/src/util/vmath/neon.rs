//! aarch64 NEON (always present there): four lanes in a `q` register.

use core::arch::aarch64::*;

use super::lanes::Lanes;

/// Four f32 lanes.
#[derive(Clone, Copy)]
struct Q(float32x4_t);

/// Calls a NEON intrinsic from the `#[inline(always)]` methods below, which have no
/// target features of their own.
macro_rules! neon {
    ($e:expr) => {
        // SAFETY: NEON is part of the aarch64 baseline (every aarch64 target Rust supports
        // has it), all the intrinsic requires.
        unsafe { $e }
    };
}

/// The lanes' bits as four `i32`.
#[inline(always)]
fn int(v: Q) -> int32x4_t {
    neon!(vreinterpretq_s32_f32(v.0))
}

/// Four `i32` as the lanes' bits.
#[inline(always)]
fn float(v: int32x4_t) -> Q {
    Q(neon!(vreinterpretq_f32_s32(v)))
}

impl Lanes for Q {
    type Mask = uint32x4_t;
    const N: usize = 4;

    #[inline(always)]
    fn splat(v: f32) -> Self {
        Q(neon!(vdupq_n_f32(v)))
    }
    #[inline(always)]
    fn load(src: &[f32]) -> Self {
        let src = &src[..4];
        // SAFETY: `src` holds 4 floats (checked above); NEON is baseline on aarch64.
        Q(unsafe { vld1q_f32(src.as_ptr()) })
    }
    #[inline(always)]
    fn store(self, dst: &mut [f32]) {
        let dst = &mut dst[..4];
        // SAFETY: `dst` holds 4 floats (checked above); NEON is baseline on aarch64.
        unsafe { vst1q_f32(dst.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn add(self, b: Self) -> Self {
        Q(neon!(vaddq_f32(self.0, b.0)))
    }
    #[inline(always)]
    fn sub(self, b: Self) -> Self {
        Q(neon!(vsubq_f32(self.0, b.0)))
    }
    #[inline(always)]
    fn mul(self, b: Self) -> Self {
        Q(neon!(vmulq_f32(self.0, b.0)))
    }
    #[inline(always)]
    fn div(self, b: Self) -> Self {
        Q(neon!(vdivq_f32(self.0, b.0)))
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        Q(neon!(vfmaq_f32(c.0, self.0, b.0)))
    }
    #[inline(always)]
    fn min(self, b: Self) -> Self {
        Q(neon!(vminq_f32(self.0, b.0)))
    }
    #[inline(always)]
    fn max(self, b: Self) -> Self {
        Q(neon!(vmaxq_f32(self.0, b.0)))
    }
    #[inline(always)]
    fn and_bits(self, b: Self) -> Self {
        float(neon!(vandq_s32(int(self), int(b))))
    }
    #[inline(always)]
    fn or_bits(self, b: Self) -> Self {
        float(neon!(vorrq_s32(int(self), int(b))))
    }
    #[inline(always)]
    fn int_add(self, b: Self) -> Self {
        float(neon!(vaddq_s32(int(self), int(b))))
    }
    #[inline(always)]
    fn int_sub(self, b: Self) -> Self {
        float(neon!(vsubq_s32(int(self), int(b))))
    }
    #[inline(always)]
    fn shl_23(self) -> Self {
        float(neon!(vshlq_n_s32::<23>(int(self))))
    }
    #[inline(always)]
    fn halve_int(self) -> Self {
        float(neon!(vshrq_n_s32::<1>(int(self))))
    }
    #[inline(always)]
    fn gt(self, b: Self) -> uint32x4_t {
        neon!(vcgtq_f32(self.0, b.0))
    }
    #[inline(always)]
    fn select(m: uint32x4_t, a: Self, b: Self) -> Self {
        Q(neon!(vbslq_f32(m, a.0, b.0)))
    }
    #[inline(always)]
    fn sum_lanes(self) -> f32 {
        neon!(vaddvq_f32(self.0))
    }
    #[inline(always)]
    fn max_lanes(self) -> f32 {
        neon!(vmaxvq_f32(self.0))
    }
}

super::entry_points!(
    #[target_feature(enable = "neon")]
    Q
);
