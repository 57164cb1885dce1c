//! Delegates: backends that execute a lowered part of a program (DelegateCall),
//! registered in a link-time slice like kernels. The slice, and with it
//! [`register_backend!`](crate::register_backend), exists with the feature `backends`,
//! which every backend crate enables; without it [`backends`] is empty and the delegate
//! machinery compiles away.

use core::cell::Cell;
use core::fmt;

use crate::data::{NamedData, NamedDataMap};
use crate::error::{Error, KernelResult};
pub use crate::kernel::{KernelArgs, KernelContext};
use crate::memory::Arena;
pub use crate::method_error::NodeRef;
use crate::method_error::{ExternalDataProblem, LoadDetail};

/// An opaque per-delegate state pointer a backend returns from `init`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelegateHandle(pub *mut ());

impl DelegateHandle {
    /// A handle carrying no state.
    pub const NONE: DelegateHandle = DelegateHandle(core::ptr::null_mut());
}

/// One compile spec (`key`, `value`) of a delegate.
#[derive(Clone, Copy, Debug)]
pub struct CompileSpec<'d> {
    /// The key.
    pub key: &'d str,
    /// The raw value.
    pub value: &'d [u8],
}

/// What `init` may use: the method allocator (for the handle's state), the method name,
/// and the program's named data (its own, then its `.ptd` files').
pub struct BackendInitContext<'a> {
    pub(crate) allocator: &'a Arena<'a>,
    pub(crate) method_name: &'a str,
    pub(crate) named_data: &'a NamedDataMap<'a>,
    /// The backend's id, for load errors.
    pub(crate) backend_id: &'a str,
    /// What [`require_named_data`](Self::require_named_data) found missing, as the load
    /// error's detail (`LoadDetail::None` until then).
    pub(crate) failure: Cell<LoadDetail<'a>>,
}

impl<'a> BackendInitContext<'a> {
    /// Memory from the method allocator, valid for the method's lifetime.
    pub fn allocate(&self, size: usize, align: usize) -> Result<*mut u8, Error> {
        if !align.is_power_of_two() {
            return Err(Error::InvalidArgument);
        }
        self.allocator.allocate(size, align).map(|p| p.as_ptr())
    }

    /// The name of the method being loaded.
    pub fn method_name(&self) -> &str {
        self.method_name
    }

    /// The program's named data merged with its data files: constants by key (XNNPACK
    /// payloads name theirs by SHA-256), zero-copy and valid for the method's lifetime.
    pub fn named_data(&self) -> &NamedDataMap<'a> {
        self.named_data
    }

    /// The blob named `key`, or `Err(NotFound)` that `load_method`, when `init` returns
    /// it, reports as a load error naming this key, the backend and the data files
    /// searched ([`crate::LoadDetail::MissingNamedData`]). A backend whose constants live
    /// in a `.ptd` file the caller forgot then fails with a message that says which key
    /// is missing, not a bare code.
    pub fn require_named_data(&self, key: &str) -> Result<NamedData<'a>, Error> {
        match self.named_data.lookup(key) {
            Ok(Some((data, _))) => return Ok(data),
            Err(e) => return Err(e),
            Ok(None) => {}
        }
        if matches!(self.failure.get(), LoadDetail::None) {
            // The key usually points into the payload, which `init` may borrow for less
            // than the method lives; the error outlives `init`, so it keeps a copy.
            if let Ok(p) = self.allocator.allocate(key.len(), 1) {
                // SAFETY: `p` is `key.len()` fresh bytes of method memory, valid for 'a
                // and used by nothing else; the copy is the bytes of a `str`, so UTF-8.
                let key = unsafe {
                    core::ptr::copy_nonoverlapping(key.as_ptr(), p.as_ptr(), key.len());
                    core::str::from_utf8_unchecked(core::slice::from_raw_parts(
                        p.as_ptr(),
                        key.len(),
                    ))
                };
                let files = self.named_data.files();
                let problem = match files.len() {
                    0 => ExternalDataProblem::NoDataFiles,
                    searched => ExternalDataProblem::NotFound { searched },
                };
                self.failure.set(LoadDetail::MissingNamedData {
                    backend: self.backend_id,
                    key,
                    file: files.last().map(|f| f.name()),
                    problem,
                });
            }
        }
        Err(Error::NotFound)
    }
}

impl fmt::Debug for BackendInitContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackendInitContext")
            .field("method_name", &self.method_name)
            .finish()
    }
}

/// Why a backend refused a delegate at `init`: a code, what was wrong, and the node it
/// concerns, if any. `load_method` reports it with the backend id and delegate index.
/// (A missing named-data key is reported through
/// [`BackendInitContext::require_named_data`], which also names the files searched.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelegateError {
    /// The code.
    pub error: Error,
    /// What was wrong (empty when only the code is known).
    pub message: &'static str,
    /// The payload node it concerns.
    pub node: Option<NodeRef>,
}

impl DelegateError {
    /// An error about the payload as a whole.
    pub const fn new(error: Error, message: &'static str) -> Self {
        DelegateError {
            error,
            message: et_schema::error::message(message),
            node: None,
        }
    }

