//! Tensors: shape, dim order, strides and a view of element data.

use core::fmt;
use core::ptr::NonNull;

use crate::error::{Error, KernelError, KernelResult};
use et_schema::scalar_type::{Element, ScalarType};

pub use et_schema::meta::{ShapeDynamism, MAX_DIM};

const FLAG_READ_ONLY: u8 = 1;
const FLAG_PLANNED: u8 = 2;

/// A tensor: element type, shape, dim order, strides and a pointer to its data.
///
/// Tensors of a loaded method live in the method's memory; kernels receive `&Tensor` for
/// inputs and `&mut Tensor` for outputs. Shape data is owned by whoever built the tensor
/// (the method allocator, or a [`TensorBuf`](crate::TensorBuf) under `alloc`).
pub struct Tensor {
    data: *mut u8,
    sizes: NonNull<usize>,
    strides: NonNull<usize>,
    dim_order: NonNull<u8>,
    numel: usize,
    numel_bound: usize,
    dim: u8,
    dtype: ScalarType,
    dynamism: ShapeDynamism,
    flags: u8,
}

// SAFETY: a `Tensor` only refers to memory owned by the method (or owned buffer) it
// belongs to; moving that owner to another thread moves the tensor with it, and shared
// access only reads. Mutation requires `&mut Tensor`.
unsafe impl Send for Tensor {}
// SAFETY: `&Tensor` only gives read access to the shape and data.
unsafe impl Sync for Tensor {}

/// Storage for a tensor's shape metadata, handed to [`Tensor::from_raw_parts`].
#[derive(Debug)]
pub struct ShapeStorage {
    /// `dim` sizes.
    pub sizes: NonNull<usize>,
    /// `dim` strides, recomputed by the constructor.
    pub strides: NonNull<usize>,
    /// `dim` dim-order entries.
    pub dim_order: NonNull<u8>,
}

impl Tensor {
    /// Builds a tensor from raw parts. Shape and strides are computed from `sizes` and
    /// `dim_order`, which must already be written into `storage`.
    ///
    /// # Safety
    /// `storage`'s three arrays must each hold `dim` elements (the sizes and dim order
    /// initialized; the strides, written here, need not be), be valid for reads and
    /// writes for as long as the tensor is used, and not be used elsewhere.
    /// `data` must be null or valid for reads (and writes unless `read_only`) of
    /// `numel_bound * dtype.element_size()` bytes for as long as the tensor is used, and
    /// `dim_order` must be a permutation of `0..dim`.
    pub(crate) unsafe fn from_raw_parts(
        dtype: ScalarType,
        dim: usize,
        storage: ShapeStorage,
        data: *mut u8,
        dynamism: ShapeDynamism,
        read_only: bool,
        planned: bool,
    ) -> Tensor {
        // Computed before the tensor exists, so that it is assembled once, where the
        // caller puts it (with a `&mut self` pass after, it is built aside and copied).
        // SAFETY: the three arrays hold `dim` elements, the sizes and dim order
        // initialized, and are ours alone (caller).
        let numel = unsafe { fill_strides(storage.sizes, storage.strides, storage.dim_order, dim) };
        Tensor {
            data,
            sizes: storage.sizes,
            strides: storage.strides,
            dim_order: storage.dim_order,
            numel,
            numel_bound: numel,
            dim: dim as u8,
            dtype,
            dynamism,
            flags: (if read_only { FLAG_READ_ONLY } else { 0 })
                | (if planned { FLAG_PLANNED } else { 0 }),
        }
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> ScalarType {
        self.dtype
    }

    /// The rank (0 for a scalar tensor).
    #[inline]
    pub fn dim(&self) -> usize {
        self.dim as usize
    }

    /// The size of each dimension.
    #[inline]
    pub fn sizes(&self) -> &[usize] {
        // SAFETY: `sizes` holds `dim` initialized elements for the tensor's lifetime
        // (constructor contract); it is only written through `&mut self`.
        unsafe { core::slice::from_raw_parts(self.sizes.as_ptr(), self.dim as usize) }
    }

    /// The size of dimension `d`. Panics if `d >= dim()`, like slice indexing.
    #[inline]
    pub fn size(&self, d: usize) -> usize {
        self.sizes()[d]
    }

    /// Element strides, derived from sizes and dim order.
    #[inline]
    pub fn strides(&self) -> &[usize] {
        // SAFETY: as for `sizes`.
        unsafe { core::slice::from_raw_parts(self.strides.as_ptr(), self.dim as usize) }
    }

    /// The dim order: dimensions from outermost to innermost in memory.
    #[inline]
    pub fn dim_order(&self) -> &[u8] {
        // SAFETY: as for `sizes`.
        unsafe { core::slice::from_raw_parts(self.dim_order.as_ptr(), self.dim as usize) }
    }

    /// True when the dim order is `0, 1, ..., dim-1` (row-major, "contiguous").
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.dim_order()
            .iter()
            .enumerate()
            .all(|(i, &d)| d as usize == i)
    }

