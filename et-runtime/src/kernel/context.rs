//! The context a kernel runs in: what it may use besides its arguments.

use core::fmt;
use core::mem::{align_of, size_of};

#[cfg(feature = "parallel")]
use super::pool::Parallel;
use crate::error::{Error, KernelError, KernelResult};
#[cfg(feature = "etdump")]
use crate::etdump::EventTracer;
use crate::memory::Arena;
use et_schema::scalar_type::Element;

/// What a kernel can use besides its arguments: scratch memory for this instruction,
/// the pool its work may be split over (see [`parallel_for`](Self::parallel_for)), and
/// (for a delegate) the profiler of a traced execute.
pub struct KernelContext<'a> {
    temp: &'a Arena<'a>,
    #[cfg(feature = "parallel")]
    pub(super) parallel: Option<&'a dyn Parallel>,
    #[cfg(feature = "etdump")]
    tracer: Option<&'a EventTracer<'a>>,
}

/// When a profiled delegate step began: from [`KernelContext::step_start`], for
/// [`KernelContext::step_end`].
#[derive(Clone, Copy, Debug)]
pub struct StepStart(#[cfg_attr(not(feature = "etdump"), allow(dead_code))] u64);

impl<'a> KernelContext<'a> {
    /// A context whose scratch memory comes from `temp`, without a pool
    /// ([`with_parallel`](Self::with_parallel) adds one).
    #[inline(always)]
    pub fn new(temp: &'a Arena<'a>) -> Self {
        KernelContext {
            temp,
            #[cfg(feature = "parallel")]
            parallel: None,
            #[cfg(feature = "etdump")]
            tracer: None,
        }
    }

    /// A delegate call's context in a traced execute: its steps are recorded.
    #[cfg(all(feature = "etdump", feature = "backends"))]
    pub(crate) fn traced(temp: &'a Arena<'a>, tracer: &'a EventTracer<'a>) -> Self {
        KernelContext {
            temp,
            #[cfg(feature = "parallel")]
            parallel: None,
            tracer: Some(tracer),
        }
    }

    /// Starts timing one step of a delegate call (a node of its graph), when the call is
    /// being profiled (`Method::execute_traced`, feature `etdump`);
    /// `None` otherwise, and always without the `etdump` feature, so an untraced call
    /// pays nothing for it.
    #[inline(always)]
    pub fn step_start(&self) -> Option<StepStart> {
        #[cfg(feature = "etdump")]
        if let Some(tracer) = self.tracer {
            return Some(StepStart(tracer.now()));
        }
        None
    }

    /// Records the step begun at `start` as the delegate's step `index` (its own
    /// numbering, which [`Backend::step_name`](crate::backend::Backend::step_name) turns
    /// into a name for the profile).
    #[inline(always)]
    pub fn step_end(&self, start: Option<StepStart>, index: u32) {
        #[cfg(feature = "etdump")]
        if let (Some(tracer), Some(start)) = (self.tracer, start) {
            tracer.record_delegate_node(start.0, index);
        }
        let _ = (start, index);
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
            .field("workers", &self.workers())
            .finish()
    }
}
