//! Reductions over a list of dims: dim normalization, reduced shapes, and strided index
//! spaces that visit kept and reduced positions of any dim order in logical order.
//!
//! A reduction splits the input's dims into *kept* dims (one output element per position)
//! and *reduced* dims (the positions folded into that element). [`split`] turns a tensor
//! and a dim mask into two [`Space`]s carrying the element strides of every operand (the
//! input, reduced-shape outputs such as `sum`'s, and same-shape outputs such as
//! `softmax`'s), so kernels never assume a contiguous layout. Logically adjacent dims whose
//! strides nest in every operand are merged, so the common cases (a contiguous trailing
//! block, NCHW spatial dims) become one strided run.
//!
//! Unlike `layout::Walk` (which orders dims by memory for copies), both spaces here are
//! visited in logical row-major order: the `k`-th reduced position visited
//! is the `k`-th element of the reduced dims in row-major order, which is what `argmax`
//! needs for its index and for first-occurrence tie-breaking.

use et_runtime::{DtypeSelection, Error, KernelError, KernelResult, ScalarType, Tensor, MAX_DIM};

use super::layout::{dims_mask, normalize_dim};
use crate::util::convert::{gather_fn, storer, GatherFn, Storer, Val};
use crate::util::element::Num;

/// A set of dims as a bit mask (bit `d` set means dim `d`).
pub type DimMask = u32;

/// The mask of `dims` for a tensor of rank `ndim`. `None` or an empty list means every
/// dim (PyTorch's `dim=[]` for `sum`/`mean` reduces everything). Repeated dims are an
/// error. For a 0-dim tensor the mask is empty: the reduction covers its single element.
pub fn dim_mask(dims: Option<&[i64]>, ndim: usize) -> KernelResult<DimMask> {
    let all = all_dims(ndim);
    match dims {
        None | Some([]) => Ok(all),
        Some(d) => Ok(dims_mask(d, ndim)? & all),
    }
}

/// The mask of one optional dim (`None`: every dim), as `argmax`/`any.dim` take it.
pub fn dim_mask_one(dim: Option<i64>, ndim: usize) -> KernelResult<DimMask> {
    match dim {
        None => Ok(all_dims(ndim)),
        Some(d) => Ok((1 << normalize_dim(d, ndim)?) & all_dims(ndim)),
    }
}

/// Every dim of a rank-`ndim` tensor.
pub fn all_dims(ndim: usize) -> DimMask {
    if ndim >= 32 {
        DimMask::MAX
    } else {
        (1 << ndim) - 1
    }
}

/// True if dim `d` is in `mask`.
#[inline]
pub fn has_dim(mask: DimMask, d: usize) -> bool {
    d < 32 && mask & (1 << d) != 0
}

/// The output shape of a reduction of `sizes` over `mask`, written into `out`; returns
/// its rank. With `keepdim`, reduced dims stay as size 1.
pub fn reduced_sizes(
    sizes: &[usize],
    mask: DimMask,
    keepdim: bool,
    out: &mut [usize; MAX_DIM],
) -> usize {
    let mut n = 0;
    for (d, &s) in sizes.iter().enumerate() {
        if has_dim(mask, d) {
            if keepdim {
                out[n] = 1;
                n += 1;
            }
        } else {
            out[n] = s;
            n += 1;
        }
    }
    n
}

/// Resizes `out` to the reduction of `input` over `mask` (fails if a static out has
/// another shape).
pub fn resize_reduced(
    input: &Tensor,
    mask: DimMask,
    keepdim: bool,
    out: &mut Tensor,
) -> KernelResult {
    let mut sizes = [0usize; MAX_DIM];
    let n = reduced_sizes(input.sizes(), mask, keepdim, &mut sizes);
    if out.dim() != n {
        return Err(KernelError::invalid(
            "out has the wrong rank for this reduction",
        ));
    }
    out.resize(&sizes[..n])
}

/// The strides of a reduced-shape tensor `out`, expressed per dim of the input (rank
/// `ndim`): reduced dims get stride 0, kept dims the stride of the matching out dim.
/// Whether `out` kept the reduced dims is read from its rank.
pub fn strides_over_input(out: &Tensor, mask: DimMask, ndim: usize) -> [usize; MAX_DIM] {
    let mut s = [0usize; MAX_DIM];
    let os = out.strides();
    let keepdim = out.dim() == ndim;
    let mut k = 0;
    for (d, slot) in s.iter_mut().enumerate().take(ndim) {
        if has_dim(mask, d) {
            if keepdim {
                k += 1;
            }
        } else {
            *slot = os.get(k).copied().unwrap_or(0);
            k += 1;
        }
    }
    s
}

