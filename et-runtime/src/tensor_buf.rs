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
        let mut data: Box<[u128]> = vec![0u128; nbytes.div_ceil(16)].into_boxed_slice();
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

/// Heap memory for one method, sized from its metadata and 16-byte aligned (`alloc`
/// feature): the method arena, one buffer per planned arena, and kernel scratch.
///
/// ```ignore
/// let mut buffers = MethodBuffers::for_method(&meta, 64 << 20)?;
/// let (method_mem, mut planned, scratch) = buffers.split();
/// let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
/// ```
#[derive(Debug)]
pub struct MethodBuffers {
    method: Vec<u128>,
    planned: Vec<Vec<u128>>,
    scratch: Vec<u128>,
}

fn words(bytes: usize) -> Vec<u128> {
    vec![0u128; bytes.div_ceil(16)]
}

fn bytes_of(v: &mut [u128]) -> &mut [u8] {
    let len = core::mem::size_of_val(v);
    // SAFETY: u128 has no padding and every byte pattern is a valid u8; the view covers
    // exactly the slice's memory and borrows it mutably.
    unsafe { core::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

impl MethodBuffers {
    /// Buffers for method `name` of `program` with `scratch_bytes` of kernel scratch,
    /// including the method memory its delegates' backends take
    /// ([`Program::method_memory_estimate`](crate::Program::method_memory_estimate)).
    pub fn for_program_method(
        program: &crate::Program<'_>,
        name: &str,
        scratch_bytes: usize,
    ) -> Result<MethodBuffers, Error> {
        let mut buffers = Self::for_method(&program.method_meta(name)?, scratch_bytes)?;
        buffers.method = words(program.method_memory_estimate(name)?);
        Ok(buffers)
    }

    /// Buffers for `meta` with `scratch_bytes` of kernel scratch. Method memory covers the
    /// method's own tables; a method with delegates needs
    /// [`for_program_method`](Self::for_program_method).
    pub fn for_method(
        meta: &crate::MethodMeta<'_>,
        scratch_bytes: usize,
    ) -> Result<MethodBuffers, Error> {
        let planned = (0..meta.num_planned_buffers())
            .map(|i| meta.planned_buffer_size(i).map(words))
            .collect::<Result<_, _>>()?;
        Ok(MethodBuffers {
            method: words(crate::method_allocator_estimate(meta)),
            planned,
            scratch: words(scratch_bytes),
        })
    }

    /// The method arena, the planned buffers and the scratch, as the byte slices a
    /// [`MemoryManager`](crate::MemoryManager) takes.
    pub fn split(&mut self) -> (&mut [u8], Vec<&mut [u8]>, &mut [u8]) {
        let planned = self.planned.iter_mut().map(|b| bytes_of(b)).collect();
        (
            bytes_of(&mut self.method),
            planned,
            bytes_of(&mut self.scratch),
        )
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
