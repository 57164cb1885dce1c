#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod backend;
pub mod data;
mod error;
#[cfg(feature = "etdump")]
pub mod etdump;
mod kernel;
pub mod link;
mod loader;
pub mod log;
mod memory;
mod method;
mod method_error;
mod prim_ops;
pub mod program;
pub mod registry;
mod scalar;
mod selected;
mod switch;
mod tensor;
#[cfg(feature = "threads")]
pub mod threads;
mod value;

#[cfg(feature = "alloc")]
mod method_buffers;
#[cfg(feature = "std")]
pub mod module;
#[cfg(feature = "alloc")]
mod sizing;
#[cfg(feature = "alloc")]
pub use sizing::BUFFER_ALIGNMENT;
#[cfg(feature = "alloc")]
mod tensor_buf;

// Running programs: load, size memory, set inputs, execute, read outputs.
pub use data::{DataFile, DataLayout, NamedData, NamedDataMap};
pub use error::Error;
pub use loader::{BufferLoader, DataLoader, PROGRAM_ALIGNMENT};
#[cfg(feature = "std")]
pub use loader::{FileLoader, MmapLoader};
pub use memory::{Arena, MemoryManager};
/// Load-time rewrites that kernel crates register: see the module docs.
#[cfg(feature = "rewrite")]
pub use method::rewrite;
pub use method::{
    method_allocator_estimate, ExecuteError, ExternalDataProblem, InputError, InputProblem,
    LoadDetail, LoadError, Method, DEFAULT_INSTRUCTION_LIMIT,
};
#[cfg(feature = "alloc")]
pub use method_buffers::{BufferError, BufferName, MethodBufferSizes, MethodBuffers};
#[cfg(feature = "std")]
pub use module::{Input, Module, ModuleError, Output, TensorRef};
pub use program::{MethodMeta, Program, ProgramError, TensorInfo, Verification};
#[cfg(feature = "alloc")]
pub use tensor_buf::TensorBuf;
pub use value::{EValue, Tag};

// Writing kernels: `#[kernel]`, the context and argument types, element types, `et_switch!`.
pub use error::{KernelError, KernelResult};
/// Registers a kernel: see the `et-macros` crate for the forms and checks.
#[cfg(feature = "macros")]
pub use et_macros::kernel;
pub use et_schema::{Bool, DtypeSet, Element, ScalarType};
pub use half::{bf16, f16};
pub use kernel::{KernelContext, Parallel, StepStart, TensorListMut};
pub use scalar::Scalar;
pub use selected::{AllDtypes, DtypeSelection, Selected};
pub use tensor::{checked_numel, ShapeDynamism, Tensor, MAX_DIM};

/// Items used by code that `#[kernel]` generates. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::kernel::{
        op_hash, ArgKind, CrateName, DtypeKey, EntryKey, KernelArgs, KernelContext, KernelEntry,
        KernelSignature, Namespace, ReturnKind,
    };
    pub use crate::{DtypeSet, Error, KernelError, KernelResult, ScalarType, Selected};
    // Element types `#[kernel(dtype = [..])]` instantiates generic kernels with.
    pub use crate::method::{init_delegate, DelegateInit, InitDelegateFn};
    pub use crate::{bf16, f16, Bool};
    pub use linkme;

    #[cfg(feature = "backends")]
    pub use crate::backend::BACKENDS;
    pub use crate::kernel::KERNELS;

    /// The error for a dtype that an `et_switch!` did not handle.
    #[cold]
    pub fn unswitched_dtype(dtype: ScalarType, listed: &[ScalarType]) -> KernelError {
        if listed.contains(&dtype) {
            KernelError::new(
                Error::NotSupported,
                "dtype not selected for this operator in this build",
            )
        } else {
            KernelError::new(Error::InvalidType, "unsupported dtype for this operator")
        }
    }
}
