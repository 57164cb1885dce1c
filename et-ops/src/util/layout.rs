//! Data movement, written once: dim normalization, an N-d walker over sizes and several
//! stride sets, byte-width-generic strided copies, and dtype conversion through a wide
//! intermediate.
//!
//! Pure data movement does not need the element type, only its width: copies run on
//! `[u8; W]` elements for `W` in 1, 2, 4, 8, so permute, cat, slice and friends compile
//! to four small loops however many dtypes a build selects. Conversions go through
//! [`Val`] with one load function per source dtype and one store function per destination
//! dtype (2n instantiations, not n^2).
//!
//! Offsets and strides are in elements. Strides are signed (a flipped view walks
//! backwards) and may be zero (a broadcast view repeats an element).

use et_runtime::{KernelError, KernelResult, Scalar, ScalarType, Tensor, MAX_DIM};

use crate::util::element::{Num, RawElement};

/// The most dims a [`Walk`] takes: twice the tensor rank limit, so `repeat` can split
/// every output dim into (repeat, size).
pub const MAX_WALK_DIM: usize = 2 * MAX_DIM;

/// Wraps a possibly negative `dim` into `0..ndim`.
///
/// As in PyTorch, a 0-dim tensor accepts dims `-1` and `0` (both mean "the tensor
/// itself") and yields 0.
pub fn normalize_dim(dim: i64, ndim: usize) -> KernelResult<usize> {
    let n = ndim.max(1) as i64;
    let d = if dim < 0 { dim + n } else { dim };
    if (0..n).contains(&d) {
        Ok(d as usize)
    } else {
        Err(KernelError::invalid("dim out of range"))
    }
}

/// Wraps an insertion position (as `unsqueeze` takes) into `0..=ndim`.
pub fn normalize_insert_dim(dim: i64, ndim: usize) -> KernelResult<usize> {
    normalize_dim(dim, ndim + 1)
}

/// Normalizes every dim of `dims` against `ndim` into a bit mask of dims, failing on
/// duplicates (`flip`, `squeeze` and reductions all reject them).
pub fn dims_mask(dims: &[i64], ndim: usize) -> KernelResult<u32> {
    let mut mask = 0u32;
    for &d in dims {
        let d = normalize_dim(d, ndim)?;
        if mask & (1 << d) != 0 {
            return Err(KernelError::invalid("dim appears more than once"));
        }
        mask |= 1 << d;
    }
    Ok(mask)
}

/// A tensor's element strides as signed numbers (entries past `dim()` are zero).
pub fn istrides(t: &Tensor) -> KernelResult<[isize; MAX_DIM]> {
    let mut out = [0isize; MAX_DIM];
    for (o, &s) in out.iter_mut().zip(t.strides()) {
        *o = isize::try_from(s).map_err(|_| KernelError::invalid("tensor stride overflows"))?;
    }
    Ok(out)
}

/// Converts signed sizes (as operators receive them) to `usize`, failing on negatives.
pub fn sizes_from_i64(src: &[i64], dst: &mut [usize; MAX_DIM]) -> KernelResult<usize> {
    if src.len() > MAX_DIM {
        return Err(KernelError::invalid("too many dims"));
    }
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = usize::try_from(s).map_err(|_| KernelError::invalid("negative size"))?;
    }
    Ok(src.len())
}

/// Fails unless two tensors have the same dtype.
pub fn check_same_dtype(a: &Tensor, b: &Tensor) -> KernelResult<()> {
    if a.dtype() == b.dtype() {
        Ok(())
    } else {
        Err(KernelError::invalid("tensors must have the same dtype"))
    }
}

