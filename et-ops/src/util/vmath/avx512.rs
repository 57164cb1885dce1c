//! AVX-512F: sixteen lanes in a `zmm` register, conditions in a mask register.

use core::arch::x86_64::*;

use super::lanes::Lanes;

/// Sixteen f32 lanes. Private to this file, and only used by the entry points at its end,
/// which are compiled for AVX-512F and called only after the CPU was checked for it: so
/// every intrinsic below runs on a CPU that has it.
#[derive(Clone, Copy)]
struct Zmm(__m512);

/// Calls an AVX-512F intrinsic from the `#[inline(always)]` methods below, which have no
/// target features of their own.
macro_rules! avx512 {
    ($e:expr) => {
        // SAFETY: `Zmm` is only used inside the entry points, whose callers checked that
        // the CPU has AVX-512F (see `Zmm`); the intrinsic needs nothing else.
        unsafe { $e }
    };
}

/// The lanes' bits as sixteen `i32`.
#[inline(always)]
fn int(v: Zmm) -> __m512i {
    avx512!(_mm512_castps_si512(v.0))
}

/// Sixteen `i32` as the lanes' bits.
#[inline(always)]
fn float(v: __m512i) -> Zmm {
    Zmm(avx512!(_mm512_castsi512_ps(v)))
}

/// The lanes folded in halves with `f` (lane `i` with lane `i + 8`, then `i + 4`, ...).
#[inline(always)]
fn fold(v: Zmm, f: impl Fn(f32, f32) -> f32) -> f32 {
    let mut lanes = [0.0f32; 16];
    v.store(&mut lanes);
    let mut n = 16;
    while n > 1 {
        n /= 2;
        for i in 0..n {
            lanes[i] = f(lanes[i], lanes[i + n]);
        }
    }
    lanes[0]
}

impl Lanes for Zmm {
    type Mask = __mmask16;
    const N: usize = 16;

    #[inline(always)]
    fn splat(v: f32) -> Self {
        Zmm(avx512!(_mm512_set1_ps(v)))
    }
    #[inline(always)]
    fn load(src: &[f32]) -> Self {
        let src = &src[..16];
        // SAFETY: `src` holds 16 floats (checked above); the CPU has AVX-512F (see `Zmm`).
        Zmm(unsafe { _mm512_loadu_ps(src.as_ptr()) })
    }
    #[inline(always)]
    fn store(self, dst: &mut [f32]) {
        let dst = &mut dst[..16];
        // SAFETY: `dst` holds 16 floats (checked above); the CPU has AVX-512F (see `Zmm`).
        unsafe { _mm512_storeu_ps(dst.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn add(self, b: Self) -> Self {
        Zmm(avx512!(_mm512_add_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn sub(self, b: Self) -> Self {
        Zmm(avx512!(_mm512_sub_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn mul(self, b: Self) -> Self {
        Zmm(avx512!(_mm512_mul_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn div(self, b: Self) -> Self {
        Zmm(avx512!(_mm512_div_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        Zmm(avx512!(_mm512_fmadd_ps(self.0, b.0, c.0)))
    }
    #[inline(always)]
    fn min(self, b: Self) -> Self {
        Zmm(avx512!(_mm512_min_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn max(self, b: Self) -> Self {
        Zmm(avx512!(_mm512_max_ps(self.0, b.0)))
    }
    #[inline(always)]
    fn and_bits(self, b: Self) -> Self {
        // Through the integer and: the float one needs AVX-512DQ.
        float(avx512!(_mm512_and_epi32(int(self), int(b))))
    }
    #[inline(always)]
    fn or_bits(self, b: Self) -> Self {
        float(avx512!(_mm512_or_epi32(int(self), int(b))))
    }
    #[inline(always)]
    fn int_add(self, b: Self) -> Self {
        float(avx512!(_mm512_add_epi32(int(self), int(b))))
    }
    #[inline(always)]
    fn int_sub(self, b: Self) -> Self {
        float(avx512!(_mm512_sub_epi32(int(self), int(b))))
    }
    #[inline(always)]
    fn shl_23(self) -> Self {
        float(avx512!(_mm512_slli_epi32::<23>(int(self))))
    }
    #[inline(always)]
    fn halve_int(self) -> Self {
        float(avx512!(_mm512_srai_epi32::<1>(int(self))))
    }
    #[inline(always)]
    fn gt(self, b: Self) -> __mmask16 {
        avx512!(_mm512_cmp_ps_mask::<_CMP_GT_OQ>(self.0, b.0))
    }
    #[inline(always)]
    fn select(m: __mmask16, a: Self, b: Self) -> Self {
        Zmm(avx512!(_mm512_mask_blend_ps(m, b.0, a.0)))
    }
    #[inline(always)]
    fn sum_lanes(self) -> f32 {
        fold(self, |a, b| a + b)
    }
    #[inline(always)]
    fn max_lanes(self) -> f32 {
        fold(self, f32::max)
    }
}

super::entry_points!(
    #[target_feature(enable = "avx512f")]
    Zmm
);
