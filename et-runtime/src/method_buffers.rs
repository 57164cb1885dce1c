//! Heap memory for one method, for tools and tests (`alloc` feature).
//!
//! Every size here is read from the program, which may be hostile: a corrupted planned
//! buffer size of 34 GB must be an error, not an abort in the allocator. So the sizes are
//! read first ([`MethodBufferSizes`]), can be held against a limit before anything is
//! allocated, and allocation itself is fallible.

use alloc::vec::Vec;
use core::alloc::Layout;
use core::fmt;

use crate::error::Error;

/// `bytes` of zeroed, 16-byte aligned memory as words, or `None` when the allocator
/// refuses (or `bytes` is beyond what a `Vec` can hold).
///
/// Allocated zeroed rather than reserved and then filled: the system hands out zeroed
/// pages without touching them, so a large planned buffer costs no time until it is used.
pub(crate) fn zeroed_words(bytes: usize) -> Option<Vec<u128>> {
    let n = bytes.div_ceil(16);
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = Layout::array::<u128>(n).ok()?;
    // SAFETY: `layout` has a nonzero size (n > 0).
    let ptr = unsafe { alloc::alloc::alloc_zeroed(layout) }.cast::<u128>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `n` u128s, which
    // is the layout a `Vec<u128>` of capacity `n` frees with; all `n` elements are
    // initialized (all-zero bytes are a valid u128).
    Some(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// One of a method's buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BufferName {
    /// The method arena (tables, tensor metadata, backend plans).
    Method,
    /// Planned memory arena `n` (`non_const_buffer_sizes[n + 1]`).
    Planned(usize),
    /// Kernel scratch.
    Scratch,
}

impl fmt::Display for BufferName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferName::Method => f.write_str("method memory"),
            BufferName::Planned(i) => write!(f, "planned buffer {i}"),
            BufferName::Scratch => f.write_str("scratch"),
        }
    }
}

/// The bytes each buffer of a method takes, read from its metadata before anything is
/// allocated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodBufferSizes {
    /// The method arena: the method's own tables plus what its delegates' backends ask
    /// for ([`Program::method_memory_estimate`](crate::Program::method_memory_estimate)).
    pub method: usize,
    /// Each planned arena.
    pub planned: Vec<usize>,
    /// Kernel scratch, as the caller chose.
    pub scratch: usize,
}

impl MethodBufferSizes {
    /// The sizes for method `name` of `program`, delegates included.
    pub fn for_program_method(
        program: &crate::Program<'_>,
        name: &str,
        scratch: usize,
    ) -> Result<MethodBufferSizes, Error> {
        let mut sizes = Self::for_method(&program.method_meta(name)?, scratch)?;
        sizes.method = program.method_memory_estimate(name)?;
        Ok(sizes)
    }

    /// The sizes for `meta`; method memory covers the method's own tables only (a
    /// method with delegates needs [`for_program_method`](Self::for_program_method)).
    pub fn for_method(
        meta: &crate::MethodMeta<'_>,
        scratch: usize,
    ) -> Result<MethodBufferSizes, Error> {
        let planned = (0..meta.num_planned_buffers())
            .map(|i| meta.planned_buffer_size(i))
            .collect::<Result<_, _>>()?;
        Ok(MethodBufferSizes {
            method: crate::method_allocator_estimate(meta),
            planned,
            scratch,
        })
    }

    /// Each buffer with its size, in allocation order.
    pub fn buffers(&self) -> impl Iterator<Item = (BufferName, usize)> + '_ {
        let planned = self.planned.iter().enumerate();
        core::iter::once((BufferName::Method, self.method))
            .chain(planned.map(|(i, &b)| (BufferName::Planned(i), b)))
            .chain(core::iter::once((BufferName::Scratch, self.scratch)))
    }

    /// The sum of all buffers (saturating: a sum past `usize::MAX` is over any limit).
    pub fn total(&self) -> usize {
        self.buffers().fold(0usize, |t, (_, b)| t.saturating_add(b))
    }

    /// Refuses sizes whose total exceeds `limit` bytes, naming the largest buffer.
    pub fn check_limit(&self, limit: usize) -> Result<(), BufferError> {
        let total = self.total();
        if total <= limit {
            return Ok(());
        }
        let (buffer, bytes) = self
            .buffers()
            .max_by_key(|&(_, b)| b)
            .unwrap_or((BufferName::Method, 0));
        Err(BufferError::OverLimit {
            buffer,
            bytes,
            total,
            limit,
        })
    }
}

/// Why a method's buffers were not allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BufferError {
    /// The method's metadata could not give the sizes.
    Metadata(Error),
    /// The buffers add up to more than the caller's limit.
    OverLimit {
        /// The largest buffer.
        buffer: BufferName,
        /// Its size.
        bytes: usize,
        /// All buffers together.
        total: usize,
        /// The limit.
        limit: usize,
    },
    /// The allocator refused a buffer.
    AllocationFailed {
        /// Which buffer.
        buffer: BufferName,
        /// Its size.
        bytes: usize,
    },
}

impl From<Error> for BufferError {
    fn from(e: Error) -> BufferError {
        BufferError::Metadata(e)
    }
}

impl From<BufferError> for Error {
    fn from(e: BufferError) -> Error {
        match e {
            BufferError::Metadata(e) => e,
            BufferError::OverLimit { .. } | BufferError::AllocationFailed { .. } => {
                Error::MemoryAllocationFailed
            }
        }
    }
}

