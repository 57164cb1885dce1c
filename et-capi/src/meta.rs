//! A program's methods and what each takes and gives, for callers that build inputs
//! without knowing the program.

use std::ffi::c_char;

use et_runtime::{ScalarType, ShapeDynamism, Tag};

use crate::error::{etch_status, guard, guard_value, Failure, Result};
use crate::module::{etch_module, module_ref, str_arg};
use crate::tensor::ETCH_MAX_DIM;

/// What a method takes or gives at one position: a dtype and sizes.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct etch_tensor_meta {
    /// An `etch_dtype`.
    pub dtype: i32,
    /// The number of dimensions; `sizes[rank..]` are 0.
    pub rank: usize,
    /// The sizes: for a dynamic tensor (`dynamic` non-zero), the upper bounds.
    pub sizes: [i64; ETCH_MAX_DIM],
    /// 0 for a static shape; 1 when the sizes are upper bounds (ExecuTorch's
    /// `DYNAMIC_BOUND`); 2 when unbounded.
    pub dynamic: i32,
}

/// The number of methods in the program (0 for NULL).
///
/// # Safety
/// `module` is NULL or a live module.
#[no_mangle]
pub unsafe extern "C" fn etch_module_method_count(module: *const etch_module) -> usize {
    guard_value(0, || {
        // SAFETY: the caller's promise: NULL or a live module.
        unsafe { module_ref(module) }.map_or(0, |m| m.names.len())
    })
}

/// The name of method `index` (0-based), NUL-terminated, owned by the module and valid
/// until it is freed; NULL for NULL or an index past the last.
///
/// # Safety
/// `module` is NULL or a live module.
#[no_mangle]
pub unsafe extern "C" fn etch_module_method_name(
    module: *const etch_module,
    index: usize,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        // SAFETY: the caller's promise: NULL or a live module.
        unsafe { module_ref(module) }
            .and_then(|m| m.names.get(index))
            .map_or(std::ptr::null(), |n| n.as_ptr())
    })
}

/// Writes the number of inputs (`num_inputs`) and outputs (`num_outputs`) of method
/// `method`; either pointer may be NULL. `ETCH_INVALID_ARGUMENT` names the program's
/// methods when there is no such method.
///
/// # Safety
/// `module` is NULL or a live module; `method` is NULL or NUL-terminated; the out
/// pointers are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_module_method_arity(
    module: *const etch_module,
    method: *const c_char,
    num_inputs: *mut usize,
    num_outputs: *mut usize,
) -> etch_status {
    guard(|| {
        // SAFETY: the caller's promises: NULL or a live module, NULL or a C string.
        let (m, name) = unsafe { (module_ref(module), str_arg(method, "method")?) };
        let m = m.ok_or_else(|| Failure::null("module"))?;
        let meta = m.module.method_meta(name)?;
        // SAFETY: the caller's promise: each is NULL or writable.
        unsafe {
            if let Some(n) = num_inputs.as_mut() {
                *n = meta.num_inputs();
            }
            if let Some(n) = num_outputs.as_mut() {
                *n = meta.num_outputs();
            }
        }
        Ok(())
    })
}

/// Describes input `index` of method `method` in `*out`: its dtype and sizes. A scalar
/// input (an int, double or bool the program was exported with) is described as a rank-0
/// tensor of `ETCH_DTYPE_LONG`, `ETCH_DTYPE_DOUBLE` or `ETCH_DTYPE_BOOL`, and takes one.
///
/// # Safety
/// `module` is NULL or a live module; `method` is NULL or NUL-terminated; `out` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_module_input_meta(
    module: *const etch_module,
    method: *const c_char,
    index: usize,
    out: *mut etch_tensor_meta,
) -> etch_status {
    // SAFETY: the caller's promises, passed on.
    guard(|| unsafe { io_meta(module, method, index, out, true) })
}

/// Describes output `index` of method `method` in `*out`, as `etch_module_input_meta`
/// does inputs.
///
/// # Safety
/// As `etch_module_input_meta`.
#[no_mangle]
pub unsafe extern "C" fn etch_module_output_meta(
    module: *const etch_module,
    method: *const c_char,
    index: usize,
    out: *mut etch_tensor_meta,
) -> etch_status {
    // SAFETY: the caller's promises, passed on.
    guard(|| unsafe { io_meta(module, method, index, out, false) })
}

/// # Safety
/// As `etch_module_input_meta`.
unsafe fn io_meta(
    module: *const etch_module,
    method: *const c_char,
    index: usize,
    out: *mut etch_tensor_meta,
    input: bool,
) -> Result<()> {
    // SAFETY: the caller's promises: `out` NULL or writable, `module` NULL or live,
    // `method` NULL or a C string.
    let (out, m, name) = unsafe { (out.as_mut(), module_ref(module), str_arg(method, "method")?) };
    let out = out.ok_or_else(|| Failure::null("out"))?;
    let m = m.ok_or_else(|| Failure::null("module"))?;
    let meta = m.module.method_meta(name)?;
    let (kind, count) = if input {
        ("input", meta.num_inputs())
    } else {
        ("output", meta.num_outputs())
    };
    if index >= count {
        return Err(Failure::invalid(format!(
            "method `{name}` has {count} {kind}s; there is no {kind} {index}"
        )));
    }
    let tag = if input {
        meta.input_tag(index)
    } else {
        meta.output_tag(index)
    }
    .map_err(|e| {
        Failure::new(
            etch_status::of(e),
            format!("{kind} {index} of `{name}`: {e}"),
        )
    })?;
    let mut desc = etch_tensor_meta {
        dtype: 0,
        rank: 0,
        sizes: [0; ETCH_MAX_DIM],
        dynamic: 0,
    };
    desc.dtype = match tag {
        Tag::Tensor => {
            let info = if input {
                meta.input_tensor(index)
            } else {
                meta.output_tensor(index)
            }
            .map_err(|e| Failure::new(etch_status::of(e), format!("{kind} {index}: {e}")))?;
            desc.rank = info.sizes().len();
            for (d, &s) in desc.sizes.iter_mut().zip(info.sizes()) {
                *d = s as i64;
            }
            desc.dynamic = match info.dynamism {
                ShapeDynamism::Static => 0,
                ShapeDynamism::Bound => 1,
                ShapeDynamism::Unbound => 2,
            };
            info.dtype as i32
        }
        Tag::Int => ScalarType::Long as i32,
        Tag::Double => ScalarType::Double as i32,
        Tag::Bool => ScalarType::Bool as i32,
        other => {
            return Err(Failure::new(
                etch_status::ETCH_NOT_SUPPORTED,
                format!(
                    "{kind} {index} of method `{name}` is a {other:?}; the C API passes \
                     tensors and scalars"
                ),
            ))
        }
    };
    *out = desc;
    Ok(())
}
