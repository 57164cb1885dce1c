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
//!   add costs ~15 ns). This is the only code instantiated per storage dtype.
//! * **General path**: broadcasting, mixed dtypes, mixed dim orders, out dtypes other than
//!   the result's. It checks that the result may be cast to `out`'s dtype, resizes `out`
//!   to the broadcast shape, and a [`Walk`] visits `out` in memory order as runs along the
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
    et_switch, DtypeSelection, DtypeSet, Error, KernelError, KernelResult, Scalar, ScalarType,
    Tensor, MAX_DIM,
};

use crate::util::element::{cast, Compute, Num};
use crate::util::promote::{can_cast, compute_dtype};

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

// ---------------------------------------------------------------------------------------
// Broadcasting
// ---------------------------------------------------------------------------------------

/// A tensor shape held inline (no heap): at most [`MAX_DIM`] sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    dims: [usize; MAX_DIM],
    rank: usize,
}

impl Shape {
    /// A shape with the given sizes; fails past [`MAX_DIM`] dims.
    pub fn new(sizes: &[usize]) -> KernelResult<Shape> {
        let mut dims = [0; MAX_DIM];
        dims.get_mut(..sizes.len())
            .ok_or(KernelError::invalid("too many dimensions"))?
            .copy_from_slice(sizes);
        Ok(Shape {
            dims,
            rank: sizes.len(),
        })
    }

    /// The sizes.
    pub fn as_slice(&self) -> &[usize] {
        &self.dims[..self.rank]
    }
}

/// The broadcast of shapes (NumPy rules): shapes align at their last dim, and each dim is
/// the common size of the shapes that have it, where size 1 stretches to any size
/// (including 0). Fails when two sizes differ and neither is 1.
pub fn broadcast_shapes(shapes: &[&[usize]]) -> KernelResult<Shape> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    if rank > MAX_DIM {
        return Err(KernelError::invalid("too many dimensions"));
    }
    let mut dims = [1usize; MAX_DIM];
    for s in shapes {
        let lead = rank - s.len();
        for (d, &n) in dims[lead..rank].iter_mut().zip(s.iter()) {
            if *d == 1 {
                *d = n;
            } else if n != 1 && n != *d {
                return Err(KernelError::invalid("tensor shapes cannot be broadcast"));
            }
        }
    }
    Ok(Shape { dims, rank })
}

// ---------------------------------------------------------------------------------------
// The strided walker
// ---------------------------------------------------------------------------------------

/// A visit of a shape in the memory order of one operand (operand 0), carrying the element
/// strides of `N` operands broadcast to that shape.
///
/// Dims of size 1 are dropped and adjacent dims are merged wherever every operand's
/// strides nest (`stride[outer] == stride[inner] * size[inner]`), so same-layout operands
/// become one long run whatever their rank, and a broadcast operand keeps stride 0 along
/// the dims it repeats over. [`for_each_run`](Self::for_each_run) then calls back once per
/// run along the innermost remaining dim, with each operand's element offset; every run
/// has the same length and per-operand [`inner_strides`](Self::inner_strides). When
/// operand 0 is a dense tensor (any dim order), the runs visit its memory front to back
/// with unit inner stride.
#[derive(Clone, Debug)]
pub struct Walk<const N: usize> {
    rank: usize,
    sizes: [usize; MAX_DIM],
    strides: [[usize; N]; MAX_DIM],
    numel: usize,
}

