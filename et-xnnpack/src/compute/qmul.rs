//! XNNPACK's qint8 Multiply (the `qs8-vmul` kernels with "fp32" requantization, what it
//! runs on x86): the product of the zero-point-shifted inputs, an exact int32, scaled by
//! one float (`a_scale * b_scale / y_scale`), clamped, rounded half to even and shifted
//! by the output zero point. The broadcast (`vmulc`) kernels compute the same per element.

use super::broadcast::zip_broadcast;
use super::quant::Quant;
use super::requant::Requant;
use super::shape::Shape;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MulParams {
    pub(crate) a_zero_point: i32,
    pub(crate) b_zero_point: i32,
    pub(crate) scale: f32,
    pub(crate) requant: Requant,
}

impl MulParams {
    /// The parameters for inputs `a`, `b` and output `y` clamped to the float range
    /// `[min, max]`; `None` when the product-to-output scale ratio is outside
    /// `[2^-16, 2^8)`, the range XNNPACK's parameter setup asserts.
    pub(crate) fn new(a: Quant, b: Quant, y: Quant, min: f32, max: f32) -> Option<MulParams> {
        // Rounded in XNNPACK's order: the product of the input scales first.
        let scale = (a.scale * b.scale) / y.scale;
        if !(1.0 / 65536.0..256.0).contains(&scale) {
            return None;
        }
        Some(MulParams {
            a_zero_point: a.zero_point,
            b_zero_point: b.zero_point,
            scale,
            // XNNPACK clamps to int8 in the multiply and applies a node's range as a
            // separate Clamp on the quantized bounds; one clamp to the intersection is
            // the same.
            requant: Requant::new(y.scale, y.zero_point, min, max),
        })
    }

    /// One output.
    #[inline(always)]
    pub(crate) fn apply(&self, a: i8, b: i8) -> i8 {
        // Both factors are in [-255, 255]: the product is exact in i32 and in f32.
        let acc = (i32::from(a) - self.a_zero_point) * (i32::from(b) - self.b_zero_point);
        self.requant.apply(acc, self.scale)
    }
}

type Shapes<'s> = (&'s Shape, &'s Shape, &'s Shape);

/// XNNPACK's qint8 Multiply of `a` and `b` (sizes `sa`, `sb`) into `out` (sizes `so`,
/// their broadcast, checked at plan time).
#[inline(always)]
pub(crate) fn mul(params: &MulParams, (a, b, out): (&[i8], &[i8], &mut [i8]), shapes: Shapes<'_>) {
    zip_broadcast(a, b, out, shapes, |x, y| params.apply(x, y));
}

/// [`mul`] compiled for AVX2 (8-lane `vpmulld` and float conversions).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn mul_avx2(
    params: &MulParams,
    operands: (&[i8], &[i8], &mut [i8]),
    shapes: Shapes<'_>,
) {
    mul(params, operands, shapes);
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::vec::Vec;

    fn q(scale: f32, zero_point: i32) -> Quant {
        Quant { scale, zero_point }
    }

    const INF: f32 = f32::INFINITY;

    /// The qs8-vmul formula, evaluated on its own: product in i64, float scale, clamp to
    /// the quantized range, round half to even, add the zero point.
    fn reference(a: i8, b: i8, (qa, qb, qy): (Quant, Quant, Quant), lo: i32, hi: i32) -> i8 {
        let prod =
            (i64::from(a) - i64::from(qa.zero_point)) * (i64::from(b) - i64::from(qb.zero_point));
        let scale = qa.scale * qb.scale / qy.scale;
        let v = (prod as f32 * scale).round_ties_even() as i64 + i64::from(qy.zero_point);
        v.clamp(i64::from(lo), i64::from(hi)) as i8
    }

    #[test]
    fn multiply_matches_the_reference_on_every_pair() {
        let cases = [
            (q(0.05, -3), q(0.02, 7), q(0.01, 2)),
            (q(0.0154, -114), q(0.00232, -128), q(0.0155, -114)),
            (q(1.0, 0), q(1.0, 0), q(4.0, -128)),
        ];
        for qs in cases {
            let p = MulParams::new(qs.0, qs.1, qs.2, -INF, INF).unwrap();
            for a in i8::MIN..=i8::MAX {
                for b in i8::MIN..=i8::MAX {
                    assert_eq!(p.apply(a, b), reference(a, b, qs, -128, 127), "{a} * {b}");
                }
            }
        }
    }

    #[test]
    fn multiply_rounds_ties_to_even_and_saturates() {
        // Scale 0.5: odd products land on halves.
        let p = MulParams::new(q(1.0, 0), q(0.5, 0), q(1.0, 0), -INF, INF).unwrap();
        assert_eq!(p.scale, 0.5);
        assert_eq!(p.apply(1, 1), 0); // 0.5 -> 0
        assert_eq!(p.apply(3, 1), 2); // 1.5 -> 2
        assert_eq!(p.apply(5, 1), 2); // 2.5 -> 2
        assert_eq!(p.apply(-3, 1), -2); // -1.5 -> -2
        assert_eq!(p.apply(-5, 1), -2); // -2.5 -> -2
        assert_eq!(p.apply(127, 127), 127);
        assert_eq!(p.apply(-128, 127), -128);
        // A ReLU6-like range on the output: [0, 6] at scale 0.1, zero point -50.
        let qs = (q(0.1, 0), q(0.1, 0), q(0.1, -50));
        let p = MulParams::new(qs.0, qs.1, qs.2, 0.0, 6.0).unwrap();
        for (a, b) in [(-100, 3), (10, 10), (50, 50), (-20, -20), (0, 9)] {
            assert_eq!(p.apply(a, b), reference(a, b, qs, -50, 10), "{a} * {b}");
        }
    }

    #[test]
    fn broadcast_multiply_agrees_on_the_scalar_and_avx2_paths() {
        let qs = (q(0.05, -3), q(0.02, 7), q(0.01, 2));
        let p = MulParams::new(qs.0, qs.1, qs.2, -INF, INF).unwrap();
        let (sa, sb, so) = (
            Shape::new(&[2, 3, 37]).unwrap(),
            Shape::new(&[3, 1]).unwrap(),
            Shape::new(&[2, 3, 37]).unwrap(),
        );
        let a: Vec<i8> = (0..222).map(|i| (i * 37 % 256) as u8 as i8).collect();
        let b: Vec<i8> = [-128i8, 5, 127].to_vec();
        let mut scalar = std::vec![0i8; 222];
        mul(&p, (&a, &b, &mut scalar), (&sa, &sb, &so));
        for (i, &got) in scalar.iter().enumerate() {
            assert_eq!(
                got,
                reference(a[i], b[(i / 37) % 3], qs, -128, 127),
                "at {i}"
            );
        }
        #[cfg(target_arch = "x86_64")]
        if et_ops::gemm::avx2_fma_available() {
            let mut wide = std::vec![0i8; 222];
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            unsafe { mul_avx2(&p, (&a, &b, &mut wide), (&sa, &sb, &so)) };
            assert_eq!(wide, scalar);
        }
    }

    #[test]
    fn scale_ratios_outside_xnnpack_range_are_refused() {
        assert!(MulParams::new(q(1e-3, 0), q(1e-3, 0), q(1.0, 0), -INF, INF).is_none());
        assert!(MulParams::new(q(16.0, 0), q(16.0, 0), q(1.0, 0), -INF, INF).is_none());
        assert!(MulParams::new(q(1.0, 0), q(1.0, 0), q(1.0, 0), -INF, INF).is_some());
    }
}
