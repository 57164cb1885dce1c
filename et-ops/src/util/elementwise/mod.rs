//! Elementwise machinery, written once: broadcasting, a strided walker over any dim
//! orders, the compute-type arithmetic, and the unary / binary / ternary drivers.
//!
//! # How an elementwise kernel runs
//!
//! A kernel picks the operator's result dtype with [`promote`](crate::util::promote),
//! switches once over the *compute* type `C` (int64, float32 or float64, see
//! [`compute_dtype`]) and hands a closure over `C` to
//! [`unary`], [`binary`] or [`ternary`]:
//!
//! ```ignore
//! let common = promote::result_type(a, b)?;
//! et_switch!(in compute_set(Sel::SET), compute_dtype(common), [i64, f32, f64], C => {
//!     let alpha = C::from_scalar(alpha);
//!     binary::<C, C, Sel>(a, b, out, common, move |x, y| x.add(y.mul(alpha)))
//! })
//! ```
//!
//! The driver takes one of two paths:
//!
//! * **Fast path**: every input has the result dtype `T` and the same sizes and strides
//!   (so the same memory order), and `out` has dtype `T` (or the closure's result type,
//!   e.g. bool for comparisons) and that layout after resizing. One flat loop loads `T`,
//!   computes in `C` and stores; the compiler vectorizes it. It is checked first, in few
//!   instructions, since tiny tensors make the per-call cost visible (a one-element f32
//!   add costs ~15 ns). This is the only code instantiated per storage dtype, and only
//!   for the dtypes of [`fast_set`]: every selected storage dtype when the selection
//!   keeps at most four dtypes, else the compute dtypes (int64, float32, float64) alone;
//!   in a build of every dtype the others take the general path, which keeps the
//!   elementwise operators' code in `size_test_all_ops` small.
//! * **General path**: broadcasting, mixed dtypes, mixed dim orders, out dtypes other than
//!   the result's. It checks that the result may be cast to `out`'s dtype, resizes `out`
//!   to the broadcast shape, and a [`RunWalk`] visits `out` in memory order as runs along the
//!   innermost (coalesced) dim. Each run is processed in chunks of [`CHUNK`] elements:
//!   every input is converted into a `C` buffer by a per-dtype gather function, the
//!   closure fills a result buffer, and a per-dtype store function converts it into `out`.
//!   Inputs already of type `C` with unit stride are read in place, and results of `out`'s
//!   own type are written in place. The conversion functions are picked once per call
//!   through function pointers (no nested switch over dtype pairs), and the walk itself is
//!   shared by all operators: it calls the operator's chunk loop through a `dyn` pointer,
//!   so an operator adds only that loop to the binary.
//!
//! Inputs are converted to the result dtype before computing (PyTorch's TensorIterator
//! does the same), so `uint8 [n] < int64 0-dim` compares against the scalar wrapped to
//! uint8. When `out`'s dtype differs from the result dtype, results are first rounded to
//! the result dtype (float16 results stored into a float32 `out` are float16 values).
//!
//! Selective builds: the `Sel` parameter is the calling kernel's selection parameter (the
//! `DtypeSelection` type `#[kernel]` instantiates); only selected dtypes get gather, store
//! and fast-path code.
//!
//! The [`Compute`] methods have names that no inherent method of `i64`/`f32`/`f64` uses,
//! so closures in a concrete `et_switch!` arm resolve to them and not to a panicking or
//! `std`-only inherent method. Call [`Float`](crate::util::element::Float) functions
//! with a path (`Float::exp`), for the same reason.

use et_runtime::{
    et_switch, DtypeSelection, DtypeSet, Error, KernelContext, KernelError, KernelResult,
    ScalarType, Tensor,
};

use crate::util::convert::{
    gather, gather_fn, narrow_fn, oob, store_fn, GatherFn, NarrowFn, StoreFn,
};
use crate::util::element::{cast, Compute, Num};
use crate::util::promote::{can_cast, compute_dtype};
use crate::util::split::{for_each_band, SPLIT_MIN_ELEMENTS};

/// Elements per chunk of the general path (each buffer lives on the stack).
pub const CHUNK: usize = 64;

/// The dtypes whose compute type is `compute` (see
/// [`compute_dtype`]), within `sel`.
pub const fn storage_set(compute: ScalarType, sel: DtypeSet) -> DtypeSet {
    let mut out = DtypeSet::EMPTY;
    let mut i = 0;
    while i < ScalarType::ALL.len() {
        let t = ScalarType::ALL[i];
        if sel.contains(t) && compute_dtype(t) as u8 == compute as u8 {
            out = out.with(t);
        }
        i += 1;
    }
    out
}