/// An N-d walk over `sizes` that visits, for every logical index, one offset into each of
/// `K` operands (operand 0 is normally the output).
///
/// Construction drops size-1 dims, orders dims by operand 0's stride (outermost first,
/// so writes go sequentially through memory whatever the output's dim order) and merges
/// dims that are contiguous in every operand, so a plain copy collapses to one dim.
/// Offsets are relative to per-operand bases given when walking, and every walk checks
/// once, up front, that all offsets it will produce are inside the operands.
#[derive(Clone, Debug)]
pub struct Walk<const K: usize> {
    ndim: usize,
    numel: usize,
    sizes: [usize; MAX_WALK_DIM],
    strides: [[isize; K]; MAX_WALK_DIM],
    /// Per operand: the lowest and highest offset relative to the base.
    lo: [isize; K],
    hi: [isize; K],
}

fn overflow() -> KernelError {
    KernelError::invalid("tensor offsets overflow")
}

impl<const K: usize> Walk<K> {
    /// A walk over `sizes` with one stride set per operand (each as long as `sizes`).
    pub fn new(sizes: &[usize], strides: [&[isize]; K]) -> KernelResult<Self> {
        let n = sizes.len();
        if n > MAX_WALK_DIM || strides.iter().any(|s| s.len() != n) {
            return Err(KernelError::invalid("walk rank mismatch"));
        }
        let numel = et_runtime::checked_numel(sizes).ok_or(overflow())?;
        let mut w = Walk {
            ndim: 0,
            numel,
            sizes: [1; MAX_WALK_DIM],
            strides: [[0; K]; MAX_WALK_DIM],
            lo: [0; K],
            hi: [0; K],
        };
        if numel == 0 {
            return Ok(w);
        }
        // Keep dims with more than one element, in the given (logical) order.
        for (d, &size) in sizes.iter().enumerate() {
            if size > 1 {
                w.sizes[w.ndim] = size;
                w.strides[w.ndim] = core::array::from_fn(|k| strides[k][d]);
                w.ndim += 1;
            }
        }
        // Stable insertion sort by operand 0's |stride|, largest first: logical order
        // among equal strides (broadcast dims) is kept.
        for i in 1..w.ndim {
            let mut j = i;
            while j > 0 && w.strides[j - 1][0].unsigned_abs() < w.strides[j][0].unsigned_abs() {
                w.sizes.swap(j - 1, j);
                w.strides.swap(j - 1, j);
                j -= 1;
            }
        }
        // Merge an outer dim into the next inner one when every operand steps over the
        // inner dim exactly once per outer step.
        let mut m = 0;
        for d in 0..w.ndim {
            if m > 0 {
                // Dim `m - 1` is the previous (outer) kept dim, `d` the inner one.
                let (os, is) = (w.strides[m - 1], w.strides[d]);
                let size_d = w.sizes[d] as isize;
                if (0..K).all(|k| Some(os[k]) == is[k].checked_mul(size_d)) {
                    w.sizes[m - 1] *= w.sizes[d];
                    w.strides[m - 1] = is;
                    continue;
                }
            }
            w.sizes[m] = w.sizes[d];
            w.strides[m] = w.strides[d];
            m += 1;
        }
        w.ndim = m;
        for d in 0..w.ndim {
            let span = (w.sizes[d] - 1) as isize;
            for k in 0..K {
                let e = w.strides[d][k].checked_mul(span).ok_or(overflow())?;
                if e < 0 {
                    w.lo[k] = w.lo[k].checked_add(e).ok_or(overflow())?;
                } else {
                    w.hi[k] = w.hi[k].checked_add(e).ok_or(overflow())?;
                }
            }
        }
        Ok(w)
    }

    /// The number of logical indices visited.
    #[inline]
    pub fn numel(&self) -> usize {
        self.numel
    }

    /// Fails unless every offset from `bases` stays below the matching `lens` (in
    /// elements).
    pub fn check(&self, bases: [usize; K], lens: [usize; K]) -> KernelResult<()> {
        if self.numel == 0 {
            return Ok(());
        }
        for k in 0..K {
            let b = isize::try_from(bases[k]).map_err(|_| overflow())?;
            let lo = b.checked_add(self.lo[k]).ok_or(overflow())?;
            let hi = b.checked_add(self.hi[k]).ok_or(overflow())?;
            if lo < 0 || hi as usize >= lens[k] {
                return Err(KernelError::invalid("index out of bounds for tensor data"));
            }
        }
        Ok(())
    }

