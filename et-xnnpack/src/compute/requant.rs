//! XNNPACK's requantization of an int32 accumulator to int8 with a float scale ("fp32"
//! requantization: multiply, clamp, round half to even, add the zero point).

/// Rounds `v` (of magnitude below 2^22) to the nearest integer, half to even: the
/// magic-number rounding XNNPACK's kernels use, bit for bit.
#[inline]
pub(crate) fn round_half_even(v: f32) -> i32 {
    const MAGIC: f32 = 12_582_912.0;
    (v + MAGIC).to_bits() as i32 - MAGIC.to_bits() as i32
}

/// Where an int8 output may go: XNNPACK's quantized output range (the node's float
/// min/max quantized, within int8), less the zero point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Requant {
    pub(crate) zero_point: i32,
    /// `min - zero_point` and `max - zero_point`, as floats (the clamp is on the scaled
    /// accumulator, before rounding).
    pub(crate) lo: f32,
    pub(crate) hi: f32,
}

impl Requant {
    /// The range for an output with `zero_point` and `scale` clamped to the node's float
    /// range `[min, max]` (infinite bounds: the int8 range).
    pub(crate) fn new(scale: f32, zero_point: i32, min: f32, max: f32) -> Requant {
        let lo = quantize_bound(min, scale, zero_point);
        let hi = quantize_bound(max, scale, zero_point);
        Requant {
            zero_point,
            lo: (lo - zero_point) as f32,
            hi: (hi - zero_point) as f32,
        }
    }

    /// This range with the integer clamp `[min, max]` of a following qint8 Clamp (same
    /// scale and zero point) folded in: `apply` of the result equals `apply` then the
    /// clamp, for every accumulator. Rounding is monotonic and keeps integers, and every
    /// bound is an integer, so clamping before or after rounding agrees; `None` when the
    /// two ranges do not meet (the fold would then pick the wrong end).
    pub(crate) fn narrowed(&self, min: i8, max: i8) -> Option<Requant> {
        let lo = self.lo.max((i32::from(min) - self.zero_point) as f32);
        let hi = self.hi.min((i32::from(max) - self.zero_point) as f32);
        (lo <= hi).then_some(Requant { lo, hi, ..*self })
    }

    /// `acc * scale`, clamped, rounded and shifted by the zero point, as an int8.
    #[inline]
    pub(crate) fn apply(&self, acc: i32, scale: f32) -> i8 {
        let v = (acc as f32 * scale).max(self.lo).min(self.hi);
        (round_half_even(v) + self.zero_point) as i8
    }
}

/// XNNPACK's `xnn_qs8_quantize` of an output bound: `val / scale + zero_point`, clamped
/// to int8, rounded half to even.
pub(crate) fn quantize_bound(val: f32, scale: f32, zero_point: i32) -> i32 {
    quantize_bound_in(val, scale, zero_point, (-128, 127))
}

/// [`quantize_bound`] for an 8-bit type with integer range `(lo, hi)` (quint8's
/// `xnn_qu8_quantize` is `(0, 255)`).
pub(crate) fn quantize_bound_in(
    val: f32,
    scale: f32,
    zero_point: i32,
    (lo, hi): (i32, i32),
) -> i32 {
    round_half_even((val / scale + zero_point as f32).clamp(lo as f32, hi as f32))
}

/// Requantizes 8 int32 accumulators (bias included): [`Requant::apply`] on 8 lanes
/// (scale, clamp, the conversion's default round half to even, zero point).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn requant8(
    acc: core::arch::x86_64::__m256i,
    scale: core::arch::x86_64::__m256,
    lo: core::arch::x86_64::__m256,
    hi: core::arch::x86_64::__m256,
    zp: core::arch::x86_64::__m256i,
) -> core::arch::x86_64::__m256i {
    use core::arch::x86_64::*;
    let v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), scale);
    let v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    _mm256_add_epi32(_mm256_cvtps_epi32(v), zp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requant_rounds_half_to_even_clamps_and_adds_the_zero_point() {
        let r = Requant::new(0.5, -5, f32::NEG_INFINITY, f32::INFINITY);
        assert_eq!((r.lo, r.hi), (-123.0, 132.0));
        assert_eq!(r.apply(5, 0.5), -3); // 2.5 -> 2, + (-5)
        assert_eq!(r.apply(7, 0.5), -1); // 3.5 -> 4, + (-5)
        assert_eq!(r.apply(1000, 1.0), 127);
        assert_eq!(r.apply(-1000, 1.0), -128);
        // relu6 on scale 0.05, zero point -128: [0, 6] is [-128, -8].
        let r = Requant::new(0.05, -128, 0.0, 6.0);
        assert_eq!(r.apply(-10, 1.0), -128);
        assert_eq!(r.apply(500, 1.0), -8);
    }

    #[test]
    fn a_narrowed_range_is_the_range_then_the_clamp() {
        let ranges = [
            Requant::new(0.05, -128, 0.0, 6.0),
            Requant::new(0.5, -5, f32::NEG_INFINITY, f32::INFINITY),
            Requant::new(0.1, 20, -3.0, 2.0),
        ];
        let clamps = [(-128i8, 127i8), (-128, -8), (-20, 30), (0, 0), (100, 127)];
        let scales = [1.0f32, 0.37, 0.0123];
        for r in ranges {
            for (min, max) in clamps {
                let Some(n) = r.narrowed(min, max) else {
                    // Disjoint: every output of `r` lies outside [min, max] on one side.
                    let (a, b) = (r.apply(-100_000, 1.0), r.apply(100_000, 1.0));
                    assert!(
                        (a > max && b > max) || (a < min && b < min),
                        "{r:?} {min} {max}"
                    );
                    continue;
                };
                for scale in scales {
                    for acc in (-3000..3000).map(|a| a * 7) {
                        let want = r.apply(acc, scale).clamp(min, max);
                        assert_eq!(n.apply(acc, scale), want, "{r:?} {min} {max} {acc}");
                    }
                }
            }
        }
        // relu6's own range folded again changes nothing.
        let relu6 = Requant::new(0.05, -128, 0.0, 6.0);
        assert_eq!(relu6.narrowed(-128, -8), Some(relu6));
        assert_eq!(relu6.narrowed(100, 127), None);
    }
}
