//! Copies a tensor into a permutation of its dims (`out.dims[i] = in.dims[perm[i]]`).

use super::shape::{Shape, MAX_RANK};

/// `out[i0, i1, ..] = x[.. i_k at dim perm[k] ..]`, both dense.
#[cfg(test)]
pub(crate) fn permute<T: Copy>(x: &[T], in_shape: &Shape, perm: &[usize], out: &mut [T]) {
    if in_shape.rank() == 0 {
        out.copy_from_slice(x);
    } else {
        permute_runs(x, in_shape, perm, 0, out);
    }
}

/// Part of [`permute`]'s output: its runs (rows of the output's last dim) from run
/// `first` on, `out` holding a whole number of them. The unit threads split a transpose
/// by. The input must have at least one dim.
pub(crate) fn permute_runs<T: Copy>(
    x: &[T],
    in_shape: &Shape,
    perm: &[usize],
    first: usize,
    out: &mut [T],
) {
    let rank = in_shape.rank();
    let mut in_strides = [0usize; MAX_RANK];
    let mut step = 1;
    for d in (0..rank).rev() {
        in_strides[d] = step;
        step *= in_shape.dims()[d];
    }
    // Output dim k walks input dim perm[k].
    let mut sizes = [0usize; MAX_RANK];
    let mut strides = [0usize; MAX_RANK];
    for k in 0..rank {
        sizes[k] = in_shape.dims()[perm[k]];
        strides[k] = in_strides[perm[k]];
    }
    let inner = sizes[rank - 1];
    let inner_stride = strides[rank - 1];
    if inner == 0 {
        return;
    }
    if rank >= 2 && strides[rank - 2] == 1 && inner_stride != 1 {
        let outer = (&sizes[..rank - 2], &strides[..rank - 2]);
        return transpose_blocks(x, outer, (sizes[rank - 2], inner, inner_stride), first, out);
    }
    // Run `first`'s index over the outer dims, and where it starts in `x`.
    let mut index = [0usize; MAX_RANK];
    let mut src = 0usize;
    let mut rest = first;
    for d in (0..rank - 1).rev() {
        index[d] = rest % sizes[d].max(1);
        rest /= sizes[d].max(1);
        src += index[d] * strides[d];
    }
    for run in out.chunks_exact_mut(inner) {
        for (i, o) in run.iter_mut().enumerate() {
            *o = x[src + i * inner_stride];
        }
        for d in (0..rank - 1).rev() {
            index[d] += 1;
            src += strides[d];
            if index[d] < sizes[d] {
                break;
            }
            src -= strides[d] * index[d];
            index[d] = 0;
        }
    }
}

/// [`permute_runs`] where the output's last two dims, `a` then `b`, swap the input's
/// contiguous dim (`a`, stride 1) with `b` (input stride `b_stride`): each block of `a`
/// runs is a small matrix transpose, read a contiguous row of the input at a time
/// instead of gathering every run (a channel shuffle's runs are two elements long).
/// `outer` holds the sizes and input strides of the dims before them.
fn transpose_blocks<T: Copy>(
    x: &[T],
    (outer_sizes, outer_strides): (&[usize], &[usize]),
    (a, b, b_stride): (usize, usize, usize),
    first: usize,
    out: &mut [T],
) {
    let runs = out.len() / b;
    let (mut run, mut done) = (first, 0);
    while done < runs {
        let (mut block, a0) = (run / a, run % a);
        let a1 = a.min(a0 + runs - done);
        let mut base = 0;
        for (&size, &stride) in outer_sizes.iter().zip(outer_strides).rev() {
            base += (block % size) * stride;
            block /= size;
        }
        let dst = &mut out[done * b..(done + a1 - a0) * b];
        let row = |j: usize| &x[base + j * b_stride + a0..base + j * b_stride + a1];
        if b == 2 {
            for (o, (&p, &q)) in dst.chunks_exact_mut(2).zip(row(0).iter().zip(row(1))) {
                o[0] = p;
                o[1] = q;
            }
        } else {
            for j in 0..b {
                for (i, &v) in row(j).iter().enumerate() {
                    dst[i * b + j] = v;
                }
            }
        }
        done += a1 - a0;
        run += a1 - a0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nchw_to_nhwc() {
        let shape = Shape::new(&[1, 2, 2, 3]).unwrap();
        let x: [f32; 12] = core::array::from_fn(|i| i as f32);
        let mut out = [0f32; 12];
        permute(&x, &shape, &[0, 2, 3, 1], &mut out);
        // out[0, h, w, c] = x[0, c, h, w]
        for h in 0..2 {
            for w in 0..3 {
                for c in 0..2 {
                    assert_eq!(out[(h * 3 + w) * 2 + c], x[(c * 2 + h) * 3 + w]);
                }
            }
        }
    }

    #[test]
    fn any_run_range_matches_the_whole() {
        let shape = Shape::new(&[2, 3, 5, 2]).unwrap();
        let x: [u16; 60] = core::array::from_fn(|i| i as u16);
        let reference = |perm: &[usize]| {
            let out_dims: [usize; 4] = core::array::from_fn(|k| shape.dims()[perm[k]]);
            let mut want = [0u16; 60];
            for (flat, w) in want.iter_mut().enumerate() {
                let mut rest = flat;
                let mut index = [0usize; 4];
                for k in (0..4).rev() {
                    index[perm[k]] = rest % out_dims[k];
                    rest /= out_dims[k];
                }
                *w = x[((index[0] * 3 + index[1]) * 5 + index[2]) * 2 + index[3]];
            }
            want
        };
        // NCHW to NHWC and [.., c, 2] to [.., 2, c] transpose blocks (the second a
        // channel shuffle's two-element runs); the others gather runs.
        for perm in [
            [0, 2, 3, 1],
            [3, 1, 0, 2],
            [0, 1, 2, 3],
            [0, 1, 3, 2],
            [2, 0, 3, 1],
            [1, 2, 3, 0],
        ] {
            let mut whole = [0u16; 60];
            permute(&x, &shape, &perm, &mut whole);
            assert_eq!(whole, reference(&perm), "perm {perm:?}");
            let inner = shape.dims()[perm[3]];
            let runs = 60 / inner;
            for cut in [1, runs / 3, runs - 1] {
                let mut parts = [0u16; 60];
                let (head, tail) = parts.split_at_mut(cut * inner);
                permute_runs(&x, &shape, &perm, 0, head);
                permute_runs(&x, &shape, &perm, cut, tail);
                assert_eq!(parts, whole, "perm {perm:?} cut {cut}");
            }
        }
    }
}
