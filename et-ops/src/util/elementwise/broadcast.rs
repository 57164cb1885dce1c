//! Broadcasting: inline shapes, the broadcast rule, and the strided walk that visits
//! `out` in memory order as runs along its innermost (coalesced) dim.

use et_runtime::{KernelError, KernelResult, MAX_DIM};

/// A tensor shape held inline (no heap): at most [`MAX_DIM`] sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    dims: [usize; MAX_DIM],
    rank: usize,
}

impl Shape {
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
///
/// [`layout::Walk`](crate::util::layout::Walk) does the same coalescing for copies; it is
/// kept apart because it hands out byte offsets for width-generic moves and proves every
/// offset up front, while this one hands element offsets per run to the chunked compute
/// loop. One generic walker for both was tried and made every operator's binary 1.3-3%
/// larger, since each caller then instantiates the parts only the other one needs.
#[derive(Clone, Debug)]
pub struct RunWalk<const N: usize> {
    rank: usize,
    sizes: [usize; MAX_DIM],
    strides: [[usize; N]; MAX_DIM],
    numel: usize,
}

impl<const N: usize> RunWalk<N> {
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
        let mut walk = RunWalk {
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

    /// The length of every run (0 when the shape is empty).
    #[cfg(test)]
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
pub(super) fn dims_eq(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

fn crate_numel(shape: &[usize]) -> KernelResult<usize> {
    et_runtime::checked_numel(shape).ok_or(KernelError::invalid("tensor size overflows"))
}
