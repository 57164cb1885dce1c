//! A value's shape, held inline.

use et_xnnpack_schema::ValueView;

/// XNNPACK's rank limit (`XNN_MAX_TENSOR_DIMS`).
pub(crate) const MAX_RANK: usize = 6;

/// Sizes held inline, outermost first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    dims: [usize; MAX_RANK],
    rank: u8,
}

impl Shape {
    /// The sizes of a graph value; `None` past [`MAX_RANK`].
    pub(crate) fn of(v: &ValueView<'_>) -> Option<Shape> {
        let mut dims = [0; MAX_RANK];
        for (i, d) in dims.get_mut(..v.rank())?.iter_mut().enumerate() {
            *d = v.dim(i) as usize;
        }
        Some(Shape {
            dims,
            rank: v.rank() as u8,
        })
    }

    /// A shape from sizes; `None` past [`MAX_RANK`].
    pub(crate) fn new(sizes: &[usize]) -> Option<Shape> {
        let mut dims = [0; MAX_RANK];
        dims.get_mut(..sizes.len())?.copy_from_slice(sizes);
        Some(Shape {
            dims,
            rank: sizes.len() as u8,
        })
    }

    pub(crate) fn dims(&self) -> &[usize] {
        &self.dims[..usize::from(self.rank)]
    }

    pub(crate) fn rank(&self) -> usize {
        usize::from(self.rank)
    }

    /// The number of elements; `None` on overflow.
    pub(crate) fn numel(&self) -> Option<usize> {
        self.dims()
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
    }

    /// Sets dim `d` (below the rank).
    pub(crate) fn set(&mut self, d: usize, size: usize) {
        self.dims[d] = size;
    }

    /// The innermost size (1 for a scalar).
    pub(crate) fn last(&self) -> usize {
        self.dims().last().copied().unwrap_or(1)
    }
}