/// Selections of at most this many dtypes get a fast path for every storage dtype.
const FAST_PATH_ALL_STORAGE_UP_TO: u32 = 4;

/// The storage dtypes that get a fast path of their own (see the module docs): every
/// dtype whose compute type is `compute` when the selection is narrow, otherwise only
/// `compute` itself. A build that keeps every dtype would otherwise carry one vectorized
/// loop per operator and storage dtype (about 3 KB per binary operator); the other dtypes
/// take the general path, which converts in chunks through shared functions.
pub const fn fast_set(compute: ScalarType, sel: DtypeSet) -> DtypeSet {
    let storage = storage_set(compute, sel);
    if sel.0.count_ones() <= FAST_PATH_ALL_STORAGE_UP_TO {
        storage
    } else {
        DtypeSet(storage.0 & compute.bit())
    }
}

mod broadcast;
#[cfg(test)]
mod tests;

use broadcast::dims_eq;
pub use broadcast::{broadcast_shapes, RunWalk};

// Drivers
// ---------------------------------------------------------------------------------------

/// An elementwise function of `K` inputs, applied slice-wise. `run` converts each input
/// element from `T` to the compute type, applies the function and converts the result to
/// `U`; both paths of the drivers call it (the general path with `T = C`, `U = R`).
pub trait MapK<C, R, const K: usize> {
    /// `out[i] = f(ins[0][i], ..)` for `i < out.len()` (every input is at least as long).
    fn run<T: Num, U: Num>(&self, ins: [&[T]; K], out: &mut [U]);
}

/// A one-input function.
struct Map1<F>(F);
/// A two-input function.
struct Map2<F>(F);
/// A three-input function.
struct Map3<F>(F);

impl<C: Num, R: Num, F: Fn(C) -> R> MapK<C, R, 1> for Map1<F> {
    #[inline(always)]
    fn run<T: Num, U: Num>(&self, [a]: [&[T]; 1], out: &mut [U]) {
        for (o, &x) in out.iter_mut().zip(a) {
            *o = cast::<R, U>((self.0)(cast::<T, C>(x)));
        }
    }
}

impl<C: Num, R: Num, F: Fn(C, C) -> R> MapK<C, R, 2> for Map2<F> {
    #[inline(always)]
    fn run<T: Num, U: Num>(&self, [a, b]: [&[T]; 2], out: &mut [U]) {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = cast::<R, U>((self.0)(cast::<T, C>(x), cast::<T, C>(y)));
        }
    }
}

impl<C: Num, R: Num, F: Fn(C, C, C) -> R> MapK<C, R, 3> for Map3<F> {
    #[inline(always)]
    fn run<T: Num, U: Num>(&self, [a, b, c]: [&[T]; 3], out: &mut [U]) {
        for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
            *o = cast::<R, U>((self.0)(cast::<T, C>(x), cast::<T, C>(y), cast::<T, C>(z)));
        }
    }
}

/// A one-input float function with a vectorized f32 form over slices: the form runs
/// whenever the compute type is f32 (in place on f32 data, through chunks converted to
/// and from f32 for other storage), `each` otherwise (f64).
struct SliceMap1<F, S> {
    each: F,
    f32_slices: S,
}

impl<C: Num, F: Fn(C) -> C, S: Fn(&[f32], &mut [f32])> MapK<C, C, 1> for SliceMap1<F, S> {
    #[inline(always)]
    fn run<T: Num, U: Num>(&self, [a]: [&[T]; 1], out: &mut [U]) {
        let a = &a[..out.len()];
        if C::DTYPE != ScalarType::Float {
            return Map1(&self.each).run::<T, U>([a], out);
        }
        if let (Some(x), Some(y)) = (T::as_f32s(a), U::as_f32s_mut(out)) {
            return (self.f32_slices)(x, y);
        }
        let (mut x, mut y) = ([0.0f32; CHUNK], [0.0f32; CHUNK]);
        for (a, out) in a.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            let (x, y) = (&mut x[..a.len()], &mut y[..a.len()]);
            x.iter_mut()
                .zip(a)
                .for_each(|(x, &a)| *x = cast::<T, f32>(a));
            (self.f32_slices)(x, y);
            out.iter_mut()
                .zip(&*y)
                .for_each(|(o, &y)| *o = cast::<f32, U>(y));
        }
    }
}

