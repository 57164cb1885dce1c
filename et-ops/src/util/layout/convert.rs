//! Dtype conversion through a wide intermediate: `Val`, per-dtype loaders and storers.

use et_runtime::{KernelError, KernelResult, Scalar};

use crate::util::element::{Num, RawElement};

/// A value in transit between dtypes: integers (and bools) stay exact as `i64`, floats
/// widen exactly to `f64`. Converting through this keeps PyTorch's cast results, including
/// integer-to-float rounding done once (an `i64` goes straight to `f32`, not via `f64`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    /// An integer or bool (0/1) value.
    Int(i64),
    /// A floating-point value.
    Float(f64),
}

impl Val {
    /// Reads a typed element.
    #[inline(always)]
    pub fn of<T: Num>(x: T) -> Val {
        if T::IS_FLOAT {
            Val::Float(x.to_f64())
        } else {
            Val::Int(x.to_i64())
        }
    }

    /// A scalar argument's value (a bool is 0/1).
    #[inline]
    pub fn of_scalar(s: Scalar) -> Val {
        match s {
            Scalar::Bool(b) => Val::Int(b as i64),
            Scalar::Int(i) => Val::Int(i),
            Scalar::Double(d) => Val::Float(d),
        }
    }

    /// Converts with C++ cast rules (as `util::element::cast`): to bool is "non-zero" (NaN
    /// is true), float to integer truncates, integer narrowing wraps.
    #[inline(always)]
    pub fn to<T: Num>(self) -> T {
        match self {
            Val::Int(i) => T::from_i64(i),
            Val::Float(f) => T::from_f64(f),
        }
    }

    /// Converts like [`to`](Self::to) but fails where PyTorch's `checked_convert` does
    /// (filling a tensor with a scalar): a value outside the target's range (floats: a
    /// finite value beyond the largest finite one; unsigned integers accept negatives down
    /// to `-max`, which wrap), or NaN/inf into an integer type.
    pub fn to_checked<T: Num>(self) -> KernelResult<T> {
        let bad =
            || KernelError::invalid("value cannot be converted to the dtype without overflow");
        if T::IS_BOOL {
            return Ok(self.to());
        }
        let bits = 8 * core::mem::size_of::<T>() as u32;
        if T::IS_FLOAT {
            let max = match bits {
                16 => 65504.0,
                32 => f32::MAX as f64,
                _ => f64::MAX,
            };
            let ok = match self {
                Val::Int(i) => (i as f64).abs() <= max,
                Val::Float(f) => !f.is_finite() || f.abs() <= max,
            };
            return if ok { Ok(self.to()) } else { Err(bad()) };
        }
        // Integer targets.
        let (lo, hi): (i128, i128) = if T::IS_SIGNED_INT {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        let ok = match self {
            Val::Int(i) => {
                let i = i as i128;
                (lo..=hi).contains(&i) || (!T::IS_SIGNED_INT && i < 0 && -i <= hi)
            }
            Val::Float(f) => f.is_finite() && f >= lo as f64 && f <= hi as f64,
        };
        if ok {
            Ok(self.to())
        } else {
            Err(bad())
        }
    }
}

/// Reads elements of one dtype as [`Val`]s.
#[derive(Clone, Copy, Debug)]
pub struct Loader {
    /// Bytes per element.
    pub size: usize,
    /// Reads the element at the start of the slice.
    pub load: fn(&[u8]) -> Val,
}

/// Writes [`Val`]s as elements of one dtype.
#[derive(Clone, Copy, Debug)]
pub struct Storer {
    /// Bytes per element.
    pub size: usize,
    /// Writes the element at the start of the slice.
    pub store: fn(&mut [u8], Val),
}

/// The loader for `T` (pick `T` with `et_switch!` so only selected dtypes exist).
pub fn loader<T: RawElement>() -> Loader {
    Loader {
        size: core::mem::size_of::<T>(),
        load: |b| Val::of(T::read(b)),
    }
}

/// The storer for `T` (pick `T` with `et_switch!` so only selected dtypes exist).
pub fn storer<T: RawElement>() -> Storer {
    Storer {
        size: core::mem::size_of::<T>(),
        store: |b, v| v.to::<T>().write(b),
    }
}

/// One element of `T` holding `s`, as bytes (the first `size_of::<T>()` are valid),
/// checked for overflow as PyTorch's `fill_` does.
pub fn scalar_bytes<T: RawElement>(s: Scalar) -> KernelResult<[u8; 8]> {
    let mut out = [0u8; 8];
    Val::of_scalar(s).to_checked::<T>()?.write(&mut out);
    Ok(out)
}
