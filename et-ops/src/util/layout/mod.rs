//! Data movement, written once: dim normalization, an N-d walker over sizes and several
//! stride sets, and byte-width-generic strided copies.
//!
//! Pure data movement does not need the element type, only its width: copies run on
//! `[u8; W]` elements for `W` in 1, 2, 4, 8, so permute, cat, slice and friends compile
//! to four small loops however many dtypes a build selects. Copies that change
//! the dtype convert through [`convert::Val`](crate::util::convert::Val), one load function
//! per source dtype and one store function per destination dtype (2n instantiations, not
//! n^2).
//!
//! Offsets and strides are in elements. Strides are signed (a flipped view walks
//! backwards) and may be zero (a broadcast view repeats an element).

use et_runtime::{KernelError, KernelResult, ScalarType, Tensor, MAX_DIM};

use crate::util::convert::{Loader, Storer};

#[cfg(test)]
mod tests;
mod transpose;
mod walk;

pub use transpose::transpose_bytes;
pub use walk::{LogicalOffsets, Walk};

/// The most dims a [`Walk`] takes: twice the tensor rank limit, so `repeat` can split
/// every output dim into (repeat, size).
pub const MAX_WALK_DIM: usize = 2 * MAX_DIM;

/// Wraps a possibly negative `dim` into `0..ndim`.
///
/// As in PyTorch, a 0-dim tensor accepts dims `-1` and `0` (both mean "the tensor
/// itself") and yields 0.
pub fn normalize_dim(dim: i64, ndim: usize) -> KernelResult<usize> {
    let n = ndim.max(1) as i64;
    let d = if dim < 0 { dim + n } else { dim };
    if (0..n).contains(&d) {
        Ok(d as usize)
    } else {
        Err(KernelError::invalid("dim out of range"))
    }
}

/// Wraps an insertion position (as `unsqueeze` takes) into `0..=ndim`.
pub fn normalize_insert_dim(dim: i64, ndim: usize) -> KernelResult<usize> {
    normalize_dim(dim, ndim + 1)
}

/// Normalizes every dim of `dims` against `ndim` into a bit mask of dims, failing on
/// duplicates (`flip`, `squeeze` and reductions all reject them).
pub fn dims_mask(dims: &[i64], ndim: usize) -> KernelResult<u32> {
    let mut mask = 0u32;
    for &d in dims {
        let d = normalize_dim(d, ndim)?;
        if mask & (1 << d) != 0 {
            return Err(KernelError::invalid("dim appears more than once"));
        }
        mask |= 1 << d;
    }
    Ok(mask)
}

/// A tensor's element strides as signed numbers (entries past `dim()` are zero).
pub fn istrides(t: &Tensor) -> KernelResult<[isize; MAX_DIM]> {
    let mut out = [0isize; MAX_DIM];
    for (o, &s) in out.iter_mut().zip(t.strides()) {
        *o = isize::try_from(s).map_err(|_| KernelError::invalid("tensor stride overflows"))?;
    }
    Ok(out)
}

/// Converts signed sizes (as operators receive them) to `usize`, failing on negatives.
pub fn sizes_from_i64(src: &[i64], dst: &mut [usize; MAX_DIM]) -> KernelResult<usize> {
    if src.len() > MAX_DIM {
        return Err(KernelError::invalid("too many dims"));
    }
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = usize::try_from(s).map_err(|_| KernelError::invalid("negative size"))?;
    }
    Ok(src.len())
}

/// Fails unless two tensors have the same dtype.
pub fn check_same_dtype(a: &Tensor, b: &Tensor) -> KernelResult<()> {
    if a.dtype() == b.dtype() {
        Ok(())
    } else {
        Err(KernelError::invalid("tensors must have the same dtype"))
    }
}

/// Copies `src` into `dst` element by element in logical (row-major) order: both must
/// hold the same number of elements of the same width; shapes and dim orders may differ.
pub fn copy_logical(dst: &mut Tensor, src: &Tensor) -> KernelResult<()> {
    if dst.numel() != src.numel() {
        return Err(KernelError::invalid("element counts differ"));
    }
    let elem = src.dtype().element_size();
    if dst.dtype().element_size() != elem {
        return Err(KernelError::invalid("element sizes differ"));
    }
    if src.is_contiguous() && dst.is_contiguous() {
        dst.bytes_mut()?.copy_from_slice(src.bytes()?);
        return Ok(());
    }
    match elem {
        1 => copy_logical_w::<1>(dst, src),
        2 => copy_logical_w::<2>(dst, src),
        4 => copy_logical_w::<4>(dst, src),
        8 => copy_logical_w::<8>(dst, src),
        _ => Err(KernelError::unsupported(
            "element size not supported for copies",
        )),
    }
}

fn copy_logical_w<const W: usize>(dst: &mut Tensor, src: &Tensor) -> KernelResult<()> {
    let d_offs = LogicalOffsets::new(dst);
    let s_offs = LogicalOffsets::new(src);
    let s = src.bytes()?.as_chunks::<W>().0;
    let d = dst.bytes_mut()?.as_chunks_mut::<W>().0;
    // Offsets of a tensor's own elements are below its numel by construction of its
    // strides; `get` keeps a corrupt shape from reading out of bounds anyway.
    for (di, si) in d_offs.zip(s_offs) {
        match (d.get_mut(di), s.get(si)) {
            (Some(x), Some(y)) => *x = *y,
            _ => return Err(KernelError::invalid("index out of bounds for tensor data")),
        }
    }
    Ok(())
}

