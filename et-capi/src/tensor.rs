//! `etch_tensor`: an owned output, or a view of the caller's memory used as an input.

use std::ffi::c_void;

use et_runtime::{checked_numel, ScalarType, TensorBuf, TensorRef, MAX_DIM};

use crate::error::{guard, guard_value, Failure, Result};

/// The most dimensions a tensor has (ExecuTorch's limit too).
pub const ETCH_MAX_DIM: usize = 16;

const _: () = assert!(ETCH_MAX_DIM == MAX_DIM);

/// Element types, numbered as ExecuTorch's `ScalarType` (and PyTorch's): a program's
/// dtypes and these agree without a table. Functions take a dtype as `int32_t` so that an
/// out-of-range value is reported (`ETCH_INVALID_ARGUMENT`), never undefined behaviour.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum etch_dtype {
    /// `uint8_t`.
    ETCH_DTYPE_BYTE = 0,
    /// `int8_t`.
    ETCH_DTYPE_CHAR = 1,
    /// `int16_t`.
    ETCH_DTYPE_SHORT = 2,
    /// `int32_t`.
    ETCH_DTYPE_INT = 3,
    /// `int64_t`.
    ETCH_DTYPE_LONG = 4,
    /// IEEE half precision, 2 bytes.
    ETCH_DTYPE_HALF = 5,
    /// `float`.
    ETCH_DTYPE_FLOAT = 6,
    /// `double`.
    ETCH_DTYPE_DOUBLE = 7,
    /// Two halves.
    ETCH_DTYPE_COMPLEX_HALF = 8,
    /// Two floats.
    ETCH_DTYPE_COMPLEX_FLOAT = 9,
    /// Two doubles.
    ETCH_DTYPE_COMPLEX_DOUBLE = 10,
    /// One byte, 0 or 1.
    ETCH_DTYPE_BOOL = 11,
    /// Quantized int8.
    ETCH_DTYPE_QINT8 = 12,
    /// Quantized uint8.
    ETCH_DTYPE_QUINT8 = 13,
    /// Quantized int32.
    ETCH_DTYPE_QINT32 = 14,
    /// bfloat16, 2 bytes.
    ETCH_DTYPE_BFLOAT16 = 15,
    /// Two 4-bit values per byte.
    ETCH_DTYPE_QUINT4X2 = 16,
    /// Four 2-bit values per byte.
    ETCH_DTYPE_QUINT2X4 = 17,
    /// Eight 1-bit values per byte.
    ETCH_DTYPE_BITS1X8 = 18,
    /// Four 2-bit values per byte.
    ETCH_DTYPE_BITS2X4 = 19,
    /// Two 4-bit values per byte.
    ETCH_DTYPE_BITS4X2 = 20,
    /// 8 untyped bits.
    ETCH_DTYPE_BITS8 = 21,
    /// 16 untyped bits.
    ETCH_DTYPE_BITS16 = 22,
    /// float8 e5m2.
    ETCH_DTYPE_FLOAT8_E5M2 = 23,
    /// float8 e4m3fn.
    ETCH_DTYPE_FLOAT8_E4M3FN = 24,
    /// float8 e5m2fnuz.
    ETCH_DTYPE_FLOAT8_E5M2FNUZ = 25,
    /// float8 e4m3fnuz.
    ETCH_DTYPE_FLOAT8_E4M3FNUZ = 26,
    /// `uint16_t`.
    ETCH_DTYPE_UINT16 = 27,
    /// `uint32_t`.
    ETCH_DTYPE_UINT32 = 28,
    /// `uint64_t`.
    ETCH_DTYPE_UINT64 = 29,
}

/// The dtype a C caller passed, checked.
pub(crate) fn dtype_of(value: i32) -> Result<ScalarType> {
    i8::try_from(value)
        .ok()
        .and_then(ScalarType::from_i8)
        .ok_or_else(|| {
            Failure::invalid(format!(
                "{value} is not an etch_dtype (ExecuTorch's ScalarType numbers 0 to 29)"
            ))
        })
}

/// A tensor handle. Created by `etch_tensor_new_view` (borrowing the caller's memory) or
/// owned by an `etch_outputs` list (a method's output, copied out of the method).
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct etch_tensor {
    dtype: ScalarType,
    sizes: Vec<usize>,
    /// The sizes as `etch_tensor_sizes` hands them out.
    sizes_i64: Vec<i64>,
    data: Data,
}

#[derive(Debug)]
enum Data {
    Owned(TensorBuf),
    /// Memory the caller lends; `len` bytes, readable while the view is used.
    View {
        ptr: *const u8,
        len: usize,
    },
}

