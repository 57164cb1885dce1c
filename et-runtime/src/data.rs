//! Named data: blobs a program or its backends find by key instead of by index, from the
//! program's own `named_data` and from `.ptd` data files ([`DataFile`]), merged into one
//! [`NamedDataMap`]. Everything is zero-copy: a [`NamedData`]'s bytes are the loader's.
//!
//! A `.pte` exported with external constants keeps its weights in a `.ptd` file; its
//! tensors say `EXTERNAL` and carry the key, and `load_method` binds them through the map.
//! Delegates (XNNPACK) keep theirs as named data keyed by SHA-256, in the `.pte` or in a
//! `.ptd`, and look them up through
//! [`BackendInitContext::named_data`](crate::backend::BackendInitContext::named_data).

use core::cell::Cell;
use core::fmt;

use crate::error::Error;
use crate::loader::DataLoader;
use crate::loader::DataLoaderSync;
use crate::method_error::{note, ExternalDataProblem, LoadDetail};
use et_schema::fields as fb;
use et_schema::flat_tensor::{self, DataEntry, DataFileHeader, DataFileView, HEADER_PROBE};
use et_schema::header::Verification;
use et_schema::reader::Table;
use et_schema::scalar_type::ScalarType;
use et_schema::ProgramView;

pub use et_schema::flat_tensor::{DataFileError, DataLayout};

/// A blob of named data: its bytes, and its tensor layout when its source records one
/// (`.ptd` files do for tensors; a program's own named data never does).
#[derive(Clone, Copy, Debug)]
pub struct NamedData<'a> {
    /// The bytes, in place in the loader's memory.
    pub bytes: &'a [u8],
    /// dtype, sizes and dim order, when known.
    pub layout: Option<DataLayout<'a>>,
}

/// Where a [`NamedData`] was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DataSource<'a> {
    /// The program's own `named_data` (its segments).
    Program,
    /// A data file, by its display name.
    File(&'a str),
}

impl fmt::Display for DataSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataSource::Program => f.write_str("the program"),
            DataSource::File(name) => f.write_str(name),
        }
    }
}

/// An opened `.ptd` data file (ExecuTorch's FlatTensor): named blobs, each checked to lie
/// inside the file when it was opened. Borrows its loader: the blobs are used in place.
pub struct DataFile<'d> {
    loader: &'d dyn DataLoaderSync,
    name: &'d str,
    view: DataFileView<'d>,
    /// [`bind_in_files`], which `load_method` reaches through this pointer: the code that
    /// reads entries and checks them against tensors is then linked only into binaries
    /// that open data files (called directly, it would sit in every binary that loads
    /// methods: ~1.2 KB of `size_test`).
    bind_fn: BindFn,
}

/// Generic over the files' lifetime, so that `DataFile` stays covariant in it.
type BindFn = for<'x> fn(&[&DataFile<'x>], &TensorRequest<'x, '_>) -> Result<&'x [u8], Error>;

/// What an external tensor needs from the data files, and where `load_method` takes a
/// failure's detail from.
pub(crate) struct TensorRequest<'x, 'r> {
    pub(crate) key: &'x str,
    pub(crate) dtype: ScalarType,
    pub(crate) sizes: &'r [usize],
    pub(crate) dim_order: &'r [u8],
    pub(crate) nbytes: usize,
    pub(crate) detail: &'r Cell<LoadDetail<'x>>,
}

impl<'x> TensorRequest<'x, '_> {
    /// Notes why the tensor could not be bound (the file involved: the one that held the
    /// key, or the last searched) and returns the code.
    fn fail<T>(
        &self,
        error: Error,
        file: Option<&'x str>,
        problem: ExternalDataProblem,
    ) -> Result<T, Error> {
        let detail = LoadDetail::ExternalData {
            key: self.key,
            file,
            problem,
        };
        Err(note(self.detail, error, detail))
    }
}

/// Finds `req.key` in the first file naming it and checks the blob against the tensor:
/// exactly its byte size, and its dtype, sizes and dim order when the file records a
/// layout.
fn bind_in_files<'x>(
    files: &[&DataFile<'x>],
    req: &TensorRequest<'x, '_>,
) -> Result<&'x [u8], Error> {
    let fail = |error, file, problem| req.fail(error, file, problem);
    let mut found = None;
    for file in files {
        match file.lookup(req.key) {
            Ok(Some(data)) => {
                found = Some((data, file.name()));
                break;
            }
            Ok(None) => {}
            Err(e) => return fail(e, Some(file.name()), ExternalDataProblem::Malformed),
        }
    }
    let Some((data, name)) = found else {
        let problem = ExternalDataProblem::NotFound {
            searched: files.len(),
        };
        return fail(Error::NotFound, files.last().map(|f| f.name()), problem);
    };
    if let Some(layout) = data.layout {
        if layout.dtype() != req.dtype {
            let problem = ExternalDataProblem::Dtype {
                expected: req.dtype,
                found: layout.dtype(),
            };
            return fail(Error::InvalidExternalData, Some(name), problem);
        }
        if !(layout.sizes().eq(req.sizes.iter().copied()) && layout.dim_order() == req.dim_order) {
            return fail(
                Error::InvalidExternalData,
                Some(name),
                ExternalDataProblem::Shape,
            );
        }
    }
    if data.bytes.len() != req.nbytes {
        let problem = ExternalDataProblem::Size {
            expected: req.nbytes,
            found: data.bytes.len(),
        };
        return fail(Error::InvalidExternalData, Some(name), problem);
    }
    Ok(data.bytes)
}