/// `out = f(input)` elementwise for a float function with a vectorized f32 form
/// (`f32_slices`, from [`vmath`](crate::vmath)): float32 and float16 tensors run that,
/// float64 runs `each`. Otherwise as [`unary`].
pub fn unary_vectorized<C: Compute, Sel: DtypeSelection>(
    input: &Tensor,
    out: &mut Tensor,
    common: ScalarType,
    each: impl Fn(C) -> C + Sync,
    f32_slices: impl Fn(&[f32], &mut [f32]) + Sync,
) -> KernelResult {
    let map = SliceMap1 { each, f32_slices };
    drive::<C, C, 1, Sel>(None, [input], out, common, &map)
}

/// `out = f(input)` elementwise. `common` is the operator's result dtype: the input is
/// converted to it, and (when `R` is `C`) the result has it. See the module docs.
pub fn unary<C: Compute, R: Num, Sel: DtypeSelection>(
    input: &Tensor,
    out: &mut Tensor,
    common: ScalarType,
    f: impl Fn(C) -> R + Sync,
) -> KernelResult {
    drive::<C, R, 1, Sel>(None, [input], out, common, &Map1(f))
}

/// [`unary`], with the fast path's work split over `ctx`'s pool when it is large
/// (see [`for_each_band`]): for operators that models run on big activations.
pub fn unary_on<C: Compute, R: Num, Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    out: &mut Tensor,
    common: ScalarType,
    f: impl Fn(C) -> R + Sync,
) -> KernelResult {
    drive::<C, R, 1, Sel>(Some(ctx), [input], out, common, &Map1(f))
}

/// `out = f(a, b)` elementwise with broadcasting. See [`unary`] and the module docs.
pub fn binary<C: Compute, R: Num, Sel: DtypeSelection>(
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
    common: ScalarType,
    f: impl Fn(C, C) -> R + Sync,
) -> KernelResult {
    drive::<C, R, 2, Sel>(None, [a, b], out, common, &Map2(f))
}

/// [`binary`], with the fast path's work split over `ctx`'s pool when it is large.
pub fn binary_on<C: Compute, R: Num, Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
    common: ScalarType,
    f: impl Fn(C, C) -> R + Sync,
) -> KernelResult {
    drive::<C, R, 2, Sel>(Some(ctx), [a, b], out, common, &Map2(f))
}

/// `out = f(a, b, c)` elementwise with broadcasting (`where`, `clamp` with tensor
/// bounds). Every input is converted to `common`, then `C`: a bool condition arrives as
/// 0 or 1. See [`unary`] and the module docs.
pub fn ternary<C: Compute, R: Num, Sel: DtypeSelection>(
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    out: &mut Tensor,
    common: ScalarType,
    f: impl Fn(C, C, C) -> R + Sync,
) -> KernelResult {
    drive::<C, R, 3, Sel>(None, [a, b, c], out, common, &Map3(f))
}

/// True when `R` is the compute type itself (an arithmetic result of dtype `common`)
/// rather than a type of its own (bool for comparisons).
const fn returns_compute<C: Num, R: Num>() -> bool {
    C::DTYPE as u8 == R::DTYPE as u8
}

fn drive<C: Compute, R: Num, const K: usize, Sel: DtypeSelection>(
    ctx: Option<&KernelContext<'_>>,
    ins: [&Tensor; K],
    out: &mut Tensor,
    common: ScalarType,
    map: &(impl MapK<C, R, K> + Sync),
) -> KernelResult {
    // Fast path: one storage dtype (the result dtype) and one layout for every operand.
    // Checked first and in few instructions: `many_adds` runs 1000 one-element adds, so
    // the per-call overhead is what shows there.
    let first = ins[0];
    let (dt, sizes, strides) = (first.dtype(), first.sizes(), first.strides());
    let fast_out = if returns_compute::<C, R>() {
        dt
    } else {
        R::DTYPE
    };
    if dt == common
        // A constant: computed at run time the set's loop doubled many_adds' dispatch.
        && const { fast_set(C::DTYPE, Sel::SET) }.contains(dt)
        && out.dtype() == fast_out
        && ins[1..]
            .iter()
            .all(|t| t.dtype() == dt && dims_eq(t.sizes(), sizes) && dims_eq(t.strides(), strides))
    {
        if !dims_eq(out.sizes(), sizes) {
            out.resize(sizes)?;
        }
        if dims_eq(out.strides(), strides) {
            return et_switch!(in fast_set(C::DTYPE, Sel::SET), dt, @all, T => {
                if const { returns_compute::<C, R>() } {
                    fast::<T, T, C, R, K>(ctx, ins, out, map)
                } else {
                    fast::<T, R, C, R, K>(ctx, ins, out, map)
                }
            });
        }
    }
    general::<C, R, K, Sel>(ins, out, common, map)
}