    /// Calls `f` with the starting offsets of every innermost run, the run length and
    /// the innermost strides, after checking bounds. Offsets inside a run are
    /// `start + i * stride` for `i < len`, all checked to be in range.
    pub fn for_each_run(
        &self,
        bases: [usize; K],
        lens: [usize; K],
        mut f: impl FnMut([usize; K], usize, [isize; K]),
    ) -> KernelResult<()> {
        self.check(bases, lens)?;
        if self.numel == 0 {
            return Ok(());
        }
        // `check` proved every reachable offset is in `0..len`, so the running signed
        // offsets below stay non-negative and the casts are exact.
        let mut off = bases.map(|b| b as isize);
        if self.ndim == 0 {
            f(bases, 1, [0; K]);
            return Ok(());
        }
        let n = self.ndim;
        let run = self.sizes[n - 1];
        let inner = self.strides[n - 1];
        let mut idx = [0usize; MAX_WALK_DIM];
        loop {
            f(off.map(|o| o as usize), run, inner);
            // Advance the outer dims like an odometer.
            let mut d = n - 1;
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                idx[d] += 1;
                for (o, s) in off.iter_mut().zip(self.strides[d]) {
                    *o += s;
                }
                if idx[d] < self.sizes[d] {
                    break;
                }
                for (o, s) in off.iter_mut().zip(self.strides[d]) {
                    *o -= s * self.sizes[d] as isize;
                }
                idx[d] = 0;
            }
        }
    }

    /// Calls `f` with the offsets of every logical index (in the walk's order), after
    /// checking bounds.
    #[inline]
    pub fn for_each(
        &self,
        bases: [usize; K],
        lens: [usize; K],
        mut f: impl FnMut([usize; K]),
    ) -> KernelResult<()> {
        self.for_each_run(bases, lens, |start, len, step| {
            let mut o = start.map(|s| s as isize);
            for _ in 0..len {
                f(o.map(|x| x as usize));
                for (x, s) in o.iter_mut().zip(step) {
                    *x += s;
                }
            }
        })
    }
}

impl Walk<2> {
    /// A two-operand walk: `dst` strides then `src` strides.
    pub fn copy(sizes: &[usize], dst: &[isize], src: &[isize]) -> KernelResult<Self> {
        Walk::new(sizes, [dst, src])
    }

    /// Copies elements of `elem` bytes from `src` to `dst` along the walk (operand 0 is
    /// `dst`), starting at element offsets `dst_base` and `src_base`.
    pub fn move_bytes(
        &self,
        elem: usize,
        dst: &mut [u8],
        dst_base: usize,
        src: &[u8],
        src_base: usize,
    ) -> KernelResult<()> {
        match elem {
            1 => self.move_w::<1>(dst, dst_base, src, src_base),
            2 => self.move_w::<2>(dst, dst_base, src, src_base),
            4 => self.move_w::<4>(dst, dst_base, src, src_base),
            8 => self.move_w::<8>(dst, dst_base, src, src_base),
            _ => Err(KernelError::unsupported(
                "element size not supported for copies",
            )),
        }
    }

