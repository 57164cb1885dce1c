//! Kernel errors. [`Error`], ExecuTorch's codes, is defined in et-schema and shared by
//! every crate that reads programs.

use core::fmt;

pub use et_schema::Error;

/// A kernel's failure: an error code plus a static explanation that names the problem.
///
/// The message is a `&'static str` so that reporting costs no allocation and no formatting
/// machinery at the failure site. It exists only with the feature `messages`: without it
/// a `KernelError` is its code alone (4 bytes), so a `KernelResult` travels in registers
/// instead of through memory at every `?` of every kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelError {
    /// The code `execute` reports.
    pub error: Error,
    /// What was wrong, in a few words (empty when the code says it all).
    #[cfg(feature = "messages")]
    message: &'static str,
}

impl KernelError {
    /// A failure with an explanation.
    /// The message is kept only with the feature `messages` (on with `std`), like every
    /// error explanation of the runtime: without it a binary carries codes only.
    #[inline(always)]
    pub const fn new(error: Error, message: &'static str) -> Self {
        #[cfg(not(feature = "messages"))]
        let _ = message;
        KernelError {
            error,
            #[cfg(feature = "messages")]
            message,
        }
    }

    /// What was wrong, in a few words (empty when the code says it all, and always
    /// without the feature `messages`).
    #[inline(always)]
    pub const fn message(&self) -> &'static str {
        #[cfg(feature = "messages")]
        return self.message;
        #[cfg(not(feature = "messages"))]
        ""
    }

    /// An `InvalidArgument` failure with an explanation.
    #[inline(always)]
    pub const fn invalid(message: &'static str) -> Self {
        KernelError::new(Error::InvalidArgument, message)
    }

    /// A `NotSupported` failure with an explanation.
    #[inline(always)]
    pub const fn unsupported(message: &'static str) -> Self {
        KernelError::new(Error::NotSupported, message)
    }
}

impl From<Error> for KernelError {
    fn from(error: Error) -> Self {
        KernelError::new(error, "")
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message().is_empty() {
            fmt::Display::fmt(&self.error, f)
        } else {
            write!(f, "{}: {}", self.message(), self.error)
        }
    }
}

impl core::error::Error for KernelError {}

/// What every kernel returns.
pub type KernelResult<T = ()> = Result<T, KernelError>;
