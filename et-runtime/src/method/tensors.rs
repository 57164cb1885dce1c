//! Tensor values: their shape arrays in method memory, and their data bound to the
//! program's constants, the caller's planned buffers, or method memory.
//!
//! Checked here: the planned buffers are as large as the plan says (before anything is
//! built, for a clear message); each tensor's shape is well formed (`TensorShape`), its
//! storage offset is zero and its shape is bounded; constant data lies inside its segment
//! and planned data inside its buffer. External data is bound (and checked) in
//! `external`.

use core::cell::Cell;
use core::mem::{align_of, size_of, MaybeUninit};
use core::ptr::NonNull;

use super::build::Builder;
use crate::error::Error;
use crate::memory::Arena;
use crate::method_error::{note, LoadDetail};
use crate::program::{MethodMeta, Table, TensorShape};
use crate::tensor::{ShapeDynamism, ShapeStorage, Tensor};
use et_schema::fields as fb;
use et_schema::meta::external_data_name;
use et_schema::reader::Fields;
use et_schema::scalar_type::ScalarType;

type T<'x> = fb::Tensor<'x>;

/// Checks that every planned buffer the method needs is provided and large enough, and
/// returns raw (data, length) views of them in method memory: tensors keep pointers into
/// the buffers, so the `&mut` borrows are not used again.
pub(super) fn planned_buffers<'a>(
    meta: &MethodMeta<'a>,
    arena: &'a Arena<'a>,
    planned: &mut [&'a mut [u8]],
    detail: &Cell<LoadDetail<'a>>,
) -> Result<&'a [(*mut u8, usize)], Error> {
    for index in 0..meta.num_planned_buffers() {
        let required = meta.planned_buffer_size(index)?;
        let provided = planned.get(index).map_or(0, |b| b.len());
        if provided < required {
            let d = LoadDetail::PlannedBuffer {
                index,
                required,
                provided,
            };
            return Err(note(detail, Error::MemoryAllocationFailed, d));
        }
    }
    let raw = arena.alloc_array::<(*mut u8, usize)>(planned.len())?;
    for (i, buf) in planned.iter_mut().enumerate() {
        // SAFETY: `i < planned.len()`, the array's length.
        unsafe { raw.as_ptr().add(i).write((buf.as_mut_ptr(), buf.len())) };
    }
    // SAFETY: all `planned.len()` entries were written above; the arena allocation lives
    // for 'a and is only read from now on.
    Ok(unsafe { core::slice::from_raw_parts(raw.as_ptr(), planned.len()) })
}

/// Where a tensor's data lives.
struct Data {
    ptr: *mut u8,
    /// Program constants are never written.
    read_only: bool,
    /// In a planned buffer (or method memory): the execute may overwrite it.
    planned: bool,
}

