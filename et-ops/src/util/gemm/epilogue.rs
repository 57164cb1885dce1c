//! Row epilogues: a per-row affine map and clamp that a product applies to each tile of C
//! right after storing it, while the tile is still in L1.
//!
//! This is how a convolution absorbs the inference batch norm and the activation that
//! follow it in a program (et-runtime's load-time fusion): one pass over the output
//! instead of three. Each value gets exactly the operations the separate kernels would
//! apply, in the same order and precision (`v * scale + shift`, not fused into one FMA,
//! as the batch-norm kernel computes it; then `hardtanh`'s or `relu`'s comparisons), so a
//! fused call gives the same bits as the calls it replaces.

use super::MatMut;

/// What the product and convolution drivers carry as `Option<Epilogue>`: a
/// [`RowEpilogue`] with the `fusion` feature (what makes epilogues), and otherwise a type
/// with no values, so that `None` is the only possibility and every epilogue branch
/// compiles away (the size tests build without the feature).
#[cfg(feature = "fusion")]
pub(crate) type Epilogue<'e> = RowEpilogue<'e>;
/// See the `fusion` form.
#[cfg(not(feature = "fusion"))]
pub(crate) type Epilogue<'e> = NoEpilogue<'e>;

/// An epilogue that cannot exist (builds without the `fusion` feature).
#[cfg(not(feature = "fusion"))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct NoEpilogue<'e> {
    never: Never,
    _rows: core::marker::PhantomData<&'e [f32]>,
}

#[cfg(not(feature = "fusion"))]
#[derive(Clone, Copy, Debug)]
enum Never {}

#[cfg(not(feature = "fusion"))]
impl NoEpilogue<'_> {
    pub(crate) fn rows(&self) -> usize {
        match self.never {}
    }

    pub(crate) fn rows_from(self, _: usize) -> Self {
        match self.never {}
    }

    pub(crate) fn apply(&self, _: usize, _: &mut [f32]) {
        match self.never {}
    }

    pub(crate) fn apply_from(&self, _: usize, _: &[f32], _: &mut [f32]) {
        match self.never {}
    }

    #[allow(clippy::too_many_arguments, reason = "as `RowEpilogue::apply_tile`")]
    pub(super) fn apply_tile(
        &self,
        _: &mut [f32],
        _: usize,
        _: usize,
        _: usize,
        _: usize,
        _: usize,
        _: usize,
    ) {
        match self.never {}
    }

    pub(super) fn apply_all(&self, _: &mut MatMut<'_, f32>) {
        match self.never {}
    }
}

/// The epilogue of one full `MR`-row tile, for a micro-kernel to apply in its registers
/// as it stores the tile: each row's scale and shift, and the bounds.
#[cfg(feature = "fusion")]
#[derive(Clone, Copy)]
pub(super) struct TileMap<'e, const MR: usize> {
    scale: &'e [f32; MR],
    shift: &'e [f32; MR],
    lo: f32,
    hi: f32,
}

#[cfg(feature = "fusion")]
impl<const MR: usize> TileMap<'_, MR> {
    /// Row `i`'s scale and shift.
    #[inline(always)]
    pub(super) fn row(&self, i: usize) -> (f32, f32) {
        (self.scale[i % MR], self.shift[i % MR])
    }

    /// The clamp's bounds (for the SIMD micro-kernels, which clamp a whole vector).
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[inline(always)]
    pub(super) fn bounds(&self) -> (f32, f32) {
        (self.lo, self.hi)
    }

    /// Row `i`'s map of one value, as [`RowEpilogue`] maps it.
    #[inline(always)]
    pub(super) fn one(&self, i: usize, v: f32) -> f32 {
        let (s, t) = self.row(i);
        RowEpilogue::one(v, s, t, self.lo, self.hi)
    }
}

/// A tile map that cannot exist (builds without the `fusion` feature).
#[cfg(not(feature = "fusion"))]
#[derive(Clone, Copy)]
pub(super) struct TileMap<'e, const MR: usize> {
    never: Never,
    _rows: core::marker::PhantomData<&'e [f32; MR]>,
}

#[cfg(not(feature = "fusion"))]
impl<const MR: usize> TileMap<'_, MR> {
    pub(super) fn row(&self, _: usize) -> (f32, f32) {
        match self.never {}
    }

    pub(super) fn bounds(&self) -> (f32, f32) {
        match self.never {}
    }

    pub(super) fn one(&self, _: usize, _: f32) -> f32 {
        match self.never {}
    }
}

#[cfg(not(feature = "fusion"))]
impl NoEpilogue<'_> {
    pub(super) fn tile_map<const MR: usize>(&self, _: usize) -> Option<TileMap<'_, MR>> {
        match self.never {}
    }
}

