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

/// Calls `f(out_run, a_offset, a_stride, b_offset, b_stride)` for each run of `out`
/// along its innermost dim, with the operands' element offsets and strides in that run.
/// `out` must be the broadcast of `a` and `b` (checked at plan time).
pub(crate) fn for_each_run(
    out: &Shape,
    a: &Shape,
    b: &Shape,
    mut f: impl FnMut(usize, usize, usize, usize, usize),
) {
    let rank = out.rank();
    let sa = strides_in(a, out);
    let sb = strides_in(b, out);
    if rank == 0 {
        f(0, 0, 0, 0, 0);
        return;
    }
    let inner = out.dims()[rank - 1];
    let outer: usize = out.dims()[..rank - 1].iter().product();
    let mut index = [0usize; MAX_RANK];
    let (mut oa, mut ob) = (0usize, 0usize);
    for run in 0..outer {
        f(run * inner, oa, sa[rank - 1], ob, sb[rank - 1]);
        // Advance the outer index like an odometer, keeping the operand offsets.
        for d in (0..rank - 1).rev() {
            index[d] += 1;
            oa += sa[d];
            ob += sb[d];
            if index[d] < out.dims()[d] {
                break;
            }
            oa -= sa[d] * index[d];
            ob -= sb[d] * index[d];
            index[d] = 0;
        }
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
    let inner = so.last();
    for_each_run(so, sx, sy, |o, xo, xs, yo, ys| {
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
    });
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
        for_each_run(&out, &a, &b, |o, ao, ast, bo, bst| {
            for i in 0..3 {
                seen[o + i] = (ao + i * ast, bo + i * bst);
            }
        });
        for n in 0..2 {
            for h in 0..4 {
                for w in 0..3 {
                    assert_eq!(seen[(n * 4 + h) * 3 + w], (n * 3 + w, h));
                }
            }
        }
    }
}
