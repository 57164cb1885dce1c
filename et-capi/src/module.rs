//! `etch_module`: a program with its methods, and `etch_outputs`: a call's results.

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::PathBuf;

use et_runtime::{Input, Module, Output, ScalarType, Tag, TensorBuf};

use crate::error::{etch_status, guard, guard_value, Failure, Result};
use crate::tensor::{etch_tensor, tensor_ref};

/// A loaded program. Made by `etch_module_load` or `etch_module_load_bytes`, freed by
/// `etch_module_free`.
///
/// Not thread-safe: one thread at a time may call functions on a module (it may move
/// between threads; different modules may run on different threads at once).
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct etch_module {
    pub(crate) module: Module,
    /// The method names as C strings, for `etch_module_method_name`'s pointers.
    pub(crate) names: Vec<CString>,
}

/// The outputs of one method call: tensors owned by the list. Freed by
/// `etch_outputs_free`, which frees its tensors.
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct etch_outputs {
    tensors: Vec<etch_tensor>,
}

/// The module a caller passed, borrowed exclusively for the call.
///
/// # Safety
/// `m` is NULL or a live module that nothing else uses while the borrow lives.
unsafe fn module_mut<'a>(m: *mut etch_module) -> Result<&'a mut etch_module> {
    // SAFETY: the caller's promise.
    unsafe { m.as_mut() }.ok_or_else(|| Failure::null("module"))
}

/// The module a caller passed, borrowed for the call.
///
/// # Safety
/// `m` is NULL or a live module that nothing changes while the borrow lives.
pub(crate) unsafe fn module_ref<'a>(m: *const etch_module) -> Option<&'a etch_module> {
    // SAFETY: the caller's promise.
    unsafe { m.as_ref() }
}

/// A C string argument as `&str`.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string that stays valid and unchanged for `'a`.
pub(crate) unsafe fn str_arg<'a>(s: *const c_char, what: &str) -> Result<&'a str> {
    if s.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: the caller's promise; not NULL.
    let s = unsafe { CStr::from_ptr(s) };
    s.to_str()
        .map_err(|_| Failure::invalid(format!("`{what}` is not UTF-8: {s:?}")))
}

/// A C string argument as a path (any bytes on Unix, UTF-8 elsewhere).
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
pub(crate) unsafe fn path_arg(s: *const c_char, what: &str) -> Result<PathBuf> {
    if s.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: the caller's promise; not NULL.
    let bytes = unsafe { CStr::from_ptr(s) }.to_bytes();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes)
            .map(PathBuf::from)
            .map_err(|_| Failure::new(etch_status::ETCH_IO, format!("`{what}` is not UTF-8")))
    }
}

/// An array of C string arguments as paths.
///
/// # Safety
/// `paths` points to `n` pointers, each NULL or a NUL-terminated string (or `n` is 0).
pub(crate) unsafe fn paths_arg(
    paths: *const *const c_char,
    n: usize,
    what: &str,
) -> Result<Vec<PathBuf>> {
    let list: &[*const c_char] = match (n, paths.is_null()) {
        (0, _) => &[],
        (_, true) => return Err(Failure::null(what)),
        // SAFETY: the caller's promise: `n` pointers at `paths`.
        (n, false) => unsafe { std::slice::from_raw_parts(paths, n) },
    };
    list.iter()
        .enumerate()
        // SAFETY: the caller's promise: each is NULL or a C string.
        .map(|(i, &p)| unsafe { path_arg(p, &format!("{what}[{i}]")) })
        .collect()
}

fn wrap(module: Module) -> Box<etch_module> {
    let names = module
        .method_names()
        .into_iter()
        // Method names come from the program's flatbuffer strings, which may hold a NUL.
        .map(|n| CString::new(n.replace('\0', "\\0")).unwrap_or_default())
        .collect();
    Box::new(etch_module { module, names })
}

