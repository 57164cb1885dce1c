//! The compute types elementwise kernels compute in: `i64`, `f32`, `f64`.

use et_runtime::Scalar;

use super::{Float, Num};

/// A type elementwise kernels compute in: `i64` for bool and integer results (wrapping
/// like C++ integer arithmetic on the narrow type once stored), `f32` for float16 /
/// bfloat16 / float32, `f64` for float64.
pub trait Compute: Num {
    /// `self + o`, wrapping for integers.
    fn add(self, o: Self) -> Self;
    /// `self - o`, wrapping for integers.
    fn sub(self, o: Self) -> Self;
    /// `self * o`, wrapping for integers.
    fn mul(self, o: Self) -> Self;
    /// `-self`, wrapping for integers.
    fn neg(self) -> Self;
    /// `|self|`, wrapping for integers (`|i64::MIN| = i64::MIN`); clears a float's sign bit.
    fn absolute(self) -> Self;
    /// -1, 0 or 1 by sign (0 for NaN and for both zeros).
    fn sign(self) -> Self;
    /// The larger value; NaN if either is NaN.
    fn max_nan(self, o: Self) -> Self;
    /// The smaller value; NaN if either is NaN.
    fn min_nan(self, o: Self) -> Self;
    /// `max(self, lo)` for a bound that is not NaN; a NaN `self` stays NaN. Cheaper than
    /// [`max_nan`](Self::max_nan) (one `maxps`-style select per element).
    #[inline(always)]
    fn at_least(self, lo: Self) -> Self {
        if lo > self {
            lo
        } else {
            self
        }
    }
    /// `min(self, hi)` for a bound that is not NaN; a NaN `self` stays NaN.
    #[inline(always)]
    fn at_most(self, hi: Self) -> Self {
        if self > hi {
            hi
        } else {
            self
        }
    }
    /// Division rounded toward negative infinity. Integers: `o` must not be zero (callers
    /// report integer division by zero as an error); `MIN / -1` wraps. Floats: Python's
    /// floor division, which keeps `a - b * q` consistent with [`remainder`](Self::remainder);
    /// division by zero gives the IEEE quotient.
    fn floor_div(self, o: Self) -> Self;
    /// Division rounded toward zero (same zero-divisor rules as `floor_div`).
    fn trunc_div(self, o: Self) -> Self;
    /// The remainder of [`trunc_div`](Self::trunc_div), with the sign of `self` (C's
    /// `fmod`, PyTorch's `fmod`). Integers: `o` must not be zero (0 is returned);
    /// `MIN % -1` is 0. Floats: NaN for a zero divisor.
    fn trunc_rem(self, o: Self) -> Self;
    /// The remainder with the sign of the divisor (Python's `%`, PyTorch's `remainder`).
    /// Integers: `o` must not be zero. Floats: NaN for a zero divisor.
    fn remainder(self, o: Self) -> Self;
    /// `self` raised to `e`. Integers: exponentiation by squaring with wrap-around; a
    /// negative exponent gives `1 / self` truncated (1 for 1, ±1 for -1, else 0). Floats:
    /// C's `pow`.
    fn power(self, e: Self) -> Self;
    /// The scalar argument in this type (a double truncates toward zero for integers).
    fn from_scalar(s: Scalar) -> Self;
}