fn fast<T: Num, U: Num, C, R, const K: usize>(
    ctx: Option<&KernelContext<'_>>,
    ins: [&Tensor; K],
    out: &mut Tensor,
    map: &(impl MapK<C, R, K> + Sync),
) -> KernelResult {
    let mut data: [&[T]; K] = [&[]; K];
    for (d, t) in data.iter_mut().zip(ins) {
        *d = t.data::<T>()?;
    }
    let out = out.data_mut::<U>()?;
    // The size test first: a one-element add must not pay for looking at the pool.
    match ctx {
        Some(ctx) if out.len() >= SPLIT_MIN_ELEMENTS && ctx.workers() > 1 => {
            fast_split::<T, U, C, R, K>(ctx, data, out, map)
        }
        _ => map.run::<T, U>(data, out),
    }
    Ok(())
}

/// The fast path in bands over the pool; out of line, so that the common small call's
/// code stays as it was without threads.
#[cold]
#[inline(never)]
fn fast_split<T: Num, U: Num, C, R, const K: usize>(
    ctx: &KernelContext<'_>,
    data: [&[T]; K],
    out: &mut [U],
    map: &(impl MapK<C, R, K> + Sync),
) {
    for_each_band(ctx, out, 1, 0, |start, band| {
        // Every input holds at least `out.len()` elements (same sizes and strides).
        map.run::<T, U>(data.map(|d| &d[start..]), band)
    })
}

