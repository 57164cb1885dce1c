//! Per-dtype gather, store and narrowing functions, shared by every operator.

use et_runtime::{et_switch, DtypeSelection, Error, KernelError, KernelResult, ScalarType, Tensor};

use crate::util::element::{cast, Num};

/// Reads `dst.len()` elements of a tensor, starting at element `start` with element
/// stride `stride` (0 repeats one element), converted to `C`.
pub type GatherFn<C> = fn(&Tensor, usize, usize, &mut [C]) -> KernelResult;
/// Writes `src` converted to the tensor's dtype at elements `pos..pos + src.len()`.
pub type StoreFn<R> = fn(&mut Tensor, usize, &[R]) -> KernelResult;
/// Rounds values of `C` through a narrower dtype (`x = C(S(x))`).
pub type NarrowFn<C> = fn(&mut [C]);

pub(super) fn oob() -> KernelError {
    KernelError::new(Error::Internal, "elementwise index out of range")
}

pub(super) fn gather<S: Num, C: Num>(
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
