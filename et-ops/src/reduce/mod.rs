//! reduce operators, on the logical-order reduction spaces of `util::reduction`.
//!
//! Float sums (`sum`, `mean`, `var`) accumulate in f64 and round once at the store, which
//! is at least as accurate as PyTorch's cascaded float accumulation; integer sums wrap in
//! i64 like PyTorch's int64 accumulation.

pub mod amax;
pub mod amin;
pub mod any;
pub mod any_all;
pub mod any_dims;
pub mod argmax;
pub mod argmin;
pub mod max_dim;
pub mod max_unary;
pub mod mean;
pub mod mean_dtype;
pub mod min_dim;
pub mod min_unary;
pub mod prod;
pub mod prod_int;
pub mod sum;
pub mod var;
pub mod var_mean;
pub mod var_unbiased;

use et_runtime::{DtypeSelection, KernelError, KernelResult, ScalarType, Tensor};

use crate::util::accumulate::Accumulator;
use crate::util::convert::{Storer, Val};
use crate::util::element::Num;
use crate::util::reduction::{
    reduce_spaces, split, store_at, strides_over_input, unsupported_dtype, val_storer, DimMask,
    Gathered,
};

/// `amax`/`amin` over `mask` into `out` (same dtype): the largest element if `largest`,
/// else the smallest. NaN wins and sticks, as in PyTorch. Elements are compared in i64
/// (integers, bool) or f64 (floats), both exact, through [`Gathered`], so one loop per
/// compute type serves every dtype; the winner is stored back exactly.
fn extreme<Sel: DtypeSelection>(
    input: &Tensor,
    mask: DimMask,
    out: &mut Tensor,
    largest: bool,
) -> KernelResult {
    let st = val_storer::<Sel>(out.dtype())?;
    if input.dtype().is_floating() {
        let x = Gathered::<f64>::new::<Sel>(input)?;
        extreme_in(x, mask, out, st, largest)
    } else {
        let x = Gathered::<i64>::new::<Sel>(input)?;
        extreme_in(x, mask, out, st, largest)
    }
}

/// `x > best` for a maximum, `x < best` for a minimum: inlined into the inner loops, where
/// the branch on `largest` is the same for every element (a function pointer chosen once
/// would be an indirect call per element).
#[inline(always)]
fn beats<C: Num>(x: C, best: C, largest: bool) -> bool {
    if largest {
        x > best
    } else {
        x < best
    }
}

fn extreme_in<C: Num>(
    x: Gathered<'_, C>,
    mask: DimMask,
    out: &mut Tensor,
    st: Storer,
    largest: bool,
) -> KernelResult {
    let (outer, inner) = reduce_spaces(x.tensor(), mask, out);
    if inner.numel() == 0 && outer.numel() > 0 {
        return Err(KernelError::invalid(
            "cannot take the max or min over an empty dimension",
        ));
    }
    let y = out.bytes_mut()?;
    let mut result = Ok(());
    outer.for_each([0, 0], |[ib, ob]| {
        let mut best: Option<C> = None;
        if result.is_ok() {
            result = x.each(&inner, [ib, 0], |v| {
                best = Some(match best {
                    None => v,
                    Some(b) if b.is_nan() => b,
                    Some(b) if v.is_nan() || beats(v, b, largest) => v,
                    Some(b) => b,
                });
            });
        }
        if let Some(b) = best {
            store_at(y, &st, ob, Val::of(b));
        }
    });
    result
}

/// `argmax`/`argmin` over one dim (or all, flattened) into an int64 `out`: the logical
/// index of the first extreme within the reduced dims; the first NaN wins. Real dtypes
/// only (bool is refused, as PyTorch does); compared as in [`extreme`].
fn arg_extreme<Sel: DtypeSelection>(
    input: &Tensor,
    mask: DimMask,
    out: &mut Tensor,
    largest: bool,
) -> KernelResult {
    if input.dtype() == ScalarType::Bool {
        return Err(unsupported_dtype());
    }
    if input.dtype().is_floating() {
        let x = Gathered::<f64>::new::<Sel>(input)?;
        arg_extreme_in(x, mask, out, largest)
    } else {
        let x = Gathered::<i64>::new::<Sel>(input)?;
        arg_extreme_in(x, mask, out, largest)
    }
}

