//! Tables in method memory: what the plan and its liveness bookkeeping allocate for
//! their arrays, which live as long as the method.

use core::mem::{align_of, size_of};
use core::ptr::NonNull;

use et_runtime::backend::{BackendInitContext, DelegateError};
use et_runtime::Error;

/// `n` elements of method memory for a table, uninitialized.
pub(super) fn arena_raw<T>(
    ctx: &BackendInitContext<'_>,
    n: usize,
) -> Result<NonNull<T>, DelegateError> {
    let bytes = n.checked_mul(size_of::<T>()).ok_or(DelegateError::new(
        Error::InvalidProgram,
        "the graph is too large",
    ))?;
    let p = ctx
        .allocate(bytes.max(1), align_of::<T>().max(8))
        .map_err(|e| DelegateError::new(e, "method memory is too small for the XNNPACK plan"))?;
    NonNull::new(p.cast::<T>()).ok_or(DelegateError::new(Error::Internal, "null allocation"))
}

/// `n` elements of method memory, each set to `fill`. The table lives as long as the
/// method (method memory), which is why the result may be `'static` for the plan: the
/// plan never outlives the method that holds its handle.
pub(super) fn arena_array<T: Copy>(
    ctx: &BackendInitContext<'_>,
    n: usize,
    fill: T,
) -> Result<&'static mut [T], DelegateError> {
    let p = arena_raw::<T>(ctx, n)?.as_ptr();
    for k in 0..n {
        // SAFETY: `k < n`, inside the fresh allocation of `n` elements of `T`.
        unsafe { p.add(k).write(fill) };
    }
    // SAFETY: all `n` elements were written above; the memory is method memory, handed to
    // no one else, and the plan that refers to it is destroyed with the method.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, n) })
}