    fn move_w<const W: usize>(
        &self,
        dst: &mut [u8],
        dst_base: usize,
        src: &[u8],
        src_base: usize,
    ) -> KernelResult<()> {
        let dst = dst.as_chunks_mut::<W>().0;
        let src = src.as_chunks::<W>().0;
        let lens = [dst.len(), src.len()];
        if self.ndim >= 2 {
            let n = self.ndim;
            let (a, b) = (self.strides[n - 2], self.strides[n - 1]);
            // A transpose of the two innermost dims (dst contiguous along the inner one,
            // src along the outer one): copy in square tiles so both sides stay in cache.
            if b[0] == 1 && a[1] == 1 && self.sizes[n - 1] >= 8 && self.sizes[n - 2] >= 8 {
                return self.transpose_tiles(dst, dst_base, src, src_base);
            }
        }
        self.for_each_run([dst_base, src_base], lens, |[d, s], len, [dstep, sstep]| {
            if dstep == 1 && sstep == 1 {
                dst[d..d + len].copy_from_slice(&src[s..s + len]);
            } else {
                let (mut d, mut s) = (d as isize, s as isize);
                for _ in 0..len {
                    dst[d as usize] = src[s as usize];
                    d += dstep;
                    s += sstep;
                }
            }
        })
    }

    fn transpose_tiles<const W: usize>(
        &self,
        dst: &mut [[u8; W]],
        dst_base: usize,
        src: &[[u8; W]],
        src_base: usize,
    ) -> KernelResult<()> {
        const TILE: usize = 16;
        let n = self.ndim;
        let (rows, cols) = (self.sizes[n - 2], self.sizes[n - 1]);
        // `dst` steps 1 along cols and `drow` along rows; `src` steps 1 along rows and
        // `scol` along cols.
        let (drow, scol) = (self.strides[n - 2][0], self.strides[n - 1][1]);
        // The outer dims (all but the last two), walked with the same bounds check.
        let mut outer = self.clone();
        outer.ndim = n - 2;
        outer.sizes[n - 2] = 1;
        outer.sizes[n - 1] = 1;
        outer.numel = self.numel / (rows * cols);
        // The outer walk keeps the full walk's extents, so its bounds check covers every
        // element of every (rows x cols) plane.
        let lens = [dst.len(), src.len()];
        outer.for_each([dst_base, src_base], lens, |[db, sb]| {
            let (db, sb) = (db as isize, sb as isize);
            // Each tile goes through a local buffer so that both tensors are touched in
            // contiguous runs (src columns, dst rows), one bounds check per run.
            let mut tile = [[0u8; W]; TILE * TILE];
            let mut r0 = 0;
            while r0 < rows {
                let h = (rows - r0).min(TILE);
                let mut c0 = 0;
                while c0 < cols {
                    let w = (cols - c0).min(TILE);
                    for c in 0..w {
                        let s = (sb + r0 as isize + (c0 + c) as isize * scol) as usize;
                        for (r, v) in src[s..s + h].iter().enumerate() {
                            tile[r * TILE + c] = *v;
                        }
                    }
                    for r in 0..h {
                        let d = (db + (r0 + r) as isize * drow + c0 as isize) as usize;
                        dst[d..d + w].copy_from_slice(&tile[r * TILE..r * TILE + w]);
                    }
                    c0 += w;
                }
                r0 += h;
            }
        })
    }

    /// Copies along the walk converting each element: `src` holds `from`'s dtype and
    /// `dst` `to`'s.
    pub fn convert(
        &self,
        dst: &mut [u8],
        dst_base: usize,
        to: Storer,
        src: &[u8],
        src_base: usize,
        from: Loader,
    ) -> KernelResult<()> {
        let (dw, sw) = (to.size, from.size);
        if dw == 0 || sw == 0 {
            return Err(KernelError::invalid("zero-size element"));
        }
        let lens = [dst.len() / dw, src.len() / sw];
        self.for_each([dst_base, src_base], lens, |[d, s]| {
            let v = (from.load)(&src[s * sw..s * sw + sw]);
            (to.store)(&mut dst[d * dw..d * dw + dw], v);
        })
    }
}

/// Walks the logical (row-major) order of a tensor's elements, yielding memory offsets:
/// the tool for copies between different shapes (`view_copy` of a non-contiguous
/// tensor), where no single stride set describes both sides.
#[derive(Clone, Debug)]
pub struct LogicalOffsets {
    ndim: usize,
    sizes: [usize; MAX_DIM],
    strides: [usize; MAX_DIM],
    idx: [usize; MAX_DIM],
    off: usize,
    left: usize,
}

