//! `etch._etch`, the extension module under the `etch` Python package: etch's runtime
//! with ExecuTorch's operators, the XNNPACK backend and the LLM operators linked in.
//! The Python API (`etch.runtime`, mirroring `executorch.runtime`) is in
//! `python/etch/`; this module holds what it wraps:
//!
//! - `_Program` ([`program`]): a loaded program, its method metadata and method calls;
//! - `_Tensor` ([`tensor`]): an output tensor NumPy reads in place;
//! - `_Generator` ([`generate`]): text generation, a piece at a time;
//! - the registries: `operator_names`, `backend_names`.
//!
//! Errors become the exception classes of `etch.errors` ([`errors`]); a panic becomes an
//! `etch.InternalError`, never a crash.

// Linked for their registrations (kernels and the backend register at link time).
use et_llm as _;
use et_ops as _;
use et_xnnpack as _;

use pyo3::prelude::*;

pub mod errors;
pub mod generate;
pub mod lock;
pub mod program;
pub mod tensor;

/// The operators with a registered kernel (`aten::add.out`, ...), each once.
#[pyfunction]
fn operator_names() -> Vec<String> {
    let mut names: Vec<String> = et_runtime::registry::kernels()
        .iter()
        .map(|k| k.name().to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The registered backends (`XnnpackBackend`).
#[pyfunction]
fn backend_names() -> Vec<String> {
    et_runtime::backend::backends()
        .iter()
        .map(|b| b.name.to_string())
        .collect()
}

#[pymodule]
fn _etch(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<program::Program>()?;
    m.add_class::<tensor::OutTensor>()?;
    m.add_class::<generate::Generator>()?;
    m.add_function(wrap_pyfunction!(operator_names, m)?)?;
    m.add_function(wrap_pyfunction!(backend_names, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
