//! etch's C ABI: ExecuTorch programs and LLM text generation from C, C++, Swift, Kotlin
//! (through JNI) and anything else that calls C. The header is `include/etch.h`
//! (generated from this crate by cbindgen; `docs/c-api.md` is the guide).
//!
//! Conventions every function keeps:
//! - Objects are opaque handles made by a `*_new`/`*_load` function and freed by its
//!   `*_free`; freeing NULL does nothing.
//! - Fallible functions return an `etch_status` (`ETCH_OK` is 0) and leave a message for
//!   `etch_last_error_message()`; results come back through out-pointers, set to NULL
//!   first so a failure never leaves a stale handle behind.
//! - No panic unwinds into the caller: a bug inside etch becomes `ETCH_PANIC`. NULL
//!   pointers, unknown dtypes and mismatched shapes are statuses.
//!
//! Memory: the method arenas, planned buffers and kernel scratch come from Rust's global
//! allocator, which in this library is the C library's `malloc`/`free` (the system
//! allocator): a process that replaces `malloc` (jemalloc, mimalloc, a tracking
//! allocator) replaces it for etch too, and `etch_module_set_memory_limit` bounds what one
//! method may take. The library offers no allocator hooks of its own: the allocator of a
//! Rust library is fixed when it is linked (`#[global_allocator]`), it is shared with any
//! other Rust code in the same binary, and swapping it at run time would hand memory
//! allocated by one allocator to another's `free`.

#![warn(missing_docs)]

mod error;
mod generator;
mod meta;
mod module;
mod tensor;

use std::ffi::c_char;

// A C program cannot name Rust crates: linking these here registers every kernel, the
// XNNPACK backend and the LLM operators.
use et_llm as _;
use et_ops as _;
use et_xnnpack as _;

pub use error::{etch_last_error_message, etch_status, etch_status_name};
pub use generator::{
    etch_generation_stats, etch_generator, etch_generator_free, etch_generator_generate,
    etch_generator_generate_tokens, etch_generator_new, etch_generator_new_with_data,
    etch_generator_reset, etch_generator_set_threads, etch_generator_set_top_p, etch_stop_reason,
    etch_text_callback, etch_token_callback,
};
pub use meta::{
    etch_module_input_meta, etch_module_method_arity, etch_module_method_count,
    etch_module_method_name, etch_module_output_meta, etch_tensor_meta,
};
pub use module::{
    etch_module, etch_module_execute, etch_module_forward, etch_module_free, etch_module_load,
    etch_module_load_bytes, etch_module_load_method, etch_module_reset_method,
    etch_module_set_memory_limit, etch_module_set_scratch_bytes, etch_module_set_threads,
    etch_outputs, etch_outputs_count, etch_outputs_free, etch_outputs_get,
};
pub use tensor::{
    etch_dtype, etch_tensor, etch_tensor_data, etch_tensor_dtype, etch_tensor_free,
    etch_tensor_nbytes, etch_tensor_new_view, etch_tensor_numel, etch_tensor_rank,
    etch_tensor_sizes, ETCH_MAX_DIM,
};

/// The version of the C ABI this header describes. It changes when a function's
/// signature or meaning, a struct's layout or an enum's values change incompatibly;
/// additions keep it. Compare it with `etch_abi_version()` at start-up to catch a header
/// and a library from different releases.
pub const ETCH_ABI_VERSION: u32 = 1;

/// The C ABI version of the linked library (`ETCH_ABI_VERSION` of its header).
/// Thread-safe.
#[no_mangle]
pub extern "C" fn etch_abi_version() -> u32 {
    ETCH_ABI_VERSION
}

/// etch's version, as `"0.1.0"`: a static string, never NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn etch_version_string() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// An out-pointer argument, its target set to NULL so a failure leaves no stale value.
///
/// # Safety
/// `p` is NULL or valid for writing one pointer.
pub(crate) unsafe fn out_ptr<'a, T>(p: *mut *mut T, what: &str) -> error::Result<&'a mut *mut T> {
    // SAFETY: the caller's promise: NULL or writable.
    let slot = unsafe { p.as_mut() }.ok_or_else(|| error::Failure::null(what))?;
    *slot = std::ptr::null_mut();
    Ok(slot)
}