fn arg_extreme_in<C: Num>(
    x: Gathered<'_, C>,
    mask: DimMask,
    out: &mut Tensor,
    largest: bool,
) -> KernelResult {
    let (outer, inner) = reduce_spaces(x.tensor(), mask, out);
    if inner.numel() == 0 && outer.numel() > 0 {
        return Err(KernelError::invalid(
            "cannot take argmax or argmin over an empty dimension",
        ));
    }
    let y = out.data_mut::<i64>()?;
    let mut result = Ok(());
    outer.for_each([0, 0], |[ib, ob]| {
        let mut best: Option<(C, i64)> = None;
        let mut k = 0i64;
        if result.is_ok() {
            result = x.each(&inner, [ib, 0], |v| {
                best = match best {
                    None => Some((v, k)),
                    Some((b, _)) if b.is_nan() => best,
                    Some(_) if v.is_nan() => Some((v, k)),
                    Some((b, _)) if beats(v, b, largest) => Some((v, k)),
                    keep => keep,
                };
                k += 1;
            });
        }
        if let Some((_, idx)) = best {
            y[ob] = idx;
        }
    });
    result
}

/// `max.dim`/`min.dim` over `mask` (one dim): the extreme into `values` (the input's
/// dtype) and its logical index along the dim into the int64 `indices`; the first extreme
/// wins ties and the first NaN wins outright, as in PyTorch. Dtype-erased: elements are
/// compared as [`Val`]s read through `acc` and the winner's bytes are copied, so one loop
/// serves every dtype. `largest` picks max, else min.
fn indexed_extreme(
    acc: &Accumulator,
    input: &Tensor,
    mask: DimMask,
    values: &mut Tensor,
    indices: &mut Tensor,
    largest: bool,
) -> KernelResult {
    let n = input.dim();
    let vs = strides_over_input(values, mask, n);
    let is = strides_over_input(indices, mask, n);
    let (outer, inner) = split(input.sizes(), [input.strides(), &vs[..n], &is[..n]], mask);
    if inner.numel() == 0 && outer.numel() > 0 {
        return Err(KernelError::invalid(
            "cannot take the max or min over an empty dimension",
        ));
    }
    let better = |x: Val, b: Val| match (x, b) {
        (Val::Int(x), Val::Int(b)) => (x > b) == largest && x != b,
        (Val::Float(x), Val::Float(b)) => (x > b) == largest && x != b,
        _ => false,
    };
    let is_nan = |v: Val| matches!(v, Val::Float(f) if f.is_nan());
    let w = acc.width();
    let x = input.bytes()?;
    let v = values.bytes_mut()?;
    let ix = indices.data_mut::<i64>()?;
    let mut ok = true;
    outer.for_each([0, 0, 0], |[ib, vb, xb]| {
        let mut best: Option<(Val, usize, i64)> = None;
        let mut k = 0i64;
        inner.for_each([ib, 0, 0], |[i, _, _]| {
            let e = acc.get(x, i);
            best = match best {
                None => Some((e, i, k)),
                Some((b, _, _)) if is_nan(b) => best,
                Some(_) if is_nan(e) => Some((e, i, k)),
                Some((b, _, _)) if better(e, b) => Some((e, i, k)),
                keep => keep,
            };
            k += 1;
        });
        if let Some((_, at, idx)) = best {
            match (
                v.get_mut(vb * w..(vb + 1) * w),
                x.get(at * w..(at + 1) * w),
                ix.get_mut(xb),
            ) {
                (Some(d), Some(s), Some(slot)) => {
                    d.copy_from_slice(s);
                    *slot = idx;
                }
                _ => ok = false,
            }
        }
    });
    if ok {
        Ok(())
    } else {
        Err(KernelError::invalid("index out of bounds for tensor data"))
    }
}
