//! Heap-owned tensors for tools and tests (`alloc` feature).

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;

use crate::error::Error;
use crate::tensor::{checked_numel, ShapeDynamism, ShapeStorage, Tensor, MAX_DIM};
use et_schema::scalar_type::{Element, ScalarType};

/// A tensor that owns its shape and data on the heap. Dereferences to [`Tensor`].
pub struct TensorBuf {
    // The boxes are never touched after construction except through `tensor`, which
    // points into them; boxes do not move their contents when the `TensorBuf` moves.
    _sizes: Box<[usize]>,
    _strides: Box<[usize]>,
    _dim_order: Box<[u8]>,
    _data: Box<[u128]>,
    tensor: Tensor,
}

impl TensorBuf {
    /// A zero-filled tensor with a given dim order and dynamism. With `Bound` dynamism,
    /// `sizes` is the upper bound and the tensor may later be resized within it.
    pub fn with_layout(
        dtype: ScalarType,
        sizes: &[usize],
        dim_order: &[u8],
        dynamism: ShapeDynamism,
    ) -> Result<TensorBuf, Error> {
        let dim = sizes.len();
        if dim > MAX_DIM || dim_order.len() != dim {
            return Err(Error::InvalidArgument);
        }
        let mut seen = [false; MAX_DIM];
        for &d in dim_order {
            if d as usize >= dim || core::mem::replace(&mut seen[d as usize], true) {
                return Err(Error::InvalidArgument);
            }
        }
        let numel = checked_numel(sizes).ok_or(Error::InvalidArgument)?;
        let nbytes = numel
            .checked_mul(dtype.element_size())
            .ok_or(Error::InvalidArgument)?;
        let mut sizes_box: Box<[usize]> = sizes.into();
        let mut strides: Box<[usize]> = vec![0usize; dim].into_boxed_slice();
        let mut order: Box<[u8]> = dim_order.into();
        // The sizes may come from a file: a failed allocation is an error, not an abort.
        let mut data: Box<[u128]> = crate::method_buffers::zeroed_words(nbytes)
            .ok_or(Error::MemoryAllocationFailed)?
            .into_boxed_slice();
        let storage = ShapeStorage {
            sizes: NonNull::new(sizes_box.as_mut_ptr()).ok_or(Error::Internal)?,
            strides: NonNull::new(strides.as_mut_ptr()).ok_or(Error::Internal)?,
            dim_order: NonNull::new(order.as_mut_ptr()).ok_or(Error::Internal)?,
        };
        // SAFETY: the boxes hold `dim` elements each and `nbytes` bytes of data, live as
        // long as the returned value, and are reached only through `tensor`; the dim order
        // was checked to be a permutation.
        let tensor = unsafe {
            Tensor::from_raw_parts(
                dtype,
                dim,
                storage,
                data.as_mut_ptr().cast::<u8>(),
                dynamism,
                false,
                false,
            )
        };
        Ok(TensorBuf {
            _sizes: sizes_box,
            _strides: strides,
            _dim_order: order,
            _data: data,
            tensor,
        })
    }

    /// A zero-filled, contiguous, static-shape tensor.
    pub fn zeros(dtype: ScalarType, sizes: &[usize]) -> Result<TensorBuf, Error> {
        let order: [u8; MAX_DIM] = core::array::from_fn(|i| i as u8);
        TensorBuf::with_layout(
            dtype,
            sizes,
            &order[..sizes.len().min(MAX_DIM)],
            ShapeDynamism::Static,
        )
    }

    /// A contiguous tensor holding `values` (whose length must equal the size product).
    pub fn from_slice<T: Element>(sizes: &[usize], values: &[T]) -> Result<TensorBuf, Error> {
        let mut t = TensorBuf::zeros(T::DTYPE, sizes)?;
        let dst = t.tensor.data_mut::<T>().map_err(|e| e.error)?;
        if dst.len() != values.len() {
            return Err(Error::InvalidArgument);
        }
        dst.copy_from_slice(values);
        Ok(t)
    }

    /// A contiguous tensor whose data is `bytes` (little-endian, `nbytes` long).
    pub fn from_bytes(
        dtype: ScalarType,
        sizes: &[usize],
        bytes: &[u8],
    ) -> Result<TensorBuf, Error> {
        let mut t = TensorBuf::zeros(dtype, sizes)?;
        let dst = t.tensor.bytes_mut().map_err(|e| e.error)?;
        if dst.len() != bytes.len() {
            return Err(Error::InvalidArgument);
        }
        dst.copy_from_slice(bytes);
        Ok(t)
    }
}

impl Tensor {
    /// The data as little-endian bytes in logical (row-major) order, whatever the dim
    /// order: what `.bin` files and NumPy hold.
    pub fn to_row_major_bytes(&self) -> Result<Vec<u8>, crate::KernelError> {
        let bytes = self.bytes()?;
        if self.is_contiguous() {
            return Ok(bytes.to_vec());
        }
        let es = self.dtype().element_size();
        let (sizes, strides) = (self.sizes(), self.strides());
        let mut out = Vec::with_capacity(bytes.len());
        for mut i in 0..self.numel() {
            let mut offset = 0;
            for d in (0..sizes.len()).rev() {
                offset += (i % sizes[d]) * strides[d];
                i /= sizes[d];
            }
            // In bounds: every logical index maps inside the `numel` elements of `bytes`.
            out.extend_from_slice(&bytes[offset * es..offset * es + es]);
        }
        Ok(out)
    }
}

impl Deref for TensorBuf {
    type Target = Tensor;
    fn deref(&self) -> &Tensor {
        &self.tensor
    }
}

impl DerefMut for TensorBuf {
    fn deref_mut(&mut self) -> &mut Tensor {
        &mut self.tensor
    }
}

impl fmt::Debug for TensorBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.tensor, f)
    }
}
