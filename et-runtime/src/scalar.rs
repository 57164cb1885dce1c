//! `Scalar`: a number argument that may be a bool, an integer or a double.

use et_schema::scalar_type::ScalarType;

/// A scalar operator argument, as PyTorch's `Scalar`: programs pass it as an Int, Double
/// or Bool value and kernels decide how to use it (`alpha`, `other` in `add.Scalar`, ...).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A double.
    Double(f64),
}

impl Scalar {
    /// The value as a double (`true` is 1.0).
    #[inline]
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as i64 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Double(d) => d,
        }
    }

    /// The value as an integer, truncating a double toward zero (saturating at the range).
    #[inline]
    pub fn to_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::Int(i) => i,
            Scalar::Double(d) => d as i64,
        }
    }

    /// The value as a boolean (non-zero is true).
    #[inline]
    pub fn to_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Double(d) => d != 0.0,
        }
    }

    /// True for `Double`.
    #[inline]
    pub fn is_floating(self) -> bool {
        matches!(self, Scalar::Double(_))
    }

    /// True for `Int` and `Bool`.
    #[inline]
    pub fn is_integral(self) -> bool {
        !self.is_floating()
    }

    /// The dtype PyTorch gives a tensor made from this scalar (`Double` -> float64,
    /// `Int` -> int64, `Bool` -> bool); type promotion treats scalars specially, so
    /// kernels usually only need [`is_floating`](Self::is_floating).
    pub fn natural_dtype(self) -> ScalarType {
        match self {
            Scalar::Bool(_) => ScalarType::Bool,
            Scalar::Int(_) => ScalarType::Long,
            Scalar::Double(_) => ScalarType::Double,
        }
    }
}

impl From<i64> for Scalar {
    fn from(v: i64) -> Self {
        Scalar::Int(v)
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Double(v)
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}