impl<'a> Builder<'a, '_> {
    pub(super) fn build_tensor(&self, t: Table<'a>) -> Result<NonNull<Tensor>, Error> {
        let t = t.fields();
        let shape = supported_shape(t)?;
        let dim = shape.rank();
        let (tensor, storage, nbytes) = self.tensor_storage(&shape)?;
        // SAFETY: `storage` holds the `dim` sizes and dim-order entries just filled.
        let data = unsafe { self.tensor_data(t, shape.dtype, &storage, dim, nbytes)? };
        // SAFETY: the sizes and dim order hold `dim` initialized elements, the strides room
        // for `dim`, in the method arena, used by this tensor only, and the dim order is a
        // permutation (checked by `TensorShape::fill_uninit`); `data` is null or valid for `nbytes` (the bound: sizes are
        // the upper bound for dynamic tensors) for the method's lifetime: constants borrow
        // the program, planned data the caller's buffers (range-checked). `tensor` is
        // sized and aligned for a `Tensor` and used by nothing else.
        unsafe {
            tensor.write(Tensor::from_raw_parts(
                shape.dtype,
                dim,
                storage,
                data.ptr,
                shape.dynamism,
                data.read_only,
                data.planned,
            ))
        };
        Ok(tensor)
    }

    /// Room for a tensor and its shape, in one allocation of method memory (a tensor
    /// builds in one bump rather than three): the tensor, then `dim` sizes and `dim`
    /// strides, then `dim` dim-order bytes, the sizes and dim order filled from `shape`;
    /// and the bytes the tensor's data takes at its bound. Nothing is cleared first: the
    /// sizes and dim order are written here, the strides and the tensor by
    /// [`Tensor::from_raw_parts`].
    fn tensor_storage(
        &self,
        shape: &TensorShape<'a>,
    ) -> Result<(NonNull<Tensor>, ShapeStorage, usize), Error> {
        const HEAD: usize = size_of::<Tensor>();
        const _: () = assert!(HEAD.is_multiple_of(align_of::<usize>()));
        let dim = shape.rank();
        let words = 2 * dim * size_of::<usize>();
        // No overflow: `dim <= MAX_DIM`.
        let block = self
            .arena
            .allocate(HEAD + words + dim, align_of::<Tensor>())?;
        // SAFETY: the block holds `HEAD + words + dim` bytes; each pointer below stays
        // inside it, and the sizes and strides are `usize`-aligned (the block is aligned
        // for a `Tensor`, whose size is a multiple of a `usize`'s alignment).
        let (sizes, order) = unsafe { (block.add(HEAD).cast::<usize>(), block.add(HEAD + words)) };
        // SAFETY: `sizes` has room for `2 * dim` and `order` for `dim` elements, fresh
        // from the arena and used by nothing else; as `MaybeUninit` they need not be
        // initialized.
        let nbytes = unsafe {
            shape.fill_uninit(
                core::slice::from_raw_parts_mut(sizes.as_ptr().cast::<MaybeUninit<usize>>(), dim),
                core::slice::from_raw_parts_mut(order.as_ptr().cast::<MaybeUninit<u8>>(), dim),
            )?
        };
        let storage = ShapeStorage {
            sizes,
            // SAFETY: `dim <= 2 * dim` elements into the sizes and strides.
            strides: unsafe { sizes.add(dim) },
            dim_order: order,
        };
        Ok((block.cast(), storage, nbytes))
    }

    /// Binds a tensor's `nbytes` of data: a constant in the program or bound by name
    /// from a data file (`external`), a place in a planned buffer (initialized from the
    /// program or the data file for mutable buffers), or nothing yet (inputs and outputs
    /// outside the plan get method memory in `io_list`). One placement path for both
    /// sources keeps external tensors from adding a second copy of it to every binary.
    ///
    /// # Safety
    /// `shape` must hold `dim` initialized sizes and dim-order entries.
    unsafe fn tensor_data(
        &self,
        t: Fields<'a>,
        dtype: ScalarType,
        shape: &ShapeStorage,
        dim: usize,
        nbytes: usize,
    ) -> Result<Data, Error> {
        let idx = t.uint(T::VT_DATA_BUFFER_IDX, 4) as u32;
        let allocation = t.table(T::VT_ALLOCATION_INFO);
        let source = match external_data_name(t)? {
            // SAFETY: the caller's promise.
            Some(key) => Some(unsafe { self.external_data(key, dtype, shape, dim, nbytes)? }),
            None if idx == 0 => None,
            None if allocation.is_none() => Some(self.program.constant_data(idx, nbytes)?),
            None => Some(self.program.mutable_data(idx, nbytes)?),
        };
        Ok(match allocation {
            // A constant (used in place: tensors never write read-only data), or no data.
            None => Data {
                ptr: source.map_or(core::ptr::null_mut(), |s| s.as_ptr().cast_mut()),
                read_only: source.is_some(),
                planned: false,
            },
            Some(allocation) => {
                let ptr = self.planned_place(allocation, nbytes)?;
                if let Some(init) = source {
                    // SAFETY: `ptr..ptr+nbytes` lies inside a planned buffer the method
                    // borrows mutably (`planned_place`); `init` is program or data-file
                    // memory, which cannot overlap caller-provided planned memory, and
                    // holds `nbytes` (`constant_data`, `mutable_data` and
                    // `bind_external` check the length).
                    unsafe { core::ptr::copy_nonoverlapping(init.as_ptr(), ptr, nbytes) };
                }
                Data {
                    ptr,
                    read_only: false,
                    planned: true,
                }
            }
        })
    }

    /// The start of `nbytes` at the place `allocation` names, checked to lie inside that
    /// planned buffer.
    fn planned_place(&self, allocation: Table<'a>, nbytes: usize) -> Result<*mut u8, Error> {
        type A<'x> = fb::AllocationDetails<'x>;
        // Three fields: the vtable is read once. (A closure, not `array::map`, which the
        // release profile leaves out of line here: a call per tensor.)
        let allocation = allocation.fields();
        let read = |vt| allocation.uint(vt, 4);
        let id = read(A::VT_MEMORY_ID) as usize;
        let offset = read(A::VT_MEMORY_OFFSET_LOW) | read(A::VT_MEMORY_OFFSET_HIGH) << 32;
        let offset = usize::try_from(offset).map_err(|_| Error::NotSupported)?;
        let &(base, len) = id
            .checked_sub(1)
            .and_then(|i| self.planned.get(i))
            .ok_or(Error::InvalidArgument)?;
        let end = offset
            .checked_add(nbytes)
            .ok_or(Error::MemoryAllocationFailed)?;
        if end > len {
            return Err(Error::MemoryAllocationFailed);
        }
        // SAFETY: `offset + nbytes <= len`: inside the planned buffer.
        Ok(unsafe { base.add(offset) })
    }

    /// Gives a tensor with no data yet (an input or output outside the memory plan)
    /// method memory for its bound, so `set_input` can copy into it and kernels can
    /// write it.
    pub(super) fn back_with_method_memory(&self, t: NonNull<Tensor>) -> Result<(), Error> {
        // SAFETY: tensors live in the method arena; nothing else borrows them during load.
        let t = unsafe { &mut *t.as_ptr() };
        if t.data_ptr().is_null() && t.nbytes() > 0 {
            let bytes = t.numel_bound() * t.dtype().element_size();
            let data = self.arena.allocate(bytes, 16)?;
            // SAFETY: `bytes` fresh bytes from the method arena, valid for 'a.
            unsafe { t.set_data(data.as_ptr(), false) };
            t.mark_planned();
        }
        Ok(())
    }
}

/// A tensor's shape, if this runtime supports the tensor: no storage offset and a
/// bounded shape.
// Inline: out of line, the shape came back through memory, and `build_tensor`'s reads of
// it stalled on store forwarding (many_adds load_method 62 -> 72 us).
#[inline(always)]
fn supported_shape(t: Fields<'_>) -> Result<TensorShape<'_>, Error> {
    let shape = TensorShape::read(t)?;
    if t.uint(T::VT_STORAGE_OFFSET, 4) != 0 || shape.dynamism == ShapeDynamism::Unbound {
        return Err(Error::NotSupported);
    }
    Ok(shape)
}