impl LogicalOffsets {
    /// Offsets of `t`'s elements in logical order.
    pub fn new(t: &Tensor) -> Self {
        let mut s = LogicalOffsets {
            ndim: t.dim(),
            sizes: [0; MAX_DIM],
            strides: [0; MAX_DIM],
            idx: [0; MAX_DIM],
            off: 0,
            left: t.numel(),
        };
        s.sizes[..t.dim()].copy_from_slice(t.sizes());
        s.strides[..t.dim()].copy_from_slice(t.strides());
        s
    }
}

impl Iterator for LogicalOffsets {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let cur = self.off;
        let mut d = self.ndim;
        while d > 0 {
            d -= 1;
            self.idx[d] += 1;
            self.off = self.off.wrapping_add(self.strides[d]);
            if self.idx[d] < self.sizes[d] {
                break;
            }
            self.off = self
                .off
                .wrapping_sub(self.strides[d].wrapping_mul(self.sizes[d]));
            self.idx[d] = 0;
        }
        Some(cur)
    }
}

/// Copies `src` into `dst` element by element in logical (row-major) order: both must
/// hold the same number of elements of the same width; shapes and dim orders may differ.
pub fn copy_logical(dst: &mut Tensor, src: &Tensor) -> KernelResult<()> {
    if dst.numel() != src.numel() {
        return Err(KernelError::invalid("element counts differ"));
    }
    let elem = src.dtype().element_size();
    if dst.dtype().element_size() != elem {
        return Err(KernelError::invalid("element sizes differ"));
    }
    if src.is_contiguous() && dst.is_contiguous() {
        dst.bytes_mut()?.copy_from_slice(src.bytes()?);
        return Ok(());
    }
    match elem {
        1 => copy_logical_w::<1>(dst, src),
        2 => copy_logical_w::<2>(dst, src),
        4 => copy_logical_w::<4>(dst, src),
        8 => copy_logical_w::<8>(dst, src),
        _ => Err(KernelError::unsupported(
            "element size not supported for copies",
        )),
    }
}

fn copy_logical_w<const W: usize>(dst: &mut Tensor, src: &Tensor) -> KernelResult<()> {
    let d_offs = LogicalOffsets::new(dst);
    let s_offs = LogicalOffsets::new(src);
    let s = src.bytes()?.as_chunks::<W>().0;
    let d = dst.bytes_mut()?.as_chunks_mut::<W>().0;
    // Offsets of a tensor's own elements are below its numel by construction of its
    // strides; `get` keeps a corrupt shape from reading out of bounds anyway.
    for (di, si) in d_offs.zip(s_offs) {
        match (d.get_mut(di), s.get(si)) {
            (Some(x), Some(y)) => *x = *y,
            _ => return Err(KernelError::invalid("index out of bounds for tensor data")),
        }
    }
    Ok(())
}

/// Copies `src` into `dst` (same sizes; dim orders may differ), converting the dtype
/// with `from`/`to` when they differ.
pub fn copy_same_shape(
    dst: &mut Tensor,
    src: &Tensor,
    from: Option<Loader>,
    to: Option<Storer>,
) -> KernelResult<()> {
    if dst.sizes() != src.sizes() {
        return Err(KernelError::invalid("tensor sizes differ"));
    }
    let sizes = src.sizes();
    let n = sizes.len();
    let (ds, ss) = (istrides(dst)?, istrides(src)?);
    let walk = Walk::copy(sizes, &ds[..n], &ss[..n])?;
    if dst.dtype() == src.dtype() {
        let elem = src.dtype().element_size();
        if dst.dim_order() == src.dim_order() {
            dst.bytes_mut()?.copy_from_slice(src.bytes()?);
            return Ok(());
        }
        let src_bytes = src.bytes()?;
        return walk.move_bytes(elem, dst.bytes_mut()?, 0, src_bytes, 0);
    }
    match (from, to) {
        (Some(from), Some(to)) => {
            let src_bytes = src.bytes()?;
            walk.convert(dst.bytes_mut()?, 0, to, src_bytes, 0, from)
        }
        _ => Err(KernelError::invalid("tensors must have the same dtype")),
    }
}