/// An index space of up to [`MAX_DIM`] dims with element strides for `N` operands.
#[derive(Clone, Copy, Debug)]
pub struct Space<const N: usize> {
    ndim: usize,
    sizes: [usize; MAX_DIM],
    strides: [[usize; MAX_DIM]; N],
}

impl<const N: usize> Space<N> {
    /// The space of `sizes` (logical order), operand `k` having `strides[k][d]` per dim.
    /// Size-1 dims are dropped and nested dims merged.
    pub fn new(sizes: &[usize], strides: [&[usize]; N]) -> Self {
        let mut sp = Space {
            ndim: 0,
            sizes: [0; MAX_DIM],
            strides: [[0; MAX_DIM]; N],
        };
        for (d, &size) in sizes.iter().enumerate().take(MAX_DIM) {
            sp.push(
                size,
                core::array::from_fn(|k| strides[k].get(d).copied().unwrap_or(0)),
            );
        }
        sp
    }

    fn push(&mut self, size: usize, strides: [usize; N]) {
        if size == 1 {
            return;
        }
        if size == 0 {
            // An empty dim empties the space; keep it alone so numel() is 0.
            self.ndim = 1;
            self.sizes[0] = 0;
            return;
        }
        if self.ndim == 1 && self.sizes[0] == 0 {
            return;
        }
        if self.ndim > 0 {
            let last = self.ndim - 1;
            // Merge with the previous (outer) dim when, in every operand, stepping the
            // outer dim once equals stepping this dim `size` times.
            if (0..N).all(|k| self.strides[k][last] == strides[k].wrapping_mul(size)) {
                self.sizes[last] *= size;
                for (k, &s) in strides.iter().enumerate() {
                    self.strides[k][last] = s;
                }
                return;
            }
        }
        self.sizes[self.ndim] = size;
        for (k, &s) in strides.iter().enumerate() {
            self.strides[k][self.ndim] = s;
        }
        self.ndim += 1;
    }

    /// The number of positions.
    pub fn numel(&self) -> usize {
        self.sizes[..self.ndim].iter().product()
    }

    /// The length of the space when it is one run with unit steps in every operand (a
    /// contiguous lane), else `None`.
    pub fn unit_run(&self) -> Option<usize> {
        let unit = self.ndim == 1 && (0..N).all(|k| self.strides[k][0] == 1);
        unit.then_some(self.sizes[0])
    }

    /// The number of dims left after merging.
    #[cfg(test)]
    pub fn ndim(&self) -> usize {
        self.ndim
    }

    /// Calls `f(offsets, len, steps)` for each innermost run, in logical order: the run's
    /// positions are `offsets[k] + i * steps[k]` for `i in 0..len`. `base` is added to
    /// every offset. A 0-dim space is one run of length 1.
    #[inline]
    pub fn for_each_run(&self, base: [usize; N], mut f: impl FnMut([usize; N], usize, [usize; N])) {
        if self.ndim == 0 {
            f(base, 1, [0; N]);
            return;
        }
        let inner = self.ndim - 1;
        let len = self.sizes[inner];
        if len == 0 {
            return;
        }
        let steps: [usize; N] = core::array::from_fn(|k| self.strides[k][inner]);
        let mut idx = [0usize; MAX_DIM];
        let mut off = base;
        loop {
            f(off, len, steps);
            // Odometer over the outer dims, updating offsets incrementally.
            let mut d = inner;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                idx[d] += 1;
                for (k, o) in off.iter_mut().enumerate() {
                    *o = o.wrapping_add(self.strides[k][d]);
                }
                if idx[d] < self.sizes[d] {
                    break;
                }
                for (k, o) in off.iter_mut().enumerate() {
                    *o = o.wrapping_sub(self.strides[k][d].wrapping_mul(self.sizes[d]));
                }
                idx[d] = 0;
            }
        }
    }

    /// Calls `f(offsets)` for every position, in logical order.
    #[inline]
    pub fn for_each(&self, base: [usize; N], mut f: impl FnMut([usize; N])) {
        self.for_each_run(base, |start, len, steps| {
            let mut o = start;
            for _ in 0..len {
                f(o);
                for k in 0..N {
                    o[k] = o[k].wrapping_add(steps[k]);
                }
            }
        });
    }
}

/// The error of a dtype the operator does not compute in (what `et_switch!` returns for
/// a dtype outside its list), for kernels that read every dtype through [`Gathered`].
pub fn unsupported_dtype() -> KernelError {
    KernelError::new(Error::InvalidType, "unsupported dtype for this operator")
}

/// True for selections of at most four dtypes (as the elementwise `fast_set`): there a
/// loop per storage dtype costs less than the gather functions [`Gathered`] links, so
/// `mean` (the one reduction in common models) keeps its typed loop.
pub const fn narrow(sel: et_runtime::DtypeSet) -> bool {
    sel.0.count_ones() <= 4
}

