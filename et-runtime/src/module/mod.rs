//! `Module`: a program and its methods, owned, for applications with a heap (feature
//! `std`). It is to [`Program`]/[`Method`](crate::Method) what ExecuTorch's
//! `extension/module` is to its runtime: open a file, call a method with tensors, get
//! owned outputs; buffers are sized from the program and owned for you, methods load on
//! first use and stay loaded, and inputs are set before every call (the memory plan may
//! reuse their bytes).
//!
//! ```
//! use et_runtime::{Module, TensorRef};
//!
//! let mut module = Module::from_file("../tests/fixtures/add.pte").unwrap();
//! let (a, b) = ([1.0f32, 2.0], [10.0f32, 20.0]);
//! # let _ = (a, b);
//! # // The kernel library is not linked into this doctest: loading `forward` reports
//! # // its missing kernel and says how to link one.
//! # let e = module.forward(&[]).unwrap_err();
//! # assert!(e.message().contains("aten::add.out"), "{e}");
//! # /*
//! let outputs = module.forward(&[
//!     TensorRef::from_slice(&a, &[2]).into(),
//!     TensorRef::from_slice(&b, &[2]).into(),
//! ])?;
//! assert_eq!(outputs[0].as_slice::<f32>().unwrap(), [11.0, 22.0]);
//! # */
//! ```
//!
//! The core API is unchanged for `no_std` callers; a `Module` is built on it.

mod owned;
mod values;

use std::boxed::Box;
use std::path::Path;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::error::Error;
use crate::loader::{DataLoader, MmapLoader, PROGRAM_ALIGNMENT};
use crate::method_buffers::BufferError;
use crate::program::{MethodMeta, Program, Verification};
use crate::value::EValue;
use owned::{BoxedLoader, LoadFailure, OpenError, OwnedMethod, OwnedProgram};
use values::quoted_list;
pub use values::{Input, ModuleError, Output, TensorRef};

/// Kernel scratch a module's methods get unless told otherwise (`set_scratch_bytes`).
pub const DEFAULT_SCRATCH_BYTES: usize = 64 << 20;

/// A program with its methods loaded on demand; see the [module docs](self).
pub struct Module {
    // Fields drop in declaration order: the methods borrow the program.
    methods: Vec<(String, OwnedMethod)>,
    #[cfg(feature = "threads")]
    pool: Option<crate::threads::ThreadPool>,
    program: OwnedProgram,
    scratch: usize,
    memory_limit: usize,
    /// The method whose inputs `set_inputs` set, until `execute_prepared` runs it.
    prepared: Option<String>,
}

// SAFETY: a `Module` owns everything its raw pointers reach (the program, its loaders,
// which are `Send + Sync`, and each method's buffers); a `Method` is `Send` and the
// program's data is immutable and `Sync`. Nothing is tied to the creating thread.
unsafe impl Send for Module {}

