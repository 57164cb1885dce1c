//! Status codes, the thread's last error message, and the guard every exported function
//! runs its body in.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use et_runtime::{Error, ModuleError};

/// What an etch call returned. `ETCH_OK` is 0; the codes from `ETCH_INTERNAL` to
/// `ETCH_DELEGATE_INVALID_HANDLE` have the numeric values of ExecuTorch's `Error` enum
/// (`runtime/core/error.h`), so a code means the same from etch as from ExecuTorch. Codes
/// from 0x100 are the C API's own. `etch_last_error_message()` says what went wrong.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum etch_status {
    /// Success.
    ETCH_OK = 0,
    /// An internal invariant was broken.
    ETCH_INTERNAL = 0x01,
    /// The object is not in a state that allows the call.
    ETCH_INVALID_STATE = 0x02,
    /// A method ran past its last instruction.
    ETCH_END_OF_METHOD = 0x03,
    /// The object was already loaded.
    ETCH_ALREADY_LOADED = 0x04,
    /// Not supported by this build or this program.
    ETCH_NOT_SUPPORTED = 0x10,
    /// Not implemented.
    ETCH_NOT_IMPLEMENTED = 0x11,
    /// An argument was NULL, out of range, of the wrong dtype or of the wrong shape.
    ETCH_INVALID_ARGUMENT = 0x12,
    /// A value had the wrong type.
    ETCH_INVALID_TYPE = 0x13,
    /// No linked kernel serves one of the program's operators.
    ETCH_OPERATOR_MISSING = 0x14,
    /// Kept for ExecuTorch's numbering; etch's kernel registry has no capacity.
    ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS = 0x15,
    /// Two kernels were registered under the same name and dtypes.
    ETCH_REGISTRATION_ALREADY_REGISTERED = 0x16,
    /// A method, input or named item does not exist.
    ETCH_NOT_FOUND = 0x20,
    /// Memory could not be had (a memory limit, or the allocator failed).
    ETCH_MEMORY_ALLOCATION_FAILED = 0x21,
    /// A file or the data behind a loader could not be read.
    ETCH_ACCESS_FAILED = 0x22,
    /// The program is malformed.
    ETCH_INVALID_PROGRAM = 0x23,
    /// A `.ptd` data file does not match the program.
    ETCH_INVALID_EXTERNAL_DATA = 0x24,
    /// A resource limit was exceeded.
    ETCH_OUT_OF_RESOURCES = 0x25,
    /// A delegate's payload does not suit its backend.
    ETCH_DELEGATE_INVALID_COMPATIBILITY = 0x30,
    /// A backend could not allocate memory.
    ETCH_DELEGATE_MEMORY_ALLOCATION_FAILED = 0x31,
    /// A backend handle was invalid.
    ETCH_DELEGATE_INVALID_HANDLE = 0x32,
    /// A file (such as a tokenizer) could not be read, or a path is not valid UTF-8.
    ETCH_IO = 0x100,
    /// etch panicked inside the call: a bug in etch, reported instead of unwinding into
    /// the caller. The object the call was given should be freed, not used again.
    ETCH_PANIC = 0x101,
    /// A tokenizer file is malformed, or text could not be encoded or decoded.
    ETCH_TOKENIZER = 0x102,
    /// The program is not an LLM program (ExecuTorch's `export_llm` writes those).
    ETCH_NOT_AN_LLM = 0x103,
}

impl etch_status {
    /// The status of an etch error code.
    pub(crate) fn of(code: Error) -> etch_status {
        use etch_status::*;
        match code {
            Error::Internal => ETCH_INTERNAL,
            Error::InvalidState => ETCH_INVALID_STATE,
            Error::EndOfMethod => ETCH_END_OF_METHOD,
            Error::AlreadyLoaded => ETCH_ALREADY_LOADED,
            Error::NotSupported => ETCH_NOT_SUPPORTED,
            Error::NotImplemented => ETCH_NOT_IMPLEMENTED,
            Error::InvalidArgument => ETCH_INVALID_ARGUMENT,
            Error::InvalidType => ETCH_INVALID_TYPE,
            Error::OperatorMissing => ETCH_OPERATOR_MISSING,
            Error::RegistrationExceedingMaxKernels => ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS,
            Error::RegistrationAlreadyRegistered => ETCH_REGISTRATION_ALREADY_REGISTERED,
            Error::NotFound => ETCH_NOT_FOUND,
            Error::MemoryAllocationFailed => ETCH_MEMORY_ALLOCATION_FAILED,
            Error::AccessFailed => ETCH_ACCESS_FAILED,
            Error::InvalidProgram => ETCH_INVALID_PROGRAM,
            Error::InvalidExternalData => ETCH_INVALID_EXTERNAL_DATA,
            Error::OutOfResources => ETCH_OUT_OF_RESOURCES,
            Error::DelegateInvalidCompatibility => ETCH_DELEGATE_INVALID_COMPATIBILITY,
            Error::DelegateMemoryAllocationFailed => ETCH_DELEGATE_MEMORY_ALLOCATION_FAILED,
            Error::DelegateInvalidHandle => ETCH_DELEGATE_INVALID_HANDLE,
            // A code added to etch after this list: still an error, never success.
            _ => ETCH_INTERNAL,
        }
    }
}