/// Resizes `out` to `sizes` and fills it, in its own dim order, from `src` read through
/// `strides` starting at element `offset`: the last step of every view-like copy
/// (permute, expand, slice, select, unsqueeze, ...). `out` must have `src`'s dtype.
pub fn copy_view(
    out: &mut Tensor,
    sizes: &[usize],
    src: &Tensor,
    strides: &[isize],
    offset: usize,
) -> KernelResult<()> {
    check_same_dtype(out, src)?;
    out.resize(sizes)?;
    let n = sizes.len();
    let os = istrides(out)?;
    let walk = Walk::copy(sizes, &os[..n], strides)?;
    let elem = src.dtype().element_size();
    let src_bytes = src.bytes()?;
    walk.move_bytes(elem, out.bytes_mut()?, 0, src_bytes, offset)
}

/// Fails unless `dim_order` (when given) is exactly `out`'s dim order: the dim-order ops
/// receive the target order both as an argument and as the out tensor's layout.
pub fn check_dim_order_arg(dim_order: Option<&[i64]>, out: &Tensor) -> KernelResult<()> {
    if let Some(order) = dim_order {
        let same = order.len() == out.dim()
            && order
                .iter()
                .zip(out.dim_order())
                .all(|(&a, &b)| a == b as i64);
        if !same {
            return Err(KernelError::invalid(
                "dim_order does not match the out tensor",
            ));
        }
    }
    Ok(())
}

/// Fills `dst` with copies of one element given as bytes.
pub fn fill_bytes(dst: &mut [u8], elem: &[u8]) -> KernelResult<()> {
    match elem.len() {
        1 => dst.fill(elem[0]),
        2 => fill_w::<2>(dst, elem),
        4 => fill_w::<4>(dst, elem),
        8 => fill_w::<8>(dst, elem),
        _ => {
            return Err(KernelError::unsupported(
                "element size not supported for fills",
            ))
        }
    }
    Ok(())
}

fn fill_w<const W: usize>(dst: &mut [u8], elem: &[u8]) {
    if let Some(e) = elem.first_chunk::<W>() {
        dst.as_chunks_mut::<W>().0.fill(*e);
    }
}

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