impl core::fmt::Debug for Module {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Module")
            .field("methods", &self.method_names())
            .field(
                "loaded",
                &self
                    .methods
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Module {
    /// Opens a `.pte` file, mapped into memory (constants are used in place).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Module, ModuleError> {
        Self::from_file_with_data(path, &[] as &[&Path])
    }

    /// Opens a `.pte` file whose named data continues in `.ptd` data files (searched in
    /// the order given, after the program's own named data).
    pub fn from_file_with_data(
        path: impl AsRef<Path>,
        data_files: &[impl AsRef<Path>],
    ) -> Result<Module, ModuleError> {
        Self::from_file_with(path, data_files, Verification::default())
    }

    /// [`from_file_with_data`](Self::from_file_with_data) checking the program as
    /// `verification` says ([`Verification::Minimal`] skips the structural check of the
    /// whole flatbuffer, as ExecuTorch's default does; either way a malformed file is an
    /// error, never undefined behaviour).
    pub fn from_file_with(
        path: impl AsRef<Path>,
        data_files: &[impl AsRef<Path>],
        verification: Verification,
    ) -> Result<Module, ModuleError> {
        let path = path.as_ref();
        let data = map_all(data_files)?;
        Self::open(map(path)?, data, &path.display().to_string(), verification)
    }

    /// A program from bytes in memory (copied once into an aligned buffer).
    pub fn from_bytes(bytes: &[u8]) -> Result<Module, ModuleError> {
        Self::from_bytes_with(bytes, &[] as &[&Path], Verification::default())
    }

    /// A program from bytes in memory (copied once into an aligned buffer) whose named
    /// data continues in `.ptd` data files, checked as `verification` says.
    pub fn from_bytes_with(
        bytes: &[u8],
        data_files: &[impl AsRef<Path>],
        verification: Verification,
    ) -> Result<Module, ModuleError> {
        let data = map_all(data_files)?;
        let loader = Box::new(AlignedBytes::copy_of(bytes)?);
        Self::open(loader, data, "the program", verification)
    }

    /// A program read through any loader.
    pub fn from_loader(
        loader: impl DataLoader + Send + Sync + 'static,
    ) -> Result<Module, ModuleError> {
        Self::open(
            Box::new(loader),
            Vec::new(),
            "the program",
            Verification::default(),
        )
    }

    fn open(
        loader: BoxedLoader,
        data: Vec<(String, BoxedLoader)>,
        what: &str,
        verification: Verification,
    ) -> Result<Module, ModuleError> {
        let names: Vec<String> = data.iter().map(|(n, _)| n.clone()).collect();
        let program = OwnedProgram::open(loader, data, verification).map_err(|e| match e {
            OpenError::Program(e) => ModuleError::new(
                e.error,
                std::format!("{what} is not a program etch can load: {e}"),
            ),
            OpenError::DataFile(i, e) => ModuleError::new(
                e.error,
                std::format!("{} is not a valid .ptd data file: {e}", names[i]),
            ),
        })?;
        Ok(Module {
            methods: Vec::new(),
            #[cfg(feature = "threads")]
            pool: None,
            program,
            scratch: DEFAULT_SCRATCH_BYTES,
            memory_limit: usize::MAX,
            prepared: None,
        })
    }

    /// The program, for its metadata (method names, named data, version).
    pub fn program(&self) -> &Program<'_> {
        self.program.program()
    }

    /// The program's method names.
    pub fn method_names(&self) -> Vec<&str> {
        self.program().method_names().collect()
    }