    /// An error about node `index` of kind `kind`.
    pub const fn at_node(
        error: Error,
        message: &'static str,
        index: u32,
        kind: &'static str,
    ) -> Self {
        DelegateError {
            error,
            message: et_schema::error::message(message),
            node: Some(NodeRef { index, kind }),
        }
    }
}

impl From<Error> for DelegateError {
    fn from(error: Error) -> Self {
        DelegateError::new(error, "")
    }
}

impl fmt::Display for DelegateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(node) = self.node {
            write!(f, "node {} ({}): ", node.index, node.kind)?;
        }
        if !self.message.is_empty() {
            write!(f, "{}: ", self.message)?;
        }
        write!(f, "{}", self.error)
    }
}

/// A delegate backend, registered with [`register_backend!`](crate::register_backend).
///
/// Handles must be usable from whichever thread runs the method (a `Method` is `Send`).
pub trait Backend: Sync {
    /// Whether the backend can run on this machine.
    fn is_available(&self) -> bool {
        true
    }

    /// Prepares a delegate from its payload; called once per delegate at `load_method`.
    /// Whatever the handle needs beyond the call (plans, packed weights, buffers) comes
    /// from [`BackendInitContext::allocate`], within [`method_memory`](Self::method_memory).
    fn init(
        &self,
        ctx: &BackendInitContext<'_>,
        processed: &[u8],
        compile_specs: &[CompileSpec<'_>],
    ) -> Result<DelegateHandle, DelegateError>;

    /// An upper bound of the method memory `init` allocates for `processed`, so callers can
    /// size the method buffer before loading ([`Program::method_memory_estimate`]). A
    /// payload `init` would refuse may return anything; `init` reports what is wrong.
    ///
    /// [`Program::method_memory_estimate`]: crate::Program::method_memory_estimate
    fn method_memory(&self, _processed: &[u8]) -> usize {
        0
    }

    /// Runs the delegate. `args` are the delegate's inputs followed by its outputs.
    fn execute(
        &self,
        ctx: &KernelContext<'_>,
        handle: DelegateHandle,
        args: &KernelArgs<'_>,
    ) -> KernelResult;

    /// Releases the handle when the method is dropped.
    fn destroy(&self, _handle: DelegateHandle) {}

    /// Names step `index` of the delegate, as its `execute` recorded it with
    /// [`KernelContext::step_end`], for profiles (ETDump's delegate debug identifier,
    /// `etch run --profile`). Returns `Ok(false)` when the backend has no names: the
    /// profile then identifies the step by its index.
    fn step_name(
        &self,
        _handle: DelegateHandle,
        _index: u32,
        _out: &mut dyn fmt::Write,
    ) -> Result<bool, fmt::Error> {
        Ok(false)
    }
}

/// Every delegate backend in the binary. [`register_backend!`](crate::register_backend)
/// adds one element per backend.
#[cfg(feature = "backends")]
#[linkme::distributed_slice]
pub static BACKENDS: [BackendEntry];

/// A registered backend: an element of `BACKENDS` (feature `backends`).
pub struct BackendEntry {
    /// The id programs use (`XnnpackBackend`, ...).
    pub name: &'static str,
    /// The implementation.
    pub backend: &'static dyn Backend,
    /// How `load_method` initializes this backend's delegates (set by
    /// [`register_backend!`](crate::register_backend); see `InitDelegateFn`).
    #[doc(hidden)]
    pub init: crate::__private::InitDelegateFn,
}

impl fmt::Debug for BackendEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackendEntry")
            .field("name", &self.name)
            .finish()
    }
}

/// Every backend linked into the binary: none without the feature `backends`, which
/// every backend crate enables (so the delegate machinery folds away in a binary that
/// links no backend).
pub fn backends() -> &'static [BackendEntry] {
    #[cfg(feature = "backends")]
    return &BACKENDS;
    #[cfg(not(feature = "backends"))]
    return &[];
}

/// The first registered backend named `name`.
pub fn find_backend(name: &str) -> Option<&'static BackendEntry> {
    backends().iter().find(|b| b.name == name)
}

/// Registers a backend under a name:
///
/// ```ignore
/// static MY_BACKEND: MyBackend = MyBackend;
/// et_runtime::register_backend!("MyBackend", MY_BACKEND);
/// ```
#[cfg(feature = "backends")]
#[macro_export]
macro_rules! register_backend {
    ($name:literal, $backend:path) => {
        const _: () = {
            #[$crate::__private::linkme::distributed_slice($crate::__private::BACKENDS)]
            #[linkme(crate = $crate::__private::linkme)]
            static __ET_BACKEND: $crate::backend::BackendEntry = $crate::backend::BackendEntry {
                name: $name,
                backend: &$backend,
                init: $crate::__private::init_delegate,
            };
        };
    };
}

/// Without the feature `backends` there is no registry to add a backend to.
#[cfg(not(feature = "backends"))]
#[macro_export]
macro_rules! register_backend {
    ($($t:tt)*) => {
        compile_error!("register_backend! needs et-runtime's feature `backends`: enable it in the backend crate's et-runtime dependency");
    };
}
