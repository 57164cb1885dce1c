//! The functions, written once over [`Lanes`]: every instruction set runs this code, with
//! its own vectors. The polynomial and rational coefficients come from
//! `scripts/vmath-coefficients.py`, which fits them (minimax, relative error) and rounds
//! them to f32.

use super::lanes::Lanes;

/// A function of one f32, applied lane by lane.
pub(super) trait Function: Copy + core::fmt::Debug {
    /// The function of each lane of `x`.
    fn apply<V: Lanes>(self, x: V) -> V;
}

const LOG2_E: f32 = core::f32::consts::LOG2_E;
/// ln 2 in two parts: `LN2_HI` has 15 significant bits, so `n * LN2_HI` is exact for the
/// `|n| <= 150` the reduction produces, and `x - n * LN2_HI` is exact too (the two are
/// close); `LN2_LO` is the rest of ln 2, rounded.
const LN2_HI: f32 = 0.693_145_75;
const LN2_LO: f32 = 1.428_606_8e-6;
/// `t + 1.5 * 2^23` rounds `t` (|t| < 2^22) to an integer, which then sits in the low
/// bits of the sum's representation.
const ROUND: f32 = 12_582_912.0;
/// The bits of 1.0: a biased exponent of 0.
const ONE_BITS: i32 = 0x3f80_0000;
/// `e^r = 1 + r + r^2 (1/2 + E3 r + E4 r^2 + E5 r^3 + E6 r^4)` for `|r| <= ln(2)/2`,
/// within 3.7e-9 relative (the `r^2` coefficient kept at exactly 1/2).
const E3: f32 = 0.166_665_33;
const E4: f32 = 0.041_667_24;
const E5: f32 = 0.008_367_609;
const E6: f32 = 0.001_386_366_8;
/// Above this, `e^x` overflows; the clamp keeps the scale's exponent in range.
const EXP_MAX: f32 = 89.0;
/// Below this, `e^x` is under half the smallest subnormal and rounds to 0.
const EXP_MIN: f32 = -104.0;

/// `x = n ln 2 + r` with `n` an integer and `|r| <= ln(2)/2` (a hair more without a fused
/// multiply-add). Returns `e^r - 1` and `n + ROUND`, whose representation holds `n` in
/// its low bits.
#[inline(always)]
fn reduce<V: Lanes>(x: V) -> (V, V) {
    let t = x.mul_add(V::splat(LOG2_E), V::splat(ROUND));
    let n = t.sub(V::splat(ROUND));
    let r = n.mul_add(V::splat(-LN2_HI), x);
    let r = n.mul_add(V::splat(-LN2_LO), r);
    let p = V::splat(E6).mul_add(r, V::splat(E5));
    let p = p.mul_add(r, V::splat(E4));
    let p = p.mul_add(r, V::splat(E3));
    let p = p.mul_add(r, V::splat(0.5));
    // r + r^2 p rather than 1 + ...: the leading 1 is added with the scale, in one rounding.
    (p.mul_add(r.mul(r), r), t)
}

/// `2^n` for `n` in -126..=127, from `t` of [`reduce`].
#[inline(always)]
fn pow2<V: Lanes>(t: V) -> V {
    t.int_sub(V::splat(ROUND))
        .shl_23()
        .int_add(V::int(ONE_BITS))
}

/// `e^x`, over the whole f32 range: 0 below about -103.97 (through the subnormals),
/// infinity above about 88.72, NaN for NaN.
#[inline(always)]
pub(super) fn exp<V: Lanes>(x: V) -> V {
    // NaN is the second operand, so it passes both clamps.
    let x = V::splat(EXP_MAX).min(V::splat(EXP_MIN).max(x));
    let (em1, t) = reduce(x);
    // 2^n in two factors, each a normal float for every n in -150..=128: their product
    // reaches the subnormals and infinity, which one factor cannot.
    let n = t.int_sub(V::splat(ROUND));
    let half = n.halve_int();
    let s1 = half.shl_23().int_add(V::int(ONE_BITS));
    let s2 = n.int_sub(half).shl_23().int_add(V::int(ONE_BITS));
    em1.mul_add(s1, s1).mul(s2)
}

/// `e^x - 1` for `x` in -18..=88 (clamped there: at -18 the result is -1 in f32), accurate
/// near 0 where `exp(x) - 1` would cancel.
#[inline(always)]
fn expm1<V: Lanes>(x: V) -> V {
    let x = V::splat(88.0).min(V::splat(-18.0).max(x));
    let (em1, t) = reduce(x);
    let s = pow2(t);
    // s e^r - 1 = s (e^r - 1) + (s - 1), and `s - 1` is exact for the n where it matters.
    em1.mul_add(s, s.sub(V::splat(1.0)))
}

/// `tanh(|x|)` and beyond: at this argument `tanh` rounds to 1.
const TANH_SATURATION: f32 = 10.0;

/// `tanh(x) = e / (e + 2)` with `e = e^(2|x|) - 1`, the sign restored: no cancellation
/// near 0, where `e` is accurate relatively.
#[inline(always)]
fn tanh<V: Lanes>(x: V) -> V {
    let a = V::splat(TANH_SATURATION).min(x.abs());
    let e = expm1(a.add(a));
    e.div(e.add(V::splat(2.0))).or_bits(x.sign_bits())
}

/// `1 / (1 + e^-x)`, from `e = e^-|x|` so that the exponential never overflows: `1 / (1 +
/// e)` for positive `x`, `e / (1 + e)` otherwise (which keeps the tiny results of very
/// negative `x`, down to the subnormals).
#[inline(always)]
fn sigmoid<V: Lanes>(x: V) -> V {
    let e = exp(V::splat(0.0).sub(x.abs()));
    let one = V::splat(1.0);
    V::select(x.gt(V::splat(0.0)), one, e).div(one.add(e))
}