    /// True when the tensor is 4-D in channels-last order (`0, 2, 3, 1`).
    pub fn is_channels_last(&self) -> bool {
        self.dim_order() == [0, 2, 3, 1]
    }

    /// The number of elements (1 for a 0-dim tensor).
    #[inline]
    pub fn numel(&self) -> usize {
        self.numel
    }

    /// The largest number of elements the tensor may hold (its exported upper bound).
    #[inline]
    pub fn numel_bound(&self) -> usize {
        self.numel_bound
    }

    /// Bytes of data (`numel * element_size`).
    #[inline]
    pub fn nbytes(&self) -> usize {
        self.numel * self.dtype.element_size()
    }

    /// Shape dynamism.
    #[inline]
    pub fn dynamism(&self) -> ShapeDynamism {
        self.dynamism
    }

    /// True if the data is a constant from the program (never writable).
    #[inline]
    pub fn is_read_only(&self) -> bool {
        self.flags & FLAG_READ_ONLY != 0
    }

    /// True if the data lives in planned memory (so `set_input` copies into it).
    #[inline]
    pub fn is_memory_planned(&self) -> bool {
        self.flags & FLAG_PLANNED != 0
    }

    /// The raw data pointer (null when no data is bound).
    #[inline]
    pub fn data_ptr(&self) -> *const u8 {
        self.data
    }

    /// The data as bytes.
    pub fn bytes(&self) -> KernelResult<&[u8]> {
        let n = self.nbytes();
        if n == 0 {
            return Ok(&[]);
        }
        if self.data.is_null() {
            return Err(KernelError::new(Error::InvalidState, "tensor has no data"));
        }
        // SAFETY: `data` is valid for `numel_bound * element_size >= nbytes` bytes
        // (constructor contract; `numel <= numel_bound` is kept by `resize`). Writers
        // need `&mut Tensor` or are excluded by the method's alias check.
        Ok(unsafe { core::slice::from_raw_parts(self.data, n) })
    }

    /// The data as mutable bytes; fails for constants.
    pub fn bytes_mut(&mut self) -> KernelResult<&mut [u8]> {
        let n = self.nbytes();
        if n == 0 {
            return Ok(&mut []);
        }
        self.check_writable()?;
        // SAFETY: as in `bytes`, and the tensor is not read-only, so the data is writable
        // memory that no shared view overlaps while `&mut self` is held.
        Ok(unsafe { core::slice::from_raw_parts_mut(self.data, n) })
    }

    /// The elements, in memory order (see [`dim_order`](Self::dim_order)).
    ///
    /// Fails if `T` does not match the dtype, no data is bound, or the data is misaligned.
    #[inline]
    pub fn data<T: Element>(&self) -> KernelResult<&[T]> {
        self.check_view::<T>()?;
        if self.numel == 0 {
            return Ok(&[]);
        }
        // SAFETY: `check_view` proved the dtype matches `T` (so the size matches), the
        // pointer is non-null and aligned for `T`; the allocation holds at least `numel`
        // elements; every bit pattern is a valid `T` (`Element` contract).
        Ok(unsafe { core::slice::from_raw_parts(self.data as *const T, self.numel) })
    }

    /// The elements, mutably, in memory order. Fails as [`data`](Self::data) does, and for
    /// read-only (constant) tensors.
    #[inline]
    pub fn data_mut<T: Element>(&mut self) -> KernelResult<&mut [T]> {
        self.check_view::<T>()?;
        if self.numel == 0 {
            return Ok(&mut []);
        }
        self.check_writable()?;
        // SAFETY: as in `data`; writable memory, exclusively borrowed through `&mut self`.
        Ok(unsafe { core::slice::from_raw_parts_mut(self.data as *mut T, self.numel) })
    }