/// Opens a `.pte` file, mapped into memory (constant weights are used in place, not
/// copied), with its `.ptd` data files.
///
/// - `path`: the program's file name, NUL-terminated.
/// - `data_paths`: `num_data_paths` `.ptd` file names whose named data the program reads
///   (searched in the order given); may be NULL when `num_data_paths` is 0.
/// - `out`: receives the module (NULL on failure); free it with `etch_module_free`.
///
/// Methods load on first use (or with `etch_module_load_method`). Failures:
/// `ETCH_ACCESS_FAILED` (the file cannot be opened), `ETCH_INVALID_PROGRAM` (not a
/// program etch can load), `ETCH_INVALID_EXTERNAL_DATA`, `ETCH_INVALID_ARGUMENT`.
/// Thread-safe (it makes a new module).
///
/// # Safety
/// `path` and each of the `num_data_paths` strings at `data_paths` are NUL-terminated;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_module_load(
    path: *const c_char,
    data_paths: *const *const c_char,
    num_data_paths: usize,
    out: *mut *mut etch_module,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promises: `out` NULL or writable, `path` a C string.
        let (out, path) = unsafe { (crate::out_ptr(out, "out")?, path_arg(path, "path")?) };
        // SAFETY: the caller's promise: `num_data_paths` C strings at `data_paths`.
        let data = unsafe { paths_arg(data_paths, num_data_paths, "data_paths") }?;
        let module = Module::from_file_with_data(&path, &data)?;
        *out = Box::into_raw(wrap(module));
        Ok(())
    })
}

/// Loads a program from bytes in memory. The bytes are copied once (into memory aligned
/// as programs need), so `data` may be freed when this returns.
///
/// `out` receives the module (NULL on failure). Malformed bytes give
/// `ETCH_INVALID_PROGRAM` and a message saying what is wrong; they never crash.
/// Thread-safe.
///
/// # Safety
/// `data` points to `size` readable bytes (or `size` is 0); `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_module_load_bytes(
    data: *const c_void,
    size: usize,
    out: *mut *mut etch_module,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promise: NULL or writable.
        let out = unsafe { crate::out_ptr(out, "out") }?;
        let bytes: &[u8] = match (size, data.is_null()) {
            (0, _) => &[],
            (_, true) => return Err(Failure::null("data")),
            // SAFETY: the caller's promise: `size` readable bytes at `data`.
            (n, false) => unsafe { std::slice::from_raw_parts(data.cast::<u8>(), n) },
        };
        let module = Module::from_bytes(bytes)?;
        *out = Box::into_raw(wrap(module));
        Ok(())
    })
}

/// Frees a module and its loaded methods. NULL is a no-op. Output lists it returned stay
/// valid (they own their tensors).
///
/// # Safety
/// `module` is NULL or a live module, not used after this call by any thread.
#[no_mangle]
pub unsafe extern "C" fn etch_module_free(module: *mut etch_module) {
    guard_value((), || {
        if !module.is_null() {
            // SAFETY: modules are made as `Box`es by the load functions; the caller
            // frees each once.
            drop(unsafe { Box::from_raw(module) });
        }
    })
}

/// Runs kernels on `threads` threads, the calling one included (1: everything on the
/// calling thread, the default). Outputs are the same for any count. XNNPACK-delegated
/// parts run on the calling thread.
///
/// # Safety
/// `module` is NULL or a live module.
#[no_mangle]
pub unsafe extern "C" fn etch_module_set_threads(
    module: *mut etch_module,
    threads: usize,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promise: NULL or a live module.
        let m = unsafe { module_mut(module) }?;
        Ok(m.module.set_threads(threads)?)
    })
}

/// Refuses to load a method whose buffers (activations, planned memory, kernel scratch)
/// total more than `bytes`, before allocating any of them: the load fails with
/// `ETCH_MEMORY_ALLOCATION_FAILED` naming the largest. Applies to methods loaded after
/// the call. `SIZE_MAX` (the default) is no limit.
///
/// # Safety
/// `module` is NULL or a live module.
#[no_mangle]
pub unsafe extern "C" fn etch_module_set_memory_limit(
    module: *mut etch_module,
    bytes: usize,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promise: NULL or a live module.
        unsafe { module_mut(module) }?
            .module
            .set_memory_limit(bytes);
        Ok(())
    })
}

