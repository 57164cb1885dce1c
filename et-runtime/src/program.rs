//! `Program`: a loaded `.pte` file: the flatbuffer's root, segments and constants; and
//! the file-level facts a tool may want (header, identifier, verification levels, kernel
//! call metadata), which come from et-schema.

use core::fmt;

use crate::data::{DataFile, NamedDataMap, ProgramSegments};
use crate::error::Error;
pub use crate::loader::DataLoaderSync;
use crate::loader::{DataLoader, PROGRAM_ALIGNMENT};
use et_schema::fields as fb;

pub use et_schema::header::{
    ExtendedHeader, ProgramError, Verification, FILE_IDENTIFIER, MAX_SUPPORTED_VERSION,
};
pub(crate) use et_schema::meta::{tag, value_at, TensorShape};
pub use et_schema::meta::{ExternalTensor, KernelCallInfo, KernelKey, MethodMeta, TensorInfo};
pub use et_schema::op_name::OperatorName;
pub(crate) use et_schema::reader::{to_str, Table, Vector};
use et_schema::{header, PayloadLocation, ProgramView};

/// One delegate of a method: which backend runs it, and the payload it is given.
#[derive(Clone, Copy, Debug)]
pub struct DelegateInfo<'d> {
    /// The backend id (`XnnpackBackend`).
    pub backend_id: &'d str,
    /// The `processed` bytes the backend's `init` receives.
    pub payload: &'d [u8],
}

/// A loaded program. Borrows its loader's bytes: constants are used in place.
///
/// `Program` is `Sync`: several threads may load methods from one program.
pub struct Program<'d> {
    /// The program's segments (the loader, the root table, where segments start: what
    /// constants, delegate payloads and named data are read through) and the `.ptd`
    /// files searched after the program's own named data.
    named_data: NamedDataMap<'d>,
    /// The root `Program` table of the flatbuffer.
    root: Table<'d>,
    header: Option<ExtendedHeader>,
    constants: &'d [u8],
    constant_offsets: Option<Vector<'d>>,
}

impl fmt::Debug for Program<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("methods", &self.num_methods())
            .field("header", &self.header)
            .field("constant_bytes", &self.constants.len())
            .field("data_files", &self.named_data.files())
            .finish()
    }
}

/// A `usize` from a file's integer; `InvalidProgram` when it does not fit.
fn to_usize(v: u64) -> Result<usize, Error> {
    usize::try_from(v).map_err(|_| Error::InvalidProgram)
}

/// `nbytes` bytes at byte `start` (a file's integer) of `data`; `InvalidProgram` when
/// they are not all inside.
fn sub_slice(data: &[u8], start: u64, nbytes: usize) -> Result<&[u8], Error> {
    let start = to_usize(start)?;
    let end = start.checked_add(nbytes).ok_or(Error::InvalidProgram)?;
    data.get(start..end).ok_or(Error::InvalidProgram)
}

impl<'d> Program<'d> {
    /// Loads and checks a program: header, identifier, the flatbuffer's structure,
    /// version, and the constant segment ([`Verification::InternalConsistency`]).
    pub fn load<L: DataLoader + Sync>(loader: &'d L) -> Result<Program<'d>, ProgramError> {
        Self::load_dyn(loader, Verification::InternalConsistency, &[])
    }

    /// Loads a program with the given up-front checks.
    pub fn load_with<L: DataLoader + Sync>(
        loader: &'d L,
        verification: Verification,
    ) -> Result<Program<'d>, ProgramError> {
        Self::load_dyn(loader, verification, &[])
    }