/// Copies `src` into `dst` (same sizes; dim orders may differ), converting the dtype
/// with `from`/`to` when they differ.
pub fn copy_same_shape(
    dst: &mut Tensor,
    src: &Tensor,
    from: Option<Loader>,
    to: Option<Storer>,
) -> KernelResult<()> {
    if dst.sizes() != src.sizes() {
        return Err(KernelError::invalid("tensor sizes differ"));
    }
    let sizes = src.sizes();
    let n = sizes.len();
    let (ds, ss) = (istrides(dst)?, istrides(src)?);
    let walk = Walk::copy(sizes, &ds[..n], &ss[..n])?;
    if dst.dtype() == src.dtype() {
        let elem = src.dtype().element_size();
        if dst.dim_order() == src.dim_order() {
            dst.bytes_mut()?.copy_from_slice(src.bytes()?);
            return Ok(());
        }
        let src_bytes = src.bytes()?;
        return walk.move_bytes(elem, dst.bytes_mut()?, 0, src_bytes, 0);
    }
    match (from, to) {
        (Some(from), Some(to)) => {
            let src_bytes = src.bytes()?;
            walk.convert(dst.bytes_mut()?, 0, to, src_bytes, 0, from)
        }
        _ => Err(KernelError::invalid("tensors must have the same dtype")),
    }
}

/// Resizes `out` to `sizes` and fills it, in its own dim order, from `src` read through
/// `strides` starting at element `offset`: the last step of every view-like copy
/// (permute, expand, slice, select, unsqueeze, ...). `out` must have `src`'s dtype.
pub fn copy_view(
    out: &mut Tensor,
    sizes: &[usize],
    src: &Tensor,
    strides: &[isize],
    offset: usize,
) -> KernelResult<()> {
    check_same_dtype(out, src)?;
    out.resize(sizes)?;
    let n = sizes.len();
    let os = istrides(out)?;
    let walk = Walk::copy(sizes, &os[..n], strides)?;
    let elem = src.dtype().element_size();
    let src_bytes = src.bytes()?;
    walk.move_bytes(elem, out.bytes_mut()?, 0, src_bytes, offset)
}

/// Fails unless `dim_order` (when given) is exactly `out`'s dim order: the dim-order ops
/// receive the target order both as an argument and as the out tensor's layout.
pub fn check_dim_order_arg(dim_order: Option<&[i64]>, out: &Tensor) -> KernelResult<()> {
    if let Some(order) = dim_order {
        let same = order.len() == out.dim()
            && order
                .iter()
                .zip(out.dim_order())
                .all(|(&a, &b)| a == b as i64);
        if !same {
            return Err(KernelError::invalid(
                "dim_order does not match the out tensor",
            ));
        }
    }
    Ok(())
}

/// Fills `dst` with copies of one element given as bytes.
pub fn fill_bytes(dst: &mut [u8], elem: &[u8]) -> KernelResult<()> {
    match elem.len() {
        1 => dst.fill(elem[0]),
        2 => fill_w::<2>(dst, elem),
        4 => fill_w::<4>(dst, elem),
        8 => fill_w::<8>(dst, elem),
        _ => {
            return Err(KernelError::unsupported(
                "element size not supported for fills",
            ))
        }
    }
    Ok(())
}

fn fill_w<const W: usize>(dst: &mut [u8], elem: &[u8]) {
    if let Some(e) = elem.first_chunk::<W>() {
        dst.as_chunks_mut::<W>().0.fill(*e);
    }
}

/// A read-only view of an integer index tensor (int64 or int32), in memory order.
#[derive(Clone, Copy, Debug)]
pub enum IndexData<'a> {
    /// int64 indices.
    Long(&'a [i64]),
    /// int32 indices.
    Int(&'a [i32]),
}

impl<'a> IndexData<'a> {
    /// The data of an int64 or int32 tensor.
    pub fn of(t: &'a Tensor) -> KernelResult<Self> {
        match t.dtype() {
            ScalarType::Long => Ok(IndexData::Long(t.data::<i64>()?)),
            ScalarType::Int => Ok(IndexData::Int(t.data::<i32>()?)),
            _ => Err(KernelError::invalid("index tensor must be int64 or int32")),
        }
    }

    /// The index at memory offset `i` (0 past the end; callers index within numel).
    #[inline]
    pub fn get(&self, i: usize) -> i64 {
        match self {
            IndexData::Long(d) => d.get(i).copied().unwrap_or(0),
            IndexData::Int(d) => d.get(i).map_or(0, |&x| x as i64),
        }
    }
}

/// Wraps a possibly negative index into `0..size`.
#[inline]
pub fn wrap_index(i: i64, size: usize) -> KernelResult<usize> {
    let s = size as i64;
    let j = if i < 0 { i + s } else { i };
    if (0..s).contains(&j) {
        Ok(j as usize)
    } else {
        Err(KernelError::invalid("index out of range"))
    }
}