    fn check_view<T: Element>(&self) -> KernelResult<()> {
        if self.dtype != T::DTYPE {
            return Err(KernelError::new(
                Error::InvalidType,
                "tensor dtype does not match the requested element type",
            ));
        }
        if self.numel != 0 {
            if self.data.is_null() {
                return Err(KernelError::new(Error::InvalidState, "tensor has no data"));
            }
            if !(self.data as usize).is_multiple_of(core::mem::align_of::<T>()) {
                return Err(KernelError::new(
                    Error::InvalidArgument,
                    "tensor data is misaligned",
                ));
            }
        }
        Ok(())
    }

    fn check_writable(&self) -> KernelResult<()> {
        if self.is_read_only() {
            return Err(KernelError::new(
                Error::InvalidArgument,
                "cannot write to a constant tensor",
            ));
        }
        if self.data.is_null() {
            return Err(KernelError::new(Error::InvalidState, "tensor has no data"));
        }
        Ok(())
    }

    /// Changes the shape, as ExecuTorch's `resize_tensor`: a static tensor only accepts its
    /// own sizes, a bounded one any sizes with at most `numel_bound` elements; the rank
    /// never changes. Strides are recomputed from the dim order.
    pub fn resize(&mut self, new_sizes: &[usize]) -> KernelResult<()> {
        if new_sizes.len() != self.dim() {
            return Err(KernelError::invalid("resize cannot change a tensor's rank"));
        }
        if new_sizes == self.sizes() {
            return Ok(());
        }
        match self.dynamism {
            ShapeDynamism::Static => {
                return Err(KernelError::new(
                    Error::NotSupported,
                    "cannot resize a static-shape tensor",
                ));
            }
            ShapeDynamism::Bound | ShapeDynamism::Unbound => {
                let numel = checked_numel(new_sizes)
                    .ok_or(KernelError::invalid("tensor size overflows"))?;
                if numel > self.numel_bound {
                    return Err(KernelError::new(
                        Error::NotSupported,
                        "new size exceeds the tensor's upper bound",
                    ));
                }
            }
        }
        // SAFETY: `sizes` holds `dim` elements, exclusively ours through `&mut self`.
        let sizes = unsafe { core::slice::from_raw_parts_mut(self.sizes.as_ptr(), self.dim()) };
        // (Equal lengths, checked above.)
        for (d, s) in sizes.iter_mut().zip(new_sizes) {
            *d = *s;
        }
        self.recompute_strides();
        Ok(())
    }

    /// Recomputes strides and numel after the sizes changed.
    fn recompute_strides(&mut self) {
        // SAFETY: all three arrays hold `dim` elements and are exclusively ours here.
        self.numel = unsafe { fill_strides(self.sizes, self.strides, self.dim_order, self.dim()) };
    }

    /// Points the tensor at other data (an alias, as `et_view` and `set_input` do).
    ///
    /// # Safety
    /// `data` must satisfy the constructor's contract for the tensor's current bound.
    pub(crate) unsafe fn set_data(&mut self, data: *mut u8, read_only: bool) {
        self.data = data;
        if read_only {
            self.flags |= FLAG_READ_ONLY;
        } else {
            self.flags &= !FLAG_READ_ONLY;
        }
    }

    /// Makes the tensor a read-only view of `data` laid out in `dim_order`: the sizes
    /// stay, the strides are recomputed for the new dim order, and the tensor no longer
    /// counts as planned (its data is no longer its own). For load-time rewrites
    /// (`rewrite::Rewriter::view_constant`).
    ///
    /// # Safety
    /// `dim_order` must be a permutation of `0..dim()`, and `data` valid for reads of
    /// `numel_bound() * element_size` bytes for as long as the tensor is used.
    #[cfg(any(test, feature = "rewrite"))]
    pub(crate) unsafe fn view_read_only(&mut self, data: *const u8, dim_order: &[u8]) {
        debug_assert_eq!(dim_order.len(), self.dim());
        // SAFETY: the dim-order array holds `dim` bytes, valid for writes (constructor
        // contract) and exclusively ours through `&mut self`; `zip` stops at `dim`.
        let order = unsafe { core::slice::from_raw_parts_mut(self.dim_order.as_ptr(), self.dim()) };
        for (slot, &d) in order.iter_mut().zip(dim_order) {
            *slot = d;
        }
        self.recompute_strides();
        self.data = data.cast_mut();
        self.flags = FLAG_READ_ONLY;
    }

    /// Marks the data as owned by the method (so `set_input` copies into it).
    pub(crate) fn mark_planned(&mut self) {
        self.flags |= FLAG_PLANNED;
    }