/// Kernel scratch memory for methods loaded after the call (default 64 MiB).
///
/// # Safety
/// `module` is NULL or a live module.
#[no_mangle]
pub unsafe extern "C" fn etch_module_set_scratch_bytes(
    module: *mut etch_module,
    bytes: usize,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promise: NULL or a live module.
        unsafe { module_mut(module) }?
            .module
            .set_scratch_bytes(bytes);
        Ok(())
    })
}

/// Loads method `method` now (it loads at its first call otherwise): its memory is
/// allocated and delegates prepare their weights. Loading again is a no-op.
///
/// # Safety
/// `module` is NULL or a live module; `method` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn etch_module_load_method(
    module: *mut etch_module,
    method: *const c_char,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promises: NULL or a live module, NULL or a C string.
        let (m, name) = unsafe { (module_mut(module)?, str_arg(method, "method")?) };
        Ok(m.module.load_method(name)?)
    })
}

/// Unloads method `method`: its state (a KV cache, running statistics) starts again from
/// the program's initial values at the next call, which loads it again.
///
/// # Safety
/// `module` is NULL or a live module; `method` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn etch_module_reset_method(
    module: *mut etch_module,
    method: *const c_char,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promises: NULL or a live module, NULL or a C string.
        let (m, name) = unsafe { (module_mut(module)?, str_arg(method, "method")?) };
        m.module.reset(name);
        Ok(())
    })
}

/// A C input as a method input: scalars the method takes come as rank-0 tensors.
fn input_of(t: &etch_tensor, tag: Option<Tag>) -> Result<Input<'_>> {
    let scalar = |bytes: &[u8]| bytes.try_into().ok();
    if t.rank() == 0 {
        match (tag, t.dtype()) {
            (Some(Tag::Int), ScalarType::Long) => {
                if let Some(b) = scalar(t.bytes()) {
                    return Ok(Input::Int(i64::from_le_bytes(b)));
                }
            }
            (Some(Tag::Double), ScalarType::Double) => {
                if let Some(b) = scalar(t.bytes()) {
                    return Ok(Input::Double(f64::from_le_bytes(b)));
                }
            }
            (Some(Tag::Bool), ScalarType::Bool) => {
                if let [b] = t.bytes() {
                    return Ok(Input::Bool(*b != 0));
                }
            }
            _ => {}
        }
    }
    Ok(Input::Tensor(t.as_ref()))
}

/// An output as a tensor: scalars become rank-0 tensors.
fn tensor_of(i: usize, output: Output) -> Result<etch_tensor> {
    let made = match output {
        Output::Tensor(t) => return Ok(etch_tensor::owned(t)),
        Output::Int(v) => TensorBuf::from_slice(&[], &[v]),
        Output::Double(v) => TensorBuf::from_slice(&[], &[v]),
        Output::Bool(v) => TensorBuf::from_bytes(ScalarType::Bool, &[], &[u8::from(v)]),
        other => {
            return Err(Failure::new(
                etch_status::ETCH_NOT_SUPPORTED,
                format!("output {i} is {other:?}; the C API returns tensors and scalars"),
            ))
        }
    };
    made.map(etch_tensor::owned)
        .map_err(|e| Failure::new(etch_status::of(e), format!("output {i}: {e}")))
}