impl fmt::Display for BufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferError::Metadata(e) => write!(f, "cannot read the method's buffer sizes: {e}"),
            BufferError::OverLimit {
                buffer,
                bytes,
                total,
                limit,
            } => write!(
                f,
                "the method's buffers take {total} bytes ({buffer}: {bytes} bytes), over the limit of {limit} bytes"
            ),
            BufferError::AllocationFailed { buffer, bytes } => {
                write!(f, "cannot allocate {buffer} ({bytes} bytes)")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for BufferError {}

/// Heap memory for one method, 16-byte aligned: the method arena, one buffer per planned
/// arena, and kernel scratch.
///
/// ```ignore
/// let mut buffers = MethodBuffers::for_program_method(&program, "forward", 64 << 20)?;
/// let (method_mem, mut planned, scratch) = buffers.split();
/// let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
/// ```
///
/// To bound what a program can make a tool allocate, read the sizes, check them, then
/// allocate: `MethodBuffers::allocate(&MethodBufferSizes::for_program_method(..)?, limit)`.
#[derive(Debug)]
pub struct MethodBuffers {
    method: Vec<u128>,
    planned: Vec<Vec<u128>>,
    scratch: Vec<u128>,
}

fn bytes_of(v: &mut [u128]) -> &mut [u8] {
    let len = core::mem::size_of_val(v);
    // SAFETY: u128 has no padding and every byte pattern is a valid u8; the view covers
    // exactly the slice's memory and borrows it mutably.
    unsafe { core::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

impl MethodBuffers {
    /// Buffers of `sizes`, refused without allocating anything when they total more than
    /// `limit` bytes (`usize::MAX`: no limit).
    pub fn allocate(sizes: &MethodBufferSizes, limit: usize) -> Result<MethodBuffers, BufferError> {
        sizes.check_limit(limit)?;
        let words = |buffer, bytes| {
            zeroed_words(bytes).ok_or(BufferError::AllocationFailed { buffer, bytes })
        };
        let mut planned = Vec::new();
        planned
            .try_reserve_exact(sizes.planned.len())
            .map_err(|_| BufferError::AllocationFailed {
                buffer: BufferName::Method,
                bytes: sizes.planned.len(),
            })?;
        for (i, &bytes) in sizes.planned.iter().enumerate() {
            planned.push(words(BufferName::Planned(i), bytes)?);
        }
        Ok(MethodBuffers {
            method: words(BufferName::Method, sizes.method)?,
            planned,
            scratch: words(BufferName::Scratch, sizes.scratch)?,
        })
    }

    /// Buffers for method `name` of `program` with `scratch_bytes` of kernel scratch,
    /// including the method memory its delegates' backends take. A size the allocator
    /// refuses is `MemoryAllocationFailed` (no limit: see [`allocate`](Self::allocate)).
    pub fn for_program_method(
        program: &crate::Program<'_>,
        name: &str,
        scratch_bytes: usize,
    ) -> Result<MethodBuffers, Error> {
        let sizes = MethodBufferSizes::for_program_method(program, name, scratch_bytes)?;
        Ok(Self::allocate(&sizes, usize::MAX)?)
    }

    /// Buffers for `meta` with `scratch_bytes` of kernel scratch. Method memory covers the
    /// method's own tables; a method with delegates needs
    /// [`for_program_method`](Self::for_program_method).
    pub fn for_method(
        meta: &crate::MethodMeta<'_>,
        scratch_bytes: usize,
    ) -> Result<MethodBuffers, Error> {
        let sizes = MethodBufferSizes::for_method(meta, scratch_bytes)?;
        Ok(Self::allocate(&sizes, usize::MAX)?)
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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn sizes(planned: &[usize]) -> MethodBufferSizes {
        MethodBufferSizes {
            method: 1000,
            planned: planned.to_vec(),
            scratch: 64,
        }
    }

    #[test]
    fn limit_is_checked_before_allocating_and_names_the_largest_buffer() {
        let huge = sizes(&[16, 34_359_768_192, 32]);
        let err = MethodBuffers::allocate(&huge, 1 << 30).unwrap_err();
        assert_eq!(
            err,
            BufferError::OverLimit {
                buffer: BufferName::Planned(1),
                bytes: 34_359_768_192,
                total: 34_359_769_304,
                limit: 1 << 30,
            }
        );
        assert_eq!(
            err.to_string(),
            "the method's buffers take 34359769304 bytes (planned buffer 1: 34359768192 bytes), over the limit of 1073741824 bytes"
        );
        // Sums past usize::MAX saturate instead of wrapping under the limit.
        assert_eq!(sizes(&[usize::MAX, usize::MAX]).total(), usize::MAX);
        assert!(sizes(&[usize::MAX, 2]).check_limit(usize::MAX - 1).is_err());
    }

    #[test]
    fn a_size_no_allocator_can_give_is_an_error_not_an_abort() {
        let err = MethodBuffers::allocate(&sizes(&[8, usize::MAX / 2]), usize::MAX).unwrap_err();
        assert_eq!(
            err,
            BufferError::AllocationFailed {
                buffer: BufferName::Planned(1),
                bytes: usize::MAX / 2,
            }
        );
        assert_eq!(Error::from(err), Error::MemoryAllocationFailed);
    }

    #[test]
    fn buffers_are_zeroed_aligned_and_sized() {
        let mut buffers = MethodBuffers::allocate(&sizes(&[0, 33]), 1 << 20).unwrap();
        let (method, planned, scratch) = buffers.split();
        assert_eq!(method.len(), 1008);
        assert_eq!(
            planned.iter().map(|p| p.len()).collect::<Vec<_>>(),
            vec![0, 48]
        );
        assert_eq!(scratch.len(), 64);
        assert!(planned[1].iter().all(|&b| b == 0));
        assert_eq!(planned[1].as_ptr() as usize % 16, 0);
    }
}