/// Elements per chunk of [`Gathered`], which lives on the stack.
const CHUNK: usize = 64;

/// A tensor's elements read as the compute type `C` in chunks of up to [`CHUNK`]. The
/// storage dtype lives only in the gather function, picked once per call (the same
/// functions the elementwise drivers use), so a reduction is one loop per compute type
/// instead of one per storage dtype: `sum`, `mean`, `any`, `amax`, `argmax`, `var` and
/// their kind each had nine (or eight, or three) copies of their loops, about 45 KB in a
/// build of every dtype. Chunks keep the cost of the indirect call off the per-element
/// work: a contiguous run is read 64 elements per call, and every conversion is the
/// exact cast the typed loops made (`x.to_f64()`, `x.to_i64()`).
#[derive(Clone, Copy)]
pub struct Gathered<'a, C> {
    t: &'a Tensor,
    gather: GatherFn<C>,
}

impl<'a, C: Num> Gathered<'a, C> {
    /// The reader of `t` (only selected dtypes exist).
    pub fn new<Sel: DtypeSelection>(t: &'a Tensor) -> KernelResult<Self> {
        Ok(Gathered {
            t,
            gather: gather_fn::<C, Sel>(t.dtype())?,
        })
    }

    /// The tensor read.
    pub fn tensor(&self) -> &'a Tensor {
        self.t
    }

    /// Calls `f(k, chunk)` for the elements `start + i * step`, `i in 0..len`, in order;
    /// `k` is the position of the chunk's first element in the run.
    #[inline]
    pub fn run(
        &self,
        start: usize,
        len: usize,
        step: usize,
        mut f: impl FnMut(usize, &[C]),
    ) -> KernelResult {
        let mut buf = [C::ZERO; CHUNK];
        let mut done = 0;
        while done < len {
            let n = (len - done).min(CHUNK);
            let chunk = &mut buf[..n];
            (self.gather)(self.t, start + done * step, step, chunk)?;
            f(done, chunk);
            done += n;
        }
        Ok(())
    }

    /// Calls `f(x)` for every element of `space` (operand 0 is this tensor) from `base`,
    /// in logical order.
    #[inline]
    pub fn each<const N: usize>(
        &self,
        space: &Space<N>,
        base: [usize; N],
        mut f: impl FnMut(C),
    ) -> KernelResult {
        let mut result = Ok(());
        space.for_each_run(base, |o, len, steps| {
            if result.is_ok() {
                result = self.run(o[0], len, steps[0], |_, c| c.iter().for_each(|&x| f(x)));
            }
        });
        result
    }
}

impl Gathered<'_, f64> {
    /// The mean of the elements of `space` from `base` and the sum of their squared
    /// deviations from it, in two passes (the variance of `var`, `var_mean` and the
    /// training-mode batch norms).
    pub fn mean_and_squares<const N: usize>(
        &self,
        space: &Space<N>,
        base: [usize; N],
    ) -> KernelResult<(f64, f64)> {
        let mut sum = 0.0;
        self.each(space, base, |v| sum += v)?;
        let mean = sum / space.numel() as f64;
        let mut squares = 0.0;
        self.each(space, base, |v| {
            let d = v - mean;
            squares += d * d;
        })?;
        Ok((mean, squares))
    }
}

/// Splits an index space of `sizes` into the kept dims (`outer`) and the dims in `mask`
/// (`inner`), each carrying the strides of `N` operands (per input dim; a reduced-shape
/// operand has stride 0 on reduced dims, see [`strides_over_input`]).
pub fn split<const N: usize>(
    sizes: &[usize],
    strides: [&[usize]; N],
    mask: DimMask,
) -> (Space<N>, Space<N>) {
    let mut kept_sizes = [1usize; MAX_DIM];
    let mut red_sizes = [1usize; MAX_DIM];
    for (d, &s) in sizes.iter().enumerate().take(MAX_DIM) {
        if has_dim(mask, d) {
            red_sizes[d] = s;
        } else {
            kept_sizes[d] = s;
        }
    }
    let n = sizes.len().min(MAX_DIM);
    // Size-1 dims are dropped by `Space::new`, so setting the other side's dims to 1
    // removes them from each space while keeping logical order.
    (
        Space::new(&kept_sizes[..n], strides),
        Space::new(&red_sizes[..n], strides),
    )
}

/// The input and reduced-output spaces of a reduction of `input` into `out` over `mask`:
/// operand 0 is the input, operand 1 the output.
pub fn reduce_spaces(input: &Tensor, mask: DimMask, out: &Tensor) -> (Space<2>, Space<2>) {
    let os = strides_over_input(out, mask, input.dim());
    split(input.sizes(), [input.strides(), &os[..input.dim()]], mask)
}