impl fmt::Debug for DataFile<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataFile")
            .field("name", &self.name)
            .field("entries", &self.view.len())
            .finish()
    }
}

impl<'d> DataFile<'d> {
    /// Opens a data file from any loader, with the full structural check
    /// ([`Verification::InternalConsistency`]). `name` (usually the file name) appears in
    /// load errors about the file's data.
    pub fn load<L: DataLoader + Sync>(
        loader: &'d L,
        name: &'d str,
    ) -> Result<DataFile<'d>, DataFileError> {
        Self::load_with(loader, name, Verification::InternalConsistency)
    }

    /// Opens a data file with the given up-front checks. Either way the header's
    /// offsets and every entry (key, segment, layout) are checked here.
    pub fn load_with<L: DataLoader + Sync>(
        loader: &'d L,
        name: &'d str,
        verification: Verification,
    ) -> Result<DataFile<'d>, DataFileError> {
        Self::load_dyn(loader, name, verification)
    }

    fn load_dyn(
        loader: &'d dyn DataLoaderSync,
        name: &'d str,
        verification: Verification,
    ) -> Result<DataFile<'d>, DataFileError> {
        let unreadable = |error| DataFileError {
            error,
            reason: et_schema::error::message("cannot read the data file"),
        };
        let size = loader.size();
        let head = loader.load(0, size.min(HEADER_PROBE)).map_err(unreadable)?;
        let layout = DataFileHeader::locate(head, size)?;
        let region = loader.load(0, layout.flatbuffer_end).map_err(unreadable)?;
        if !(region.as_ptr() as usize).is_multiple_of(crate::PROGRAM_ALIGNMENT) {
            return Err(DataFileError {
                error: Error::InvalidArgument,
                reason: et_schema::error::message("data file bytes must be 16-byte aligned"),
            });
        }
        let view = DataFileView::from_region(region, layout, verification)?;
        Ok(DataFile {
            loader,
            name,
            view,
            bind_fn: bind_in_files,
        })
    }

    /// The display name given at [`load`](Self::load).
    pub fn name(&self) -> &'d str {
        self.name
    }

    /// Number of named entries.
    pub fn len(&self) -> usize {
        self.view.len()
    }

    /// Whether the file names nothing.
    pub fn is_empty(&self) -> bool {
        self.view.is_empty()
    }

    /// The entries in file order: key, byte size, layout (offsets are the file's).
    pub fn entries(&self) -> impl Iterator<Item = DataEntry<'d>> {
        self.view.entries()
    }

    /// The blob named `key`, or `None` when the file does not name it.
    pub fn get(&self, key: &str) -> Option<NamedData<'d>> {
        self.lookup(key).ok().flatten()
    }

    /// The blob named `key`; `Err` only when the loader fails to give bytes it holds.
    pub fn lookup(&self, key: &str) -> Result<Option<NamedData<'d>>, Error> {
        let Some(entry) = self.view.find(key) else {
            return Ok(None);
        };
        let bytes = self.loader.load(entry.offset, entry.size)?;
        Ok(Some(NamedData {
            bytes,
            layout: entry.layout,
        }))
    }

    /// The header and where the file's parts lie.
    pub fn file_layout(&self) -> flat_tensor::DataFileLayout {
        self.view.layout()
    }
}

/// A program's own named data: its `named_data` entries name segments of the `.pte`.
#[derive(Clone, Copy)]
pub(crate) struct ProgramSegments<'d> {
    pub(crate) loader: &'d dyn DataLoaderSync,
    pub(crate) root: Table<'d>,
    /// The extended header's segment base offset (0: the file has no segments).
    pub(crate) base: u64,
}

