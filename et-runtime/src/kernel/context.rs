//! The context a kernel runs in: what it may use besides its arguments.

use core::fmt;
use core::mem::{align_of, size_of};

use crate::error::{Error, KernelError, KernelResult};
use crate::memory::Arena;
use et_schema::scalar_type::Element;

/// What a kernel can use besides its arguments: scratch memory for this instruction.
pub struct KernelContext<'a> {
    temp: &'a Arena<'a>,
}

impl<'a> KernelContext<'a> {
    /// A context whose scratch memory comes from `temp`.
    pub fn new(temp: &'a Arena<'a>) -> Self {
        KernelContext { temp }
    }

    /// Scratch space for `n` elements of `T`, valid until the instruction ends. The
    /// contents are unspecified (whatever the buffer held); every bit pattern is a valid
    /// `T`, so reading them is safe but meaningless.
    #[allow(
        clippy::mut_from_ref,
        reason = "bump allocation hands out disjoint regions"
    )]
    pub fn alloc_temp<T: Element>(&self, n: usize) -> KernelResult<&mut [T]> {
        let bytes = n.checked_mul(size_of::<T>()).ok_or(KernelError::new(
            Error::MemoryAllocationFailed,
            "scratch request overflows",
        ))?;
        let ptr = self
            .temp
            .allocate(bytes, align_of::<T>().max(16))
            .map_err(|_| {
                KernelError::new(Error::MemoryAllocationFailed, "scratch memory exhausted")
            })?;
        // SAFETY: the arena returned `bytes` fresh, aligned bytes that no other allocation
        // overlaps; they are initialized bytes of the caller's buffer and every bit pattern
        // is a valid `T` (`Element` contract). The slice borrows `self`, and the arena is
        // only reset by the method after the kernel returned.
        Ok(unsafe { core::slice::from_raw_parts_mut(ptr.cast::<T>().as_ptr(), n) })
    }
}

impl fmt::Debug for KernelContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelContext")
            .field("temp", self.temp)
            .finish()
    }
}
