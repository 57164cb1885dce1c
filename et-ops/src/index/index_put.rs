//! `aten::index_put.out`: write values at advanced-index positions.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use super::index_tensor::resolve;
use crate::util::accumulate::Accumulator;
use crate::util::elementwise::broadcast_shapes;
use crate::util::layout::{check_same_dtype, copy_same_shape, istrides, wrap_index, Walk};

/// `out = self.index_put(indices, values, accumulate)`: a copy of `self` where the
/// positions `self[indices]` selects (PyTorch's advanced indexing with integer index
/// tensors; `None` keeps a dim whole) receive `values`, broadcast to the shape of
/// `self[indices]`. With `accumulate` the values are added (repeated positions add up);
/// without it a repeated position keeps the last value written. `values` must have
/// `self`'s dtype. A k-dim bool (or uint8) mask indexes the next k dims at the positions
/// where it is true (its `nonzero()` as k int64 indices), broadcasting with the other
/// indices, so `x[mask] = v` writes every true position.
#[kernel("aten::index_put.out")]
pub fn index_put_out<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    indices: &[Option<&Tensor>],
    values: &Tensor,
    accumulate: bool,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)?;
    put::<Sel>(ctx, out, indices, values, accumulate)
}

/// Writes (or adds) `values` at `target[indices]`: the body of `index_put` and
/// `index_put_`.
pub(super) fn put<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    target: &mut Tensor,
    indices: &[Option<&Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> KernelResult {
    check_same_dtype(target, values)?;
    let n = target.dim();
    let (sources, count) = resolve(ctx, target, indices)?;
    let sources = &sources[..count];
    if count == 0 {
        return Err(KernelError::invalid(
            "index_put needs at least one index tensor",
        ));
    }
    let mut shapes: [&[usize]; MAX_DIM] = [&[]; MAX_DIM];
    for (sh, s) in shapes.iter_mut().zip(sources.iter().flatten()) {
        *sh = &s.sizes[..s.rank];
    }
    let bshape = broadcast_shapes(&shapes[..count])?;
    let bshape = bshape.as_slice();
    let brank = bshape.len();
    // Each index's strides over the broadcast shape (0 where it repeats).
    let mut bstrides = [[0usize; MAX_DIM]; MAX_DIM];
    for (bs, s) in bstrides.iter_mut().zip(sources.iter().flatten()) {
        for j in 0..s.rank {
            if s.sizes[j] != 1 {
                bs[brank - s.rank + j] = s.strides[j];
            }
        }
    }
    // The shape of `target[indices]`, as `index.Tensor` lays it out: the broadcast index
    // shape replaces adjacent indexed dims in place, else goes first.
    let mut indexed = 0u32;
    for s in sources.iter().flatten() {
        indexed |= 1 << s.dim;
    }
    let first = indexed.trailing_zeros() as usize;
    let last = 31 - indexed.leading_zeros() as usize;
    let adjacent = (first..=last).all(|d| indexed & (1 << d) != 0);
    let rest = n - indexed.count_ones() as usize;
    let rank = brank + rest;
    if rank > MAX_DIM {
        return Err(KernelError::invalid("too many dims in the index result"));
    }
    let b_at = if adjacent { first } else { 0 };
    let mut rsizes = [0usize; MAX_DIM];
    let mut rest_dims = [0usize; MAX_DIM];
    let mut rest_pos = [0usize; MAX_DIM];
    for (r, d) in (0..n).filter(|&d| indexed & (1 << d) == 0).enumerate() {
        rest_dims[r] = d;
        rest_pos[r] = if r < b_at { r } else { r + brank };
        rsizes[rest_pos[r]] = target.size(d);
    }
    rsizes[b_at..b_at + brank].copy_from_slice(bshape);
    // `values` broadcast to that shape.
    if values.dim() > rank {
        return Err(KernelError::invalid("index_put values have too many dims"));
    }
    let lead = rank - values.dim();
    let vis = istrides(values)?;
    let mut vstrides = [0isize; MAX_DIM];
    for d in lead..rank {
        let size = values.size(d - lead);
        if size == rsizes[d] && size != 1 {
            vstrides[d] = vis[d - lead];
        } else if size != 1 {
            return Err(KernelError::invalid(
                "index_put values do not broadcast to the indexed shape",
            ));
        }
    }
    let ts = istrides(target)?;
    let mut slab_sizes = [0usize; MAX_DIM];
    let mut slab_dst = [0isize; MAX_DIM];
    let mut slab_src = [0isize; MAX_DIM];
    for j in 0..rest {
        slab_sizes[j] = target.size(rest_dims[j]);
        slab_dst[j] = ts[rest_dims[j]];
        slab_src[j] = vstrides[rest_pos[j]];
    }
    let slab = Walk::copy(&slab_sizes[..rest], &slab_dst[..rest], &slab_src[..rest])?;
    let total =
        et_runtime::checked_numel(bshape).ok_or(KernelError::invalid("index size overflows"))?;
    let mut pos = [0usize; MAX_DIM];
    let elem = target.dtype().element_size();
    let acc = if accumulate {
        Some(Accumulator::new::<Sel>(target.dtype())?)
    } else {
        None
    };
    for _ in 0..total {
        let mut dst_base = 0usize;
        for (s, bs) in sources.iter().flatten().zip(&bstrides) {
            let off: usize = (0..brank).map(|j| pos[j] * bs[j]).sum();
            let i = wrap_index(s.data.get(off), target.size(s.dim))?;
            dst_base += i * target.strides()[s.dim];
        }
        let src_base: usize = (0..brank)
            .map(|j| pos[j] * vstrides[b_at + j] as usize)
            .sum();
        match &acc {
            Some(acc) => add_slab(acc, &slab, target, dst_base, values, src_base)?,
            None => {
                let from = values.bytes()?;
                slab.move_bytes(elem, target.bytes_mut()?, dst_base, from, src_base)?
            }
        }
        let mut j = brank;
        while j > 0 {
            j -= 1;
            pos[j] += 1;
            if pos[j] < bshape[j] {
                break;
            }
            pos[j] = 0;
        }
    }
    Ok(())
}

/// `target[dst] += values[src]` over one slab (see [`Accumulator::add`]).
fn add_slab(
    acc: &Accumulator,
    slab: &Walk<2>,
    target: &mut Tensor,
    dst_base: usize,
    values: &Tensor,
    src_base: usize,
) -> KernelResult {
    let lens = [target.numel(), values.numel()];
    let from = values.bytes()?;
    let to = target.bytes_mut()?;
    slab.for_each([dst_base, src_base], lens, |[d, s]| {
        acc.add(to, d, from, s);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn puts_rows_and_elements() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3, 2], &[0i64; 6]).unwrap();
            let rows = TensorBuf::from_slice(&[2], &[2i64, 0]).unwrap();
            let v = TensorBuf::from_slice(&[2, 1], &[7i64, 8]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[3, 2]).unwrap();
            index_put_out::<AllDtypes>(ctx, &x, &[Some(&rows)], &v, false, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[8, 8, 0, 0, 7, 7]);
            // Two index tensors pick elements; a repeated position accumulates.
            let r = TensorBuf::from_slice(&[3], &[1i64, 1, -1]).unwrap();
            let c = TensorBuf::from_slice(&[3], &[0i32, 0, 1]).unwrap();
            let one = TensorBuf::from_slice(&[1], &[1i64]).unwrap();
            index_put_out::<AllDtypes>(ctx, &x, &[Some(&r), Some(&c)], &one, true, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 0, 2, 0, 0, 1]);
            // A `None` keeps dim 0 whole.
            let cols = TensorBuf::from_slice(&[1], &[1i64]).unwrap();
            let nine = TensorBuf::from_slice(&[], &[9i64]).unwrap();
            index_put_out::<AllDtypes>(ctx, &x, &[None, Some(&cols)], &nine, false, &mut o)
                .unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[0, 9, 0, 9, 0, 9]);
            let bad = TensorBuf::from_slice(&[1], &[3i64]).unwrap();
            assert!(
                index_put_out::<AllDtypes>(ctx, &x, &[Some(&bad)], &nine, false, &mut o).is_err()
            );
        });
    }

    #[test]
    fn puts_through_bool_masks() {
        use et_runtime::Bool;
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[3, 2], &[0i32; 6]).unwrap();
            // x[mask] = [7, 8]: rows 0 and 2.
            let rows = TensorBuf::from_slice(&[3], &[Bool(1), Bool(0), Bool(1)]).unwrap();
            let v = TensorBuf::from_slice(&[2], &[7i32, 8]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[3, 2]).unwrap();
            index_put_out::<AllDtypes>(ctx, &x, &[Some(&rows)], &v, false, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[7, 8, 0, 0, 7, 8]);
            // A 2-D mask over both dims, accumulating a broadcast value.
            let m = TensorBuf::from_slice(
                &[3, 2],
                &[Bool(0), Bool(1), Bool(1), Bool(0), Bool(0), Bool(1)],
            )
            .unwrap();
            let one = TensorBuf::from_slice(&[1], &[1i32]).unwrap();
            index_put_out::<AllDtypes>(ctx, &x, &[Some(&m)], &one, true, &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[0, 1, 1, 0, 0, 1]);
            // A mask broadcasting with an integer index: x[rows, [1]] = 5.
            let col = TensorBuf::from_slice(&[1], &[1i64]).unwrap();
            let five = TensorBuf::from_slice(&[], &[5i32]).unwrap();
            index_put_out::<AllDtypes>(ctx, &x, &[Some(&rows), Some(&col)], &five, false, &mut o)
                .unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[0, 5, 0, 0, 0, 5]);
            // A mask whose shape differs from the dims it covers is refused.
            let bad = TensorBuf::from_slice(&[2], &[Bool(1), Bool(0)]).unwrap();
            assert!(
                index_put_out::<AllDtypes>(ctx, &x, &[Some(&bad)], &five, false, &mut o).is_err()
            );
        });
    }
}
