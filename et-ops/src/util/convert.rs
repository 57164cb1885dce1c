//! Every dtype conversion between tensors, written once. Two paths, chosen by what the
//! caller computes in:
//!
//! * Layout copies and fills (no arithmetic) go through [`Val`], a wide intermediate, with
//!   one [`Loader`] per source dtype and one [`Storer`] per destination: `n + m` functions
//!   for `n x m` dtype pairs.
//! * The elementwise drivers already hold a compute type `C`, so their [`GatherFn`],
//!   [`StoreFn`] and [`NarrowFn`] convert straight between a dtype and `C` in chunks, and
//!   [`scalar_as`] / [`scalar_opmath`] turn scalar arguments into operands.
//!
//! Both follow C++ cast rules through [`cast`] and
//! [`Val::to`], so a value converts the same whichever path carries it.

use et_runtime::{
    et_switch, DtypeSelection, Error, KernelError, KernelResult, Scalar, ScalarType, Tensor,
};

use crate::util::element::{cast, Compute, Num, RawElement};

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

// ---------------------------------------------------------------------------------------
// Per-dtype chunk conversion of the elementwise drivers (no `Val` in between: `C` is
// already the compute type)
// ---------------------------------------------------------------------------------------

/// Reads `dst.len()` elements of a tensor, starting at element `start` with element
/// stride `stride` (0 repeats one element), converted to `C`.
pub type GatherFn<C> = fn(&Tensor, usize, usize, &mut [C]) -> KernelResult;
/// Writes `src` converted to the tensor's dtype at elements `pos..pos + src.len()`.
pub type StoreFn<R> = fn(&mut Tensor, usize, &[R]) -> KernelResult;
/// Rounds values of `C` through a narrower dtype (`x = C(S(x))`).
pub type NarrowFn<C> = fn(&mut [C]);

/// A chunk reaching past its tensor's data: the walk's arithmetic is wrong, not the input.
pub(crate) fn oob() -> KernelError {
    KernelError::new(Error::Internal, "elementwise index out of range")
}

/// Reads `dst.len()` elements of dtype `S` as `C` (see [`GatherFn`]).
pub(crate) fn gather<S: Num, C: Num>(
    t: &Tensor,
    start: usize,
    stride: usize,
    dst: &mut [C],
) -> KernelResult {
    let src = t.data::<S>()?;
    let n = dst.len();
    if n == 0 {
        return Ok(());
    }
    let last = stride
        .checked_mul(n - 1)
        .and_then(|x| x.checked_add(start))
        .ok_or_else(oob)?;
    if last >= src.len() {
        return Err(oob());
    }
    match stride {
        0 => dst.fill(cast::<S, C>(src[start])),
        1 => {
            for (d, &s) in dst.iter_mut().zip(&src[start..=last]) {
                *d = cast::<S, C>(s);
            }
        }
        _ => {
            for (d, &s) in dst.iter_mut().zip(src[start..=last].iter().step_by(stride)) {
                *d = cast::<S, C>(s);
            }
        }
    }
    Ok(())
}

fn store<R: Num, U: Num>(t: &mut Tensor, pos: usize, src: &[R]) -> KernelResult {
    let dst = t.data_mut::<U>()?;
    let end = pos.checked_add(src.len()).ok_or_else(oob)?;
    let dst = dst.get_mut(pos..end).ok_or_else(oob)?;
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = cast::<R, U>(s);
    }
    Ok(())
}

fn narrow<S: Num, C: Num>(buf: &mut [C]) {
    for x in buf {
        *x = cast::<S, C>(cast::<C, S>(*x));
    }
}

/// The gather function converting dtype `dt` to `C` (only selected dtypes exist).
pub fn gather_fn<C: Num, Sel: DtypeSelection>(dt: ScalarType) -> KernelResult<GatherFn<C>> {
    et_switch!(in Sel::SET, dt, @all, S => Ok(gather::<S, C> as GatherFn<C>))
}

/// The store function converting `R` to dtype `dt`.
pub fn store_fn<R: Num, Sel: DtypeSelection>(dt: ScalarType) -> KernelResult<StoreFn<R>> {
    et_switch!(in Sel::SET, dt, @all, U => Ok(store::<R, U> as StoreFn<R>))
}

/// The function rounding `C` values through dtype `dt`, or `None` when `dt` is `C`.
pub fn narrow_fn<C: Num, Sel: DtypeSelection>(dt: ScalarType) -> KernelResult<Option<NarrowFn<C>>> {
    if dt == C::DTYPE {
        return Ok(None);
    }
    et_switch!(in Sel::SET, dt, @all, S => Ok(Some(narrow::<S, C> as NarrowFn<C>)))
}

/// The value of a `Scalar` argument as an operand of dtype `dt` (PyTorch casts a scalar
/// operand to the result dtype before computing), in compute type `C`.
pub fn scalar_as<C: Compute, Sel: DtypeSelection>(s: Scalar, dt: ScalarType) -> KernelResult<C> {
    let mut v = [C::from_scalar(s)];
    if let Some(nf) = narrow_fn::<C, Sel>(dt)? {
        nf(&mut v);
    }
    Ok(v[0])
}

/// The value of a `Scalar` argument as PyTorch's arithmetic kernels use it: converted
/// straight to the compute type for floating results (a float16 tensor times 0.1 multiplies
/// by the float32 0.1, not by 0.1 rounded to float16), and wrapped to the result dtype for
/// integer results (which equals wrapping after computing in int64).
pub fn scalar_opmath<C: Compute, Sel: DtypeSelection>(
    s: Scalar,
    dt: ScalarType,
) -> KernelResult<C> {
    if dt.is_floating() {
        Ok(C::from_scalar(s))
    } else {
        scalar_as::<C, Sel>(s, dt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use et_runtime::Bool;

    #[test]
    fn conversions() {
        assert_eq!(Val::Int(-1).to::<u8>(), 255);
        assert_eq!(Val::Float(-2.7).to::<i32>(), -2);
        assert_eq!(Val::Float(f64::NAN).to::<Bool>(), Bool(1));
        // i64 -> f32 rounds once.
        let big = (1i64 << 60) + (1 << 36) + 1;
        assert_eq!(Val::Int(big).to::<f32>(), big as f32);
        assert!(Val::Int(256).to_checked::<u8>().is_err());
        assert_eq!(Val::Int(-255).to_checked::<u8>(), Ok(1));
        assert!(Val::Int(-256).to_checked::<u8>().is_err());
        assert!(Val::Float(1e300).to_checked::<f32>().is_err());
        assert!(Val::Float(f64::INFINITY).to_checked::<f32>().is_ok());
        assert!(Val::Float(f64::NAN).to_checked::<i32>().is_err());
        assert_eq!(Val::Float(2.5).to_checked::<i64>(), Ok(2));
        assert!(Val::Int(70000).to_checked::<et_runtime::f16>().is_err());
    }
}