impl Compute for i64 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self.wrapping_sub(o)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self.wrapping_mul(o)
    }
    #[inline(always)]
    fn neg(self) -> Self {
        self.wrapping_neg()
    }
    #[inline(always)]
    fn absolute(self) -> Self {
        self.wrapping_abs()
    }
    #[inline(always)]
    fn sign(self) -> Self {
        (self > 0) as i64 - (self < 0) as i64
    }
    #[inline(always)]
    fn max_nan(self, o: Self) -> Self {
        if self > o {
            self
        } else {
            o
        }
    }
    #[inline(always)]
    fn min_nan(self, o: Self) -> Self {
        if self < o {
            self
        } else {
            o
        }
    }
    #[inline(always)]
    fn floor_div(self, o: Self) -> Self {
        if o == 0 {
            return 0;
        }
        let q = self.wrapping_div(o);
        // Truncation rounded toward zero; step down when the exact quotient was negative
        // and not whole.
        if (self.wrapping_rem(o) != 0) && ((self < 0) != (o < 0)) {
            q - 1
        } else {
            q
        }
    }
    #[inline(always)]
    fn trunc_div(self, o: Self) -> Self {
        if o == 0 {
            return 0;
        }
        self.wrapping_div(o)
    }
    #[inline(always)]
    fn trunc_rem(self, o: Self) -> Self {
        if o == 0 {
            return 0;
        }
        self.wrapping_rem(o)
    }
    #[inline(always)]
    fn remainder(self, o: Self) -> Self {
        if o == 0 {
            return 0;
        }
        let r = self.wrapping_rem(o);
        if r != 0 && ((r < 0) != (o < 0)) {
            r + o
        } else {
            r
        }
    }
    #[inline]
    fn power(self, e: Self) -> Self {
        if e < 0 {
            return match self {
                1 => 1,
                -1 => {
                    if e & 1 == 0 {
                        1
                    } else {
                        -1
                    }
                }
                _ => 0,
            };
        }
        let (mut base, mut e, mut acc) = (self, e, 1i64);
        while e > 0 {
            if e & 1 == 1 {
                acc = acc.wrapping_mul(base);
            }
            base = base.wrapping_mul(base);
            e >>= 1;
        }
        acc
    }
    #[inline(always)]
    fn from_scalar(s: Scalar) -> Self {
        s.to_i64()
    }
}

macro_rules! float_compute {
    ($t:ty) => {
        impl Compute for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn absolute(self) -> Self {
                Float::abs(self)
            }
            #[inline(always)]
            fn sign(self) -> Self {
                // NaN compares false both ways, so it maps to 0 as in PyTorch.
                ((self > 0.0) as i8 - (self < 0.0) as i8) as $t
            }
            #[inline(always)]
            fn max_nan(self, o: Self) -> Self {
                if self.is_nan() || self > o {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn min_nan(self, o: Self) -> Self {
                if self.is_nan() || self < o {
                    self
                } else {
                    o
                }
            }
            #[inline]
            fn floor_div(self, o: Self) -> Self {
                if o == 0.0 {
                    return self / o;
                }
                // Divide the part that is an exact multiple of `o`, so that the quotient
                // agrees with `remainder` even when `self / o` rounds up to a whole number.
                let m = Float::fmod(self, o);
                let mut q = (self - m) / o;
                if m != 0.0 && ((o < 0.0) != (m < 0.0)) {
                    q -= 1.0;
                }
                if q == 0.0 {
                    // Keep the sign of the true quotient on a zero result.
                    return Float::copysign(0.0, self / o);
                }
                let f = Float::floor(q);
                if q - f > 0.5 {
                    f + 1.0
                } else {
                    f
                }
            }
            #[inline(always)]
            fn trunc_div(self, o: Self) -> Self {
                Float::trunc(self / o)
            }
            #[inline(always)]
            fn trunc_rem(self, o: Self) -> Self {
                Float::fmod(self, o)
            }
            #[inline(always)]
            fn remainder(self, o: Self) -> Self {
                let m = Float::fmod(self, o);
                if m != 0.0 && ((o < 0.0) != (m < 0.0)) {
                    m + o
                } else {
                    m
                }
            }
            #[inline(always)]
            fn power(self, e: Self) -> Self {
                Float::pow(self, e)
            }
            #[inline(always)]
            fn from_scalar(s: Scalar) -> Self {
                s.to_f64() as $t
            }
        }
    };
}

float_compute!(f32);
float_compute!(f64);