    /// The byte range of the data, for alias checks.
    #[inline]
    pub(crate) fn byte_range(&self) -> (usize, usize) {
        let start = self.data as usize;
        (start, start + self.nbytes())
    }
}

/// The product of `sizes`, or `None` on overflow.
pub fn checked_numel(sizes: &[usize]) -> Option<usize> {
    sizes.iter().try_fold(1usize, |acc, &s| acc.checked_mul(s))
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("dtype", &self.dtype)
            .field("sizes", &self.sizes())
            .field("dim_order", &self.dim_order())
            .field("dynamism", &self.dynamism)
            .finish()
    }
}

/// Writes the strides of `dim` sizes laid out in `dim_order`, and returns the number of
/// elements.
///
/// # Safety
/// The three arrays must hold `dim` elements, the sizes and dim order initialized (the
/// strides need not be: they are only written, through raw pointers), the strides not
/// borrowed elsewhere.
unsafe fn fill_strides(
    sizes: NonNull<usize>,
    strides: NonNull<usize>,
    dim_order: NonNull<u8>,
    dim: usize,
) -> usize {
    // SAFETY: the caller's promise.
    let (sizes, order) = unsafe {
        (
            core::slice::from_raw_parts(sizes.as_ptr(), dim),
            core::slice::from_raw_parts(dim_order.as_ptr(), dim),
        )
    };
    let mut stride = 1usize;
    let mut numel = 1usize;
    // (The dim order is a permutation of `0..dim`, so every lookup hits, and the loop
    // visits every size once.)
    for &d in order.iter().rev() {
        let d = d as usize;
        if let Some(&size) = sizes.get(d) {
            // SAFETY: `d < dim` (`sizes` has `dim` entries): inside the strides array.
            unsafe { strides.as_ptr().add(d).write(stride) };
            // A zero-size dimension counts as one, as in ExecuTorch, so strides stay
            // useful.
            stride = stride.saturating_mul(size.max(1));
            // Every constructor and `resize` checked that the product fits.
            numel = numel.wrapping_mul(size);
        }
    }
    numel
}

#[cfg(test)]
mod view_tests {
    use crate::tensor::ShapeDynamism;
    use crate::tensor_buf::TensorBuf;
    use alloc::vec::Vec;
    use et_schema::scalar_type::ScalarType;

    /// The dim order a permuted view of a constant gets (as a constant-view rule computes
    /// it) makes its strides the input's, permuted: `stride_out[k] == stride_in[perm[k]]`, for inputs in the
    /// default and in other dim orders.
    #[test]
    fn permuted_dim_order_gives_permuted_strides() {
        let cases: &[(&[usize], &[u8], &[u8])] = &[
            (&[1000, 1280], &[0, 1], &[1, 0]),
            (&[2, 3, 4], &[0, 1, 2], &[2, 0, 1]),
            (&[2, 3, 4, 5], &[0, 2, 3, 1], &[0, 3, 1, 2]),
            (&[2, 0, 4], &[0, 1, 2], &[1, 2, 0]),
            (&[7], &[0], &[0]),
        ];
        for &(sizes, in_order, perm) in cases {
            let src =
                TensorBuf::with_layout(ScalarType::Float, sizes, in_order, ShapeDynamism::Static)
                    .unwrap();
            let n = sizes.len();
            let out_sizes: Vec<usize> = perm.iter().map(|&p| sizes[p as usize]).collect();
            let mut out = TensorBuf::zeros(ScalarType::Float, &out_sizes).unwrap();
            let mut inverse = [0u8; 8];
            for (k, &p) in perm.iter().enumerate() {
                inverse[p as usize] = k as u8;
            }
            let order: Vec<u8> = src
                .dim_order()
                .iter()
                .map(|&d| inverse[d as usize])
                .collect();
            // SAFETY: `order` is a permutation of `0..n`; `src`'s data holds the same
            // number of elements and outlives `out`'s use here.
            unsafe { out.view_read_only(src.data_ptr(), &order) };
            for k in 0..n {
                assert_eq!(
                    out.strides()[k],
                    src.strides()[perm[k] as usize],
                    "sizes {sizes:?}, input order {in_order:?}, perm {perm:?}"
                );
            }
            assert!(out.is_read_only() && !out.is_memory_planned());
            assert_eq!(out.data_ptr(), src.data_ptr());
            assert!(out.data_mut::<f32>().is_err() || out.numel() == 0);
        }
    }
}
