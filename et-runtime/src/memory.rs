//! User-provided memory: a bump allocator for method state, planned buffers for
//! activations, and a scratch allocator reset after every instruction.

use core::cell::Cell;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::ptr::NonNull;

use crate::error::Error;

/// A bump allocator over a caller's byte buffer. Allocation is a bounds-checked pointer
/// bump; memory is only reclaimed all at once by [`reset`](Self::reset).
///
/// Allocation takes `&self` (the cursor is a `Cell`), so several live allocations can be
/// held at once; `reset` takes `&mut self`, which the borrow checker only allows once all
/// of them are gone.
pub struct Arena<'a> {
    base: *mut u8,
    len: usize,
    used: Cell<usize>,
    // The most `used` reached before a reset: what a buffer of this arena must hold.
    peak: Cell<usize>,
    _buffer: PhantomData<&'a mut [u8]>,
}

impl<'a> Arena<'a> {
    /// An allocator over `buffer`.
    pub fn new(buffer: &'a mut [u8]) -> Self {
        Arena {
            base: buffer.as_mut_ptr(),
            len: buffer.len(),
            used: Cell::new(0),
            peak: Cell::new(0),
            _buffer: PhantomData,
        }
    }

    /// An allocator with no memory: every non-empty allocation fails.
    pub const fn empty() -> Arena<'static> {
        Arena {
            base: NonNull::dangling().as_ptr(),
            len: 0,
            used: Cell::new(0),
            peak: Cell::new(0),
            _buffer: PhantomData,
        }
    }

    /// Total capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.len
    }

    /// Bytes handed out so far (including alignment padding).
    pub fn used(&self) -> usize {
        self.used.get()
    }

    /// The most bytes this arena has held at once since it was made, resets included:
    /// a buffer at the same alignment and of this size would have served every
    /// allocation so far.
    pub fn peak(&self) -> usize {
        self.peak.get().max(self.used.get())
    }

    fn record_peak(&self) {
        self.peak.set(self.peak());
    }

    /// Reserves `size` bytes aligned to `align` (a power of two).
    // Built for size, out of line: one copy of the bounds checks serves every caller
    // (inlined, each of the builder's dozen allocation sites carried its own). Otherwise
    // inline: `load_method` allocates for every tensor and call, and the call returned
    // its `Result` through memory.
    #[cfg_attr(etch_size_first, inline(never))]
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, Error> {
        debug_assert!(align.is_power_of_two());
        let used = self.used.get();
        let addr = (self.base as usize)
            .checked_add(used)
            .ok_or(Error::MemoryAllocationFailed)?;
        let pad = addr.wrapping_neg() & (align - 1);
        let start = used.checked_add(pad).ok_or(Error::MemoryAllocationFailed)?;
        let end = start
            .checked_add(size)
            .ok_or(Error::MemoryAllocationFailed)?;
        if end > self.len {
            return Err(Error::MemoryAllocationFailed);
        }
        self.used.set(end);
        // SAFETY: `start <= end <= len`, so the pointer stays inside (or one past) the
        // buffer, which is non-null.
        Ok(unsafe { NonNull::new_unchecked(self.base.add(start)) })
    }

    /// Reserves room for `n` values of `T`, uninitialized as far as `T` is concerned (the
    /// bytes are whatever the buffer held). One non-generic allocation path serves every
    /// element type.
    pub(crate) fn alloc_array<T>(&self, n: usize) -> Result<NonNull<T>, Error> {
        self.allocate_n(n, size_of::<T>(), align_of::<T>())
            .map(NonNull::cast)
    }

    /// Like [`alloc_array`](Self::alloc_array), with every byte zeroed.
    pub(crate) fn alloc_zeroed<T>(&self, n: usize) -> Result<NonNull<T>, Error> {
        self.allocate_n_zeroed(n, size_of::<T>(), align_of::<T>())
            .map(NonNull::cast)
    }

    /// Like [`allocate_n`](Self::allocate_n), with every byte zeroed: one copy of the
    /// clearing for every element type.
    fn allocate_n_zeroed(&self, n: usize, size: usize, align: usize) -> Result<NonNull<u8>, Error> {
        self.allocate_zeroed(
            n.checked_mul(size).ok_or(Error::MemoryAllocationFailed)?,
            align,
        )
    }

    /// Like [`allocate`](Self::allocate), with every byte zeroed.
    #[cfg_attr(not(etch_size_first), inline(never))]
    pub(crate) fn allocate_zeroed(&self, size: usize, align: usize) -> Result<NonNull<u8>, Error> {
        let p = self.allocate(size, align)?;
        // SAFETY: the allocation holds `size` bytes and is ours alone.
        unsafe { p.as_ptr().write_bytes(0, size) };
        Ok(p)
    }

    /// Reserves `n` elements of `size` bytes aligned to `align` (a power of two).
    #[cfg_attr(not(etch_size_first), inline(never))]
    pub(crate) fn allocate_n(
        &self,
        n: usize,
        size: usize,
        align: usize,
    ) -> Result<NonNull<u8>, Error> {
        let bytes = n.checked_mul(size).ok_or(Error::MemoryAllocationFailed)?;
        self.allocate(bytes, align)
    }

    /// Reserves `n` values of `T`, each set to `fill`.
    #[allow(
        clippy::mut_from_ref,
        reason = "bump allocation hands out disjoint regions"
    )]
    pub fn alloc_slice<T: Copy>(&self, n: usize, fill: T) -> Result<&mut [T], Error> {
        let ptr = self.alloc_array::<T>(n)?;
        for i in 0..n {
            // SAFETY: the region holds `n` properly aligned `T`s and is ours alone.
            unsafe { ptr.as_ptr().add(i).write(fill) };
        }
        // SAFETY: initialized above and disjoint from every other allocation of this
        // arena; the slice borrows `self`, so `reset` (which needs `&mut self`) cannot run
        // while it lives.
        Ok(unsafe { core::slice::from_raw_parts_mut(ptr.as_ptr(), n) })
    }

    /// Reserves one `T` set to `value`.
    pub fn alloc<T>(&self, value: T) -> Result<NonNull<T>, Error> {
        let ptr = self.allocate(size_of::<T>(), align_of::<T>())?.cast::<T>();
        // SAFETY: the region is sized and aligned for `T` and ours alone.
        unsafe { ptr.as_ptr().write(value) };
        Ok(ptr)
    }

    /// Forgets every allocation.
    pub fn reset(&mut self) {
        self.record_peak();
        self.used.set(0);
    }

    /// Forgets every allocation through a shared reference.
    ///
    /// # Safety
    /// No memory allocated from this arena may be used afterwards.
    pub(crate) unsafe fn reset_shared(&self) {
        self.record_peak();
        self.used.set(0);
    }
}

