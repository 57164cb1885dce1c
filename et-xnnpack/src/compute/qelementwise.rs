//! XNNPACK's arithmetic for the int8 elementwise and pooling kinds: Add and Subtract
//! (fixed-point multipliers and a rounding shift, on qint8 or quint8, with NumPy
//! broadcasting; Subtract is an Add whose second input has its scale negated) and the
//! mean over pixels (int32 sums converted with one float scale and an adjusted zero
//! point).

use super::broadcast::{broadcast_shape, zip_broadcast};
use super::quant::Quant;
use super::requant::{quantize_bound, quantize_bound_in, round_half_even};
use super::shape::Shape;

/// An 8-bit quantized element: qint8 as `i8`, quint8 as `u8`.
pub(crate) trait Q8: Copy {
    /// The type's integer range.
    const RANGE: (i32, i32);
    /// The integer.
    fn widen(self) -> i32;
    /// `v`, already clamped to [`RANGE`](Self::RANGE).
    fn narrow(v: i32) -> Self;
}

impl Q8 for i8 {
    const RANGE: (i32, i32) = (-128, 127);
    #[inline(always)]
    fn widen(self) -> i32 {
        i32::from(self)
    }
    #[inline(always)]
    fn narrow(v: i32) -> i8 {
        v as i8
    }
}

impl Q8 for u8 {
    const RANGE: (i32, i32) = (0, 255);
    #[inline(always)]
    fn widen(self) -> i32 {
        i32::from(self)
    }
    #[inline(always)]
    fn narrow(v: i32) -> u8 {
        v as u8
    }
}

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
    /// qint8 `a + b` (the tests' shorthand for [`with_sign`](Self::with_sign)).
    #[cfg(test)]
    pub(crate) fn new(a: Quant, b: Quant, y: Quant, min: f32, max: f32) -> Option<AddParams> {
        AddParams::new_in(a, b, y, min, max, i8::RANGE)
    }

    /// qint8 `a - b` (the tests' shorthand for [`with_sign`](Self::with_sign)).
    #[cfg(test)]
    pub(crate) fn new_sub(a: Quant, b: Quant, y: Quant, min: f32, max: f32) -> Option<AddParams> {
        AddParams::with_sign(a, b, y, (min, max), i8::RANGE, true)
    }

    /// `a + b` for an output type with integer range `range` (the tests' shorthand).
    #[cfg(test)]
    pub(crate) fn new_in(
        a: Quant,
        b: Quant,
        y: Quant,
        min: f32,
        max: f32,
        range: (i32, i32),
    ) -> Option<AddParams> {
        AddParams::with_sign(a, b, y, (min, max), range, false)
    }

    /// The parameters of `a + b` (or, `subtract`, `a - b`) for inputs `a`, `b` and output
    /// `y` clamped to the float range `[min, max]`, on an 8-bit type with integer range
    /// `range` (the quint8 parameters, `xnn_init_qu8_add_minmax_scalar_params`, differ
    /// only there); `None` when the larger scale ratio is outside what XNNPACK's
    /// fixed-point add can shift (`[2^-10, 2^8)`). A smaller ratio far below that range
    /// (an attention mask's huge scale beside the scores') gets the multiplier XNNPACK's
    /// released build computes for it, 0 once it is under `2^-shift`. XNNPACK runs a quantized Subtract as its Add with `b`'s scale
    /// negated, which negates `b`'s multiplier (magnitudes, shift and rounding are the
    /// Add's).
    pub(crate) fn with_sign(
        a: Quant,
        b: Quant,
        y: Quant,
        (min, max): (f32, f32),
        range: (i32, i32),
        subtract: bool,
    ) -> Option<AddParams> {
        let a_ratio = a.scale / y.scale;
        let b_ratio = b.scale / y.scale;
        // The larger multiplier gets 21 significant bits: its exponent sets the shift.
        let larger = a_ratio.max(b_ratio);
        if !(1.0 / 1024.0..256.0).contains(&larger) {
            return None;
        }
        let exponent = (larger.to_bits() >> 23) as i32 - 127;
        let shift = (20 - exponent) as u32;
        // `ratio * 2^shift`, exactly (an exponent increment), rounded half to even.
        let multiplier = |r: f32| round_half_even(f32::from_bits(r.to_bits() + (shift << 23)));
        let (a_multiplier, mut b_multiplier) = (multiplier(a_ratio), multiplier(b_ratio));
        if subtract {
            b_multiplier = -b_multiplier;
        }
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
            min: quantize_bound_in(min, y.scale, y.zero_point, range),
            max: quantize_bound_in(max, y.scale, y.zero_point, range),
        })
    }

    /// One qint8 output (the tests' shorthand for [`apply_q`](Self::apply_q)).
    #[cfg(test)]
    pub(crate) fn apply(&self, a: i8, b: i8) -> i8 {
        self.apply_q(a, b)
    }

    /// One output of either 8-bit type (the parameters must be that type's).
    #[inline(always)]
    pub(crate) fn apply_q<T: Q8>(&self, a: T, b: T) -> T {
        let acc = self
            .bias
            .wrapping_add(a.widen().wrapping_mul(self.a_multiplier))
            .wrapping_add(b.widen().wrapping_mul(self.b_multiplier));
        let out = (acc >> self.shift).wrapping_add(self.zero_point);
        T::narrow(out.clamp(self.min, self.max))
    }
}

