//! The type floating kernels compute in for a storage type (PyTorch's `opmath_type`).

use et_runtime::Element;

use super::{Float, Num};

/// The type floating kernels compute in for an element type, as PyTorch's `opmath_type`:
/// f16 and bf16 compute in f32 (rounding once at the store), f32 and f64 in themselves.
pub trait OpMath: Num {
    /// The compute type.
    type C: Float
        + Element
        + core::ops::Add<Output = Self::C>
        + core::ops::Sub<Output = Self::C>
        + core::ops::Mul<Output = Self::C>
        + core::ops::Div<Output = Self::C>
        + core::ops::AddAssign;
    /// Widens to the compute type (exact).
    fn up(self) -> Self::C;
    /// Rounds a computed value to this type.
    fn down(c: Self::C) -> Self;
}

impl OpMath for f32 {
    type C = f32;
    #[inline(always)]
    fn up(self) -> f32 {
        self
    }
    #[inline(always)]
    fn down(c: f32) -> f32 {
        c
    }
}

impl OpMath for f64 {
    type C = f64;
    #[inline(always)]
    fn up(self) -> f64 {
        self
    }
    #[inline(always)]
    fn down(c: f64) -> f64 {
        c
    }
}

macro_rules! half_opmath {
    ($($t:ty),*) => {$(
        impl OpMath for $t {
            type C = f32;
            #[inline(always)]
            fn up(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn down(c: f32) -> $t {
                <$t>::from_f32(c)
            }
        }
    )*};
}

half_opmath!(et_runtime::f16, et_runtime::bf16);