/// `c = clamp(c * scale[r] + shift[r], lo, hi)` for every value of row `r` of C.
///
/// The clamp compares as `hardtanh` and `relu` do (`v < lo` gives `lo`, then `v > hi`
/// gives `hi`), so NaN stays NaN; `-inf..=inf` leaves values as they are.
#[cfg(feature = "fusion")]
#[derive(Clone, Copy, Debug)]
pub struct RowEpilogue<'e> {
    scale: &'e [f32],
    shift: &'e [f32],
    lo: f32,
    hi: f32,
}

#[cfg(feature = "fusion")]
impl<'e> RowEpilogue<'e> {
    /// The epilogue for `scale.len()` rows; `None` if `shift` has another length.
    pub fn new(scale: &'e [f32], shift: &'e [f32], lo: f32, hi: f32) -> Option<Self> {
        (scale.len() == shift.len()).then_some(RowEpilogue {
            scale,
            shift,
            lo,
            hi,
        })
    }

    /// Rows it has a map for.
    pub fn rows(&self) -> usize {
        self.scale.len()
    }

    /// The same epilogue for the rows from `first` on (none past the end).
    pub fn rows_from(self, first: usize) -> Self {
        RowEpilogue {
            scale: self.scale.get(first..).unwrap_or_default(),
            shift: self.shift.get(first..).unwrap_or_default(),
            ..self
        }
    }

    /// The map of row `r` (the identity for a row it has none for: callers check the
    /// row count first, so that never happens to a real row).
    #[inline(always)]
    fn row_map(&self, r: usize) -> (f32, f32) {
        match (self.scale.get(r), self.shift.get(r)) {
            (Some(&s), Some(&t)) => (s, t),
            _ => (1.0, 0.0),
        }
    }

    /// Row `r`'s map of one value (`lo`, `hi`: the bounds, passed in so that callers' loops
    /// keep them in registers).
    #[inline(always)]
    pub(super) fn one(v: f32, s: f32, t: f32, lo: f32, hi: f32) -> f32 {
        let v = v * s + t;
        // `lo > v` and `v > hi` are false for NaN, which stays (`maxps`/`minps` order).
        let v = if lo > v { lo } else { v };
        if v > hi {
            hi
        } else {
            v
        }
    }

    /// Writes row `r`'s map of `src` into `dst` (the shorter's length).
    #[inline(always)]
    pub(crate) fn apply_from(&self, r: usize, src: &[f32], dst: &mut [f32]) {
        let (s, t) = self.row_map(r);
        let (lo, hi) = (self.lo, self.hi);
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = Self::one(v, s, t, lo, hi);
        }
    }

    /// Applies row `r`'s map to contiguous values of that row.
    #[inline(always)]
    pub fn apply(&self, r: usize, values: &mut [f32]) {
        let (s, t) = self.row_map(r);
        let (lo, hi) = (self.lo, self.hi);
        for v in values.iter_mut() {
            *v = Self::one(*v, s, t, lo, hi);
        }
    }

    /// Applies the map to `rows x cols` values of `c` from `off` (row stride `rs`, column
    /// stride `cs`), whose first row is row `r0`. Out-of-range positions are skipped:
    /// callers pass a tile they just stored, inside C.
    #[inline(always)]
    #[allow(clippy::too_many_arguments, reason = "one tile of one strided matrix")]
    pub(super) fn apply_tile(
        &self,
        c: &mut [f32],
        off: usize,
        rs: usize,
        cs: usize,
        r0: usize,
        rows: usize,
        cols: usize,
    ) {
        for i in 0..rows {
            let base = off + i * rs;
            if cs == 1 {
                if let Some(row) = c.get_mut(base..base + cols) {
                    self.apply(r0 + i, row);
                }
            } else {
                let (s, t) = self.row_map(r0 + i);
                for j in 0..cols {
                    if let Some(v) = c.get_mut(base + j * cs) {
                        *v = Self::one(*v, s, t, self.lo, self.hi);
                    }
                }
            }
        }
    }

    /// The map of the `MR` rows from `r0`, for a full tile (`None` if the epilogue has
    /// fewer rows: callers check the row count first).
    #[inline(always)]
    pub(super) fn tile_map<const MR: usize>(&self, r0: usize) -> Option<TileMap<'_, MR>> {
        let rows = |v: &'e [f32]| v.get(r0..)?.first_chunk::<MR>();
        Some(TileMap {
            scale: rows(self.scale)?,
            shift: rows(self.shift)?,
            lo: self.lo,
            hi: self.hi,
        })
    }

    /// Applies the map to all of `c`.
    pub(super) fn apply_all(&self, c: &mut MatMut<'_, f32>) {
        self.apply_tile(c.data, 0, c.rs, c.cs, 0, c.rows, c.cols);
    }
}
