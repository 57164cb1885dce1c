//! etch's errors as Python exceptions, and Rust panics kept from crashing the interpreter.
//!
//! The exception classes live in Python (`etch/errors.py`): each one subclasses
//! `etch.EtchError` (a `RuntimeError`, what ExecuTorch raises) and, where Python has one,
//! the built-in class that says the same (`ValueError` for a bad argument, ...). That
//! multiple inheritance cannot be declared from Rust, so the Rust side asks the Python
//! module for the exception (`_from_code`) and raises what it returns.

use std::panic::{catch_unwind, AssertUnwindSafe};

use et_llm::runner::GenerateError;
use et_llm::tokenizer::TokenizerError;
use et_runtime::{Error, ModuleError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// What kind of failure an exception reports: one of ExecuTorch's codes, or a failure
/// outside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One of ExecuTorch's error codes.
    Code(Error),
    /// A tokenizer file or text the tokenizer refused.
    Tokenizer,
}

/// The exception `etch.errors` has for `kind`, carrying `message`.
pub fn raise(py: Python<'_>, kind: Kind, message: impl Into<String>) -> PyErr {
    let message = message.into();
    let (code, tokenizer) = match kind {
        Kind::Code(e) => (Some(e.code()), false),
        Kind::Tokenizer => (None, true),
    };
    let made = py
        .import("etch.errors")
        .and_then(|m| m.getattr("_from_code"))
        .and_then(|f| f.call1((code, message.as_str(), tokenizer)));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        // Only when the extension is imported without its Python package.
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// A `Module`'s error, with its code and message.
pub fn module_error(py: Python<'_>, e: &ModuleError) -> PyErr {
    raise(py, Kind::Code(e.code()), e.message())
}

/// A text generation error, prefixed with the program as `etch generate` prints it.
pub fn generate_error(py: Python<'_>, program: &str, e: &GenerateError) -> PyErr {
    let code = match e {
        GenerateError::Module(e) => e.code(),
        GenerateError::NotAnLlm(_) => Error::InvalidProgram,
        _ => Error::InvalidArgument,
    };
    raise(py, Kind::Code(code), format!("{program}: {e}"))
}

/// A tokenizer's error.
pub fn tokenizer_error(py: Python<'_>, e: &TokenizerError) -> PyErr {
    raise(py, Kind::Tokenizer, e.to_string())
}

/// Runs `f`, turning a panic into an `Err` with the panic's message (a panic must not
/// unwind into the interpreter, and pyo3's own `PanicException` is a `BaseException`
/// that `except Exception` would not catch).
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| String::from("a panic without a message"))
    })
}

/// The exception for a panic caught while doing `what`.
pub fn panicked(py: Python<'_>, what: &str, message: &str) -> PyErr {
    raise(
        py,
        Kind::Code(Error::Internal),
        format!("{what} panicked: {message} (a bug in etch; please report it)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_their_message() {
        assert_eq!(catch(|| 7), Ok(7));
        let caught = catch(|| -> u8 { panic!("bad {}", 1) });
        assert_eq!(caught, Err(String::from("bad 1")));
        let caught = catch(|| -> u8 { std::panic::panic_any(3u8) });
        assert_eq!(caught, Err(String::from("a panic without a message")));
    }
}