    /// Loads a program whose named data continues in `.ptd` data files: its external
    /// tensors bind by name at `load_method`, and backends look keys up in the program's
    /// own named data first, then in `data_files` in order ([`Program::named_data`]).
    ///
    /// ```ignore
    /// let data = DataFile::load(&ptd_loader, "model.ptd")?;
    /// let files = [&data];
    /// let program = Program::load_with_data(&pte_loader, Verification::default(), &files)?;
    /// ```
    pub fn load_with_data<L: DataLoader + Sync>(
        loader: &'d L,
        verification: Verification,
        data_files: &'d [&'d DataFile<'d>],
    ) -> Result<Program<'d>, ProgramError> {
        Self::load_dyn(loader, verification, data_files)
    }

    fn load_dyn(
        loader: &'d dyn DataLoaderSync,
        verification: Verification,
        data_files: &'d [&'d DataFile<'d>],
    ) -> Result<Program<'d>, ProgramError> {
        let r = Self::load_checked(loader, verification, data_files);
        if let Err(e) = &r {
            crate::et_log!(error, "Program::load: {}: {:?}", e.reason(), e.error);
        }
        r
    }

    fn load_checked(
        loader: &'d dyn DataLoaderSync,
        verification: Verification,
        data_files: &'d [&'d DataFile<'d>],
    ) -> Result<Program<'d>, ProgramError> {
        let fail = ProgramError::new;
        let size = loader.size();
        let head = loader
            .load(0, size.min(header::HEADER_PROBE))
            .map_err(|e| fail(e, "cannot read the file header"))?;
        let (header, program_size) = header::locate(head, size)?;
        let data = loader
            .load(0, program_size)
            .map_err(|e| fail(e, "cannot read the program data"))?;
        if !(data.as_ptr() as usize).is_multiple_of(PROGRAM_ALIGNMENT) {
            return Err(fail(
                Error::InvalidArgument,
                "program data must be 16-byte aligned",
            ));
        }
        let root = header::root(data, verification)?;
        let segments = ProgramSegments {
            loader,
            root,
            base: header.map_or(0, |h| h.segment_base_offset),
        };
        let mut program = Program {
            named_data: NamedDataMap::new(segments, data_files),
            root,
            header,
            constants: &[],
            constant_offsets: None,
        };
        program
            .load_constant_segment()
            .map_err(|e| fail(e, "the constant segment is missing or out of range"))?;
        Ok(program)
    }

    /// Out of line: it runs once per load, and inlined into `load_checked` (and through
    /// it into the caller of `Program::load`) its reads of the constant segment took 32
    /// bytes more of size_test.
    #[inline(never)]
    fn load_constant_segment(&mut self) -> Result<(), Error> {
        let Some(cs) = self.root.table(fb::Program::VT_CONSTANT_SEGMENT) else {
            return Ok(());
        };
        let Some(offsets) = cs.vector(fb::SubsegmentOffsets::VT_OFFSETS) else {
            return Ok(());
        };
        // With only the reserved placeholder entry, the program has no constants.
        if offsets.len() > 1 {
            if self
                .root
                .vector(fb::Program::VT_CONSTANT_BUFFER)
                .is_some_and(|b| !b.is_empty())
            {
                return Err(Error::InvalidProgram);
            }
            self.constants =
                self.segment(cs.uint(fb::SubsegmentOffsets::VT_SEGMENT_INDEX, 4) as usize)?;
        }
        self.constant_offsets = Some(offsets);
        Ok(())
    }

    /// The bytes of segment `index`.
    pub(crate) fn segment(&self, index: usize) -> Result<&'d [u8], Error> {
        self.named_data.program_segment(index)
    }

    /// The program's named data merged with its data files: what backends read
    /// constants from (external tensors bind to the data files alone).
    pub fn named_data(&self) -> &NamedDataMap<'d> {
        &self.named_data
    }

    /// The data files given at [`load_with_data`](Self::load_with_data), in search order.
    pub fn data_files(&self) -> &'d [&'d DataFile<'d>] {
        self.named_data.files()
    }

    /// `nbytes` of constant `index` (an index into the constant segment's offsets).
    pub(crate) fn constant_data(&self, index: u32, nbytes: usize) -> Result<&'d [u8], Error> {
        let index = index as usize;
        if let Some(offsets) = self.constant_offsets {
            if index >= offsets.len() {
                return Err(Error::InvalidProgram);
            }
            return sub_slice(self.constants, offsets.uint(index, 8), nbytes);
        }
        // The deprecated inline constant buffers.
        let storage = self
            .root
            .vector(fb::Program::VT_CONSTANT_BUFFER)
            .and_then(|b| b.table(index))
            .and_then(|b| b.bytes(fb::Buffer::VT_STORAGE))
            .ok_or(Error::InvalidProgram)?;
        storage.get(..nbytes).ok_or(Error::InvalidProgram)
    }

    /// The initial bytes of a mutable buffer (`mutable_data_segments[0]`).
    pub(crate) fn mutable_data(&self, index: u32, nbytes: usize) -> Result<&'d [u8], Error> {
        let sub = self
            .root
            .vector(fb::Program::VT_MUTABLE_DATA_SEGMENTS)
            .and_then(|s| s.table(0))
            .ok_or(Error::InvalidProgram)?;
        let offsets = sub
            .vector(fb::SubsegmentOffsets::VT_OFFSETS)
            .ok_or(Error::InvalidProgram)?;
        let index = index as usize;
        if index >= offsets.len() {
            return Err(Error::InvalidProgram);
        }
        let data = self.segment(sub.uint(fb::SubsegmentOffsets::VT_SEGMENT_INDEX, 4) as usize)?;
        sub_slice(data, offsets.uint(index, 8), nbytes)
    }

    /// The delegates of method `name`, in the order its DelegateCalls index them: each
    /// backend id with its payload bytes (for tools: `etch ops`, selection, tests).
    pub fn delegates(
        &self,
        name: &str,
    ) -> Result<impl Iterator<Item = Result<DelegateInfo<'d>, Error>> + '_, Error> {
        let meta = self.method_meta(name)?;
        Ok(self.view().delegates(&meta).map(move |d| {
            let d = d?;
            Ok(DelegateInfo {
                backend_id: d.backend_id,
                payload: self.payload(d.payload)?,
            })
        }))
    }

    /// A delegate's payload, from its `BackendDelegateDataReference`.
    pub(crate) fn delegate_payload(&self, r: Table<'d>) -> Result<&'d [u8], Error> {
        self.payload(self.view().payload_location(r)?)
    }

    fn payload(&self, location: PayloadLocation<'d>) -> Result<&'d [u8], Error> {
        match location {
            PayloadLocation::Inline(bytes) => Ok(bytes),
            PayloadLocation::Segment(index) => {
                self.segment(index).map_err(|_| Error::InvalidProgram)
            }
        }
    }

    /// The extended header, if the file has one.
    pub fn header(&self) -> Option<ExtendedHeader> {
        self.header
    }

    /// The method and metadata reader over this program's flatbuffer.
    pub fn view(&self) -> ProgramView<'d> {
        ProgramView::new(self.root)
    }

    /// `Program.version` from the file.
    pub fn version(&self) -> u32 {
        self.view().version()
    }

    /// Number of methods.
    pub fn num_methods(&self) -> usize {
        self.view().num_methods()
    }

    /// The name of method `index`.
    pub fn method_name(&self, index: usize) -> Result<&'d str, Error> {
        self.view().method_name(index)
    }

    /// The method names, in file order.
    pub fn method_names(&self) -> impl Iterator<Item = &'d str> + '_ {
        self.view().method_names()
    }

    /// Metadata of method `name`: inputs, outputs, planned memory, operators.
    pub fn method_meta(&self, name: &str) -> Result<MethodMeta<'d>, Error> {
        self.view().method_meta(name)
    }
}

// SAFETY: a `Program` only reads immutable bytes borrowed from a `Sync` loader; the
// flatbuffer views it holds are plain (pointer, length) pairs into those bytes.
unsafe impl Sync for Program<'_> {}
// SAFETY: as above; nothing in a `Program` is tied to the thread that loaded it.
unsafe impl Send for Program<'_> {}
