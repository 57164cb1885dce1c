//! XNNPACK's arithmetic for the int8 elementwise and pooling kinds: Add (fixed-point
//! multipliers and a rounding shift) and the mean over pixels (int32 sums converted with
//! one float scale and an adjusted zero point).

use super::requant::{quantize_bound, round_half_even};
use crate::plan::Quant;

/// The parameters of XNNPACK's qs8 add (`xnn_init_qs8_add_minmax_scalar_params`):
/// `out = (bias + a * a_multiplier + b * b_multiplier) >> shift` (arithmetic), plus the
/// output zero point, clamped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AddParams {
    pub(crate) bias: i32,
    pub(crate) a_multiplier: i32,
    pub(crate) b_multiplier: i32,
    pub(crate) shift: u32,
    pub(crate) zero_point: i32,
    pub(crate) min: i32,
    pub(crate) max: i32,
}

impl AddParams {
    /// The parameters for inputs `a`, `b` and output `y` clamped to the float range
    /// `[min, max]`; `None` when a scale ratio is outside what XNNPACK accepts
    /// (`[2^-10, 2^8)`).
    pub(crate) fn new(a: Quant, b: Quant, y: Quant, min: f32, max: f32) -> Option<AddParams> {
        let a_ratio = a.scale / y.scale;
        let b_ratio = b.scale / y.scale;
        let ok = |r: f32| (1.0 / 1024.0..256.0).contains(&r);
        if !ok(a_ratio) || !ok(b_ratio) {
            return None;
        }
        // The larger multiplier gets 21 significant bits: its exponent sets the shift.
        let larger = a_ratio.max(b_ratio);
        let exponent = (larger.to_bits() >> 23) as i32 - 127;
        let shift = (20 - exponent) as u32;
        // `ratio * 2^shift`, exactly (an exponent increment), rounded half to even.
        let multiplier = |r: f32| round_half_even(f32::from_bits(r.to_bits() + (shift << 23)));
        let (a_multiplier, b_multiplier) = (multiplier(a_ratio), multiplier(b_ratio));
        let rounding = 1i32 << (shift - 1);
        let bias = rounding
            .wrapping_sub(a_multiplier.wrapping_mul(a.zero_point))
            .wrapping_sub(b_multiplier.wrapping_mul(b.zero_point));
        // XNNPACK clamps to int8 in the add and applies a node's range as a separate
        // Clamp on the quantized bounds; one clamp to the intersection is the same.
        Some(AddParams {
            bias,
            a_multiplier,
            b_multiplier,
            shift,
            zero_point: y.zero_point,
            min: quantize_bound(min, y.scale, y.zero_point),
            max: quantize_bound(max, y.scale, y.zero_point),
        })
    }

    /// One output.
    #[inline(always)]
    pub(crate) fn apply(&self, a: i8, b: i8) -> i8 {
        let acc = self
            .bias
            .wrapping_add(i32::from(a).wrapping_mul(self.a_multiplier))
            .wrapping_add(i32::from(b).wrapping_mul(self.b_multiplier));
        let out = (acc >> self.shift) + self.zero_point;
        out.clamp(self.min, self.max) as i8
    }
}

/// XNNPACK's qs8 mean over `count` elements (the mean reduction its global average
/// pooling lowers to): `round(sum * scale + zero_point)`, clamped, where `scale =
/// (x_scale / y_scale) * (1 / count)` and the zero point absorbs the input's,
/// `y_zero_point - (count * x_zero_point) * scale`, all in f32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MeanParams {
    pub(crate) scale: f32,
    pub(crate) zero_point: f32,
    pub(crate) min: f32,
    pub(crate) max: f32,
}

impl MeanParams {
    pub(crate) fn new(x: Quant, y: Quant, count: usize, min: f32, max: f32) -> MeanParams {
        let scale = (x.scale / y.scale) * (1.0 / count as f32);
        let zero_point = y.zero_point as f32 - (count as f32 * x.zero_point as f32) * scale;
        MeanParams {
            scale,
            zero_point,
            min: quantize_bound(min, y.scale, y.zero_point) as f32,
            max: quantize_bound(max, y.scale, y.zero_point) as f32,
        }
    }

