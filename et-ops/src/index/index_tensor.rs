//! Advanced indexing: `self[i0, i1, ...]` with tensor indices.

use et_runtime::kernel;
use et_runtime::{Bool, KernelContext, KernelError, KernelResult, ScalarType, Tensor, MAX_DIM};

use crate::util::elementwise::broadcast_shapes;
use crate::util::layout::{check_same_dtype, istrides, wrap_index, IndexData, Walk};

/// One integer index source, laid out against the broadcast index shape.
#[derive(Clone, Copy)]
pub(super) struct Source<'a> {
    /// The `self` dim it indexes.
    pub(super) dim: usize,
    pub(super) data: IndexData<'a>,
    pub(super) sizes: [usize; MAX_DIM],
    pub(super) strides: [usize; MAX_DIM],
    pub(super) rank: usize,
}

/// `out = self[indices]` with PyTorch's advanced-indexing rules: each entry indexes one
/// dim (`None` keeps the dim whole); a bool (or uint8) mask indexes as many dims as it has,
/// standing for the coordinates of its true elements (row-major order); integer indices
/// (int64/int32, negative counting from the end) broadcast together. The broadcast index
/// shape replaces the indexed dims in place when they are adjacent, and goes first
/// otherwise.
#[kernel("aten::index.Tensor_out")]
pub fn index_tensor_out(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    indices: &[Option<&Tensor>],
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    let n = input.dim();
    let (sources, count) = resolve(ctx, input, indices)?;
    let sources: &[Option<Source<'_>>] = &sources[..count];
    if count == 0 {
        // Only `None`s: a plain copy.
        out.resize(input.sizes())?;
        let (os, is) = (istrides(out)?, istrides(input)?);
        let walk = Walk::copy(input.sizes(), &os[..n], &is[..n])?;
        let src = input.bytes()?;
        return walk.move_bytes(input.dtype().element_size(), out.bytes_mut()?, 0, src, 0);
    }

    // The broadcast shape of every index.
    let mut shapes: [&[usize]; MAX_DIM] = [&[]; MAX_DIM];
    for (sh, s) in shapes.iter_mut().zip(sources.iter().flatten()) {
        *sh = &s.sizes[..s.rank];
    }
    let bshape = broadcast_shapes(&shapes[..count])?;
    let bshape = bshape.as_slice();
    let brank = bshape.len();
    // Each source's strides over the broadcast shape (0 where it repeats).
    let mut bstrides = [[0isize; MAX_DIM]; MAX_DIM];
    for (bs, s) in bstrides.iter_mut().zip(sources.iter().flatten()) {
        let lead = brank - s.rank;
        for j in 0..s.rank {
            if s.sizes[j] != 1 {
                bs[lead + j] = isize::try_from(s.strides[j])
                    .map_err(|_| KernelError::invalid("index stride overflows"))?;
            }
        }
    }

    // Output layout.
    let mut indexed = 0u32;
    for s in sources.iter().flatten() {
        indexed |= 1 << s.dim;
    }
    let first = indexed.trailing_zeros() as usize;
    let last = 31 - indexed.leading_zeros() as usize;
    // The indexed dims are adjacent when no un-indexed dim sits between the first and
    // the last (a k-dim mask counts as k indexed dims).
    let adjacent = (first..=last).all(|d| indexed & (1 << d) != 0);
    let rest = n - indexed.count_ones() as usize;
    let out_rank = brank + rest;
    if out_rank > MAX_DIM {
        return Err(KernelError::invalid("too many dims in the index result"));
    }
    let b_at = if adjacent { first } else { 0 };
    let mut osizes = [0usize; MAX_DIM];
    // For every un-indexed input dim: its position in `out`.
    let mut rest_dims = [0usize; MAX_DIM];
    let mut rest_pos = [0usize; MAX_DIM];
    for (r, d) in (0..n).filter(|&d| indexed & (1 << d) == 0).enumerate() {
        rest_dims[r] = d;
        rest_pos[r] = if r < b_at { r } else { r + brank };
        osizes[rest_pos[r]] = input.size(d);
    }
    osizes[b_at..b_at + brank].copy_from_slice(bshape);
    out.resize(&osizes[..out_rank])?;

    let (os, is) = (istrides(out)?, istrides(input)?);
    let mut slab_sizes = [0usize; MAX_DIM];
    let mut slab_dst = [0isize; MAX_DIM];
    let mut slab_src = [0isize; MAX_DIM];
    for j in 0..rest {
        slab_sizes[j] = input.size(rest_dims[j]);
        slab_dst[j] = os[rest_pos[j]];
        slab_src[j] = is[rest_dims[j]];
    }
    let slab = Walk::copy(&slab_sizes[..rest], &slab_dst[..rest], &slab_src[..rest])?;
    let elem = input.dtype().element_size();
    let src = input.bytes()?;
    let dst = out.bytes_mut()?;

    // Odometer over the broadcast index shape.
    let total =
        et_runtime::checked_numel(bshape).ok_or(KernelError::invalid("index size overflows"))?;
    let mut pos = [0usize; MAX_DIM];
    for _ in 0..total {
        let mut src_base = 0usize;
        for (s, bs) in sources.iter().flatten().zip(&bstrides) {
            let off: isize = (0..brank).map(|j| pos[j] as isize * bs[j]).sum();
            let v = s.data.get(off as usize);
            let i = wrap_index(v, input.size(s.dim))?;
            src_base += i * input.strides()[s.dim];
        }
        let dst_base: usize = (0..brank).map(|j| pos[j] * os[b_at + j] as usize).sum();
        slab.move_bytes(elem, dst, dst_base, src, src_base)?;
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

/// Resolves `indices` against `input`'s dims as PyTorch's advanced indexing does: `None`
/// skips one dim, an integer tensor indexes one dim, and a k-dim bool (or uint8) mask
/// indexes the next k dims and becomes k int64 sources, the coordinates of its true
/// elements (its `nonzero()`), which then broadcast with the other indices like any 1-D
/// index. Returns the sources and how many there are.
pub(super) fn resolve<'a>(
    ctx: &'a KernelContext<'_>,
    input: &Tensor,
    indices: &[Option<&'a Tensor>],
) -> KernelResult<([Option<Source<'a>>; MAX_DIM], usize)> {
    let n = input.dim();
    let mut sources = [None::<Source<'a>>; MAX_DIM];
    let mut count = 0usize;
    let mut dim = 0usize;
    for entry in indices {
        let Some(t) = entry else {
            dim += 1;
            continue;
        };
        match t.dtype() {
            ScalarType::Bool | ScalarType::Byte => {
                let k = t.dim();
                if dim + k > n {
                    return Err(KernelError::invalid("too many indices for the tensor"));
                }
                if t.sizes() != &input.sizes()[dim..dim + k] {
                    return Err(KernelError::invalid(
                        "mask shape does not match the indexed dims",
                    ));
                }
                // A 0-dim mask (`x[True]`) indexes no dim and adds one of size 1 or 0;
                // exported programs do not produce it.
                if k == 0 {
                    return Err(KernelError::unsupported("0-dim masks are not supported"));
                }
                for (c, coords) in mask_coords(ctx, t)?.into_iter().enumerate().take(k) {
                    let nnz = coords.len();
                    let src = push(&mut sources, &mut count)?;
                    let mut sizes = [0usize; MAX_DIM];
                    let mut strides = [0usize; MAX_DIM];
                    sizes[0] = nnz;
                    strides[0] = 1;
                    *src = Some(Source {
                        dim: dim + c,
                        data: IndexData::Long(coords),
                        sizes,
                        strides,
                        rank: 1,
                    });
                }
                dim += k;
            }
            _ => {
                if dim >= n {
                    return Err(KernelError::invalid("too many indices for the tensor"));
                }
                let mut sizes = [0usize; MAX_DIM];
                let mut strides = [0usize; MAX_DIM];
                sizes[..t.dim()].copy_from_slice(t.sizes());
                strides[..t.dim()].copy_from_slice(t.strides());
                let src = push(&mut sources, &mut count)?;
                *src = Some(Source {
                    dim,
                    data: IndexData::of(t)?,
                    sizes,
                    strides,
                    rank: t.dim(),
                });
                dim += 1;
            }
        }
    }
    Ok((sources, count))
}

fn push<'s, 'a>(
    sources: &'s mut [Option<Source<'a>>; MAX_DIM],
    count: &mut usize,
) -> KernelResult<&'s mut Option<Source<'a>>> {
    let slot = sources
        .get_mut(*count)
        .ok_or(KernelError::invalid("too many indices for the tensor"))?;
    *count += 1;
    Ok(slot)
}

/// The coordinates of a mask's true elements, one int64 array per mask dim, in
/// row-major order of the mask (as `nonzero` lists them), in scratch memory.
fn mask_coords<'c>(
    ctx: &'c KernelContext<'_>,
    mask: &Tensor,
) -> KernelResult<[&'c [i64]; MAX_DIM]> {
    // Bool and uint8 masks are both one byte per element; non-zero is true.
    let bytes = mask.bytes()?;
    let offsets = crate::util::layout::LogicalOffsets::new(mask);
    let nnz = offsets
        .clone()
        .filter(|&o| bytes.get(o).is_some_and(|&b| b != 0))
        .count();
    let k = mask.dim();
    let buf = ctx.alloc_temp::<i64>(nnz * k)?;
    let mut coord = [0usize; MAX_DIM];
    let mut t = 0;
    for o in offsets {
        if bytes.get(o).is_some_and(|&b| Bool(b).get()) {
            for c in 0..k {
                buf[c * nnz + t] = coord[c] as i64;
            }
            t += 1;
        }
        let mut c = k;
        while c > 0 {
            c -= 1;
            coord[c] += 1;
            if coord[c] < mask.size(c) {
                break;
            }
            coord[c] = 0;
        }
    }
    let mut out: [&[i64]; MAX_DIM] = [&[]; MAX_DIM];
    let mut rest: &[i64] = buf;
    for o in out.iter_mut().take(k) {
        let (a, b) = rest.split_at(nnz);
        *o = a;
        rest = b;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, TensorBuf};

    fn ctx_run(f: impl FnOnce(&KernelContext<'_>)) {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        f(&KernelContext::new(&arena));
    }

    #[test]
    fn integer_indices() {
        ctx_run(|ctx| {
            let v: std::vec::Vec<f32> = (0..15).map(|i| i as f32).collect();
            let x = TensorBuf::from_slice(&[5, 3], &v).unwrap();
            let i = TensorBuf::from_slice(&[3], &[4i64, -5, 2]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[3, 3]).unwrap();
            index_tensor_out(ctx, &x, &[Some(&i)], &mut o).unwrap();
            assert_eq!(
                o.data::<f32>().unwrap(),
                &[12., 13., 14., 0., 1., 2., 6., 7., 8.]
            );
            // x[:, j] with j of shape [2, 1]: result [5, 2, 1].
            let j = TensorBuf::from_slice(&[2, 1], &[2i32, 0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[5, 2, 1]).unwrap();
            index_tensor_out(ctx, &x, &[None, Some(&j)], &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap()[..4], [2., 0., 5., 3.]);
            // x[i, j] broadcast: i [2,1], j [2] -> [2, 2].
            let i = TensorBuf::from_slice(&[2, 1], &[0i64, 4]).unwrap();
            let j = TensorBuf::from_slice(&[2], &[1i64, 2]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
            index_tensor_out(ctx, &x, &[Some(&i), Some(&j)], &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[1., 2., 13., 14.]);
            let bad = TensorBuf::from_slice(&[1], &[5i64]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[1, 3]).unwrap();
            assert!(index_tensor_out(ctx, &x, &[Some(&bad)], &mut o).is_err());
        });
    }

    #[test]
    fn separated_indices_go_first() {
        ctx_run(|ctx| {
            let v: std::vec::Vec<i64> = (0..24).collect();
            let x = TensorBuf::from_slice(&[2, 3, 4], &v).unwrap();
            let i = TensorBuf::from_slice(&[2], &[1i64, 0]).unwrap();
            let k = TensorBuf::from_slice(&[2], &[3i64, 0]).unwrap();
            // x[i, :, k] -> [2, 3]
            let mut o = TensorBuf::zeros(ScalarType::Long, &[2, 3]).unwrap();
            index_tensor_out(ctx, &x, &[Some(&i), None, Some(&k)], &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[15, 19, 23, 0, 4, 8]);
            // x[:, i2, k] adjacent -> [2, 2]
            let i2 = TensorBuf::from_slice(&[2], &[2i64, 1]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[2, 2]).unwrap();
            index_tensor_out(ctx, &x, &[None, Some(&i2), Some(&k)], &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[11, 4, 23, 16]);
        });
    }

    #[test]
    fn bool_masks() {
        ctx_run(|ctx| {
            let x = TensorBuf::from_slice(&[2, 3], &[1i32, 2, 3, 4, 5, 6]).unwrap();
            let m = TensorBuf::from_slice(
                &[2, 3],
                &[Bool(1), Bool(0), Bool(1), Bool(0), Bool(0), Bool(1)],
            )
            .unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[3]).unwrap();
            index_tensor_out(ctx, &x, &[Some(&m)], &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[1, 3, 6]);
            let rows = TensorBuf::from_slice(&[2], &[Bool(0), Bool(1)]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[1, 3]).unwrap();
            index_tensor_out(ctx, &x, &[Some(&rows)], &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[4, 5, 6]);
        });
    }
}
