//! The owned halves of a [`Module`](super::Module): a program with the loaders it reads,
//! and a loaded method with the buffers it lives in.
//!
//! The core API borrows (a `Program<'d>` borrows its loader, a `Method<'a>` its program
//! and memory), which is what `no_std` callers want and what an application holding
//! everything in one value cannot express. These two types hold each borrowed thing in a
//! heap allocation of its own, reached only through a raw pointer (so moving the owner
//! never moves or re-asserts uniqueness over what is borrowed), with its lifetime erased
//! to `'static`, and free them in reverse order of borrowing. Nothing with the erased
//! lifetime leaves this module: accessors hand out borrows of `self`.

use std::boxed::Box;
use std::mem::ManuallyDrop;
use std::string::String;
use std::vec::Vec;

use crate::data::DataFile;
use crate::loader::DataLoader;
use crate::memory::MemoryManager;
use crate::method::{LoadError, Method};
use crate::method_buffers::{MethodBufferSizes, MethodBuffers};
use crate::program::{Program, ProgramError, Verification};

/// A loader a module owns: `Send` so the module can move between threads.
pub(crate) type BoxedLoader = Box<dyn DataLoader + Send + Sync>;

/// A boxed loader as a sized loader, for the load functions' generic parameter.
struct Loader(BoxedLoader);

impl DataLoader for Loader {
    fn size(&self) -> usize {
        self.0.size()
    }

    fn load(&self, offset: usize, size: usize) -> Result<&[u8], crate::error::Error> {
        self.0.load(offset, size)
    }
}

/// A `Box`'s contents behind a raw pointer: freed only by [`free`].
fn leak<T: ?Sized>(b: Box<T>) -> *mut T {
    Box::into_raw(b)
}

/// Frees what [`leak`] returned.
///
/// # Safety
/// `p` came from [`leak`], is freed once, and nothing borrowing from it is alive.
unsafe fn free<T: ?Sized>(p: *mut T) {
    // SAFETY: the caller's promise: `p` is a live `Box` allocation with no borrowers.
    drop(unsafe { Box::from_raw(p) });
}

/// A program and everything it borrows: the program's loader, the data files' loaders
/// and names, the data files, and the list of them the program holds.
pub(crate) struct OwnedProgram {
    program: *mut Program<'static>,
    file_list: *mut [&'static DataFile<'static>],
    files: *mut [DataFile<'static>],
    names: *mut [String],
    loaders: *mut [Loader],
    program_loader: *mut Loader,
}

/// Why a program could not be opened.
pub(crate) enum OpenError {
    Program(ProgramError),
    DataFile(usize, et_schema::flat_tensor::DataFileError),
}

impl OwnedProgram {
    /// Opens `loader`'s program with `data` (name, loader) as its `.ptd` data files,
    /// checked as `verification` says.
    pub(crate) fn open(
        loader: BoxedLoader,
        data: Vec<(String, BoxedLoader)>,
        verification: Verification,
    ) -> Result<OwnedProgram, OpenError> {
        let (names, loaders): (Vec<String>, Vec<Loader>) =
            data.into_iter().map(|(n, l)| (n, Loader(l))).unzip();
        let mut owned = OwnedProgram {
            program: core::ptr::null_mut::<Program<'static>>(),
            file_list: leak(Vec::new().into_boxed_slice()),
            files: leak(Vec::new().into_boxed_slice()),
            names: leak(names.into_boxed_slice()),
            loaders: leak(loaders.into_boxed_slice()),
            program_loader: leak(Box::new(Loader(loader))),
        };
        // SAFETY: `names` and `loaders` were just leaked and are freed only by `Drop`,
        // after everything below that borrows them; the `'static` borrows never leave
        // this type (see the module docs).
        let (names, loaders) = unsafe { (&*owned.names, &*owned.loaders) };
        let mut files = Vec::with_capacity(loaders.len());
        for (i, (loader, name)) in loaders.iter().zip(names).enumerate() {
            let file =
                DataFile::load(loader, name.as_str()).map_err(|e| OpenError::DataFile(i, e))?;
            files.push(file);
        }
        // SAFETY: the old (empty) allocation came from `leak` and has no borrowers.
        unsafe { free(owned.files) };
        owned.files = leak(files.into_boxed_slice());
        // SAFETY: just leaked; freed in `Drop` after the list and the program.
        let files: &'static [DataFile<'static>] = unsafe { &*owned.files };
        let list: Vec<&'static DataFile<'static>> = files.iter().collect();
        // SAFETY: as above.
        unsafe { free(owned.file_list) };
        owned.file_list = leak(list.into_boxed_slice());
        // SAFETY: the list, the files and both loaders live until `Drop` frees them after
        // the program.
        let (list, program_loader) = unsafe { (&*owned.file_list, &*owned.program_loader) };
        let program = Program::load_with_data(program_loader, verification, list)
            .map_err(OpenError::Program)?;
        owned.program = leak(Box::new(program));
        Ok(owned)
    }