impl fmt::Debug for Arena<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("capacity", &self.len)
            .field("used", &self.used.get())
            .field("peak", &self.peak())
            .finish()
    }
}

// SAFETY: the arena exclusively borrows its buffer; the `Cell` cursor is only touched
// through the arena, so moving the arena to another thread is sound.
unsafe impl Send for Arena<'_> {}

/// The memory a method runs in, all supplied by the caller:
///
/// - `method`: a bump allocator for the method's value table, tensors and lists
///   (size it with [`MethodMeta`](crate::MethodMeta)'s estimate or by trial);
/// - `planned`: one buffer per memory-planned arena, sized as
///   [`MethodMeta::planned_buffer_size`](crate::MethodMeta::planned_buffer_size) says;
/// - `temp`: scratch memory that kernels may use during one instruction.
pub struct MemoryManager<'a> {
    pub(crate) method: Arena<'a>,
    pub(crate) planned: &'a mut [&'a mut [u8]],
    pub(crate) temp: Arena<'a>,
}

impl<'a> MemoryManager<'a> {
    /// Memory for a method: its allocator buffer, its planned buffers, and scratch.
    pub fn new(method: &'a mut [u8], planned: &'a mut [&'a mut [u8]], temp: &'a mut [u8]) -> Self {
        MemoryManager {
            method: Arena::new(method),
            planned,
            temp: Arena::new(temp),
        }
    }

    /// Memory without scratch space (kernels that need scratch will fail).
    pub fn without_temp(method: &'a mut [u8], planned: &'a mut [&'a mut [u8]]) -> Self {
        MemoryManager {
            method: Arena::new(method),
            planned,
            temp: Arena::empty(),
        }
    }

    /// Bytes of the method buffer used so far.
    pub fn method_bytes_used(&self) -> usize {
        self.method.used()
    }

    /// The most scratch bytes any one instruction (or load-time pass) has held at once.
    pub fn scratch_bytes_peak(&self) -> usize {
        self.temp.peak()
    }
}

impl fmt::Debug for MemoryManager<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryManager")
            .field("method", &self.method)
            .field("planned_buffers", &self.planned.len())
            .field("temp", &self.temp)
            .finish()
    }
}