    /// The output of an int32 sum of raw (not zero-point-shifted) inputs.
    #[inline(always)]
    pub(crate) fn apply(&self, sum: i32) -> i8 {
        let v = sum as f32 * self.scale + self.zero_point;
        // Clamping before rounding gives what rounding then clamping does: the bounds
        // are integers. It also keeps the value in `round_half_even`'s range.
        round_half_even(v.max(self.min).min(self.max)) as i8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(scale: f32, zero_point: i32) -> Quant {
        Quant { scale, zero_point }
    }

    const INF: f32 = f32::INFINITY;

    /// XNNPACK's add evaluated in i64 from its definition, as a check of `apply`.
    fn reference(p: &AddParams, a: i8, b: i8) -> i8 {
        let acc = i64::from(p.bias)
            + i64::from(a) * i64::from(p.a_multiplier)
            + i64::from(b) * i64::from(p.b_multiplier);
        let out = (acc >> p.shift) + i64::from(p.zero_point);
        out.clamp(i64::from(p.min), i64::from(p.max)) as i8
    }

    #[test]
    fn add_parameters_follow_xnnpack() {
        // Equal scales: ratio 1, exponent 0, shift 20, multipliers 2^20.
        let p = AddParams::new(q(0.5, 3), q(0.5, -7), q(0.5, 1), -INF, INF).unwrap();
        assert_eq!(
            (p.shift, p.a_multiplier, p.b_multiplier),
            (20, 1 << 20, 1 << 20)
        );
        assert_eq!(p.bias, (1 << 19) - (3 << 20) + (7 << 20));
        assert_eq!((p.min, p.max), (-128, 127));
        // Equal scales add exactly: (a - 3) + (b + 7) + 1.
        assert_eq!(p.apply(10, 20), 10 - 3 + 20 + 7 + 1);
        // Ratios 0.75 and 0.375: exponent -1, shift 21.
        let p = AddParams::new(q(0.75, 0), q(0.375, 0), q(1.0, 0), -INF, INF).unwrap();
        assert_eq!(p.shift, 21);
        assert_eq!(p.a_multiplier, 3 << 19);
        assert_eq!(p.b_multiplier, 3 << 18);
        // Out of XNNPACK's range.
        assert!(AddParams::new(q(1.0, 0), q(1e-4, 0), q(1.0, 0), -INF, INF).is_none());
        assert!(AddParams::new(q(300.0, 0), q(1.0, 0), q(1.0, 0), -INF, INF).is_none());
    }

    #[test]
    fn add_rounds_ties_up_and_saturates() {
        // a * 0.5 with zero points 0: ties (odd a) round toward +inf (add half, shift).
        let p = AddParams::new(q(0.5, 0), q(0.5, 0), q(1.0, 0), -INF, INF).unwrap();
        assert_eq!(p.apply(1, 0), 1); // 0.5 -> 1
        assert_eq!(p.apply(-1, 0), 0); // -0.5 -> 0
        assert_eq!(p.apply(3, 0), 2); // 1.5 -> 2
        assert_eq!(p.apply(-3, 0), -1); // -1.5 -> -1
        assert_eq!(p.apply(127, 127), 127);
        // Saturation both ways, with a nonzero output zero point.
        let p = AddParams::new(q(1.0, -128), q(1.0, 127), q(0.25, 100), -INF, INF).unwrap();
        assert_eq!(p.apply(127, 127), 127);
        assert_eq!(p.apply(-128, -128), -128);
        // A clamp range on the output.
        let p = AddParams::new(q(0.1, -5), q(0.07, 9), q(0.05, -20), 0.0, 6.0).unwrap();
        assert_eq!((p.min, p.max), (-20, 100));
        for a in [-128i8, -77, -5, 0, 31, 127] {
            for b in [-128i8, -3, 9, 64, 127] {
                assert_eq!(p.apply(a, b), reference(&p, a, b), "{a} + {b}");
                let real = 0.1 * (f32::from(a) + 5.0) + 0.07 * (f32::from(b) - 9.0);
                let want = (real / 0.05 - 20.0).round().clamp(-20.0, 100.0);
                assert!((f32::from(p.apply(a, b)) - want).abs() <= 1.0, "{a} + {b}");
            }
        }
    }

    #[test]
    fn mean_absorbs_the_zero_points_and_rounds_half_to_even() {
        // 4 elements, same scales, zero points 2 and -1.
        let p = MeanParams::new(q(1.0, 2), q(1.0, -1), 4, -INF, INF);
        assert_eq!(p.scale, 0.25);
        assert_eq!(p.zero_point, -1.0 - 2.0);
        // Inputs 2, 4, 6, 8: mean of (x - 2) = 3, + (-1) = 2.
        assert_eq!(p.apply(20), 2);
        // sum 18: 4.5 - 3 = 1.5 -> 2 (the zero point is added before rounding).
        assert_eq!(p.apply(18), 2);
        // sum 22: 5.5 - 3 = 2.5 -> 2 (half to even).
        assert_eq!(p.apply(22), 2);
        assert_eq!(p.apply(4 * 127), 124);
        // Saturation: a finer output scale and zero points at the ends of the range.
        let p = MeanParams::new(q(1.0, -128), q(0.5, 100), 4, -INF, INF);
        assert_eq!((p.scale, p.zero_point), (0.5, 356.0));
        assert_eq!(p.apply(4 * 127), 127);
        let p = MeanParams::new(q(1.0, 127), q(0.5, -100), 4, -INF, INF);
        assert_eq!(p.apply(-4 * 128), -128);
        let p = MeanParams::new(q(1.0, 0), q(1.0, 0), 1, 0.0, 6.0);
        assert_eq!((p.apply(-3), p.apply(3), p.apply(9)), (0, 3, 6));
    }
}