/// The [`Storer`] for `dtype`, for kernels whose output dtype is independent of the
/// input's (sum to int64, any to bool): one switch over the output dtype instead of one
/// instantiation per (input, output) pair. `Sel` is the kernel's selected dtypes.
pub fn val_storer<Sel: DtypeSelection>(dtype: ScalarType) -> KernelResult<Storer> {
    et_runtime::et_switch!(in Sel::SET, dtype, @all, T => Ok(storer::<T>()))
}

/// Writes `v` as element `i` of a tensor's bytes through `st` (nothing past the end,
/// which the reduction spaces never produce).
#[inline]
pub fn store_at(bytes: &mut [u8], st: &Storer, i: usize, v: Val) {
    if let Some(b) = i.checked_mul(st.size).and_then(|o| bytes.get_mut(o..)) {
        (st.store)(b, v);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{ScalarType, ShapeDynamism, TensorBuf};
    use std::vec::Vec;

    #[test]
    fn dims_normalize() {
        assert_eq!(dim_mask(Some(&[]), 3).unwrap(), 0b111);
        assert_eq!(dim_mask(None, 2).unwrap(), 0b11);
        assert_eq!(dim_mask(Some(&[-1, 0]), 3).unwrap(), 0b101);
        assert!(dim_mask(Some(&[1, -2]), 3).is_err());
        assert_eq!(dim_mask(Some(&[0]), 0).unwrap(), 0);
        assert_eq!(dim_mask_one(Some(-1), 2).unwrap(), 0b10);
    }

    #[test]
    fn shapes() {
        let mut s = [0; MAX_DIM];
        let n = reduced_sizes(&[2, 3, 4], 0b101, true, &mut s);
        assert_eq!(&s[..n], &[1, 3, 1]);
        let n = reduced_sizes(&[2, 3, 4], 0b101, false, &mut s);
        assert_eq!(&s[..n], &[3]);
    }

    #[test]
    fn spaces_merge_and_order() {
        // NCHW mean over H, W: kept (N, C) merge into one run; reduced (H, W) too.
        let x = TensorBuf::zeros(ScalarType::Float, &[2, 3, 4, 5]).unwrap();
        let o = TensorBuf::zeros(ScalarType::Float, &[2, 3, 1, 1]).unwrap();
        let (outer, inner) = reduce_spaces(&x, 0b1100, &o);
        assert_eq!((outer.ndim(), outer.numel()), (1, 6));
        assert_eq!((inner.ndim(), inner.numel()), (1, 20));
        let mut seen = Vec::new();
        outer.for_each([0, 0], |o| seen.push(o));
        assert_eq!(seen[1], [20, 1]);

        // Channels-last input, reduce over C: logical order of kept dims is (N, H, W).
        let x = TensorBuf::with_layout(
            ScalarType::Float,
            &[1, 3, 2, 2],
            &[0, 2, 3, 1],
            ShapeDynamism::Static,
        )
        .unwrap();
        let o = TensorBuf::zeros(ScalarType::Float, &[1, 2, 2]).unwrap();
        let (outer, inner) = reduce_spaces(&x, 0b10, &o);
        let mut offs = Vec::new();
        outer.for_each([0, 0], |o| offs.push(o));
        assert_eq!(offs, [[0, 0], [3, 1], [6, 2], [9, 3]]);
        let mut red = Vec::new();
        inner.for_each([0, 0], |o| red.push(o[0]));
        assert_eq!(red, [0, 1, 2]);
    }

    #[test]
    fn transposed_order_is_logical() {
        // A 2x3 tensor stored column-major, flattened: logical order 0..6.
        let x = TensorBuf::with_layout(ScalarType::Float, &[2, 3], &[1, 0], ShapeDynamism::Static)
            .unwrap();
        let (outer, inner) = split(x.sizes(), [x.strides()], 0b11);
        assert_eq!(outer.numel(), 1);
        let mut offs = Vec::new();
        inner.for_each([0], |o| offs.push(o[0]));
        assert_eq!(offs, [0, 2, 4, 1, 3, 5]);
    }

    #[test]
    fn empty_and_scalar() {
        let x = TensorBuf::zeros(ScalarType::Float, &[2, 0, 3]).unwrap();
        let (outer, inner) = split(x.sizes(), [x.strides()], 0b010);
        assert_eq!(outer.numel(), 6);
        assert_eq!(inner.numel(), 0);
        let mut n = 0;
        inner.for_each([0], |_| n += 1);
        assert_eq!(n, 0);
        let s = TensorBuf::zeros(ScalarType::Float, &[]).unwrap();
        let (outer, inner) = split(s.sizes(), [s.strides()], 0);
        let mut n = 0;
        outer.for_each([0], |_| inner.for_each([0], |_| n += 1));
        assert_eq!(n, 1);
    }
}