/// Where the general path writes results.
enum Dst<'a, R> {
    /// `out` has dtype `R`: results go straight into its data.
    Direct(&'a mut [R]),
    /// Results are rounded to the result dtype if needed, then converted.
    Convert(&'a mut Tensor, StoreFn<R>, Option<NarrowFn<R>>),
}

/// The general path of one call: resolves the conversions for the call's dtypes (the only
/// part that depends on the selection), then runs the shared walk with the operator's
/// chunk function behind a `dyn` pointer, so that each operator adds only its vectorized
/// chunk loop to the binary, not a copy of the walk.
fn general<C: Compute, R: Num, const K: usize, Sel: DtypeSelection>(
    ins: [&Tensor; K],
    out: &mut Tensor,
    common: ScalarType,
    map: &impl MapK<C, R, K>,
) -> KernelResult {
    let plan = Plan::<C, R, K>::resolve::<Sel>(ins, out.dtype(), common)?;
    plan.execute(ins, out, common, &mut |views, o| map.run::<C, R>(views, o))
}

/// An operator's chunk loop as the general path calls it: `out[i] = f(ins[..][i])`.
type ChunkFn<'f, C, R, const K: usize> = dyn FnMut([&[C]; K], &mut [R]) + 'f;

/// The conversions the general path applies, resolved once per call.
struct Plan<C, R, const K: usize> {
    /// Per input: converts its dtype to `C` (read in place instead when the input is
    /// already `C`, needs no rounding, and has unit stride along runs).
    gathers: [GatherFn<C>; K],
    /// Per input: rounds through the result dtype (an input of another dtype than the
    /// result dtype, where the result dtype is narrower than `C`).
    narrows: [Option<NarrowFn<C>>; K],
    /// Converts results to `out`'s dtype; `None` writes them in place.
    store: Option<StoreFn<R>>,
    /// Rounds results to the result dtype before a store into a different dtype.
    out_narrow: Option<NarrowFn<R>>,
}

impl<C: Compute, R: Num, const K: usize> Plan<C, R, K> {
    fn resolve<Sel: DtypeSelection>(
        ins: [&Tensor; K],
        out_dt: ScalarType,
        common: ScalarType,
    ) -> KernelResult<Self> {
        let mut plan = Plan {
            gathers: [gather::<C, C> as GatherFn<C>; K],
            narrows: [None; K],
            store: None,
            out_narrow: None,
        };
        let narrow_in = if common != C::DTYPE {
            narrow_fn::<C, Sel>(common)?
        } else {
            None
        };
        for (k, t) in ins.iter().enumerate() {
            if t.dtype() != common {
                plan.narrows[k] = narrow_in;
            }
            if t.dtype() != C::DTYPE {
                plan.gathers[k] = gather_fn::<C, Sel>(t.dtype())?;
            }
        }
        let out_rounds = returns_compute::<C, R>() && out_dt != common && common != C::DTYPE;
        if out_rounds {
            plan.out_narrow = narrow_fn::<R, Sel>(common)?;
        }
        if out_dt != R::DTYPE || out_rounds {
            plan.store = Some(store_fn::<R, Sel>(out_dt)?);
        }
        Ok(plan)
    }

    /// Checks, resizes `out` to the broadcast shape, and fills it.
    #[inline(never)]
    fn execute(
        &self,
        ins: [&Tensor; K],
        out: &mut Tensor,
        common: ScalarType,
        f: &mut ChunkFn<'_, C, R, K>,
    ) -> KernelResult {
        let result = if returns_compute::<C, R>() {
            common
        } else {
            R::DTYPE
        };
        if !can_cast(result, out.dtype()) {
            return Err(KernelError::invalid(
                "result dtype cannot be cast to the out dtype",
            ));
        }
        let shape = broadcast_shapes(&ins.map(|t| t.sizes()))?;
        if !dims_eq(out.sizes(), shape.as_slice()) {
            out.resize(shape.as_slice())?;
        }
        if out.numel() == 0 {
            return Ok(());
        }
        // Operand 0 of the walk is `out`; the inputs follow.
        let walk = {
            let mut ops: [(&[usize], &[usize]); 4] = [(&[], &[]); 4];
            ops[0] = (out.sizes(), out.strides());
            for (o, t) in ops[1..].iter_mut().zip(ins) {
                *o = (t.sizes(), t.strides());
            }
            RunWalk::<4>::new(out.sizes(), out.dim_order(), ops)?
        };
        let inner = walk.inner_strides();
        if inner[0] != 1 {
            return Err(KernelError::new(Error::Internal, "out is not dense"));
        }
        let mut direct: [Option<&[C]>; K] = [None; K];
        for k in 0..K {
            let t = ins[k];
            if t.dtype() == C::DTYPE && self.narrows[k].is_none() && inner[k + 1] == 1 {
                direct[k] = Some(t.data::<C>()?);
            }
        }
        let mut dst = match self.store {
            None => Dst::Direct(out.data_mut::<R>()?),
            Some(store) => Dst::Convert(out, store, self.out_narrow),
        };

        let mut bufs = [[C::ZERO; CHUNK]; K];
        let mut res = [R::ZERO; CHUNK];
        walk.for_each_run(|off, len| {
            let mut done = 0;
            while done < len {
                let n = CHUNK.min(len - done);
                for k in 0..K {
                    if direct[k].is_none() {
                        let start = off[k + 1].wrapping_add(done.wrapping_mul(inner[k + 1]));
                        (self.gathers[k])(ins[k], start, inner[k + 1], &mut bufs[k][..n])?;
                        if let Some(nf) = self.narrows[k] {
                            nf(&mut bufs[k][..n]);
                        }
                    }
                }
                let mut views: [&[C]; K] = [&[]; K];
                for k in 0..K {
                    views[k] = match direct[k] {
                        Some(d) => {
                            let start = off[k + 1] + done;
                            d.get(start..start + n).ok_or_else(oob)?
                        }
                        None => &bufs[k][..n],
                    };
                }
                let pos = off[0] + done;
                match &mut dst {
                    Dst::Direct(d) => f(views, d.get_mut(pos..pos + n).ok_or_else(oob)?),
                    Dst::Convert(t, store, narrow) => {
                        f(views, &mut res[..n]);
                        if let Some(nf) = narrow {
                            nf(&mut res[..n]);
                        }
                        store(t, pos, &res[..n])?;
                    }
                }
                done += n;
            }
            Ok(())
        })
    }
}

/// Test support for kernels: runs `f` with a context over a 64 KiB scratch arena.
#[cfg(test)]
pub(crate) fn with_ctx<R>(f: impl FnOnce(&et_runtime::KernelContext<'_>) -> R) -> R {
    extern crate std;
    let mut scratch = std::vec![0u8; 1 << 16];
    let arena = et_runtime::Arena::new(&mut scratch);
    f(&et_runtime::KernelContext::new(&arena))
}
