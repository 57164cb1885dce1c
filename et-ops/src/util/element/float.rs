//! Float math for `no_std` kernels: `core` has no `exp`, `ln`, `sin`, `erf`, ... for f32 and
//! f64 without `std`, so [`Float`] forwards to the pure-Rust `libm` crate (musl's
//! algorithms: correctly rounded `sqrt`, the rest within an ulp or so, which is what
//! PyTorch's own scalar paths deliver).
//!
//! Kernels computing in float32 call the `f32` functions (`expf`, ...), as PyTorch does for
//! float32 and float16 tensors; float64 kernels call the `f64` ones.

use core::ops::{Add, Div, Mul, Neg, Sub};

/// The floating compute types (f32, f64): IEEE arithmetic operators and the math functions
/// elementwise kernels use.
///
/// Call the functions with a path (`Float::exp(x)`): on a concrete `f32` the method syntax
/// `x.exp()` may pick an inherent `std` method in test builds instead.
pub trait Float:
    super::Compute
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// Not a number.
    const NAN: Self;
    /// The value of an `f64` constant, rounded once.
    fn c(v: f64) -> Self;
    /// `e^x`.
    fn exp(self) -> Self;
    /// `e^x - 1`, accurate near zero.
    fn exp_m1(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// `ln(1 + x)`, accurate near zero.
    fn ln_1p(self) -> Self;
    /// Square root (correctly rounded).
    fn sqrt(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Arc tangent.
    fn atan(self) -> Self;
    /// Arc sine (NaN outside `[-1, 1]`).
    fn asin(self) -> Self;
    /// The error function.
    fn erf(self) -> Self;
    /// Tangent.
    fn tan(self) -> Self;
    /// Hyperbolic sine.
    fn sinh(self) -> Self;
    /// Hyperbolic cosine.
    fn cosh(self) -> Self;
    /// Arc cosine (NaN outside `[-1, 1]`).
    fn acos(self) -> Self;
    /// Inverse hyperbolic cosine (NaN below 1).
    fn acosh(self) -> Self;
    /// Inverse hyperbolic sine.
    fn asinh(self) -> Self;
    /// Inverse hyperbolic tangent (infinite at ±1, NaN beyond).
    fn atanh(self) -> Self;
    /// Base-2 logarithm.
    fn log2(self) -> Self;
    /// Base-10 logarithm.
    fn log10(self) -> Self;
    /// The angle of the point `(x, self)` (`atan2(y, x)`), in `[-pi, pi]`.
    fn atan2(self, x: Self) -> Self;
    /// `self^e` with C's `pow` special cases (`pow(x, 0) = 1` even for NaN).
    fn pow(self, e: Self) -> Self;
    /// Round toward negative infinity.
    fn floor(self) -> Self;
    /// Round toward positive infinity.
    fn ceil(self) -> Self;
    /// Round toward zero.
    fn trunc(self) -> Self;
    /// Round to nearest, ties to even (PyTorch's `round`).
    fn round_even(self) -> Self;
    /// C's `fmod`: the remainder with the sign of `self`.
    fn fmod(self, d: Self) -> Self;
    /// Absolute value (clears the sign bit, so `-0.0` and `-NaN` become positive).
    fn abs(self) -> Self;
    /// `self` with the sign of `s`.
    fn copysign(self, s: Self) -> Self;
    /// `self / d` (IEEE division: `x / 0` is an infinity or NaN).
    fn div(self, d: Self) -> Self;
}

macro_rules! float_impl {
    ($t:ty, $exp:path, $expm1:ident, $log:ident, $log1p:ident, $sqrt:ident, $tanh:ident,
     $sin:ident, $cos:ident, $atan:ident, $asin:ident, $erf:ident, $pow:ident, $floor:ident,
     $ceil:ident, $trunc:ident, $roundeven:ident, $fmod:ident, $fabs:ident, $copysign:ident,
     $tan:ident, $sinh:ident, $cosh:ident, $acos:ident, $acosh:ident, $asinh:ident,
     $atanh:ident, $log2:ident, $log10:ident, $atan2:ident) => {
        impl Float for $t {
            const NAN: Self = <$t>::NAN;
            #[inline(always)]
            fn c(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                libm::$expm1(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                libm::$log(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                libm::$log1p(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                libm::$sqrt(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                libm::$tanh(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                libm::$sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                libm::$cos(self)
            }
            #[inline(always)]
            fn atan(self) -> Self {
                libm::$atan(self)
            }
            #[inline(always)]
            fn asin(self) -> Self {
                libm::$asin(self)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                libm::$erf(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                libm::$tan(self)
            }
            #[inline(always)]
            fn sinh(self) -> Self {
                libm::$sinh(self)
            }
            #[inline(always)]
            fn cosh(self) -> Self {
                libm::$cosh(self)
            }
            #[inline(always)]
            fn acos(self) -> Self {
                libm::$acos(self)
            }
            #[inline(always)]
            fn acosh(self) -> Self {
                libm::$acosh(self)
            }
            #[inline(always)]
            fn asinh(self) -> Self {
                libm::$asinh(self)
            }
            #[inline(always)]
            fn atanh(self) -> Self {
                libm::$atanh(self)
            }
            #[inline(always)]
            fn log2(self) -> Self {
                libm::$log2(self)
            }
            #[inline(always)]
            fn log10(self) -> Self {
                libm::$log10(self)
            }
            #[inline(always)]
            fn atan2(self, x: Self) -> Self {
                libm::$atan2(self, x)
            }
            #[inline(always)]
            fn pow(self, e: Self) -> Self {
                libm::$pow(self, e)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                libm::$floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                libm::$ceil(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                libm::$trunc(self)
            }
            #[inline(always)]
            fn round_even(self) -> Self {
                libm::$roundeven(self)
            }
            #[inline(always)]
            fn fmod(self, d: Self) -> Self {
                libm::$fmod(self, d)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                libm::$fabs(self)
            }
            #[inline(always)]
            fn copysign(self, s: Self) -> Self {
                libm::$copysign(self, s)
            }
            #[inline(always)]
            fn div(self, d: Self) -> Self {
                self / d
            }
        }
    };
}

/// float32 `e^x`: the double-precision exponential, rounded once. libm's `expf` is off
/// by up to an ulp, glibc's (which ExecuTorch's kernels call) by barely more than half
/// one, so this agrees with glibc's almost everywhere; `softmax` turns a one-ulp change
/// of a large exponential into a visible one.
#[inline(always)]
fn exp_f32(x: f32) -> f32 {
    libm::exp(f64::from(x)) as f32
}

float_impl!(
    f32, exp_f32, expm1f, logf, log1pf, sqrtf, tanhf, sinf, cosf, atanf, asinf, erff, powf, floorf,
    ceilf, truncf, roundevenf, fmodf, fabsf, copysignf, tanf, sinhf, coshf, acosf, acoshf, asinhf,
    atanhf, log2f, log10f, atan2f
);
float_impl!(
    f64,
    libm::exp,
    expm1,
    log,
    log1p,
    sqrt,
    tanh,
    sin,
    cos,
    atan,
    asin,
    erf,
    pow,
    floor,
    ceil,
    trunc,
    roundeven,
    fmod,
    fabs,
    copysign,
    tan,
    sinh,
    cosh,
    acos,
    acosh,
    asinh,
    atanh,
    log2,
    log10,
    atan2
);

#[cfg(test)]
mod tests {
    use super::Float;

    #[test]
    fn rounding_and_special_values() {
        assert_eq!(Float::round_even(2.5f32), 2.0);
        assert_eq!(Float::round_even(-3.5f64), -4.0);
        assert_eq!(Float::round_even(0.5f32), 0.0);
        assert_eq!(Float::trunc(-2.7f32), -2.0);
        assert_eq!(Float::fmod(-7.0f64, 3.0), -1.0);
        assert!(Float::ln(-1.0f32).is_nan());
        assert_eq!(Float::exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(Float::pow(f64::NAN, 0.0), 1.0);
        assert!((Float::erf(0.5f64) - 0.520_499_877_813_046_5).abs() < 1e-15);
    }
}
