//! Error codes, numerically identical to ExecuTorch's `runtime/core/error.h`.

use core::fmt;

/// `text` when the feature `messages` is on, else `""`: error explanations cost nothing
/// in a binary that reports codes only (as ExecuTorch compiles `ET_LOG` out). Every
/// `&'static str` explanation in et-schema and et-runtime errors goes through it.
#[inline(always)]
pub const fn message(text: &'static str) -> &'static str {
    if cfg!(feature = "messages") {
        text
    } else {
        ""
    }
}

/// What went wrong. The discriminants are ExecuTorch's `Error` codes, so a code logged by
/// etch means the same as one logged by the C++ runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum Error {
    /// An internal invariant was broken.
    Internal = 0x01,
    /// The object is not in a state that allows the call (for example an input was never set).
    InvalidState = 0x02,
    /// `step` ran past the last instruction.
    EndOfMethod = 0x03,
    /// The object was already loaded.
    AlreadyLoaded = 0x04,
    /// The operation is not supported by this build or this program.
    NotSupported = 0x10,
    /// The operation is not implemented.
    NotImplemented = 0x11,
    /// An argument was out of range or of the wrong shape.
    InvalidArgument = 0x12,
    /// A value had the wrong type.
    InvalidType = 0x13,
    /// No registered kernel serves an operator call.
    OperatorMissing = 0x14,
    /// Kept for code compatibility; etch's registry has no capacity.
    RegistrationExceedingMaxKernels = 0x15,
    /// Two kernels were registered under the same name and dtype key.
    RegistrationAlreadyRegistered = 0x16,
    /// A method, input or named item does not exist.
    NotFound = 0x20,
    /// A memory pool was too small.
    MemoryAllocationFailed = 0x21,
    /// Reading from the data loader failed.
    AccessFailed = 0x22,
    /// The program is malformed.
    InvalidProgram = 0x23,
    /// External data did not match the program.
    InvalidExternalData = 0x24,
    /// A resource limit (such as the instruction budget) was exceeded.
    OutOfResources = 0x25,
    /// A delegate payload is incompatible with its backend.
    DelegateInvalidCompatibility = 0x30,
    /// A backend could not allocate memory.
    DelegateMemoryAllocationFailed = 0x31,
    /// A backend handle was invalid.
    DelegateInvalidHandle = 0x32,
}

impl Error {
    /// ExecuTorch's numeric error code.
    pub const fn code(self) -> u32 {
        self as u32
    }

    /// ExecuTorch's name for this code, as `to_string` would print it without the prefix.
    pub const fn name(self) -> &'static str {
        match self {
            Error::Internal => "Internal",
            Error::InvalidState => "InvalidState",
            Error::EndOfMethod => "EndOfMethod",
            Error::AlreadyLoaded => "AlreadyLoaded",
            Error::NotSupported => "NotSupported",
            Error::NotImplemented => "NotImplemented",
            Error::InvalidArgument => "InvalidArgument",
            Error::InvalidType => "InvalidType",
            Error::OperatorMissing => "OperatorMissing",
            Error::RegistrationExceedingMaxKernels => "RegistrationExceedingMaxKernels",
            Error::RegistrationAlreadyRegistered => "RegistrationAlreadyRegistered",
            Error::NotFound => "NotFound",
            Error::MemoryAllocationFailed => "MemoryAllocationFailed",
            Error::AccessFailed => "AccessFailed",
            Error::InvalidProgram => "InvalidProgram",
            Error::InvalidExternalData => "InvalidExternalData",
            Error::OutOfResources => "OutOfResources",
            Error::DelegateInvalidCompatibility => "DelegateInvalidCompatibility",
            Error::DelegateMemoryAllocationFailed => "DelegateMemoryAllocationFailed",
            Error::DelegateInvalidHandle => "DelegateInvalidHandle",
        }
    }

    /// A short sentence describing the code.
    pub const fn describe(self) -> &'static str {
        match self {
            Error::Internal => "internal error",
            Error::InvalidState => "invalid state",
            Error::EndOfMethod => "end of method",
            Error::AlreadyLoaded => "already loaded",
            Error::NotSupported => "not supported",
            Error::NotImplemented => "not implemented",
            Error::InvalidArgument => "invalid argument",
            Error::InvalidType => "invalid type",
            Error::OperatorMissing => "operator missing",
            Error::RegistrationExceedingMaxKernels => "too many kernels",
            Error::RegistrationAlreadyRegistered => "kernel registered twice",
            Error::NotFound => "not found",
            Error::MemoryAllocationFailed => "memory pool too small",
            Error::AccessFailed => "data access failed",
            Error::InvalidProgram => "invalid program",
            Error::InvalidExternalData => "invalid external data",
            Error::OutOfResources => "out of resources",
            Error::DelegateInvalidCompatibility => "delegate payload incompatible",
            Error::DelegateMemoryAllocationFailed => "delegate allocation failed",
            Error::DelegateInvalidHandle => "invalid delegate handle",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (Error::{}, 0x{:02x})",
            self.describe(),
            self.name(),
            self.code()
        )
    }
}

impl core::error::Error for Error {}
