//! AVX2 with FMA: eight lanes in a `ymm` register.

use core::arch::x86_64::*;

use super::lanes::Lanes;

/// Eight f32 lanes. Private to this file, and only used by the entry points at its end,
/// which are compiled for AVX2 and FMA and called only after the CPU was checked for
/// them: so every intrinsic below runs on a CPU that has it.
#[derive(Clone, Copy)]
struct Ymm(__m256);

/// Calls an AVX2 or FMA intrinsic from the `#[inline(always)]` methods below, which have
/// no target features of their own.
macro_rules! avx {
    ($e:expr) => {
        // SAFETY: `Ymm` is only used inside the entry points, whose callers checked that
        // the CPU has AVX2 and FMA (see `Ymm`); the intrinsic needs nothing else.
        unsafe { $e }
    };
}

/// The lanes' bits as eight `i32`.
#[inline(always)]
fn int(v: Ymm) -> __m256i {
    avx!(_mm256_castps_si256(v.0))
}

/// Eight `i32` as the lanes' bits.
#[inline(always)]
fn float(v: __m256i) -> Ymm {
    Ymm(avx!(_mm256_castsi256_ps(v)))
}

impl Lanes for Ymm {
    type Mask = __m256;
    const N: usize = 8;

    #[inline(always)]
    fn splat(v: f32) -> Self {
        Ymm(avx!(_mm256_set1_ps(v)))
    }
    #[inline(always)]
    fn load(src: &[f32]) -> Self {
        let src = &src[..8];
        // SAFETY: `src` holds 8 floats (checked above); the CPU has AVX (see `Ymm`).
        Ymm(unsafe { _mm256_loadu_ps(src.as_ptr()) })
    }
    #[inline(always)]
    fn store(self, dst: &mut [f32]) {
        let dst = &mut dst[..8];
        // SAFETY: `dst` holds 8 floats (checked above); the CPU has AVX (see `Ymm`).
        unsafe { _mm256_storeu_ps(dst.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn add(self, b: Self) -> Self {
        Ymm(avx!(_mm256_add_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn sub(self, b: Self) -> Self {
        Ymm(avx!(_mm256_sub_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn mul(self, b: Self) -> Self {
        Ymm(avx!(_mm256_mul_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn div(self, b: Self) -> Self {
        Ymm(avx!(_mm256_div_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        Ymm(avx!(_mm256_fmadd_ps(self.0, b.0, c.0)))
    }
    #[inline(always)]
    fn min(self, b: Self) -> Self {
        Ymm(avx!(_mm256_min_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn max(self, b: Self) -> Self {
        Ymm(avx!(_mm256_max_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn and_bits(self, b: Self) -> Self {
        Ymm(avx!(_mm256_and_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn or_bits(self, b: Self) -> Self {
        Ymm(avx!(_mm256_or_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn int_add(self, b: Self) -> Self {
        float(avx!(_mm256_add_epi32(int(self), int(b))))
    }
    #[inline(always)]
    fn int_sub(self, b: Self) -> Self {
        float(avx!(_mm256_sub_epi32(int(self), int(b))))
    }
    #[inline(always)]
    fn shl_23(self) -> Self {
        float(avx!(_mm256_slli_epi32::<23>(int(self))))
    }
    #[inline(always)]
    fn halve_int(self) -> Self {
        float(avx!(_mm256_srai_epi32::<1>(int(self))))
    }
    #[inline(always)]
    fn gt(self, b: Self) -> __m256 {
        avx!(_mm256_cmp_ps::<_CMP_GT_OQ>(self.0, b.0))
    }
    #[inline(always)]
    fn select(m: __m256, a: Self, b: Self) -> Self {
        Ymm(avx!(_mm256_blendv_ps(b.0, a.0, m)))
    }
    #[inline(always)]
    fn sum_lanes(self) -> f32 {
        let halves = avx!(_mm_add_ps(
            _mm256_castps256_ps128(self.0),
            _mm256_extractf128_ps::<1>(self.0)
        ));
        let pairs = avx!(_mm_add_ps(halves, _mm_movehl_ps(halves, halves)));
        avx!(_mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs))))
    }
    #[inline(always)]
    fn max_lanes(self) -> f32 {
        let halves = avx!(_mm_max_ps(
            _mm256_castps256_ps128(self.0),
            _mm256_extractf128_ps::<1>(self.0)
        ));
        let pairs = avx!(_mm_max_ps(halves, _mm_movehl_ps(halves, halves)));
        avx!(_mm_cvtss_f32(_mm_max_ss(pairs, _mm_movehdup_ps(pairs))))
    }
}

super::entry_points!(
    #[target_feature(enable = "avx2,fma")]
    Ymm
);