impl<const N: usize> Walk<N> {
    /// A walk over `shape` in the order `order` (outermost dim first, a permutation of the
    /// dims, typically operand 0's `dim_order()`). Each operand is `(sizes, strides)`;
    /// its sizes are right-aligned against `shape` and must equal each size or be 1
    /// (a missing leading dim counts as 1).
    pub fn new(
        shape: &[usize],
        order: &[u8],
        operands: [(&[usize], &[usize]); N],
    ) -> KernelResult<Self> {
        let nd = shape.len();
        if nd > MAX_DIM || order.len() != nd {
            return Err(KernelError::invalid("dim order does not match the shape"));
        }
        let mut walk = Walk {
            rank: 0,
            sizes: [0; MAX_DIM],
            strides: [[0; N]; MAX_DIM],
            numel: crate_numel(shape)?,
        };
        let mut seen = 0u32;
        for &d in order {
            let d = d as usize;
            if d >= nd || seen & (1 << d) != 0 {
                return Err(KernelError::invalid("dim order is not a permutation"));
            }
            seen |= 1 << d;
            let size = shape[d];
            if size == 1 {
                continue;
            }
            let mut strides = [0usize; N];
            for (s, (sizes, op_strides)) in strides.iter_mut().zip(operands.iter()) {
                if sizes.len() != op_strides.len() || sizes.len() > nd {
                    return Err(KernelError::invalid("operand rank exceeds the result rank"));
                }
                let lead = nd - sizes.len();
                if d >= lead {
                    let n = sizes[d - lead];
                    if n == size {
                        *s = op_strides[d - lead];
                    } else if n != 1 {
                        return Err(KernelError::invalid("tensor shapes cannot be broadcast"));
                    }
                }
            }
            // Merge into the previous (outer) dim when every operand nests.
            if walk.rank > 0 {
                let p = walk.rank - 1;
                let nests = (0..N).all(|k| walk.strides[p][k] == strides[k].wrapping_mul(size));
                if nests {
                    walk.sizes[p] = walk.sizes[p].wrapping_mul(size);
                    walk.strides[p] = strides;
                    continue;
                }
            }
            walk.sizes[walk.rank] = size;
            walk.strides[walk.rank] = strides;
            walk.rank += 1;
        }
        // Every operand's sizes must broadcast even along dims of size 1 in `shape`.
        for (sizes, _) in operands.iter() {
            let lead = nd.saturating_sub(sizes.len());
            for (i, &n) in sizes.iter().enumerate() {
                if n != 1 && shape.get(lead + i) != Some(&n) {
                    return Err(KernelError::invalid("tensor shapes cannot be broadcast"));
                }
            }
        }
        if walk.rank == 0 {
            // A single element (0-dim, or all sizes 1): one run of length 1. Its strides
            // never advance anything; 1 keeps "operand 0 has unit inner stride" true.
            walk.sizes[0] = 1;
            walk.strides[0] = [1; N];
            walk.rank = 1;
        }
        Ok(walk)
    }

    /// A walk over `operands[0]`'s shape in its memory order, the others broadcast to it.
    pub fn of(operands: [&Tensor; N]) -> KernelResult<Self> {
        let first = operands
            .first()
            .ok_or(KernelError::invalid("no operands"))?;
        Walk::new(
            first.sizes(),
            first.dim_order(),
            operands.map(|t| (t.sizes(), t.strides())),
        )
    }

    /// The number of elements visited.
    pub fn numel(&self) -> usize {
        self.numel
    }

    /// The length of every run (0 when the shape is empty).
    pub fn run_len(&self) -> usize {
        if self.numel == 0 {
            0
        } else {
            self.sizes[self.rank - 1]
        }
    }

    /// Each operand's element stride along a run.
    pub fn inner_strides(&self) -> [usize; N] {
        self.strides[self.rank - 1]
    }

    /// Calls `f(offsets, len)` for every run, in order; `offsets[k]` is operand `k`'s
    /// element offset of the run's first element. Stops at the first error.
    pub fn for_each_run(
        &self,
        mut f: impl FnMut([usize; N], usize) -> KernelResult,
    ) -> KernelResult {
        if self.numel == 0 {
            return Ok(());
        }
        let inner = self.rank - 1;
        let len = self.sizes[inner];
        let mut idx = [0usize; MAX_DIM];
        let mut off = [0usize; N];
        loop {
            f(off, len)?;
            // Odometer over the outer dims, innermost first.
            let mut d = inner;
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < self.sizes[d] {
                    for (o, s) in off.iter_mut().zip(self.strides[d]) {
                        *o = o.wrapping_add(s);
                    }
                    break;
                }
                // Rewind this dim to 0.
                for (o, s) in off.iter_mut().zip(self.strides[d]) {
                    *o = o.wrapping_sub(s.wrapping_mul(self.sizes[d] - 1));
                }
                idx[d] = 0;
            }
        }
    }
}

