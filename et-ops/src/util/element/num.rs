//! The element-type table, written once: numeric conversions with PyTorch's cast rules.

use et_runtime::{bf16, f16, Bool, Element};

/// A numeric tensor element: every dtype the portable kernels compute with.
///
/// Conversions follow C++ `static_cast` as PyTorch uses it: integer narrowing wraps,
/// float to integer truncates toward zero (Rust saturates where C++ is undefined), and
/// anything to bool is "non-zero".
pub trait Num: Element + PartialOrd {
    /// True for f16, bf16, f32, f64.
    const IS_FLOAT: bool;
    /// True for `Bool`.
    const IS_BOOL: bool;
    /// True for signed integers.
    const IS_SIGNED_INT: bool;
    /// The additive identity.
    const ZERO: Self;
    /// The multiplicative identity.
    const ONE: Self;
    /// The value as f64 (exact for every type but i64/u64 beyond 2^53).
    fn to_f64(self) -> f64;
    /// The nearest value of this type (integers truncate toward zero, then wrap).
    fn from_f64(v: f64) -> Self;
    /// The value as i64 (floats truncate, saturating).
    fn to_i64(self) -> i64;
    /// The value wrapped into this type.
    fn from_i64(v: i64) -> Self;
    /// Non-zero.
    fn to_bool(self) -> bool;
    /// 1 or 0.
    fn from_bool(b: bool) -> Self;
    /// True for NaN floats.
    fn is_nan(self) -> bool;
    /// `s` itself when `Self` is `f32`, so that generic code can hand it to the vectorized
    /// f32 functions ([`vmath`](crate::vmath)); `None` for every other type.
    #[inline(always)]
    fn as_f32s(s: &[Self]) -> Option<&[f32]> {
        let _ = s;
        None
    }
    /// [`as_f32s`](Num::as_f32s) for a mutable slice.
    #[inline(always)]
    fn as_f32s_mut(s: &mut [Self]) -> Option<&mut [f32]> {
        let _ = s;
        None
    }
}

/// The `as_f32s` of the types that are not `f32`.
#[inline(always)]
fn not_f32<S, R>(_: S) -> Option<R> {
    None
}

macro_rules! int_num {
    ($($t:ty: $signed:expr),* $(,)?) => {$(
        impl Num for $t {
            const IS_FLOAT: bool = false;
            const IS_BOOL: bool = false;
            const IS_SIGNED_INT: bool = $signed;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)] fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)] fn from_f64(v: f64) -> Self { (v as i64) as $t }
            #[inline(always)] fn to_i64(self) -> i64 { self as i64 }
            #[inline(always)] fn from_i64(v: i64) -> Self { v as $t }
            #[inline(always)] fn to_bool(self) -> bool { self != 0 }
            #[inline(always)] fn from_bool(b: bool) -> Self { b as $t }
            #[inline(always)] fn is_nan(self) -> bool { false }
        }
    )*};
}

int_num!(u8: false, i8: true, i16: true, i32: true, i64: true, u16: false, u32: false, u64: false);

macro_rules! float_num {
    ($($t:ty => $as_f32s:ident),*) => {$(
        impl Num for $t {
            const IS_FLOAT: bool = true;
            const IS_BOOL: bool = false;
            const IS_SIGNED_INT: bool = false;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)] fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)] fn from_f64(v: f64) -> Self { v as $t }
            #[inline(always)] fn to_i64(self) -> i64 { self as i64 }
            #[inline(always)] fn from_i64(v: i64) -> Self { v as $t }
            #[inline(always)] fn to_bool(self) -> bool { self != 0.0 }
            #[inline(always)] fn from_bool(b: bool) -> Self { b as u8 as $t }
            #[inline(always)] fn is_nan(self) -> bool { self != self }
            #[inline(always)] fn as_f32s(s: &[Self]) -> Option<&[f32]> { $as_f32s(s) }
            #[inline(always)] fn as_f32s_mut(s: &mut [Self]) -> Option<&mut [f32]> { $as_f32s(s) }
        }
    )*};
}

float_num!(f32 => Some, f64 => not_f32);

macro_rules! half_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const IS_FLOAT: bool = true;
            const IS_BOOL: bool = false;
            const IS_SIGNED_INT: bool = false;
            const ZERO: Self = <$t>::ZERO;
            const ONE: Self = <$t>::ONE;
            #[inline(always)] fn to_f64(self) -> f64 { self.to_f64() }
            #[inline(always)] fn from_f64(v: f64) -> Self { <$t>::from_f64(v) }
            #[inline(always)] fn to_i64(self) -> i64 { self.to_f32() as i64 }
            #[inline(always)] fn from_i64(v: i64) -> Self { <$t>::from_f64(v as f64) }
            #[inline(always)] fn to_bool(self) -> bool { self.to_f32() != 0.0 }
            #[inline(always)] fn from_bool(b: bool) -> Self { if b { <$t>::ONE } else { <$t>::ZERO } }
            #[inline(always)] fn is_nan(self) -> bool { <$t>::is_nan(self) }
        }
    )*};
}

half_num!(f16, bf16);

impl Num for Bool {
    const IS_FLOAT: bool = false;
    const IS_BOOL: bool = true;
    const IS_SIGNED_INT: bool = false;
    const ZERO: Self = Bool(0);
    const ONE: Self = Bool(1);
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.get() as u8 as f64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        Bool((v != 0.0) as u8)
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self.get() as i64
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        Bool((v != 0) as u8)
    }
    #[inline(always)]
    fn to_bool(self) -> bool {
        self.get()
    }
    #[inline(always)]
    fn from_bool(b: bool) -> Self {
        Bool(b as u8)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        false
    }
}

/// Converts one element to another type with PyTorch's cast rules.
#[inline(always)]
pub fn cast<S: Num, D: Num>(v: S) -> D {
    if D::IS_BOOL {
        D::from_bool(v.to_bool())
    } else if S::IS_FLOAT || D::IS_FLOAT {
        D::from_f64(v.to_f64())
    } else {
        D::from_i64(v.to_i64())
    }
}