/// A failed call: the status it returns and the message `etch_last_error_message` gives.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: etch_status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: etch_status, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }

    /// An `ETCH_INVALID_ARGUMENT` failure.
    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(etch_status::ETCH_INVALID_ARGUMENT, message)
    }

    /// The failure for a NULL pointer passed as `what`.
    pub(crate) fn null(what: &str) -> Failure {
        Failure::invalid(format!("`{what}` is NULL"))
    }
}

impl From<ModuleError> for Failure {
    fn from(e: ModuleError) -> Failure {
        let mut message = e.message().to_string();
        if matches!(e.code(), Error::OperatorMissing | Error::NotFound) && registrations_lost() {
            message.push_str(LINK_WHOLE);
        }
        Failure::new(etch_status::of(e.code()), message)
    }
}

/// What to do when the registrations are missing: the Rust advice of etch's message does
/// not apply from C.
const LINK_WHOLE: &str = " (from C: the kernels and backends etch registers were dropped \
    by the linker; link the static library whole, `-Wl,--whole-archive libetch.a \
    -Wl,--no-whole-archive`, or `-Wl,-force_load,libetch.a` on Apple platforms, as \
    ExecuTorch's own kernel libraries are linked; the shared library needs nothing)";

/// Whether the linker dropped etch's registrations. They are static entries nothing
/// refers to by name, so a linker pulling members out of `libetch.a` only for the
/// symbols a C program calls leaves them out.
fn registrations_lost() -> bool {
    !et_runtime::registry::has_operator("aten::add", "out")
        || et_runtime::backend::find_backend("XnnpackBackend").is_none()
}

pub(crate) type Result<T> = std::result::Result<T, Failure>;

thread_local! {
    /// The message of this thread's last status-returning call; empty after a success.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // C strings end at the first NUL: one inside a message (a file name) would cut it.
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // `try_with`: during thread teardown the slot may be gone; the status still says it.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = text);
}

/// The message of a panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "a panic without a message"
    }
}

/// Runs an exported function's body: its error becomes the returned status and this
/// thread's message, and a panic becomes `ETCH_PANIC` instead of unwinding into C (which
/// would be undefined behaviour).
pub(crate) fn guard(body: impl FnOnce() -> Result<()>) -> etch_status {
    // `AssertUnwindSafe`: after a panic the objects the call touched may be half-updated;
    // ETCH_PANIC's documentation tells the caller to free them rather than use them.
    let outcome = catch_unwind(AssertUnwindSafe(body));
    let failure = match outcome {
        Ok(Ok(())) => {
            set_last_error("");
            return etch_status::ETCH_OK;
        }
        Ok(Err(failure)) => failure,
        Err(payload) => Failure::new(
            etch_status::ETCH_PANIC,
            format!(
                "etch panicked (a bug in etch; please report it): {}",
                panic_message(payload.as_ref())
            ),
        ),
    };
    set_last_error(&failure.message);
    failure.status
}

/// Runs the body of an exported function that returns a value instead of a status: a
/// panic gives `fallback` (the value the function documents for a bad argument).
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    // `AssertUnwindSafe`: these bodies only read; nothing is left half-updated.
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// The message of the last failed etch call on the calling thread, or "" if that call
/// succeeded (or none was made).
///
/// The text is etch's own, as the `etch` command prints it: what was wrong, where, and
/// what to do when there is something to do. The pointer stays valid until the next etch
/// call on this thread that returns an `etch_status`; copy the text to keep it. Never
/// NULL. Each thread has its own message, so threads never see each other's errors.
#[no_mangle]
pub extern "C" fn etch_last_error_message() -> *const c_char {
    guard_value(c"etch: the error message is unavailable".as_ptr(), || {
        LAST_ERROR
            .try_with(|slot| slot.borrow().as_ptr())
            .unwrap_or(c"".as_ptr())
    })
}

