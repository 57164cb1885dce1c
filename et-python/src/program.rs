//! `_Program`: an [`et_runtime::Module`] for Python. `etch.runtime.Program` and
//! `etch.runtime.Method` are thin Python classes over it.
//!
//! The module sits in a `Mutex` (a method's memory serves one call at a time), locked
//! with [`lock`].

use std::path::PathBuf;
use std::sync::Mutex;

use et_runtime::{Error, Module, ModuleError, Verification};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors::{catch, module_error, panicked, raise, Kind};
use crate::lock::lock;
use crate::tensor::{output_to_py, Arg};

/// A tensor's metadata as `etch.runtime.TensorInfo` takes it: sizes, ExecuTorch's dtype
/// code, whether it is memory-planned, its size in bytes.
type InfoTuple = (Vec<usize>, i32, bool, usize);

/// A loaded program and its methods.
#[derive(Debug)]
#[pyclass(name = "_Program", module = "etch._etch", frozen)]
pub struct Program {
    module: Mutex<Module>,
    names: Vec<String>,
}

fn verification(minimal: bool) -> Verification {
    if minimal {
        Verification::Minimal
    } else {
        Verification::InternalConsistency
    }
}

impl Program {
    fn opened(
        py: Python<'_>,
        opened: Result<Result<Module, ModuleError>, String>,
    ) -> PyResult<Program> {
        let module = opened
            .map_err(|m| panicked(py, "loading the program", &m))?
            .map_err(|e| module_error(py, &e))?;
        let names = module
            .method_names()
            .into_iter()
            .map(String::from)
            .collect();
        Ok(Program {
            module: Mutex::new(module),
            names,
        })
    }

    /// Loads method `name` (delegates initialize: XNNPACK packs its weights) without the
    /// interpreter's lock.
    fn load(&self, py: Python<'_>, module: &mut Module, name: &str) -> PyResult<()> {
        let loaded = py.detach(|| catch(|| module.load_method(name)));
        loaded
            .map_err(|m| panicked(py, &format!("loading method `{name}`"), &m))?
            .map_err(|e| module_error(py, &e))
    }
}

#[pymethods]
impl Program {
    /// Opens a `.pte` file (mapped) with its `.ptd` data files.
    #[staticmethod]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        data_files: Vec<PathBuf>,
        minimal: bool,
    ) -> PyResult<Program> {
        let opened = py
            .detach(|| catch(|| Module::from_file_with(&path, &data_files, verification(minimal))));
        Program::opened(py, opened)
    }

    /// A program from bytes (copied once, aligned) with its `.ptd` data files.
    #[staticmethod]
    fn from_bytes(
        py: Python<'_>,
        data: &[u8],
        data_files: Vec<PathBuf>,
        minimal: bool,
    ) -> PyResult<Program> {
        // `data` borrows an immutable `bytes` object the caller keeps alive: safe to read
        // without the interpreter's lock.
        let opened = py
            .detach(|| catch(|| Module::from_bytes_with(data, &data_files, verification(minimal))));
        Program::opened(py, opened)
    }

    /// The method names, in the program's order.
    fn method_names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// Method `name`'s metadata: `(name, inputs, outputs)`, each input and output an
    /// [`InfoTuple`], or `None` when it is not a tensor.
    #[allow(clippy::type_complexity)]
    fn method_meta(
        &self,
        py: Python<'_>,
        name: &str,
    ) -> PyResult<(String, Vec<Option<InfoTuple>>, Vec<Option<InfoTuple>>)> {
        let module = lock(py, &self.module);
        let meta = module.method_meta(name).map_err(|e| module_error(py, &e))?;
        let info = |t: Result<et_runtime::TensorInfo, Error>, planned: Result<bool, Error>| {
            t.ok().map(|t| {
                (
                    t.sizes().to_vec(),
                    i32::from(t.dtype as u8),
                    planned.unwrap_or(false),
                    t.nbytes(),
                )
            })
        };
        let inputs = (0..meta.num_inputs())
            .map(|i| info(meta.input_tensor(i), meta.input_memory_planned(i)))
            .collect();
        let outputs = (0..meta.num_outputs())
            .map(|i| info(meta.output_tensor(i), meta.output_memory_planned(i)))
            .collect();
        Ok((name.to_string(), inputs, outputs))
    }

    /// Loads method `name` now (it would load at its first call otherwise).
    fn load_method(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let mut module = lock(py, &self.module);
        self.load(py, &mut module, name)
    }

    /// Runs method `name` on `inputs` and returns its outputs (tensors as `_Tensor`).
    ///
    /// The inputs are read into the method's memory with the interpreter's lock held
    /// (no Python code can change an array while it is read), then the method runs
    /// with it released.
    fn execute(
        &self,
        py: Python<'_>,
        name: &str,
        inputs: &Bound<'_, PyTuple>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let args = inputs
            .iter()
            .enumerate()
            .map(|(i, obj)| Arg::read(i, &obj))
            .collect::<PyResult<Vec<_>>>()?;
        let mut guard = lock(py, &self.module);
        let module: &mut Module = &mut guard;
        // Loading may take a while (delegates pack weights): done without the lock.
        self.load(py, module, name)?;
        let set = catch(|| {
            let inputs: Vec<_> = args.iter().map(|a| a.input(py)).collect();
            module.set_inputs(name, &inputs)
        });
        let what = format!("method `{name}`");
        match set {
            Ok(r) => r.map_err(|e| module_error(py, &e))?,
            Err(m) => {
                module.reset(name);
                return Err(panicked(py, &what, &m));
            }
        }
        drop(args);
        let ran = py.detach(|| catch(|| module.execute_prepared(name)));
        let outputs = match ran {
            Ok(r) => r.map_err(|e| module_error(py, &e))?,
            Err(m) => {
                // The method's memory may be half-written: the next call loads it anew.
                module.reset(name);
                return Err(panicked(py, &what, &m));
            }
        };
        drop(guard);
        outputs.into_iter().map(|o| output_to_py(py, o)).collect()
    }

    /// Runs kernels on `threads` threads (1: the calling thread only).
    fn set_threads(&self, py: Python<'_>, threads: usize) -> PyResult<()> {
        if threads == 0 {
            return Err(raise(
                py,
                Kind::Code(Error::InvalidArgument),
                "threads must be at least 1",
            ));
        }
        let mut module = lock(py, &self.module);
        module
            .set_threads(threads)
            .map_err(|e| module_error(py, &e))
    }

    /// Puts method `name` back as loading left it (its mutable buffers start over).
    fn reset(&self, py: Python<'_>, name: &str) {
        lock(py, &self.module).reset(name);
    }
}
