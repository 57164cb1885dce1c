//! Copies a tensor into a permutation of its dims (`out.dims[i] = in.dims[perm[i]]`).

use super::shape::{Shape, MAX_RANK};

/// The side of the tiles a transposing block is copied in.
const TILE: usize = 32;

/// The same permutation on fewer dims: the input's size-1 dims dropped, and input dims
/// that stay next to each other, in order, in the output merged into one. Returns the
/// input's collapsed sizes and the permutation of them (at least one dim). A transpose
/// of `[1, h, w, c]` to `[1, c, h, w]` becomes one of `[h * w, c]` to `[c, h * w]`.
pub(crate) fn collapse(shape: &Shape, perm: &[usize]) -> (Shape, [usize; MAX_RANK], usize) {
    let dims = shape.dims();
    // Renumber the input dims of size above 1; list them in output order.
    let mut renumbered = [usize::MAX; MAX_RANK];
    let mut sizes = [0usize; MAX_RANK];
    let mut kept = 0;
    for (d, &size) in dims.iter().enumerate() {
        if size != 1 {
            renumbered[d] = kept;
            sizes[kept] = size;
            kept += 1;
        }
    }
    let mut order = [0usize; MAX_RANK];
    let mut n = 0;
    for &d in perm {
        if renumbered[d] != usize::MAX {
            order[n] = renumbered[d];
            n += 1;
        }
    }
    if n == 0 {
        return (Shape::new(&[1]).unwrap_or_default(), [0; MAX_RANK], 1);
    }
    // A group starts at each output position whose input dim does not follow the
    // previous one's.
    let starts_group = |k: usize| k == 0 || order[k] != order[k - 1] + 1;
    // The collapsed input dims, in input order: each group's first input dim.
    let mut input_dims = [0usize; MAX_RANK];
    let mut groups = 0;
    for d in 0..kept {
        let k = (0..n).find(|&k| order[k] == d).unwrap_or(0);
        if starts_group(k) {
            input_dims[groups] = d;
            groups += 1;
        }
    }
    let mut collapsed = [1usize; MAX_RANK];
    for (g, &first) in input_dims[..groups].iter().enumerate() {
        let next = input_dims
            .get(g + 1)
            .filter(|_| g + 1 < groups)
            .copied()
            .unwrap_or(kept);
        collapsed[g] = sizes[first..next].iter().product();
    }
    let mut collapsed_perm = [0usize; MAX_RANK];
    for (out, k) in (0..n).filter(|&k| starts_group(k)).enumerate() {
        let group = input_dims[..groups]
            .iter()
            .position(|&d| d == order[k])
            .unwrap_or(0);
        collapsed_perm[out] = group;
    }
    let shape = Shape::new(&collapsed[..groups]).unwrap_or_default();
    (shape, collapsed_perm, groups)
}

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
        let at = |j: usize, i: usize| base + j * b_stride + i;
        if b == 2 {
            let (row0, row1) = (&x[at(0, a0)..at(0, a1)], &x[at(1, a0)..at(1, a1)]);
            for (o, (&p, &q)) in dst.chunks_exact_mut(2).zip(row0.iter().zip(row1)) {
                o[0] = p;
                o[1] = q;
            }
        } else {
            // In square tiles, so that the rows read and the columns written stay in
            // the first-level cache.
            for i0 in (a0..a1).step_by(TILE) {
                let i1 = a1.min(i0 + TILE);
                for j0 in (0..b).step_by(TILE) {
                    for j in j0..b.min(j0 + TILE) {
                        for (i, &v) in (i0..i1).zip(&x[at(j, i0)..at(j, i1)]) {
                            dst[(i - a0) * b + j] = v;
                        }
                    }
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
    fn collapse_merges_dims_that_move_together() {
        let check = |dims: &[usize], perm: &[usize], want: &[usize], want_perm: &[usize]| {
            let (shape, p, rank) = collapse(&Shape::new(dims).unwrap(), perm);
            assert_eq!(
                (shape.dims(), &p[..rank]),
                (want, want_perm),
                "{dims:?} {perm:?}"
            );
        };
        check(&[1, 56, 56, 116], &[0, 3, 1, 2], &[3136, 116], &[1, 0]);
        check(&[1, 116, 56, 56], &[0, 2, 3, 1], &[116, 3136], &[1, 0]);
        check(
            &[1, 28, 28, 2, 58],
            &[0, 1, 2, 4, 3],
            &[784, 2, 58],
            &[0, 2, 1],
        );
        check(&[2, 3, 4, 5], &[3, 1, 0, 2], &[2, 3, 4, 5], &[3, 1, 0, 2]);
        check(&[2, 3, 4], &[0, 1, 2], &[24], &[0]);
        check(&[1, 1], &[1, 0], &[1], &[0]);
        check(&[4, 1, 3], &[2, 1, 0], &[4, 3], &[1, 0]);
    }

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