/// A short, static name for a status (`"ETCH_INVALID_PROGRAM"`), for logs. Never NULL;
/// an unknown value gives `"ETCH_UNKNOWN"`.
#[no_mangle]
pub extern "C" fn etch_status_name(status: i32) -> *const c_char {
    use etch_status::*;
    let all = [
        (ETCH_OK, c"ETCH_OK"),
        (ETCH_INTERNAL, c"ETCH_INTERNAL"),
        (ETCH_INVALID_STATE, c"ETCH_INVALID_STATE"),
        (ETCH_END_OF_METHOD, c"ETCH_END_OF_METHOD"),
        (ETCH_ALREADY_LOADED, c"ETCH_ALREADY_LOADED"),
        (ETCH_NOT_SUPPORTED, c"ETCH_NOT_SUPPORTED"),
        (ETCH_NOT_IMPLEMENTED, c"ETCH_NOT_IMPLEMENTED"),
        (ETCH_INVALID_ARGUMENT, c"ETCH_INVALID_ARGUMENT"),
        (ETCH_INVALID_TYPE, c"ETCH_INVALID_TYPE"),
        (ETCH_OPERATOR_MISSING, c"ETCH_OPERATOR_MISSING"),
        (
            ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS,
            c"ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS",
        ),
        (
            ETCH_REGISTRATION_ALREADY_REGISTERED,
            c"ETCH_REGISTRATION_ALREADY_REGISTERED",
        ),
        (ETCH_NOT_FOUND, c"ETCH_NOT_FOUND"),
        (
            ETCH_MEMORY_ALLOCATION_FAILED,
            c"ETCH_MEMORY_ALLOCATION_FAILED",
        ),
        (ETCH_ACCESS_FAILED, c"ETCH_ACCESS_FAILED"),
        (ETCH_INVALID_PROGRAM, c"ETCH_INVALID_PROGRAM"),
        (ETCH_INVALID_EXTERNAL_DATA, c"ETCH_INVALID_EXTERNAL_DATA"),
        (ETCH_OUT_OF_RESOURCES, c"ETCH_OUT_OF_RESOURCES"),
        (
            ETCH_DELEGATE_INVALID_COMPATIBILITY,
            c"ETCH_DELEGATE_INVALID_COMPATIBILITY",
        ),
        (
            ETCH_DELEGATE_MEMORY_ALLOCATION_FAILED,
            c"ETCH_DELEGATE_MEMORY_ALLOCATION_FAILED",
        ),
        (
            ETCH_DELEGATE_INVALID_HANDLE,
            c"ETCH_DELEGATE_INVALID_HANDLE",
        ),
        (ETCH_IO, c"ETCH_IO"),
        (ETCH_PANIC, c"ETCH_PANIC"),
        (ETCH_TOKENIZER, c"ETCH_TOKENIZER"),
        (ETCH_NOT_AN_LLM, c"ETCH_NOT_AN_LLM"),
    ];
    all.iter()
        .find(|(s, _)| *s as i32 == status)
        .map_or(c"ETCH_UNKNOWN".as_ptr(), |(_, name)| name.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        // SAFETY: etch_last_error_message returns a live NUL-terminated string.
        unsafe { CStr::from_ptr(etch_last_error_message()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_is_a_status_with_its_message() {
        let status = guard(|| panic!("boom {}", 7));
        assert_eq!(status, etch_status::ETCH_PANIC);
        assert!(last().contains("boom 7"), "{}", last());
        assert_eq!(guard(|| Ok(())), etch_status::ETCH_OK);
        assert_eq!(last(), "");
    }

    #[test]
    fn codes_keep_executorchs_numbers() {
        assert_eq!(etch_status::of(Error::InvalidProgram) as u32, 0x23);
        assert_eq!(
            etch_status::of(Error::OperatorMissing) as u32,
            Error::OperatorMissing.code()
        );
        let status = guard(|| Err(Failure::invalid("nul \0 inside")));
        assert_eq!(status, etch_status::ETCH_INVALID_ARGUMENT);
        assert_eq!(last(), "nul \\0 inside");
        // SAFETY: etch_status_name returns a static NUL-terminated string.
        let name = unsafe { CStr::from_ptr(etch_status_name(0x23)) };
        assert_eq!(name.to_str().unwrap(), "ETCH_INVALID_PROGRAM");
    }
}
