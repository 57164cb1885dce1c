//! The portable version: one `f32` per "vector", with a separate multiply and add where
//! the vector versions fuse them (a software fused multiply-add would cost more than the
//! function).

use super::lanes::Lanes;

impl Lanes for f32 {
    type Mask = bool;
    const N: usize = 1;

    #[inline(always)]
    fn splat(v: f32) -> Self {
        v
    }
    #[inline(always)]
    fn load(src: &[f32]) -> Self {
        src[0]
    }
    #[inline(always)]
    fn store(self, dst: &mut [f32]) {
        dst[0] = self;
    }
    #[inline(always)]
    fn add(self, b: Self) -> Self {
        self + b
    }
    #[inline(always)]
    fn sub(self, b: Self) -> Self {
        self - b
    }
    #[inline(always)]
    fn mul(self, b: Self) -> Self {
        self * b
    }
    #[inline(always)]
    fn div(self, b: Self) -> Self {
        self / b
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        self * b + c
    }
    #[inline(always)]
    fn min(self, b: Self) -> Self {
        if self < b {
            self
        } else {
            b
        }
    }
    #[inline(always)]
    fn max(self, b: Self) -> Self {
        if self > b {
            self
        } else {
            b
        }
    }
    #[inline(always)]
    fn and_bits(self, b: Self) -> Self {
        f32::from_bits(self.to_bits() & b.to_bits())
    }
    #[inline(always)]
    fn or_bits(self, b: Self) -> Self {
        f32::from_bits(self.to_bits() | b.to_bits())
    }
    #[inline(always)]
    fn int_add(self, b: Self) -> Self {
        f32::from_bits(self.to_bits().wrapping_add(b.to_bits()))
    }
    #[inline(always)]
    fn int_sub(self, b: Self) -> Self {
        f32::from_bits(self.to_bits().wrapping_sub(b.to_bits()))
    }
    #[inline(always)]
    fn shl_23(self) -> Self {
        f32::from_bits(self.to_bits() << 23)
    }
    #[inline(always)]
    fn halve_int(self) -> Self {
        f32::from_bits(((self.to_bits() as i32) >> 1) as u32)
    }
    #[inline(always)]
    fn gt(self, b: Self) -> bool {
        self > b
    }
    #[inline(always)]
    fn select(m: bool, a: Self, b: Self) -> Self {
        if m {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn sum_lanes(self) -> f32 {
        self
    }
    #[inline(always)]
    fn max_lanes(self) -> f32 {
        self
    }
}

super::entry_points!(f32);