impl etch_tensor {
    /// An output tensor, owned.
    pub(crate) fn owned(t: TensorBuf) -> etch_tensor {
        let sizes = t.sizes().to_vec();
        etch_tensor {
            dtype: t.dtype(),
            sizes_i64: sizes.iter().map(|&s| s as i64).collect(),
            sizes,
            data: Data::Owned(t),
        }
    }

    pub(crate) fn dtype(&self) -> ScalarType {
        self.dtype
    }

    pub(crate) fn rank(&self) -> usize {
        self.sizes.len()
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        match &self.data {
            // A TensorBuf is contiguous and owns its data: `bytes` cannot fail for it.
            Data::Owned(t) => t.bytes().unwrap_or_default(),
            // SAFETY: `etch_tensor_new_view` checked that `ptr` is non-NULL (or `len` is 0,
            // when it is a dangling, aligned pointer) and `len` fits `isize`; its contract
            // makes the caller keep `len` bytes at `ptr` readable and unmodified while the
            // view is used, and the slice lives no longer than `&self`.
            Data::View { ptr, len } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }

    /// The tensor as a method input.
    pub(crate) fn as_ref(&self) -> TensorRef<'_> {
        TensorRef::from_bytes(self.dtype, &self.sizes, self.bytes())
    }
}

/// Reads a caller's `etch_tensor` pointer.
///
/// # Safety
/// `t` is NULL or points to a live `etch_tensor`.
pub(crate) unsafe fn tensor_ref<'a>(t: *const etch_tensor, what: &str) -> Result<&'a etch_tensor> {
    // SAFETY: the caller's promise: NULL or a live tensor from this library.
    unsafe { t.as_ref() }.ok_or_else(|| Failure::null(what))
}

/// Makes a tensor that views memory the caller owns, for use as a method input: nothing
/// is copied.
///
/// - `dtype`: an `etch_dtype`.
/// - `sizes`: `rank` sizes (none negative); may be NULL when `rank` is 0 (a scalar).
///   Copied: the array need not outlive the call.
/// - `data`: `nbytes` bytes of row-major, little-endian elements; NULL only when `nbytes`
///   is 0. `nbytes` must be exactly the product of the sizes times the element size.
///   The memory is borrowed, not copied: it must stay valid, and must not be written,
///   while any call that is given this view runs; it may change between calls (a new
///   input each call through the same view). etch never writes through it.
/// - `out`: receives the new tensor (NULL on failure). Free it with `etch_tensor_free`,
///   after which `data` is the caller's again.
///
/// Returns `ETCH_INVALID_ARGUMENT` for a NULL pointer, a bad dtype, a rank over
/// `ETCH_MAX_DIM`, a negative size, or an `nbytes` that does not match. Thread-safe.
///
/// # Safety
/// `sizes` points to `rank` readable `int64_t` (or `rank` is 0); `out` is NULL or
/// writable; `data` obeys the rules above.
#[no_mangle]
pub unsafe extern "C" fn etch_tensor_new_view(
    dtype: i32,
    sizes: *const i64,
    rank: usize,
    data: *const c_void,
    nbytes: usize,
    out: *mut *mut etch_tensor,
) -> crate::etch_status {
    guard(|| {
        // SAFETY: the caller's promise: NULL or writable.
        let out = unsafe { crate::out_ptr(out, "out") }?;
        let dtype = dtype_of(dtype)?;
        if rank > ETCH_MAX_DIM {
            return Err(Failure::invalid(format!(
                "rank {rank} is over ETCH_MAX_DIM ({ETCH_MAX_DIM})"
            )));
        }
        let sizes_i64: Vec<i64> = if rank == 0 {
            Vec::new()
        } else if sizes.is_null() {
            return Err(Failure::null("sizes"));
        } else {
            // SAFETY: the caller's promise: `sizes` holds `rank` (at most 16) values.
            unsafe { std::slice::from_raw_parts(sizes, rank) }.to_vec()
        };
        let sizes = sizes_i64
            .iter()
            .map(|&s| usize::try_from(s))
            .collect::<std::result::Result<Vec<usize>, _>>()
            .map_err(|_| Failure::invalid(format!("sizes {sizes_i64:?} have a negative size")))?;
        let expected = checked_numel(&sizes)
            .and_then(|n| n.checked_mul(dtype.element_size()))
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| Failure::invalid(format!("sizes {sizes:?} overflow")))?;
        if nbytes != expected {
            return Err(Failure::invalid(format!(
                "{nbytes} bytes of data do not make a {dtype:?} tensor of sizes {sizes:?} \
                 ({expected} bytes)"
            )));
        }
        let ptr = if nbytes == 0 {
            std::ptr::NonNull::<u8>::dangling().as_ptr().cast_const()
        } else if data.is_null() {
            return Err(Failure::null("data"));
        } else {
            data.cast::<u8>()
        };
        let tensor = etch_tensor {
            dtype,
            sizes,
            sizes_i64,
            data: Data::View { ptr, len: nbytes },
        };
        *out = Box::into_raw(Box::new(tensor));
        Ok(())
    })
}