impl<'d> ProgramSegments<'d> {
    /// The bytes of segment `index`: `NotFound` when the program has no such segment,
    /// `InvalidProgram` when it lies outside the file.
    pub(crate) fn segment(&self, index: usize) -> Result<&'d [u8], Error> {
        let (start, len) = ProgramView::new(self.root).segment_range(self.base, index)?;
        self.loader.load(start, len)
    }

    /// Number of `named_data` entries.
    fn len(&self) -> usize {
        self.root
            .vector(fb::Program::VT_NAMED_DATA)
            .map_or(0, |v| v.len())
    }

    /// Entry `index`: its key and its bytes (`InvalidProgram` when malformed).
    fn entry(&self, index: usize) -> Result<(&'d str, &'d [u8]), Error> {
        type N<'x> = fb::NamedData<'x>;
        let e = self
            .root
            .vector(fb::Program::VT_NAMED_DATA)
            .and_then(|v| v.table(index))
            .ok_or(Error::InvalidProgram)?;
        let key = e.string(N::VT_KEY).ok_or(Error::InvalidProgram)?;
        let bytes = self
            .segment(e.uint(N::VT_SEGMENT_INDEX, 4) as usize)
            .map_err(|_| Error::InvalidProgram)?;
        Ok((key, bytes))
    }

    /// The bytes of the first entry named `key`.
    fn find(&self, key: &str) -> Result<Option<&'d [u8]>, Error> {
        type N<'x> = fb::NamedData<'x>;
        let Some(list) = self.root.vector(fb::Program::VT_NAMED_DATA) else {
            return Ok(None);
        };
        for i in 0..list.len() {
            // Keys are compared before the segment is resolved, so a malformed entry
            // only fails the lookups that reach it.
            if list.table(i).and_then(|e| e.string(N::VT_KEY)) == Some(key) {
                return self.entry(i).map(|(_, bytes)| Some(bytes));
            }
        }
        Ok(None)
    }
}

/// Every source of named data a method can read: the program's own `named_data`, then
/// each attached data file in the order given to
/// [`Program::load_with_data`](crate::Program::load_with_data). The first source naming a
/// key wins.
#[derive(Clone, Copy)]
pub struct NamedDataMap<'a> {
    program: Option<ProgramSegments<'a>>,
    files: &'a [&'a DataFile<'a>],
}

impl fmt::Debug for NamedDataMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamedDataMap")
            .field("program_entries", &self.program.map_or(0, |p| p.len()))
            .field("files", &self.files)
            .finish()
    }
}

impl<'a> NamedDataMap<'a> {
    /// A map with no program and no files: every lookup misses.
    pub const EMPTY: NamedDataMap<'static> = NamedDataMap {
        program: None,
        files: &[],
    };

    /// A map over data files alone (no program), searched in order.
    pub fn from_files(files: &'a [&'a DataFile<'a>]) -> NamedDataMap<'a> {
        NamedDataMap {
            program: None,
            files,
        }
    }

    pub(crate) fn new(
        program: ProgramSegments<'a>,
        files: &'a [&'a DataFile<'a>],
    ) -> NamedDataMap<'a> {
        NamedDataMap {
            program: Some(program),
            files,
        }
    }

    /// The blob named `key`: from the program's named data, else from the first data file
    /// that names it. `None` when no source names it (or the program's entry for it is
    /// malformed: [`lookup`](Self::lookup) tells the two apart).
    pub fn get(&self, key: &str) -> Option<NamedData<'a>> {
        self.lookup(key).ok().flatten().map(|(data, _)| data)
    }

    /// The blob named `key` and where it was found; `Err` when the entry that names it is
    /// malformed (a program entry whose segment does not exist) or its loader fails.
    pub fn lookup(&self, key: &str) -> Result<Option<(NamedData<'a>, DataSource<'a>)>, Error> {
        if let Some(program) = &self.program {
            if let Some(bytes) = program.find(key)? {
                let data = NamedData {
                    bytes,
                    layout: None,
                };
                return Ok(Some((data, DataSource::Program)));
            }
        }
        for file in self.files {
            if let Some(data) = file.lookup(key)? {
                return Ok(Some((data, DataSource::File(file.name()))));
            }
        }
        Ok(None)
    }

    /// The data of an external tensor, from the data files alone (as in ExecuTorch,
    /// whose external constants come from the external data map, never from the
    /// program's own named data), checked against the tensor.
    pub(crate) fn bind_external(&self, req: &TensorRequest<'a, '_>) -> Result<&'a [u8], Error> {
        match self.files.first() {
            Some(first) => (first.bind_fn)(self.files, req),
            None => req.fail(Error::NotFound, None, ExternalDataProblem::NoDataFiles),
        }
    }

    /// Segment `index` of the program (`NotFound` without a program).
    pub(crate) fn program_segment(&self, index: usize) -> Result<&'a [u8], Error> {
        self.program.ok_or(Error::NotFound)?.segment(index)
    }

    /// The attached data files, in search order.
    pub fn files(&self) -> &'a [&'a DataFile<'a>] {
        self.files
    }

    /// The program's own named data: each key with its bytes (`Err` for a malformed
    /// entry), in file order.
    pub fn program_entries(&self) -> impl Iterator<Item = Result<(&'a str, &'a [u8]), Error>> {
        let program = self.program;
        let n = program.map_or(0, |p| p.len());
        (0..n).filter_map(move |i| program.map(|p| p.entry(i)))
    }
}