/// Checks that the sizes of an Add's inputs `a`, `b` broadcast to its output's (NumPy's
/// rule: aligned at the innermost dim, each pair equal or one of them 1).
pub(crate) fn check_broadcast(a: &Shape, b: &Shape, out: &Shape) -> Result<(), &'static str> {
    match broadcast_shape(a, b) {
        Some(s) if s == *out => Ok(()),
        Some(_) => Err("the output's sizes are not the broadcast of the inputs'"),
        None => Err(
            "the inputs' sizes do not broadcast (aligned at the innermost dim, each pair of sizes must be equal or one of them 1)",
        ),
    }
}

/// XNNPACK's quantized Add of `a` and `b` (sizes `sa`, `sb`) into `out` (sizes `so`, their
/// broadcast, checked with [`check_broadcast`]): the same fixed-point arithmetic for
/// every element, whichever operand is broadcast (XNNPACK's `vaddc` kernels fold the
/// broadcast operand's term into the bias; integer addition makes that the same sum).
#[inline(always)]
pub(crate) fn add<T: Q8>(
    params: &AddParams,
    (a, b, out): (&[T], &[T], &mut [T]),
    (sa, sb, so): (&Shape, &Shape, &Shape),
) {
    zip_broadcast(a, b, out, (sa, sb, so), |x, y| params.apply_q(x, y));
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
    extern crate std;

    use super::*;
    use std::{vec, vec::Vec};

    fn q(scale: f32, zero_point: i32) -> Quant {
        Quant { scale, zero_point }
    }

    const INF: f32 = f32::INFINITY;

    fn s(d: &[usize]) -> Shape {
        Shape::new(d).unwrap()
    }

    /// The multi-index of flat `i` in `dims` (row-major).
    fn unravel(mut i: usize, dims: &[usize]) -> Vec<usize> {
        let mut idx = vec![0; dims.len()];
        for d in (0..dims.len()).rev() {
            idx[d] = i % dims[d];
            i /= dims[d];
        }
        idx
    }

    /// The flat index into an operand of sizes `dims` of the output index `out_idx`
    /// (NumPy: the operand's dims align with the output's innermost, size 1 repeats).
    fn operand_index(out_idx: &[usize], dims: &[usize]) -> usize {
        let off = out_idx.len() - dims.len();
        dims.iter().enumerate().fold(0, |flat, (d, &n)| {
            flat * n + if n == 1 { 0 } else { out_idx[off + d] }
        })
    }

    /// Deterministic inputs covering the type's range.
    fn data<T: Q8>(n: usize, seed: usize) -> Vec<T> {
        let (lo, hi) = T::RANGE;
        (0..n)
            .map(|i| T::narrow(lo + ((i * 37 + seed * 101) % (hi - lo + 1) as usize) as i32))
            .collect()
    }

    /// Every broadcast pair against two references computed element by element with plain
    /// indexing: XNNPACK's fixed-point add in i64, and dequantize, add, requantize (with
    /// the add's rounding, half up) in f64, which agree exactly when the scale ratios are
    /// powers of two (exact multipliers) and within one step otherwise.
    fn check_pairs<T: Q8 + PartialEq + core::fmt::Debug>(qa: Quant, qb: Quant, qy: Quant) {
        let dyadic = [qa.scale / qy.scale, qb.scale / qy.scale]
            .iter()
            .all(|r| r.to_bits() & 0x007f_ffff == 0);
        let p = AddParams::new_in(qa, qb, qy, -INF, INF, T::RANGE).unwrap();
        let pairs: [(&[usize], &[usize]); 7] = [
            (&[2, 3, 4], &[2, 3, 4]),
            (&[2, 3, 4], &[4]),
            (&[4], &[2, 3, 4]),
            (&[2, 1, 4], &[3, 1]),
            (&[2, 3, 1], &[1, 3, 5]),
            (&[], &[3, 2]),
            (&[1, 1], &[2, 1, 3]),
        ];
        for (n, (da, db)) in pairs.into_iter().enumerate() {
            let (sa, sb) = (s(da), s(db));
            let so = broadcast_shape(&sa, &sb).unwrap();
            assert_eq!(check_broadcast(&sa, &sb, &so), Ok(()));
            let a = data::<T>(sa.numel().unwrap(), n);
            let b = data::<T>(sb.numel().unwrap(), n + 7);
            let mut out = vec![T::narrow(0.max(T::RANGE.0)); so.numel().unwrap()];
            add(&p, (&a, &b, &mut out), (&sa, &sb, &so));
            for (i, &got) in out.iter().enumerate() {
                let idx = unravel(i, so.dims());
                let (x, y) = (a[operand_index(&idx, da)], b[operand_index(&idx, db)]);
                let fixed = i64::from(p.bias)
                    + i64::from(x.widen()) * i64::from(p.a_multiplier)
                    + i64::from(y.widen()) * i64::from(p.b_multiplier);
                let fixed = ((fixed >> p.shift) + i64::from(p.zero_point))
                    .clamp(i64::from(T::RANGE.0), i64::from(T::RANGE.1));
                assert_eq!(i64::from(got.widen()), fixed, "{da:?} + {db:?} at {i}");
                let real = f64::from(qa.scale) * f64::from(x.widen() - qa.zero_point)
                    + f64::from(qb.scale) * f64::from(y.widen() - qb.zero_point);
                let want = ((real / f64::from(qy.scale)) + 0.5).floor() + f64::from(qy.zero_point);
                let want = want.clamp(f64::from(T::RANGE.0), f64::from(T::RANGE.1));
                let step = (f64::from(got.widen()) - want).abs();
                assert!(
                    if dyadic { step == 0.0 } else { step <= 1.0 },
                    "{da:?} + {db:?} at {i}: {got:?} vs {want}"
                );
            }
        }
    }

    #[test]
    fn broadcast_add_matches_the_reference_qs8_and_qu8() {
        // Power-of-two scale ratios (exact), then arbitrary ones.
        check_pairs::<i8>(q(0.5, 3), q(0.25, -7), q(0.5, 1));
        check_pairs::<i8>(q(0.1, -5), q(0.07, 9), q(0.05, -20));
        check_pairs::<u8>(q(0.5, 128), q(1.0, 120), q(1.0, 130));
        check_pairs::<u8>(q(0.031, 100), q(0.013, 7), q(0.04, 90));
    }

    #[test]
    fn incompatible_shapes_are_refused() {
        assert_eq!(
            check_broadcast(&s(&[2, 3]), &s(&[4, 3]), &s(&[4, 3])),
            Err("the inputs' sizes do not broadcast (aligned at the innermost dim, each pair of sizes must be equal or one of them 1)")
        );
        // Inputs that broadcast, to an output of other sizes.
        assert_eq!(
            check_broadcast(&s(&[2, 3]), &s(&[3]), &s(&[3, 3])),
            Err("the output's sizes are not the broadcast of the inputs'")
        );
    }

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
        // A smaller ratio under 2^-10 keeps the larger one's shift and rounds to its own
        // multiplier (1e-4 * 2^20 = 104.86); one under 2^-shift (an attention mask's
        // scale beside the scores', even a subnormal ratio) rounds to 0.
        let p = AddParams::new(q(1.0, 0), q(1e-4, 0), q(1.0, 0), -INF, INF).unwrap();
        assert_eq!(
            (p.shift, p.a_multiplier, p.b_multiplier),
            (20, 1 << 20, 105)
        );
        let mask = q(1.3344406e36, 127);
        let p = AddParams::new(q(0.0103, 8), mask, mask, -INF, INF).unwrap();
        assert_eq!((p.shift, p.a_multiplier, p.b_multiplier), (20, 0, 1 << 20));
        assert_eq!(p.apply(-128, 50), 50);
        // The larger ratio out of XNNPACK's range.
        assert!(AddParams::new(q(300.0, 0), q(1.0, 0), q(1.0, 0), -INF, INF).is_none());
        assert!(AddParams::new(q(1e-4, 0), q(1e-4, 0), q(1.0, 0), -INF, INF).is_none());
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
    fn subtract_negates_the_second_multiplier() {
        // Equal scales: the difference exactly, with the zero points.
        let p = AddParams::new_sub(q(0.5, 3), q(0.5, -7), q(0.5, 1), -INF, INF).unwrap();
        assert_eq!((p.a_multiplier, p.b_multiplier), (1 << 20, -(1 << 20)));
        assert_eq!(p.apply(10, 20), (10 - 3) - (20 + 7) + 1);
        // Halves round toward +inf, as the add's: 0.5 -> 1, -0.5 -> 0, -1.5 -> -1.
        let p = AddParams::new_sub(q(0.5, 0), q(0.5, 0), q(1.0, 0), -INF, INF).unwrap();
        assert_eq!((p.apply(1, 0), p.apply(0, 1), p.apply(0, 3)), (1, 0, -1));
        // Saturation both ways.
        let p = AddParams::new_sub(q(1.0, 0), q(1.0, 0), q(1.0, 0), -INF, INF).unwrap();
        assert_eq!((p.apply(127, -128), p.apply(-128, 127)), (127, -128));
        // Arbitrary scales and a clamp range: within one step of the real difference
        // requantized, and equal to the fixed-point formula evaluated in i64.
        let p = AddParams::new_sub(q(0.1, -5), q(0.07, 9), q(0.05, -20), 0.0, 6.0).unwrap();
        for a in [-128i8, -77, -5, 0, 31, 127] {
            for b in [-128i8, -3, 9, 64, 127] {
                // Ratios 2 and 1.4: the larger's exponent 1 gives shift 19.
                let (am, bm) = (
                    1i64 << 20,
                    ((0.07f32 / 0.05) * 524_288.0).round_ties_even() as i64,
                );
                let acc = (1 << 18) + am * (i64::from(a) + 5) - bm * (i64::from(b) - 9);
                let fixed = ((acc >> 19) - 20).clamp(-20, 100);
                assert_eq!(i64::from(p.apply(a, b)), fixed, "{a} - {b}");
                let real = 0.1 * (f32::from(a) + 5.0) - 0.07 * (f32::from(b) - 9.0);
                let want = (real / 0.05 - 20.0).round().clamp(-20.0, 100.0);
                assert!((f32::from(p.apply(a, b)) - want).abs() <= 1.0, "{a} - {b}");
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