/// Frees a tensor made by `etch_tensor_new_view`. NULL is a no-op. A tensor that belongs
/// to an `etch_outputs` list is left alone (the list frees it): only views are yours.
///
/// # Safety
/// `t` is NULL or a live tensor from this library, not used after this call (unless it
/// belongs to a list).
#[no_mangle]
pub unsafe extern "C" fn etch_tensor_free(t: *mut etch_tensor) {
    guard_value((), || {
        // SAFETY: the caller's promise: NULL or a live tensor.
        let Some(tensor) = (unsafe { t.as_ref() }) else {
            return;
        };
        if matches!(tensor.data, Data::View { .. }) {
            // SAFETY: views are made only by `etch_tensor_new_view`, as a `Box`, and the
            // caller frees each once.
            drop(unsafe { Box::from_raw(t) });
        }
    })
}

/// The tensor's `etch_dtype`; -1 for NULL. Thread-safe for concurrent readers.
///
/// # Safety
/// `t` is NULL or a live tensor.
#[no_mangle]
pub unsafe extern "C" fn etch_tensor_dtype(t: *const etch_tensor) -> i32 {
    // SAFETY: the caller's promise: NULL or a live tensor.
    guard_value(-1, || unsafe { t.as_ref() }.map_or(-1, |t| t.dtype as i32))
}

/// The number of dimensions (0 for a scalar, and for NULL).
///
/// # Safety
/// `t` is NULL or a live tensor.
#[no_mangle]
pub unsafe extern "C" fn etch_tensor_rank(t: *const etch_tensor) -> usize {
    // SAFETY: the caller's promise: NULL or a live tensor.
    guard_value(0, || unsafe { t.as_ref() }.map_or(0, etch_tensor::rank))
}

/// The sizes, `etch_tensor_rank(t)` of them. The array belongs to the tensor and lives as
/// long as it. NULL for NULL; for a rank-0 tensor a non-NULL pointer to no elements.
///
/// # Safety
/// `t` is NULL or a live tensor.
#[no_mangle]
pub unsafe extern "C" fn etch_tensor_sizes(t: *const etch_tensor) -> *const i64 {
    guard_value(std::ptr::null(), || {
        // SAFETY: the caller's promise: NULL or a live tensor.
        unsafe { t.as_ref() }.map_or(std::ptr::null(), |t| t.sizes_i64.as_ptr())
    })
}

/// The number of elements (the product of the sizes; 1 for a scalar, 0 for NULL).
///
/// # Safety
/// `t` is NULL or a live tensor.
#[no_mangle]
pub unsafe extern "C" fn etch_tensor_numel(t: *const etch_tensor) -> usize {
    guard_value(0, || {
        // SAFETY: the caller's promise: NULL or a live tensor.
        unsafe { t.as_ref() }.map_or(0, |t| t.sizes.iter().product())
    })
}

/// The size of the data in bytes (0 for NULL).
///
/// # Safety
/// `t` is NULL or a live tensor.
#[no_mangle]
pub unsafe extern "C" fn etch_tensor_nbytes(t: *const etch_tensor) -> usize {
    // SAFETY: the caller's promise: NULL or a live tensor.
    guard_value(0, || unsafe { t.as_ref() }.map_or(0, |t| t.bytes().len()))
}

/// The data: `etch_tensor_nbytes(t)` bytes of row-major, little-endian elements, aligned
/// for the dtype. For an output, the memory belongs to its `etch_outputs` list and lives
/// until the list is freed; for a view, it is the caller's pointer. Read-only. NULL for
/// NULL.
///
/// # Safety
/// `t` is NULL or a live tensor.
#[no_mangle]
pub unsafe extern "C" fn etch_tensor_data(t: *const etch_tensor) -> *const c_void {
    guard_value(std::ptr::null(), || {
        // SAFETY: the caller's promise: NULL or a live tensor.
        unsafe { t.as_ref() }.map_or(std::ptr::null(), |t| t.bytes().as_ptr().cast())
    })
}