/// `|z|` at and beyond which `erf` rounds to ±1.
const ERF_SATURATION: f32 = 3.92;
/// `erf(z) = z P(z^2) / Q(z^2)` on `|z| <= ERF_SATURATION`, `P` of degree 6 and `Q` of
/// degree 4 with `Q(0) = 1`; within 7e-8 relative with these f32 coefficients (most of it
/// the rounding of `P(0) = 2 / sqrt(pi)`). A product rather than `z + z (P/Q - 1)`, which
/// cancels as `erf` nears 1.
const ERF_P: [f32; 7] = [
    core::f32::consts::FRAC_2_SQRT_PI,
    0.195_87,
    0.050_029_743,
    0.003_525_098_3,
    0.000_137_333_26,
    -1.936_815_1e-6,
    1.996_191e-8,
];
const ERF_Q: [f32; 4] = [0.506_918_25, 0.113_314_98, 0.014_001_246, 0.000_912_223_5];

/// The error function: the rational approximation inside, exactly ±1 outside.
#[inline(always)]
fn erf<V: Lanes>(z: V) -> V {
    let lim = V::splat(ERF_SATURATION);
    let zc = lim.min(V::splat(-ERF_SATURATION).max(z));
    let t = zc.mul(zc);
    let mut p = V::splat(ERF_P[6]);
    for &c in ERF_P[..6].iter().rev() {
        p = p.mul_add(t, V::splat(c));
    }
    let mut q = V::splat(ERF_Q[3]);
    for &c in ERF_Q[..3].iter().rev() {
        q = q.mul_add(t, V::splat(c));
    }
    let q = q.mul_add(t, V::splat(1.0));
    let inside = zc.mul(p).div(q);
    // Beyond the limit the result is ±1 exactly, so `x * (1 + erf)` of GELU is an exact
    // 0 or 2x there as in the f64 formula.
    let outside = V::splat(1.0).or_bits(z.sign_bits());
    V::select(z.abs().gt(lim), outside, inside)
}

/// `e^x`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Exp;
impl Function for Exp {
    #[inline(always)]
    fn apply<V: Lanes>(self, x: V) -> V {
        exp(x)
    }
}

/// The logistic function.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sigmoid;
impl Function for Sigmoid {
    #[inline(always)]
    fn apply<V: Lanes>(self, x: V) -> V {
        sigmoid(x)
    }
}

/// `x * sigmoid(x)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Silu;
impl Function for Silu {
    #[inline(always)]
    fn apply<V: Lanes>(self, x: V) -> V {
        x.mul(sigmoid(x))
    }
}

/// The hyperbolic tangent.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tanh;
impl Function for Tanh {
    #[inline(always)]
    fn apply<V: Lanes>(self, x: V) -> V {
        tanh(x)
    }
}

/// GELU, erf form: `x/2 * (1 + erf(x / sqrt 2))`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Gelu;
impl Function for Gelu {
    #[inline(always)]
    fn apply<V: Lanes>(self, x: V) -> V {
        let e = erf(x.mul(V::splat(core::f32::consts::FRAC_1_SQRT_2)));
        x.mul(V::splat(0.5)).mul(V::splat(1.0).add(e))
    }
}

/// `sqrt(2 / pi)`, the tanh form's scale.
const SQRT_2_OVER_PI: f32 = 0.797_884_6;
/// The tanh form's cubic coefficient.
const GELU_CUBIC: f32 = 0.044_715;

/// GELU, tanh form: `x/2 * (1 + tanh(u))` with `u = sqrt(2/pi) (x + 0.044715 x^3)`,
/// computed as the equal `x * sigmoid(2u)`, which keeps the tiny values of negative `x`
/// that `1 + tanh(u)` would cancel to 0.
#[derive(Clone, Copy, Debug)]
pub(super) struct GeluTanh;
impl Function for GeluTanh {
    #[inline(always)]
    fn apply<V: Lanes>(self, x: V) -> V {
        let inner = V::splat(GELU_CUBIC).mul(x.mul(x)).mul_add(x, x);
        x.mul(sigmoid(inner.mul(V::splat(2.0 * SQRT_2_OVER_PI))))
    }
}

/// `x * min(max(x + 3, 0), 6) / 6`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Hardswish;
impl Function for Hardswish {
    #[inline(always)]
    fn apply<V: Lanes>(self, x: V) -> V {
        let gate = V::splat(6.0).min(V::splat(0.0).max(x.add(V::splat(3.0))));
        x.mul(gate).div(V::splat(6.0))
    }
}

/// ELU: `x` for `x > 0`, else `alpha * (e^x - 1)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Elu(pub(super) f32);
impl Function for Elu {
    #[inline(always)]
    fn apply<V: Lanes>(self, x: V) -> V {
        let negative = V::splat(self.0).mul(expm1(V::splat(0.0).min(x)));
        V::select(x.gt(V::splat(0.0)), x, negative)
    }
}

/// `x * s`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scale(pub(super) f32);
impl Function for Scale {
    #[inline(always)]
    fn apply<V: Lanes>(self, x: V) -> V {
        x.mul(V::splat(self.0))
    }
}

/// `(x - a) - b`.
#[derive(Clone, Copy, Debug)]
pub(super) struct SubtractTwice(pub(super) f32, pub(super) f32);
impl Function for SubtractTwice {
    #[inline(always)]
    fn apply<V: Lanes>(self, x: V) -> V {
        x.sub(V::splat(self.0)).sub(V::splat(self.1))
    }
}
