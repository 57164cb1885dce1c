//! The buffers a method needs, measured: what firmware declares as statics (`alloc`
//! feature, run on the host, typically from a `build.rs`).
//!
//! [`MethodBufferSizes::for_program_method`] reads bounds from the program's tables;
//! [`MethodBufferSizes::measure`] loads the method and runs it once in buffers of those
//! bounds and reports what was used. Every arena is a bump allocator whose use depends
//! only on the program, the kernels linked in and the buffer's alignment, so the
//! measured sizes are exactly enough for buffers starting at a multiple of
//! [`BUFFER_ALIGNMENT`], as the measuring buffers do.

use alloc::format;
use alloc::string::String;
use core::fmt::Write;

use crate::error::Error;
use crate::memory::MemoryManager;
use crate::method_buffers::{MethodBufferSizes, MethodBuffers};
use crate::program::Program;

/// The alignment [`MethodBufferSizes::measure`]'s figures assume for every buffer: a
/// backend may align what it puts in the method arena beyond 16 bytes (XNNPACK's packed
/// weights are aligned to 64), and the padding that takes depends on where the arena
/// starts.
pub const BUFFER_ALIGNMENT: usize = 64;

/// Scratch offered while measuring: far more than any kernel asks for, and costing
/// nothing until touched (the allocation is zeroed by the system).
const MEASURING_SCRATCH_BYTES: usize = 256 << 20;

impl MethodBufferSizes {
    /// The exact bytes method `name` of `program` takes in each buffer: the method arena
    /// its load used, each planned arena, and the most scratch any one instruction (or a
    /// load-time pass) held at once, found by loading the method and executing it once
    /// with every tensor input zeroed at its declared shape.
    ///
    /// Buffers of these sizes, each starting at a multiple of [`BUFFER_ALIGNMENT`], load
    /// and run the method with
    /// the same kernels and backends linked in (the program's delegates need their
    /// backend crates linked into the measuring binary too). The sizes are those of the
    /// measuring target: on a 32-bit target the runtime's tables take no more than on a
    /// 64-bit host (see the embedded guide). Scratch is measured at the declared input
    /// shapes: a dynamic-shape method run at other shapes may ask for other amounts.
    pub fn measure(program: &Program<'_>, name: &str) -> Result<MethodBufferSizes, Error> {
        let bound = Self::for_program_method(program, name, MEASURING_SCRATCH_BYTES)?;
        // Room to start each buffer at the alignment the figures assume.
        let room = MethodBufferSizes {
            method: bound.method.saturating_add(BUFFER_ALIGNMENT),
            planned: bound.planned.clone(),
            scratch: bound.scratch.saturating_add(BUFFER_ALIGNMENT),
        };
        let mut buffers = MethodBuffers::allocate(&room, usize::MAX)?;
        let (method_memory, mut planned, scratch) = buffers.split();
        let mut memory = MemoryManager::new(
            aligned_start(method_memory),
            &mut planned,
            aligned_start(scratch),
        );
        {
            let mut method = program
                .load_method(name, &mut memory)
                .map_err(|e| e.error)?;
            for i in 0..method.num_inputs() {
                match method.input_tensor_mut(i) {
                    Ok(t) => t.bytes_mut().map_err(|e| e.error)?.fill(0),
                    // A non-tensor input keeps its exported value.
                    Err(Error::InvalidType) => {}
                    Err(e) => return Err(e),
                }
            }
            method.execute().map_err(|e| e.error)?;
        }
        Ok(MethodBufferSizes {
            method: memory.method_bytes_used(),
            planned: bound.planned,
            scratch: memory.scratch_bytes_peak(),
        })
    }

    /// Rust source declaring these sizes as constants named after `prefix` (an
    /// upper-case identifier such as `MLP`), for a `build.rs` to write into `OUT_DIR`
    /// and firmware to `include!`:
    ///
    /// ```text
    /// pub const MLP_METHOD_BYTES: usize = ...;
    /// pub const MLP_PLANNED_BYTES: [usize; N] = [...];
    /// pub const MLP_SCRATCH_BYTES: usize = ...;
    /// ```
    pub fn to_rust_consts(&self, prefix: &str) -> String {
        let mut planned = String::new();
        for (i, bytes) in self.planned.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            // Writing to a String cannot fail.
            let _ = write!(planned, "{sep}{bytes}");
        }
        format!(
            "/// Bytes of method arena.\n\
             pub const {prefix}_METHOD_BYTES: usize = {};\n\
             /// Bytes of each planned arena.\n\
             pub const {prefix}_PLANNED_BYTES: [usize; {}] = [{planned}];\n\
             /// Bytes of kernel scratch.\n\
             pub const {prefix}_SCRATCH_BYTES: usize = {};\n",
            self.method,
            self.planned.len(),
            self.scratch,
        )
    }
}

/// `buffer` from its first byte at a multiple of [`BUFFER_ALIGNMENT`] (empty when there is
/// none).
pub(crate) fn aligned_start(buffer: &mut [u8]) -> &mut [u8] {
    let skip = (buffer.as_ptr() as usize).wrapping_neg() & (BUFFER_ALIGNMENT - 1);
    let len = buffer.len();
    &mut buffer[skip.min(len)..]
}