/// A read-only view of an integer index tensor (int64 or int32), in memory order.
#[derive(Clone, Copy, Debug)]
pub enum IndexData<'a> {
    /// int64 indices.
    Long(&'a [i64]),
    /// int32 indices.
    Int(&'a [i32]),
}

impl<'a> IndexData<'a> {
    /// The data of an int64 or int32 tensor.
    pub fn of(t: &'a Tensor) -> KernelResult<Self> {
        match t.dtype() {
            ScalarType::Long => Ok(IndexData::Long(t.data::<i64>()?)),
            ScalarType::Int => Ok(IndexData::Int(t.data::<i32>()?)),
            _ => Err(KernelError::invalid("index tensor must be int64 or int32")),
        }
    }

    /// The index at memory offset `i` (0 past the end; callers index within numel).
    #[inline]
    pub fn get(&self, i: usize) -> i64 {
        match self {
            IndexData::Long(d) => d.get(i).copied().unwrap_or(0),
            IndexData::Int(d) => d.get(i).map_or(0, |&x| x as i64),
        }
    }
}

/// Wraps a possibly negative index into `0..size`.
#[inline]
pub fn wrap_index(i: i64, size: usize) -> KernelResult<usize> {
    let s = size as i64;
    let j = if i < 0 { i + s } else { i };
    if (0..s).contains(&j) {
        Ok(j as usize)
    } else {
        Err(KernelError::invalid("index out of range"))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Bool, ShapeDynamism, TensorBuf};
    use std::vec::Vec;

    #[test]
    fn dims_wrap() {
        assert_eq!(normalize_dim(-1, 3), Ok(2));
        assert_eq!(normalize_dim(2, 3), Ok(2));
        assert!(normalize_dim(3, 3).is_err());
        assert!(normalize_dim(-4, 3).is_err());
        assert_eq!(normalize_dim(-1, 0), Ok(0));
        assert_eq!(normalize_dim(0, 0), Ok(0));
        assert!(normalize_dim(1, 0).is_err());
        assert_eq!(normalize_insert_dim(-1, 2), Ok(2));
        assert!(dims_mask(&[0, -2], 2).is_err());
        assert_eq!(dims_mask(&[0, -1], 3), Ok(0b101));
    }

    #[test]
    fn walk_coalesces_contiguous() {
        let w = Walk::copy(&[2, 3, 4], &[12, 4, 1], &[12, 4, 1]).unwrap();
        assert_eq!(w.ndim, 1);
        assert_eq!(w.sizes[0], 24);
    }

    #[test]
    fn walk_transpose_and_bounds() {
        // dst [3,2] contiguous <- src [2,3] transposed.
        let w = Walk::copy(&[3, 2], &[2, 1], &[1, 3]).unwrap();
        let mut seen = Vec::new();
        w.for_each([0, 0], [6, 6], |[d, s]| seen.push((d, s)))
            .unwrap();
        assert_eq!(seen, [(0, 0), (1, 3), (2, 1), (3, 4), (4, 2), (5, 5)]);
        assert!(w.check([0, 1], [6, 6]).is_err());
    }

    #[test]
    fn walk_negative_strides() {
        let w = Walk::copy(&[4], &[1], &[-1]).unwrap();
        let mut seen = Vec::new();
        w.for_each([0, 3], [4, 4], |[_, s]| seen.push(s)).unwrap();
        assert_eq!(seen, [3, 2, 1, 0]);
        assert!(w.check([0, 2], [4, 4]).is_err());
    }

    #[test]
    fn big_transpose_tiles() {
        let (r, c) = (37usize, 21usize);
        let src: Vec<u32> = (0..(r * c) as u32).collect();
        let src_b: Vec<u8> = src.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let mut dst_b = std::vec![0u8; src_b.len()];
        // dst [c, r] contiguous = transpose of src [r, c].
        let w = Walk::copy(&[c, r], &[r as isize, 1], &[1, c as isize]).unwrap();
        w.move_bytes(4, &mut dst_b, 0, &src_b, 0).unwrap();
        let dst: Vec<u32> = dst_b
            .chunks(4)
            .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        for i in 0..c {
            for j in 0..r {
                assert_eq!(dst[i * r + j], src[j * c + i]);
            }
        }
    }

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

    #[test]
    fn logical_copy_between_orders() {
        // src [2,3] channels-last-like order [1,0]: memory holds the transpose.
        let mut src =
            TensorBuf::with_layout(ScalarType::Int, &[2, 3], &[1, 0], ShapeDynamism::Static)
                .unwrap();
        src.data_mut::<i32>()
            .unwrap()
            .copy_from_slice(&[0, 3, 1, 4, 2, 5]);
        let mut dst = TensorBuf::zeros(ScalarType::Int, &[6]).unwrap();
        copy_logical(&mut dst, &src).unwrap();
        assert_eq!(dst.data::<i32>().unwrap(), &[0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn same_shape_convert() {
        let src = TensorBuf::from_slice(&[2, 2], &[1i64, -2, 3, 40000]).unwrap();
        let mut dst =
            TensorBuf::with_layout(ScalarType::Float, &[2, 2], &[1, 0], ShapeDynamism::Static)
                .unwrap();
        copy_same_shape(&mut dst, &src, Some(loader::<i64>()), Some(storer::<f32>())).unwrap();
        assert_eq!(dst.data::<f32>().unwrap(), &[1.0, 3.0, -2.0, 40000.0]);
    }
}
