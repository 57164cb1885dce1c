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
        let shape = Shape::new(&[2, 3, 4, 5]).unwrap();
        let x: [u16; 120] = core::array::from_fn(|i| i as u16);
        for perm in [[0, 2, 3, 1], [3, 1, 0, 2], [0, 1, 2, 3]] {
            let mut whole = [0u16; 120];
            permute(&x, &shape, &perm, &mut whole);
            let inner = shape.dims()[perm[3]];
            let runs = 120 / inner;
            for cut in [1, runs / 3, runs - 1] {
                let mut parts = [0u16; 120];
                let (head, tail) = parts.split_at_mut(cut * inner);
                permute_runs(&x, &shape, &perm, 0, head);
                permute_runs(&x, &shape, &perm, cut, tail);
                assert_eq!(parts, whole, "perm {perm:?} cut {cut}");
            }
        }
    }
}