    /// Method `name`'s metadata (inputs, outputs, planned buffers).
    pub fn method_meta(&self, name: &str) -> Result<MethodMeta<'_>, ModuleError> {
        self.program()
            .method_meta(name)
            .map_err(|_| self.no_such_method(name))
    }

    /// Kernel scratch for methods loaded from now on (default [`DEFAULT_SCRATCH_BYTES`]).
    pub fn set_scratch_bytes(&mut self, bytes: usize) {
        self.scratch = bytes;
    }

    /// Refuses to load a method whose buffers (arena, planned, scratch) total more than
    /// `bytes`, naming the largest, before allocating anything (default: no limit).
    pub fn set_memory_limit(&mut self, bytes: usize) {
        self.memory_limit = bytes;
    }

    /// Runs kernels on `threads` threads, this one included; 1 runs everything on the
    /// calling thread. Outputs are the same for any count. (The XNNPACK backend's nodes
    /// run on the calling thread.)
    #[cfg(feature = "threads")]
    pub fn set_threads(&mut self, threads: usize) -> Result<(), ModuleError> {
        self.pool = if threads > 1 {
            let pool = crate::threads::ThreadPool::new(threads).map_err(|e| {
                ModuleError::new(
                    Error::Internal,
                    std::format!("cannot start {threads} threads: {e}"),
                )
            })?;
            Some(pool)
        } else {
            None
        };
        Ok(())
    }

    /// Loads method `name` now (it would load at its first call otherwise). Loading
    /// again is a no-op.
    pub fn load_method(&mut self, name: &str) -> Result<(), ModuleError> {
        self.loaded(name).map(drop)
    }

    /// Whether method `name` is loaded.
    pub fn is_loaded(&self, name: &str) -> bool {
        self.methods.iter().any(|(n, _)| n == name)
    }

    /// Puts method `name` back as `load_method` left it: its mutable buffers (a KV cache,
    /// running statistics) start again from the program's initial values. The next call
    /// loads it again.
    pub fn reset(&mut self, name: &str) {
        self.prepared = None;
        self.methods.retain(|(n, _)| n != name);
    }

    /// Calls `forward`.
    pub fn forward(&mut self, inputs: &[Input<'_>]) -> Result<Vec<Output>, ModuleError> {
        self.execute("forward", inputs)
    }

    /// Calls method `name` with `inputs` (all of them, in order) and returns copies of
    /// its outputs. State the program keeps in mutable buffers carries over to the next
    /// call (see [`reset`](Self::reset)).
    pub fn execute(
        &mut self,
        name: &str,
        inputs: &[Input<'_>],
    ) -> Result<Vec<Output>, ModuleError> {
        self.run(name, inputs, |method| {
            (0..method.num_outputs())
                .map(|i| {
                    let value = method.output(i).map_err(|e| output_error(name, i, e))?;
                    Output::copy_of(&value).map_err(|e| output_error(name, i, e))
                })
                .collect()
        })
    }

    /// Sets method `name`'s inputs (loading the method first) for the
    /// [`execute_prepared`](Self::execute_prepared) that must follow before any other
    /// call: the memory plan may reuse the inputs' bytes, so they hold for one run. Split
    /// from [`execute`](Self::execute) for a caller that must read the inputs' memory
    /// under a lock and run the method without it (a Python binding reads arrays while
    /// holding the interpreter's lock and releases it to run).
    pub fn set_inputs(&mut self, name: &str, inputs: &[Input<'_>]) -> Result<(), ModuleError> {
        self.prepared = None;
        let method = self.loaded(name)?.method();
        set_inputs(method, name, inputs)?;
        self.prepared = Some(name.to_string());
        Ok(())
    }

    /// Runs method `name` on the inputs [`set_inputs`](Self::set_inputs) just set, as
    /// [`execute`](Self::execute) does.
    pub fn execute_prepared(&mut self, name: &str) -> Result<Vec<Output>, ModuleError> {
        if self.prepared.take().as_deref() != Some(name) {
            return Err(ModuleError::new(
                Error::InvalidState,
                std::format!("method `{name}` has no inputs set; call set_inputs first"),
            ));
        }
        self.run_set(name, |method| {
            (0..method.num_outputs())
                .map(|i| {
                    let value = method.output(i).map_err(|e| output_error(name, i, e))?;
                    Output::copy_of(&value).map_err(|e| output_error(name, i, e))
                })
                .collect()
        })
    }

    /// Calls method `name` and hands its outputs, in place, to `read` (no copies: for a
    /// hot loop that reads one output).
    pub fn execute_with<R>(
        &mut self,
        name: &str,
        inputs: &[Input<'_>],
        read: impl FnOnce(&[EValue<'_>]) -> R,
    ) -> Result<R, ModuleError> {
        self.run(name, inputs, |method| {
            let outputs = (0..method.num_outputs())
                .map(|i| method.output(i).map_err(|e| output_error(name, i, e)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(read(&outputs))
        })
    }

    fn run<R>(
        &mut self,
        name: &str,
        inputs: &[Input<'_>],
        finish: impl FnOnce(&crate::Method<'_>) -> Result<R, ModuleError>,
    ) -> Result<R, ModuleError> {
        self.prepared = None;
        set_inputs(self.loaded(name)?.method(), name, inputs)?;
        self.run_set(name, finish)
    }

    /// Runs method `name`, whose inputs are set.
    fn run_set<R>(
        &mut self,
        name: &str,
        finish: impl FnOnce(&crate::Method<'_>) -> Result<R, ModuleError>,
    ) -> Result<R, ModuleError> {
        #[cfg(feature = "threads")]
        let pool = self.pool.take();
        let result = (|| {
            let method = self.loaded(name)?.method();
            #[cfg(feature = "threads")]
            let executed = match &pool {
                Some(pool) => method.execute_with(pool),
                None => method.execute(),
            };
            #[cfg(not(feature = "threads"))]
            let executed = method.execute();
            executed.map_err(|e| {
                ModuleError::new(e.error, std::format!("method `{name}` failed: {e}"))
            })?;
            finish(method)
        })();
        #[cfg(feature = "threads")]
        {
            self.pool = pool;
        }
        result
    }

    fn loaded(&mut self, name: &str) -> Result<&mut OwnedMethod, ModuleError> {
        if let Some(i) = self.methods.iter().position(|(n, _)| n == name) {
            return Ok(&mut self.methods[i].1);
        }
        if self.program().method_meta(name).is_err() {
            return Err(self.no_such_method(name));
        }
        // SAFETY: the method is kept in `self.methods`, which drops before
        // `self.program` (field order), and is removed only by dropping it.
        let method =
            unsafe { OwnedMethod::load(&self.program, name, self.scratch, self.memory_limit) }
                .map_err(|e| load_error(name, e))?;
        self.methods.push((name.to_string(), method));
        Ok(&mut self.methods.last_mut().expect("just pushed").1)
    }

    fn no_such_method(&self, name: &str) -> ModuleError {
        ModuleError::new(
            Error::InvalidArgument,
            std::format!(
                "the program has no method `{name}`; its methods are {}",
                quoted_list(self.program().method_names())
            ),
        )
    }
}

fn set_inputs(
    method: &mut crate::Method<'_>,
    name: &str,
    inputs: &[Input<'_>],
) -> Result<(), ModuleError> {
    let expected = method.num_inputs();
    if inputs.len() != expected {
        return Err(ModuleError::new(
            Error::InvalidArgument,
            std::format!(
                "method `{name}` takes {expected} inputs, {} were given",
                inputs.len()
            ),
        ));
    }
    for (i, input) in inputs.iter().enumerate() {
        let fail = |code, why: String| {
            ModuleError::new(code, std::format!("input {i} of method `{name}`: {why}"))
        };
        match *input {
            Input::Tensor(t) => {
                let want = method.meta().input_tensor(i).map_err(|_| {
                    fail(
                        Error::InvalidArgument,
                        "the method takes no tensor here".into(),
                    )
                })?;
                if t.dtype() != want.dtype {
                    return Err(fail(
                        Error::InvalidArgument,
                        std::format!(
                            "the method takes {:?}, the tensor is {:?}",
                            want.dtype,
                            t.dtype()
                        ),
                    ));
                }
                let numel = crate::tensor::checked_numel(t.sizes());
                let nbytes = numel.and_then(|n| n.checked_mul(t.dtype().element_size()));
                if nbytes != Some(t.bytes().len()) {
                    return Err(fail(
                        Error::InvalidArgument,
                        std::format!(
                            "{} bytes of data do not make a {:?} tensor of sizes {:?}",
                            t.bytes().len(),
                            t.dtype(),
                            t.sizes()
                        ),
                    ));
                }
                method
                    .set_input_bytes(i, t.dtype(), t.sizes(), t.bytes())
                    .map_err(|e| {
                        fail(
                            e,
                            std::format!(
                                "sizes {:?} do not fit the method's {:?} ({:?})",
                                t.sizes(),
                                want.sizes(),
                                want.dynamism
                            ),
                        )
                    })?;
            }
            scalar => {
                let value = match scalar {
                    Input::Int(v) => EValue::Int(v),
                    Input::Double(v) => EValue::Double(v),
                    Input::Bool(v) => EValue::Bool(v),
                    _ => EValue::None,
                };
                method.set_input_scalar(i, value).map_err(|e| {
                    fail(
                        e,
                        std::format!("{value:?} is not the value the method was exported with"),
                    )
                })?;
            }
        }
    }
    Ok(())
}

fn output_error(name: &str, i: usize, e: Error) -> ModuleError {
    ModuleError::new(
        e,
        std::format!("output {i} of method `{name}` cannot be read: {e}"),
    )
}

fn load_error(name: &str, failure: LoadFailure) -> ModuleError {
    match failure {
        LoadFailure::Buffers(e) => {
            let hint = match e {
                BufferError::OverLimit { .. } => " (see Module::set_memory_limit)",
                _ => "",
            };
            ModuleError::new(
                Error::MemoryAllocationFailed,
                std::format!("method `{name}`: {e}{hint}"),
            )
        }
        LoadFailure::Load(code, detail) => {
            let hint = match code {
                Error::OperatorMissing => {
                    "; link the crates that register its kernels into the binary \
                     (`use et_ops as _;` for ExecuTorch's operators, and the crate of any \
                     custom operator)"
                }
                Error::NotFound if detail.contains("backend") => {
                    "; link the backend's crate into the binary (`use et_xnnpack as _;` for \
                     XNNPACK-lowered programs)"
                }
                _ => "",
            };
            ModuleError::new(
                code,
                std::format!("cannot load method `{name}`: {detail}{hint}"),
            )
        }
    }
}

fn map_all(files: &[impl AsRef<Path>]) -> Result<Vec<(String, BoxedLoader)>, ModuleError> {
    files
        .iter()
        .map(|file| {
            let file = file.as_ref();
            Ok((file.display().to_string(), map(file)?))
        })
        .collect()
}

fn map(path: &Path) -> Result<BoxedLoader, ModuleError> {
    MmapLoader::open(path)
        .map(|l| Box::new(l) as BoxedLoader)
        .map_err(|e| {
            ModuleError::new(
                Error::AccessFailed,
                std::format!("cannot open {}: {e}", path.display()),
            )
        })
}

/// Program bytes copied into memory aligned as programs need.
struct AlignedBytes {
    words: Vec<u128>,
    len: usize,
}

const _: () = assert!(core::mem::align_of::<u128>() >= PROGRAM_ALIGNMENT);

impl AlignedBytes {
    fn copy_of(bytes: &[u8]) -> Result<AlignedBytes, ModuleError> {
        let mut words = Vec::new();
        words
            .try_reserve_exact(bytes.len().div_ceil(16))
            .map_err(|_| {
                ModuleError::new(
                    Error::MemoryAllocationFailed,
                    "cannot allocate a copy of the program",
                )
            })?;
        words.resize(bytes.len().div_ceil(16), 0u128);
        // SAFETY: `words` holds at least `bytes.len()` bytes; u128 has no invalid bit
        // patterns, and the two buffers are distinct allocations.
        unsafe {
            core::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                words.as_mut_ptr().cast::<u8>(),
                bytes.len(),
            );
        }
        Ok(AlignedBytes {
            words,
            len: bytes.len(),
        })
    }
}

impl DataLoader for AlignedBytes {
    fn size(&self) -> usize {
        self.len
    }

    fn load(&self, offset: usize, size: usize) -> Result<&[u8], Error> {
        // SAFETY: the words hold at least `len` initialized bytes (see `copy_of`).
        let all =
            unsafe { core::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) };
        let end = offset.checked_add(size).ok_or(Error::InvalidProgram)?;
        all.get(offset..end).ok_or(Error::InvalidProgram)
    }
}
