//! NumPy-style broadcasting of two operands to an output shape, walked as runs along the
//! innermost dim.

use super::shape::{Shape, MAX_RANK};

/// The broadcast of `a` and `b` (sizes aligned at the innermost dim; a size-1 dim
/// stretches), or `None` when they do not broadcast.
pub(crate) fn broadcast_shape(a: &Shape, b: &Shape) -> Option<Shape> {
    let rank = a.rank().max(b.rank());
    let mut dims = [0usize; MAX_RANK];
    for (i, d) in dims.iter_mut().enumerate().take(rank) {
        let get = |s: &Shape| {
            let off = rank - s.rank();
            if i < off {
                1
            } else {
                s.dims()[i - off]
            }
        };
        let (x, y) = (get(a), get(b));
        *d = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return None;
        };
    }
    Shape::new(&dims[..rank])
}

/// Element strides of `s` seen in `out`'s rank, 0 along broadcast dims.
fn strides_in(s: &Shape, out: &Shape) -> [usize; MAX_RANK] {
    let mut strides = [0usize; MAX_RANK];
    let off = out.rank() - s.rank();
    let mut step = 1;
    for i in (0..s.rank()).rev() {
        let size = s.dims()[i];
        strides[off + i] = if size == 1 { 0 } else { step };
        step *= size;
    }
    strides
}

/// One run of a broadcast's output along its innermost dim: where it starts in the
/// output, and where its operands' elements start and their strides in the run (0 for
/// an operand broadcast along that dim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) out: usize,
    pub(crate) a: usize,
    pub(crate) a_stride: usize,
    pub(crate) b: usize,
    pub(crate) b_stride: usize,
}

/// The runs of `out`, the broadcast of `a` and `b` (checked at plan time), in order:
/// an iterator rather than a callback so that the caller's loop over a run compiles
/// inside the caller (with its target features).
pub(crate) struct Runs {
    dims: [usize; MAX_RANK],
    rank: usize,
    sa: [usize; MAX_RANK],
    sb: [usize; MAX_RANK],
    index: [usize; MAX_RANK],
    next: Run,
    left: usize,
    inner: usize,
}

impl Runs {
    #[inline(always)]
    pub(crate) fn new(out: &Shape, a: &Shape, b: &Shape) -> Runs {
        let rank = out.rank();
        let (sa, sb) = (strides_in(a, out), strides_in(b, out));
        let mut dims = [1usize; MAX_RANK];
        dims[..rank].copy_from_slice(out.dims());
        let (inner, outer, a_stride, b_stride) = match rank {
            0 => (1, 1, 0, 0),
            _ => (
                dims[rank - 1],
                dims[..rank - 1].iter().product(),
                sa[rank - 1],
                sb[rank - 1],
            ),
        };
        Runs {
            dims,
            rank,
            sa,
            sb,
            index: [0; MAX_RANK],
            next: Run {
                out: 0,
                a: 0,
                a_stride,
                b: 0,
                b_stride,
            },
            left: outer,
            inner,
        }
    }

    /// The elements of each run.
    pub(crate) fn run_len(&self) -> usize {
        self.inner
    }
}

impl Iterator for Runs {
    type Item = Run;

    #[inline(always)]
    fn next(&mut self) -> Option<Run> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let run = self.next;
        self.next.out += self.inner;
        // Advance the outer index like an odometer, keeping the operand offsets.
        for d in (0..self.rank.saturating_sub(1)).rev() {
            self.index[d] += 1;
            self.next.a += self.sa[d];
            self.next.b += self.sb[d];
            if self.index[d] < self.dims[d] {
                break;
            }
            self.next.a -= self.sa[d] * self.index[d];
            self.next.b -= self.sb[d] * self.index[d];
            self.index[d] = 0;
        }
        Some(run)
    }
}

/// `out[i] = f(x[.], y[.])` over the broadcast of `sx` and `sy` (`so`, checked at plan
/// time, as the operands' lengths against their shapes). Same shapes take one flat loop;
/// otherwise each innermost run takes the loop of its operand strides (a broadcast
/// operand is a constant in the run).
#[inline(always)]
pub(crate) fn zip_broadcast<A: Copy, B: Copy, O>(
    x: &[A],
    y: &[B],
    out: &mut [O],
    (sx, sy, so): (&Shape, &Shape, &Shape),
    f: impl Fn(A, B) -> O,
) {
    if sx == sy {
        for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
            *o = f(a, b);
        }
        return;
    }
    let runs = Runs::new(so, sx, sy);
    let inner = runs.run_len();
    for Run {
        out: o,
        a: xo,
        a_stride: xs,
        b: yo,
        b_stride: ys,
    } in runs
    {
        let run = &mut out[o..o + inner];
        match (xs, ys) {
            (1, 1) => {
                for ((r, &a), &b) in run.iter_mut().zip(&x[xo..]).zip(&y[yo..]) {
                    *r = f(a, b);
                }
            }
            (1, 0) => {
                let b = y[yo];
                for (r, &a) in run.iter_mut().zip(&x[xo..]) {
                    *r = f(a, b);
                }
            }
            (0, 1) => {
                let a = x[xo];
                for (r, &b) in run.iter_mut().zip(&y[yo..]) {
                    *r = f(a, b);
                }
            }
            _ => {
                for (i, r) in run.iter_mut().enumerate() {
                    *r = f(x[xo + i * xs], y[yo + i * ys]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(d: &[usize]) -> Shape {
        Shape::new(d).unwrap()
    }

    #[test]
    fn shapes_broadcast_like_numpy() {
        assert_eq!(
            broadcast_shape(&s(&[2, 1, 4]), &s(&[3, 1])),
            Some(s(&[2, 3, 4]))
        );
        assert_eq!(broadcast_shape(&s(&[]), &s(&[5])), Some(s(&[5])));
        assert_eq!(broadcast_shape(&s(&[2]), &s(&[3])), None);
    }

    #[test]
    fn runs_visit_every_element_with_broadcast_offsets() {
        let (a, b) = (s(&[2, 1, 3]), s(&[4, 1]));
        let out = broadcast_shape(&a, &b).unwrap();
        let mut seen = [(0usize, 0usize); 24];
        for run in Runs::new(&out, &a, &b) {
            for i in 0..3 {
                seen[run.out + i] = (run.a + i * run.a_stride, run.b + i * run.b_stride);
            }
        }
        for n in 0..2 {
            for h in 0..4 {
                for w in 0..3 {
                    assert_eq!(seen[(n * 4 + h) * 3 + w], (n * 3 + w, h));
                }
            }
        }
    }
}