    /// The program, borrowed from `self`.
    pub(crate) fn program(&self) -> &Program<'_> {
        // SAFETY: set by `open` before any `OwnedProgram` is returned, freed only in `Drop`.
        unsafe { &*self.program }
    }

    /// The program with its erased lifetime, for [`OwnedMethod::load`] alone.
    fn program_static(&self) -> &'static Program<'static> {
        // SAFETY: as `program`; the caller (`OwnedMethod::load`) keeps the method that
        // borrows it inside a `Module` whose methods are dropped before its program.
        unsafe { &*self.program }
    }
}

impl Drop for OwnedProgram {
    fn drop(&mut self) {
        // SAFETY: each pointer came from `leak` and is freed once, borrowers first: the
        // program borrows the list, the files and the program loader; the files borrow
        // the names and loaders. `program` is null only when `open` failed before it.
        unsafe {
            if !self.program.is_null() {
                free(self.program);
            }
            free(self.file_list);
            free(self.files);
            free(self.names);
            free(self.loaders);
            free(self.program_loader);
        }
    }
}

/// A loaded method and the memory it lives in: its buffers, the planned-buffer list and
/// the memory manager that borrow them.
pub(crate) struct OwnedMethod {
    method: ManuallyDrop<Method<'static>>,
    memory: *mut MemoryManager<'static>,
    planned: *mut [&'static mut [u8]],
    buffers: *mut MethodBuffers,
}

/// Why a method could not be loaded: its buffers, or the load itself (formatted while
/// the error's borrows were alive).
pub(crate) enum LoadFailure {
    Buffers(crate::method_buffers::BufferError),
    Load(crate::error::Error, String),
}

impl OwnedMethod {
    /// Loads method `name` of `program` into buffers sized from the program, refused over
    /// `limit` bytes.
    ///
    /// # Safety
    /// The returned method borrows `program`: it must be dropped before `program` is.
    pub(crate) unsafe fn load(
        program: &OwnedProgram,
        name: &str,
        scratch: usize,
        limit: usize,
    ) -> Result<OwnedMethod, LoadFailure> {
        let program = program.program_static();
        let sizes = MethodBufferSizes::for_program_method(program, name, scratch)
            .map_err(|e| LoadFailure::Load(e, String::from("cannot size its memory")))?;
        let buffers = MethodBuffers::allocate(&sizes, limit).map_err(LoadFailure::Buffers)?;
        let buffers = leak(Box::new(buffers));
        // SAFETY: just leaked; freed in `Drop` (or below on failure) after the manager and
        // the method, which borrow it.
        let (method_memory, planned, scratch) = unsafe { &mut *buffers }.split();
        let planned = leak(planned.into_boxed_slice());
        // SAFETY: as above, for the planned list.
        let memory = leak(Box::new(MemoryManager::new(
            method_memory,
            unsafe { &mut *planned },
            scratch,
        )));
        // SAFETY: as above, for the manager.
        match program.load_method(name, unsafe { &mut *memory }) {
            Ok(method) => Ok(OwnedMethod {
                method: ManuallyDrop::new(method),
                memory,
                planned,
                buffers,
            }),
            Err(e) => {
                let failure = failure(&e);
                // SAFETY: the failed load left nothing borrowing them; freed once,
                // borrowers first.
                unsafe {
                    free(memory);
                    free(planned);
                    free(buffers);
                }
                Err(failure)
            }
        }
    }

    /// The method, borrowed from `self`.
    pub(crate) fn method(&mut self) -> &mut Method<'static> {
        &mut self.method
    }
}

fn failure(e: &LoadError<'_>) -> LoadFailure {
    LoadFailure::Load(e.error, std::format!("{e}"))
}

impl Drop for OwnedMethod {
    fn drop(&mut self) {
        // SAFETY: the method is dropped once, here, before the memory it borrows; each
        // pointer came from `leak` and is freed once, borrowers first.
        unsafe {
            ManuallyDrop::drop(&mut self.method);
            free(self.memory);
            free(self.planned);
            free(self.buffers);
        }
    }
}