/// Slice equality as a plain loop: ranks are tiny, and `==` on `[usize]` calls `memcmp`.
#[inline]
fn dims_eq(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

fn crate_numel(shape: &[usize]) -> KernelResult<usize> {
    et_runtime::checked_numel(shape).ok_or(KernelError::invalid("tensor size overflows"))
}

// ---------------------------------------------------------------------------------------
// Per-dtype conversion functions (shared by every operator)
// ---------------------------------------------------------------------------------------

/// Reads `dst.len()` elements of a tensor, starting at element `start` with element
/// stride `stride` (0 repeats one element), converted to `C`.
pub type GatherFn<C> = fn(&Tensor, usize, usize, &mut [C]) -> KernelResult;
/// Writes `src` converted to the tensor's dtype at elements `pos..pos + src.len()`.
pub type StoreFn<R> = fn(&mut Tensor, usize, &[R]) -> KernelResult;
/// Rounds values of `C` through a narrower dtype (`x = C(S(x))`).
pub type NarrowFn<C> = fn(&mut [C]);

fn oob() -> KernelError {
    KernelError::new(Error::Internal, "elementwise index out of range")
}

fn gather<S: Num, C: Num>(t: &Tensor, start: usize, stride: usize, dst: &mut [C]) -> KernelResult {
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

// ---------------------------------------------------------------------------------------
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

/// `out = f(input)` elementwise. `common` is the operator's result dtype: the input is
/// converted to it, and (when `R` is `C`) the result has it. See the module docs.
pub fn unary<C: Compute, R: Num, Sel: DtypeSelection>(
    input: &Tensor,
    out: &mut Tensor,
    common: ScalarType,
    f: impl Fn(C) -> R,
) -> KernelResult {
    drive::<C, R, 1, Sel>([input], out, common, &Map1(f))
}

/// `out = f(a, b)` elementwise with broadcasting. See [`unary`] and the module docs.
pub fn binary<C: Compute, R: Num, Sel: DtypeSelection>(
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
    common: ScalarType,
    f: impl Fn(C, C) -> R,
) -> KernelResult {
    drive::<C, R, 2, Sel>([a, b], out, common, &Map2(f))
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
    f: impl Fn(C, C, C) -> R,
) -> KernelResult {
    drive::<C, R, 3, Sel>([a, b, c], out, common, &Map3(f))
}

/// True when `R` is the compute type itself (an arithmetic result of dtype `common`)
/// rather than a type of its own (bool for comparisons).
const fn returns_compute<C: Num, R: Num>() -> bool {
    C::DTYPE as u8 == R::DTYPE as u8
}

fn drive<C: Compute, R: Num, const K: usize, Sel: DtypeSelection>(
    ins: [&Tensor; K],
    out: &mut Tensor,
    common: ScalarType,
    map: &impl MapK<C, R, K>,
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
        && compute_dtype(dt) == C::DTYPE
        && out.dtype() == fast_out
        && ins[1..]
            .iter()
            .all(|t| t.dtype() == dt && dims_eq(t.sizes(), sizes) && dims_eq(t.strides(), strides))
    {
        if !dims_eq(out.sizes(), sizes) {
            out.resize(sizes)?;
        }
        if dims_eq(out.strides(), strides) {
            return et_switch!(in storage_set(C::DTYPE, Sel::SET), dt, @all, T => {
                if const { returns_compute::<C, R>() } {
                    fast::<T, T, C, R, K>(ins, out, map)
                } else {
                    fast::<T, R, C, R, K>(ins, out, map)
                }
            });
        }
    }
    general::<C, R, K, Sel>(ins, out, common, map)
}

fn fast<T: Num, U: Num, C, R, const K: usize>(
    ins: [&Tensor; K],
    out: &mut Tensor,
    map: &impl MapK<C, R, K>,
) -> KernelResult {
    let mut data: [&[T]; K] = [&[]; K];
    for (d, t) in data.iter_mut().zip(ins) {
        *d = t.data::<T>()?;
    }
    map.run::<T, U>(data, out.data_mut::<U>()?);
    Ok(())
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
            Walk::<4>::new(out.sizes(), out.dim_order(), ops)?
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

/// Test support for kernels: runs `f` with a context over a 64 KiB scratch arena.
#[cfg(test)]
pub(crate) fn with_ctx<R>(f: impl FnOnce(&et_runtime::KernelContext<'_>) -> R) -> R {
    extern crate std;
    let mut scratch = std::vec![0u8; 1 << 16];
    let arena = et_runtime::Arena::new(&mut scratch);
    f(&et_runtime::KernelContext::new(&arena))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{f16, Bool, Element, ShapeDynamism, TensorBuf};
    use std::vec;
    use std::vec::Vec;

    use et_runtime::AllDtypes;

    fn vals<T: Element>(t: &Tensor) -> Vec<T> {
        t.data::<T>().unwrap().to_vec()
    }

    #[test]
    fn broadcast_shapes_rules() {
        let s = broadcast_shapes(&[&[3, 1, 5], &[4, 1]]).unwrap();
        assert_eq!(s.as_slice(), &[3, 4, 5]);
        assert_eq!(broadcast_shapes(&[&[], &[2]]).unwrap().as_slice(), &[2]);
        assert_eq!(broadcast_shapes(&[&[0], &[1]]).unwrap().as_slice(), &[0]);
        assert!(broadcast_shapes(&[&[3], &[4]]).is_err());
    }

    #[test]
    fn walk_coalesces_and_visits_memory_order() {
        // Same layout: one run.
        let w = Walk::<2>::new(&[2, 3, 4], &[0, 1, 2], [(&[2, 3, 4], &[12, 4, 1]); 2]).unwrap();
        assert_eq!((w.run_len(), w.inner_strides()), (24, [1, 1]));
        // Broadcast a [3, 1] operand over [3, 4].
        let w = Walk::<2>::new(&[3, 4], &[0, 1], [(&[3, 4], &[4, 1]), (&[3, 1], &[1, 1])]).unwrap();
        let mut runs = Vec::new();
        w.for_each_run(|o, n| {
            runs.push((o, n));
            Ok(())
        })
        .unwrap();
        assert_eq!(w.inner_strides(), [1, 0]);
        assert_eq!(runs, [([0, 0], 4), ([4, 1], 4), ([8, 2], 4)]);
        // Channels-last out, contiguous input: runs follow the out's memory.
        let w = Walk::<2>::new(
            &[1, 2, 2, 3],
            &[0, 2, 3, 1],
            [
                (&[1, 2, 2, 3], &[12, 1, 6, 2]),
                (&[1, 2, 2, 3], &[12, 6, 3, 1]),
            ],
        )
        .unwrap();
        assert_eq!(w.inner_strides(), [1, 6]);
        assert_eq!(w.run_len(), 2);
        let mut offs = Vec::new();
        w.for_each_run(|o, _| {
            offs.push(o);
            Ok(())
        })
        .unwrap();
        assert_eq!(offs, [[0, 0], [2, 1], [4, 2], [6, 3], [8, 4], [10, 5]]);
        assert!(Walk::<2>::new(&[3], &[0], [(&[3], &[1]), (&[2], &[1])]).is_err());
    }

    #[test]
    fn binary_fast_and_broadcast_paths() {
        {
            let a = TensorBuf::from_slice(&[2, 3], &[1.0f32, 2., 3., 4., 5., 6.]).unwrap();
            let b = TensorBuf::from_slice(&[2, 3], &[10.0f32, 20., 30., 40., 50., 60.]).unwrap();
            let mut out = TensorBuf::zeros(ScalarType::Float, &[2, 3]).unwrap();
            binary::<f32, f32, AllDtypes>(&a, &b, &mut out, ScalarType::Float, |x, y| x + y)
                .unwrap();
            assert_eq!(vals::<f32>(&out), [11., 22., 33., 44., 55., 66.]);
            let row = TensorBuf::from_slice(&[3], &[1.0f32, 2., 3.]).unwrap();
            binary::<f32, f32, AllDtypes>(&a, &row, &mut out, ScalarType::Float, |x, y| x * y)
                .unwrap();
            assert_eq!(vals::<f32>(&out), [1., 4., 9., 4., 10., 18.]);
            let col = TensorBuf::from_slice(&[2, 1], &[1.0f32, -1.]).unwrap();
            binary::<f32, f32, AllDtypes>(&col, &a, &mut out, ScalarType::Float, |x, y| x * y)
                .unwrap();
            assert_eq!(vals::<f32>(&out), [1., 2., 3., -4., -5., -6.]);
        }
    }

    #[test]
    fn mixed_dtypes_promote_and_round() {
        // int32 + float32 -> float32.
        let a = TensorBuf::from_slice(&[3], &[1i32, 2, 3]).unwrap();
        let b = TensorBuf::from_slice(&[3], &[0.5f32, 0.25, -1.0]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
        binary::<f32, f32, AllDtypes>(&a, &b, &mut out, ScalarType::Float, |x, y| x + y).unwrap();
        assert_eq!(vals::<f32>(&out), [1.5, 2.25, 2.0]);
        // int8 results wrap.
        let a = TensorBuf::from_slice(&[2], &[100i8, -100]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Char, &[2]).unwrap();
        binary::<i64, i64, AllDtypes>(&a, &a, &mut out, ScalarType::Char, |x, y| x.add(y)).unwrap();
        assert_eq!(vals::<i8>(&out), [-56, 56]);
        // int8 result widened into an int32 out: wrapped first, as PyTorch computes in int8.
        let mut out32 = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
        binary::<i64, i64, AllDtypes>(&a, &a, &mut out32, ScalarType::Char, |x, y| x.add(y))
            .unwrap();
        assert_eq!(vals::<i32>(&out32), [-56, 56]);
        // float16: computed in f32, rounded once.
        let h = TensorBuf::from_slice(&[2], &[f16::from_f32(1.0), f16::from_f32(2048.0)]).unwrap();
        let mut outh = TensorBuf::zeros(ScalarType::Half, &[2]).unwrap();
        binary::<f32, f32, AllDtypes>(&h, &h, &mut outh, ScalarType::Half, |x, y| x + y * 0.5)
            .unwrap();
        assert_eq!(
            vals::<f16>(&outh),
            [f16::from_f32(1.5), f16::from_f32(3072.0)]
        );
        // Float result into an int out is rejected.
        let mut bad = TensorBuf::zeros(ScalarType::Int, &[3]).unwrap();
        let b3 = TensorBuf::from_slice(&[3], &[0.5f32, 0.25, -1.0]).unwrap();
        assert!(
            binary::<f32, f32, AllDtypes>(&b3, &b3, &mut bad, ScalarType::Float, |x, y| x + y)
                .is_err()
        );
    }

    #[test]
    fn comparison_results_and_layouts() {
        let a = TensorBuf::from_slice(&[2, 2], &[1.0f64, 5., 3., 4.]).unwrap();
        let b = TensorBuf::from_slice(&[], &[3.0f64]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Bool, &[2, 2]).unwrap();
        binary::<f64, Bool, AllDtypes>(&a, &b, &mut out, ScalarType::Double, |x, y| {
            Bool::from(x < y)
        })
        .unwrap();
        assert_eq!(vals::<Bool>(&out), [Bool(1), Bool(0), Bool(0), Bool(0)]);
        // A channels-last out from contiguous inputs: values land at the out's strides.
        let x = TensorBuf::from_slice(&[1, 2, 1, 2], &[1i32, 2, 3, 4]).unwrap();
        let mut cl = TensorBuf::with_layout(
            ScalarType::Int,
            &[1, 2, 1, 2],
            &[0, 2, 3, 1],
            ShapeDynamism::Static,
        )
        .unwrap();
        unary::<i64, i64, AllDtypes>(&x, &mut cl, ScalarType::Int, |v| v.mul(10)).unwrap();
        // Memory order (n, h, w, c): (w0,c0)=10, (w0,c1)=30, (w1,c0)=20, (w1,c1)=40.
        assert_eq!(vals::<i32>(&cl), [10, 30, 20, 40]);
    }

    #[test]
    fn resize_and_empty() {
        let a = TensorBuf::from_slice(&[2], &[1.0f32, 2.0]).unwrap();
        let b = TensorBuf::from_slice(&[3, 1], &[1.0f32, 2.0, 3.0]).unwrap();
        let mut out =
            TensorBuf::with_layout(ScalarType::Float, &[4, 4], &[0, 1], ShapeDynamism::Bound)
                .unwrap();
        binary::<f32, f32, AllDtypes>(&a, &b, &mut out, ScalarType::Float, |x, y| x - y).unwrap();
        assert_eq!(out.sizes(), &[3, 2]);
        assert_eq!(vals::<f32>(&out), [0., 1., -1., 0., -2., -1.]);
        let mut wrong = TensorBuf::zeros(ScalarType::Float, &[3, 3]).unwrap();
        assert!(
            binary::<f32, f32, AllDtypes>(&a, &b, &mut wrong, ScalarType::Float, |x, y| x - y)
                .is_err()
        );
        let e = TensorBuf::zeros(ScalarType::Float, &[0, 2]).unwrap();
        let mut eo = TensorBuf::zeros(ScalarType::Float, &[0, 2]).unwrap();
        binary::<f32, f32, AllDtypes>(&e, &a, &mut eo, ScalarType::Float, |x, y| x + y).unwrap();
    }

    #[test]
    fn ternary_where_with_bool_condition() {
        let c = TensorBuf::from_slice(&[3], &[Bool(1), Bool(0), Bool(1)]).unwrap();
        let x = TensorBuf::from_slice(&[3], &[1.0f32, 2., 3.]).unwrap();
        let y = TensorBuf::from_slice(&[], &[-1.0f32]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
        ternary::<f32, f32, AllDtypes>(&c, &x, &y, &mut out, ScalarType::Float, |c, x, y| {
            if c != 0.0 {
                x
            } else {
                y
            }
        })
        .unwrap();
        assert_eq!(vals::<f32>(&out), [1., -1., 3.]);
    }

    /// A deterministic xorshift generator for the randomized layout test.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Element at logical index `idx` (right-aligned broadcasting against `idx`'s rank).
    fn logical_f64(t: &Tensor, idx: &[usize]) -> f64 {
        let lead = idx.len() - t.dim();
        let off: usize = (0..t.dim())
            .map(|d| {
                if t.size(d) == 1 {
                    0
                } else {
                    idx[lead + d] * t.strides()[d]
                }
            })
            .sum();
        match t.dtype() {
            ScalarType::Int => t.data::<i32>().unwrap()[off] as f64,
            ScalarType::Char => t.data::<i8>().unwrap()[off] as f64,
            ScalarType::Float => t.data::<f32>().unwrap()[off] as f64,
            _ => t.data::<f64>().unwrap()[off],
        }
    }

    fn random_tensor(rng: &mut Rng, shape: &[usize], dtype: ScalarType) -> TensorBuf {
        // Broadcast some dims (size 1), maybe drop leading dims, random dim order.
        let drop = rng.next(shape.len() + 1).min(shape.len());
        let sizes: Vec<usize> = shape[drop..]
            .iter()
            .map(|&n| if rng.next(3) == 0 { 1 } else { n })
            .collect();
        let mut order: Vec<u8> = (0..sizes.len() as u8).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.next(i + 1));
        }
        let mut t = TensorBuf::with_layout(dtype, &sizes, &order, ShapeDynamism::Static).unwrap();
        let n = t.numel();
        let vals: Vec<i32> = (0..n).map(|_| rng.next(200) as i32 - 100).collect();
        match dtype {
            ScalarType::Int => t.data_mut::<i32>().unwrap().copy_from_slice(&vals),
            ScalarType::Char => {
                for (d, v) in t.data_mut::<i8>().unwrap().iter_mut().zip(&vals) {
                    *d = *v as i8;
                }
            }
            ScalarType::Float => {
                for (d, v) in t.data_mut::<f32>().unwrap().iter_mut().zip(&vals) {
                    *d = *v as f32 * 0.5;
                }
            }
            _ => {
                for (d, v) in t.data_mut::<f64>().unwrap().iter_mut().zip(&vals) {
                    *d = *v as f64 * 0.25;
                }
            }
        }
        t
    }

    #[test]
    fn random_layouts_match_a_logical_reference() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let dtypes = [
            ScalarType::Int,
            ScalarType::Char,
            ScalarType::Float,
            ScalarType::Double,
        ];
        for _ in 0..400 {
            let rank = rng.next(5);
            let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.next(4)).collect();
            let (da, db) = (dtypes[rng.next(4)], dtypes[rng.next(4)]);
            let a = random_tensor(&mut rng, &shape, da);
            let b = random_tensor(&mut rng, &shape, db);
            let common = crate::util::promote::result_type(&a, &b).unwrap();
            let bshape = broadcast_shapes(&[a.sizes(), b.sizes()]).unwrap();
            let bshape = bshape.as_slice();
            let mut order: Vec<u8> = (0..bshape.len() as u8).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.next(i + 1));
            }
            let mut out =
                TensorBuf::with_layout(ScalarType::Double, bshape, &order, ShapeDynamism::Static)
                    .unwrap();
            if common.is_floating() {
                binary::<f64, f64, AllDtypes>(&a, &b, &mut out, ScalarType::Double, |x, y| {
                    x * 3.0 - y
                })
                .unwrap();
            } else {
                binary::<i64, i64, AllDtypes>(&a, &b, &mut out, common, |x, y| x.mul(3).sub(y))
                    .unwrap();
            }
            // Visit every logical index of the broadcast shape.
            let n: usize = bshape.iter().product();
            for lin in 0..n {
                let mut idx = vec![0usize; bshape.len()];
                let mut r = lin;
                for d in (0..bshape.len()).rev() {
                    idx[d] = r % bshape[d];
                    r /= bshape[d];
                }
                let mut want = logical_f64(&a, &idx) * 3.0 - logical_f64(&b, &idx);
                if common == ScalarType::Char {
                    want = (want as i64 as i8) as f64;
                } else if common == ScalarType::Int {
                    want = (want as i64 as i32) as f64;
                }
                let got = logical_f64(&out, &idx);
                assert_eq!(got, want, "{:?} {:?} -> {:?} at {idx:?}", a, b, out);
            }
        }
    }

    #[test]
    fn integer_semantics() {
        assert_eq!(Compute::floor_div(-7i64, 2), -4);
        assert_eq!(Compute::trunc_div(-7i64, 2), -3);
        assert_eq!(Compute::remainder(-7i64, 3), 2);
        assert_eq!(Compute::remainder(7i64, -3), -2);
        assert_eq!(Compute::floor_div(i64::MIN, -1), i64::MIN);
        assert_eq!(Compute::power(3i64, 4), 81);
        assert_eq!(Compute::power(-1i64, -3), -1);
        assert_eq!(Compute::power(2i64, -1), 0);
        assert_eq!(Compute::absolute(i64::MIN), i64::MIN);
        assert_eq!(Compute::floor_div(-7.0f64, 2.0), -4.0);
        assert_eq!(Compute::remainder(-7.0f32, 3.0), 2.0);
        assert_eq!(Compute::remainder(5.0f32, -3.0), -1.0);
        assert!(Compute::max_nan(f32::NAN, 1.0).is_nan());
        assert!(Compute::min_nan(1.0, f64::NAN).is_nan());
        assert_eq!(Compute::sign(f32::NAN), 0.0);
        assert_eq!(Compute::floor_div(1.0f32, 0.0), f32::INFINITY);
    }
}
