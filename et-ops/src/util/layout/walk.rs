//! Strided walks: an N-d walk over several stride sets in memory order, and logical
//! (row-major) offsets.

use et_runtime::{KernelError, KernelResult, Tensor, MAX_DIM};

use super::MAX_WALK_DIM;
use crate::util::convert::{Loader, Storer};

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
    pub(super) ndim: usize,
    numel: usize,
    pub(super) sizes: [usize; MAX_WALK_DIM],
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
                    if h == TILE && w == TILE {
                        let s = (sb + r0 as isize + c0 as isize * scol) as usize;
                        let d = (db + r0 as isize * drow + c0 as isize) as usize;
                        full_tile::<W, TILE>(dst, d, drow as usize, src, s, scol as usize);
                        c0 += w;
                        continue;
                    }
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

/// One full `T x T` tile of a transpose: `T` source runs (at `s`, `s + scol`, ...) become
/// `T` destination runs (at `d`, `d + drow`, ...). The trip counts are constants, so the
/// runs are copied without calls and the tile stays in registers or L1; the general
/// path's variable-length copies called `memcpy` per run and took about 5 cycles per
/// element on mv2's classifier weight.
#[inline(always)]
fn full_tile<const W: usize, const T: usize>(
    dst: &mut [[u8; W]],
    d: usize,
    drow: usize,
    src: &[[u8; W]],
    s: usize,
    scol: usize,
) {
    let mut tile = [[[0u8; W]; T]; T];
    for (c, column) in tile.iter_mut().enumerate() {
        let at = s + c * scol;
        column.copy_from_slice(&src[at..at + T]);
    }
    #[allow(
        clippy::needless_range_loop,
        reason = "`r` picks the same position in every column and the destination row"
    )]
    for r in 0..T {
        let at = d + r * drow;
        let row: &mut [[u8; W]; T] = (&mut dst[at..at + T]).try_into().expect("T elements");
        for (c, v) in row.iter_mut().enumerate() {
            *v = tile[c][r];
        }
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