/// Calls method `method` with `num_inputs` inputs, in order, and returns copies of its
/// outputs in a new list at `*outputs` (NULL on failure).
///
/// - `inputs`: tensors (views of the caller's memory, or outputs of an earlier call); may
///   be NULL when `num_inputs` is 0. A scalar input is a rank-0 tensor (see
///   `etch_module_input_meta`). Each must have the dtype the method takes and sizes that
///   fit it: a mismatch is `ETCH_INVALID_ARGUMENT` with a message naming the input.
///   Inputs are read during the call only.
/// - `outputs`: receives the outputs; free the list with `etch_outputs_free`. Scalar
///   outputs come as rank-0 tensors.
///
/// Loads the method first if needed. State the program keeps in mutable buffers (a KV
/// cache) carries over to the next call. Not thread-safe for one module.
///
/// # Safety
/// `module` is NULL or a live module; `method` is NULL or NUL-terminated; `inputs` points
/// to `num_inputs` pointers, each NULL or a live tensor; `outputs` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_module_execute(
    module: *mut etch_module,
    method: *const c_char,
    inputs: *const *const etch_tensor,
    num_inputs: usize,
    outputs: *mut *mut etch_outputs,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promises: `outputs` NULL or writable, `module` NULL or
        // live and not used elsewhere, `method` NULL or a C string.
        let (out, m, name) = unsafe {
            (
                crate::out_ptr(outputs, "outputs")?,
                module_mut(module)?,
                str_arg(method, "method")?,
            )
        };
        let given: &[*const etch_tensor] = match (num_inputs, inputs.is_null()) {
            (0, _) => &[],
            (_, true) => return Err(Failure::null("inputs")),
            // SAFETY: the caller's promise: `num_inputs` pointers at `inputs`.
            (n, false) => unsafe { std::slice::from_raw_parts(inputs, n) },
        };
        let meta = m.module.method_meta(name)?;
        let tags: Vec<Option<Tag>> = (0..given.len()).map(|i| meta.input_tag(i).ok()).collect();
        let mut list = Vec::with_capacity(given.len());
        for (i, (&t, tag)) in given.iter().zip(tags).enumerate() {
            // SAFETY: the caller's promise: each pointer is NULL or a live tensor.
            let t = unsafe { tensor_ref(t, &format!("inputs[{i}]")) }?;
            list.push(input_of(t, tag)?);
        }
        let results = m.module.execute(name, &list)?;
        let tensors = results
            .into_iter()
            .enumerate()
            .map(|(i, o)| tensor_of(i, o))
            .collect::<Result<Vec<_>>>()?;
        *out = Box::into_raw(Box::new(etch_outputs { tensors }));
        Ok(())
    })
}

/// `etch_module_execute` of method `forward`.
///
/// # Safety
/// As `etch_module_execute`.
#[no_mangle]
pub unsafe extern "C" fn etch_module_forward(
    module: *mut etch_module,
    inputs: *const *const etch_tensor,
    num_inputs: usize,
    outputs: *mut *mut etch_outputs,
) -> etch_status {
    // SAFETY: the caller's promises, passed on; the name is a NUL-terminated literal.
    unsafe { etch_module_execute(module, c"forward".as_ptr(), inputs, num_inputs, outputs) }
}

/// The number of tensors in an output list (0 for NULL).
///
/// # Safety
/// `outputs` is NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn etch_outputs_count(outputs: *const etch_outputs) -> usize {
    guard_value(0, || {
        // SAFETY: the caller's promise: NULL or a live list.
        unsafe { outputs.as_ref() }.map_or(0, |o| o.tensors.len())
    })
}

/// Output `index` of a list, owned by the list (do not free it; `etch_tensor_free`
/// ignores it): valid until `etch_outputs_free`. NULL for NULL or an index past the last.
///
/// # Safety
/// `outputs` is NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn etch_outputs_get(
    outputs: *const etch_outputs,
    index: usize,
) -> *const etch_tensor {
    guard_value(std::ptr::null(), || {
        // SAFETY: the caller's promise: NULL or a live list.
        unsafe { outputs.as_ref() }
            .and_then(|o| o.tensors.get(index))
            .map_or(std::ptr::null(), |t| t as *const etch_tensor)
    })
}

/// Frees an output list and its tensors. NULL is a no-op.
///
/// # Safety
/// `outputs` is NULL or a live list, not used (nor its tensors) after this call.
#[no_mangle]
pub unsafe extern "C" fn etch_outputs_free(outputs: *mut etch_outputs) {
    guard_value((), || {
        if !outputs.is_null() {
            // SAFETY: lists are made as `Box`es by `etch_module_execute`; the caller
            // frees each once.
            drop(unsafe { Box::from_raw(outputs) });
        }
    })
}
