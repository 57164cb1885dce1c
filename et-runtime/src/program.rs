//! `Program`: a loaded `.pte` file — header, segments, constants and method metadata.

use core::fmt;

use crate::error::Error;
use crate::kernel::op_hash_parts;
use crate::loader::{DataLoader, PROGRAM_ALIGNMENT};
use crate::scalar_type::ScalarType;
use crate::schema::fb;
use crate::tensor::{ShapeDynamism, MAX_DIM};
use crate::value::Tag;

mod input_reuse;
mod reader;

pub(crate) use reader::{to_str, Table, Vector};

/// The file identifier every supported program carries at bytes 4..8.
pub const FILE_IDENTIFIER: &[u8; 4] = b"ET12";
/// The highest `Program.version` this runtime accepts (as ExecuTorch 1.5.1).
pub const MAX_SUPPORTED_VERSION: u32 = 0;

const HEADER_MAGIC: &[u8; 4] = b"eh00";
const HEADER_OFFSET: usize = 8;
const HEADER_MIN_LEN: usize = 24;
const HEADER_PROBE: usize = 64;

/// The optional extended header (`eh00`) that locates the segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtendedHeader {
    /// Bytes of the flatbuffer region, counted from the start of the file.
    pub program_size: u64,
    /// Absolute offset of the first segment (0 when there are none).
    pub segment_base_offset: u64,
    /// Bytes from the segment base to the end of the last segment.
    pub segment_data_size: u64,
}

impl ExtendedHeader {
    /// Parses the header from the first bytes of a file: `Ok(None)` when there is none,
    /// `InvalidProgram` when the magic matches but the header is too short.
    pub fn parse(head: &[u8]) -> Result<Option<ExtendedHeader>, Error> {
        let magic = head.get(HEADER_OFFSET..HEADER_OFFSET + 4);
        if magic != Some(&HEADER_MAGIC[..]) {
            return Ok(None);
        }
        let len = read_u32(head, HEADER_OFFSET + 4).ok_or(Error::InvalidProgram)? as usize;
        if len < HEADER_MIN_LEN {
            return Err(Error::InvalidProgram);
        }
        let program_size = read_u64(head, HEADER_OFFSET + 8).ok_or(Error::InvalidProgram)?;
        let segment_base_offset =
            read_u64(head, HEADER_OFFSET + 16).ok_or(Error::InvalidProgram)?;
        let segment_data_size = if len >= 32 {
            read_u64(head, HEADER_OFFSET + 24).ok_or(Error::InvalidProgram)?
        } else {
            0
        };
        Ok(Some(ExtendedHeader {
            program_size,
            segment_base_offset,
            segment_data_size,
        }))
    }
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Why [`Program::load`] rejected a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramError {
    /// ExecuTorch's error code.
    pub error: Error,
    /// What was wrong.
    pub reason: &'static str,
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.error)
    }
}

impl core::error::Error for ProgramError {}

impl From<ProgramError> for Error {
    fn from(e: ProgramError) -> Error {
        e.error
    }
}

/// A loaded program. Borrows its loader's bytes: constants are used in place.
///
/// `Program` is `Sync`: several threads may load methods from one program.
pub struct Program<'d> {
    loader: &'d dyn DataLoaderSync,
    /// The root `Program` table of the verified flatbuffer.
    root: Table<'d>,
    header: Option<ExtendedHeader>,
    constants: &'d [u8],
    constant_offsets: Option<Vector<'d>>,
}

/// A [`DataLoader`] that can be shared between threads.
pub trait DataLoaderSync: DataLoader + Sync {}
impl<T: DataLoader + Sync> DataLoaderSync for T {}

impl fmt::Debug for Program<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("methods", &self.num_methods())
            .field("header", &self.header)
            .field("constant_bytes", &self.constants.len())
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

/// How much of a program [`Program::load_with`] checks before returning, as ExecuTorch's
/// `Program::Verification`.
///
/// Either way no input can cause undefined behaviour or a panic: every read of the
/// flatbuffer is bounds-checked and strings are checked to be UTF-8 when read. The
/// difference is when a malformed file is found: up front, or when the damaged part is
/// read (an `Err` from `load_method` or a metadata call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verification {
    /// The header, identifier, version and constant segment only (ExecuTorch's
    /// default). Saves the structural check's time and, in a binary that never asks for
    /// it, its code.
    Minimal,
    /// Also the whole flatbuffer's structure, in time linear in its size (what
    /// [`Program::load`] does).
    #[default]
    InternalConsistency,
}

impl<'d> Program<'d> {
    /// Loads and checks a program: header, identifier, the flatbuffer's structure,
    /// version, and the constant segment ([`Verification::InternalConsistency`]).
    pub fn load<L: DataLoader + Sync>(loader: &'d L) -> Result<Program<'d>, ProgramError> {
        Self::load_dyn(loader, Verification::InternalConsistency)
    }

    /// Loads a program with the given up-front checks.
    pub fn load_with<L: DataLoader + Sync>(
        loader: &'d L,
        verification: Verification,
    ) -> Result<Program<'d>, ProgramError> {
        Self::load_dyn(loader, verification)
    }

    fn load_dyn(
        loader: &'d dyn DataLoaderSync,
        verification: Verification,
    ) -> Result<Program<'d>, ProgramError> {
        let r = Self::load_checked(loader, verification);
        if let Err(e) = &r {
            crate::et_log!(error, "Program::load: {}: {:?}", e.reason, e.error);
        }
        r
    }

    fn load_checked(
        loader: &'d dyn DataLoaderSync,
        verification: Verification,
    ) -> Result<Program<'d>, ProgramError> {
        let fail = |error, reason| ProgramError { error, reason };
        let size = loader.size();
        let head = loader
            .load(0, size.min(HEADER_PROBE))
            .map_err(|e| fail(e, "cannot read the file header"))?;
        let Some(id) = head.get(4..8) else {
            return Err(fail(
                Error::InvalidProgram,
                "file is too short to be a program",
            ));
        };
        if id != FILE_IDENTIFIER {
            return Err(if id.starts_with(b"ET") {
                fail(
                    Error::NotSupported,
                    "unsupported program format version (identifier is not ET12)",
                )
            } else {
                fail(
                    Error::InvalidProgram,
                    "not an ExecuTorch program (no ET12 identifier at byte 4)",
                )
            });
        }
        let header = ExtendedHeader::parse(head)
            .map_err(|e| fail(e, "extended header (eh00) is shorter than 24 bytes"))?;
        let program_size = match header {
            Some(h) => {
                let expected_end = if h.segment_data_size == 0 && h.segment_base_offset == 0 {
                    Some(h.program_size)
                } else if h.segment_data_size > 0 {
                    h.segment_base_offset.checked_add(h.segment_data_size)
                } else {
                    None
                };
                if expected_end.is_some_and(|end| end > size as u64) {
                    return Err(fail(
                        Error::InvalidProgram,
                        "file is truncated: the header describes more data than the file holds",
                    ));
                }
                match usize::try_from(h.program_size) {
                    Ok(ps) if (8..=size).contains(&ps) => ps,
                    _ => {
                        return Err(fail(
                            Error::InvalidProgram,
                            "extended header gives an impossible program size",
                        ))
                    }
                }
            }
            None => size,
        };
        let data = loader
            .load(0, program_size)
            .map_err(|e| fail(e, "cannot read the program data"))?;
        if !(data.as_ptr() as usize).is_multiple_of(PROGRAM_ALIGNMENT) {
            return Err(fail(
                Error::InvalidArgument,
                "program data must be 16-byte aligned",
            ));
        }
        let malformed = |e| {
            fail(
                e,
                "the program's flatbuffer is malformed (truncated or corrupted)",
            )
        };
        if verification == Verification::InternalConsistency {
            // The structural check (the generated accessors it licenses are not used:
            // everything reads through `reader`).
            crate::schema::checked_root(data).map_err(malformed)?;
        }
        let root = Table::root(data)
            .ok_or(Error::InvalidProgram)
            .map_err(malformed)?;
        if root.uint(fb::Program::VT_VERSION, 4) > MAX_SUPPORTED_VERSION as u64 {
            return Err(fail(
                Error::InvalidProgram,
                "program schema version is newer than this runtime supports",
            ));
        }
        let mut program = Program {
            loader,
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
                .is_some_and(|b| b.len() != 0)
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
        let base = match self.header {
            Some(h) if h.segment_base_offset != 0 => h.segment_base_offset,
            _ => return Err(Error::NotFound),
        };
        let seg = self
            .root
            .vector(fb::Program::VT_SEGMENTS)
            .and_then(|s| s.table(index))
            .ok_or(Error::NotFound)?;
        let start = base
            .checked_add(seg.uint(fb::DataSegment::VT_OFFSET, 8))
            .ok_or(Error::InvalidProgram)?;
        let len = to_usize(seg.uint(fb::DataSegment::VT_SIZE, 8))?;
        self.loader.load(to_usize(start)?, len)
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

    /// A delegate's payload, from its `BackendDelegateDataReference`.
    pub(crate) fn delegate_payload(&self, r: Table<'d>) -> Result<&'d [u8], Error> {
        type R<'x> = fb::BackendDelegateDataReference<'x>;
        let index = r.uint(R::VT_INDEX, 4) as usize;
        match fb::DataLocation(r.uint(R::VT_LOCATION, 1) as u8 as i8) {
            fb::DataLocation::INLINE => {
                let inline = self
                    .root
                    .vector(fb::Program::VT_BACKEND_DELEGATE_DATA)
                    .and_then(|d| d.table(index))
                    .ok_or(Error::InvalidProgram)?;
                Ok(inline
                    .bytes(fb::BackendDelegateInlineData::VT_DATA)
                    .unwrap_or(&[]))
            }
            fb::DataLocation::SEGMENT => self.segment(index).map_err(|_| Error::InvalidProgram),
            _ => Err(Error::InvalidProgram),
        }
    }

    /// The extended header, if the file has one.
    pub fn header(&self) -> Option<ExtendedHeader> {
        self.header
    }

    /// `Program.version` from the file.
    pub fn version(&self) -> u32 {
        self.root.uint(fb::Program::VT_VERSION, 4) as u32
    }

    fn plans(&self) -> Option<Vector<'d>> {
        self.root.vector(fb::Program::VT_EXECUTION_PLAN)
    }

    /// Number of methods.
    pub fn num_methods(&self) -> usize {
        self.plans().map_or(0, |p| p.len())
    }

    /// The name of method `index`.
    pub fn method_name(&self, index: usize) -> Result<&'d str, Error> {
        let plans = self.plans().ok_or(Error::InvalidProgram)?;
        let plan = plans.table(index).ok_or(Error::InvalidArgument)?;
        plan_name(plan).ok_or(Error::InvalidProgram)
    }

    /// The method names, in file order.
    pub fn method_names(&self) -> impl Iterator<Item = &'d str> + '_ {
        (0..self.num_methods()).filter_map(|i| self.method_name(i).ok())
    }

    /// Metadata of method `name`: inputs, outputs, planned memory, operators.
    pub fn method_meta(&self, name: &str) -> Result<MethodMeta<'d>, Error> {
        let plans = self.plans().ok_or(Error::InvalidProgram)?;
        for i in 0..plans.len() {
            let Some(plan) = plans.table(i) else { break };
            let Some(found) = plan_name(plan).filter(|n| *n == name) else {
                continue;
            };
            type P<'x> = fb::ExecutionPlan<'x>;
            for vt in [P::VT_NON_CONST_BUFFER_SIZES, P::VT_INPUTS, P::VT_OUTPUTS] {
                if plan.vector(vt).is_none() {
                    return Err(Error::InvalidProgram);
                }
            }
            return Ok(MethodMeta { plan, name: found });
        }
        Err(Error::InvalidArgument)
    }
}

/// An `ExecutionPlan`'s name.
fn plan_name(plan: Table<'_>) -> Option<&str> {
    plan.string(fb::ExecutionPlan::VT_NAME)
}

// SAFETY: a `Program` only reads immutable bytes borrowed from a `Sync` loader; the
// flatbuffer views it holds are plain (pointer, length) pairs into those bytes.
unsafe impl Sync for Program<'_> {}
// SAFETY: as above; nothing in a `Program` is tied to the thread that loaded it.
unsafe impl Send for Program<'_> {}

/// Metadata of one method, read from the program without loading it.
#[derive(Clone, Copy)]
pub struct MethodMeta<'d> {
    /// The method's `ExecutionPlan` table.
    plan: Table<'d>,
    name: &'d str,
}

impl fmt::Debug for MethodMeta<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodMeta")
            .field("name", &self.name)
            .field("inputs", &self.num_inputs())
            .field("outputs", &self.num_outputs())
            .finish()
    }
}

/// Shape and type of a tensor input or output as exported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// Element type.
    pub dtype: ScalarType,
    rank: u8,
    sizes: [usize; MAX_DIM],
    dim_order: [u8; MAX_DIM],
    /// Whether the shape can change (for `Bound`, `sizes` are the upper bound).
    pub dynamism: ShapeDynamism,
}

impl TensorInfo {
    /// Exported sizes (the upper bound for bounded-dynamic tensors).
    pub fn sizes(&self) -> &[usize] {
        &self.sizes[..self.rank as usize]
    }

    /// Dim order.
    pub fn dim_order(&self) -> &[u8] {
        &self.dim_order[..self.rank as usize]
    }

    /// Number of elements at the exported sizes.
    pub fn numel(&self) -> usize {
        self.sizes().iter().product()
    }

    /// Bytes at the exported sizes.
    pub fn nbytes(&self) -> usize {
        self.numel() * self.dtype.element_size()
    }

    /// Reads and checks a `Tensor` table's dtype, shape, dim order and dynamism.
    pub(crate) fn read(t: Table<'_>) -> Result<TensorInfo, Error> {
        let shape = TensorShape::read(t)?;
        let rank = shape.rank();
        let mut info = TensorInfo {
            dtype: shape.dtype,
            rank: rank as u8,
            sizes: [0; MAX_DIM],
            dim_order: [0; MAX_DIM],
            dynamism: shape.dynamism,
        };
        shape.fill(&mut info.sizes[..rank], &mut info.dim_order[..rank])?;
        Ok(info)
    }
}

/// A `Tensor` table's dtype, dynamism and shape vectors, checked to agree in rank.
pub(crate) struct TensorShape<'d> {
    pub(crate) dtype: ScalarType,
    pub(crate) dynamism: ShapeDynamism,
    sizes: Vector<'d>,
    order: Vector<'d>,
}

impl<'d> TensorShape<'d> {
    pub(crate) fn read(t: Table<'d>) -> Result<TensorShape<'d>, Error> {
        type T<'x> = fb::Tensor<'x>;
        let dtype = ScalarType::from_i8(scalar_type(t)).ok_or(Error::InvalidProgram)?;
        let sizes = t.vector(T::VT_SIZES).ok_or(Error::InvalidProgram)?;
        let order = t.vector(T::VT_DIM_ORDER).ok_or(Error::InvalidProgram)?;
        if sizes.len() > MAX_DIM || order.len() != sizes.len() {
            return Err(Error::InvalidProgram);
        }
        let dynamism = match t.uint(T::VT_SHAPE_DYNAMISM, 1) {
            0 => ShapeDynamism::Static,
            1 => ShapeDynamism::Bound,
            2 => ShapeDynamism::Unbound,
            _ => return Err(Error::InvalidProgram),
        };
        Ok(TensorShape {
            dtype,
            dynamism,
            sizes,
            order,
        })
    }

    /// The rank (at most [`MAX_DIM`]).
    pub(crate) fn rank(&self) -> usize {
        self.sizes.len()
    }

    /// Writes the sizes and the dim order into `sizes` and `order` (`rank` long each),
    /// checking that sizes are not negative, that the dim order is a permutation and that
    /// the byte size fits in a `usize`; returns the byte size.
    pub(crate) fn fill(&self, sizes: &mut [usize], order: &mut [u8]) -> Result<usize, Error> {
        let rank = self.rank();
        let mut seen = 0u32;
        let mut numel = 1usize;
        for (i, (s, o)) in sizes.iter_mut().zip(order.iter_mut()).enumerate() {
            *s = usize::try_from(self.sizes.i32(i)).map_err(|_| Error::InvalidProgram)?;
            numel = numel.checked_mul(*s).ok_or(Error::InvalidProgram)?;
            let d = self.order.uint(i, 1) as usize;
            if d >= rank || seen & (1 << d) != 0 {
                return Err(Error::InvalidProgram);
            }
            seen |= 1 << d;
            *o = d as u8;
        }
        numel
            .checked_mul(self.dtype.element_size())
            .ok_or(Error::InvalidProgram)
    }
}

/// One operator a method calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperatorName<'d> {
    /// `namespace::name`.
    pub name: &'d str,
    /// The overload (may be empty).
    pub overload: &'d str,
}

impl OperatorName<'_> {
    /// The registry hash of `name.overload`.
    pub fn hash(&self) -> u32 {
        op_hash_parts(self.name.as_bytes(), self.overload.as_bytes())
    }
}

impl fmt::Display for OperatorName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.overload.is_empty() {
            f.write_str(self.name)
        } else {
            write!(f, "{}.{}", self.name, self.overload)
        }
    }
}

/// ExecuTorch's kernel key of a call: `(dtype, dim order)` of each tensor argument,
/// printed as `v1/6;0,1|6;0,1`. A view over the call's arguments (a few words), computed
/// on demand; the tensors it reads were validated when the call info was made.
#[derive(Clone, Copy)]
pub struct KernelKey<'d> {
    /// The plan's value table.
    values: Vector<'d>,
    /// The call's argument value indices.
    args: Vector<'d>,
    /// Count a tensor list by its first tensor, as `gen_oplist` does.
    lists: bool,
}

/// The `KernelTypes` and `InstructionArguments` union tags.
pub(crate) mod tag {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const INT: u8 = 2;
    pub(crate) const BOOL: u8 = 3;
    pub(crate) const DOUBLE: u8 = 4;
    pub(crate) const TENSOR: u8 = 5;
    pub(crate) const STRING: u8 = 6;
    pub(crate) const INT_LIST: u8 = 7;
    pub(crate) const DOUBLE_LIST: u8 = 8;
    pub(crate) const BOOL_LIST: u8 = 9;
    pub(crate) const TENSOR_LIST: u8 = 10;
    pub(crate) const OPTIONAL_TENSOR_LIST: u8 = 11;

    pub(crate) const KERNEL_CALL: u8 = 1;
    pub(crate) const DELEGATE_CALL: u8 = 2;
    pub(crate) const MOVE_CALL: u8 = 3;
    pub(crate) const JUMP_FALSE_CALL: u8 = 4;
    pub(crate) const FREE_CALL: u8 = 5;
}

// The tags above are the generated code's, and every list table keeps its items in its
// first field (read through `IntList`'s offset).
const _: () = {
    use fb::{InstructionArguments as I, KernelTypes as K};
    assert!(K::Null.0 == tag::NULL && K::Int.0 == tag::INT && K::Bool.0 == tag::BOOL);
    assert!(K::Double.0 == tag::DOUBLE && K::Tensor.0 == tag::TENSOR);
    assert!(K::String.0 == tag::STRING && K::IntList.0 == tag::INT_LIST);
    assert!(K::DoubleList.0 == tag::DOUBLE_LIST && K::BoolList.0 == tag::BOOL_LIST);
    assert!(K::TensorList.0 == tag::TENSOR_LIST);
    assert!(K::OptionalTensorList.0 == tag::OPTIONAL_TENSOR_LIST);
    assert!(I::KernelCall.0 == tag::KERNEL_CALL && I::DelegateCall.0 == tag::DELEGATE_CALL);
    assert!(I::MoveCall.0 == tag::MOVE_CALL && I::JumpFalseCall.0 == tag::JUMP_FALSE_CALL);
    assert!(I::FreeCall.0 == tag::FREE_CALL);
    let items = fb::IntList::VT_ITEMS;
    assert!(fb::DoubleList::VT_ITEMS == items && fb::BoolList::VT_ITEMS == items);
    assert!(fb::TensorList::VT_ITEMS == items && fb::OptionalTensorList::VT_ITEMS == items);
};

/// Value `index` of a value table: its `KernelTypes` tag and member table (`None` when
/// the index is out of range).
pub(crate) fn value_at(values: Vector<'_>, index: i64) -> Option<(u8, Option<Table<'_>>)> {
    let ev = values.table(usize::try_from(index).ok()?)?;
    Some(ev.union(fb::EValue::VT_VAL_TYPE, fb::EValue::VT_VAL))
}

impl<'d> KernelKey<'d> {
    /// The tensor at value `index`, if it is one.
    fn tensor(&self, index: i64) -> Option<Table<'d>> {
        match value_at(self.values, index)? {
            (tag::TENSOR, t) => t,
            _ => None,
        }
    }

    /// The tensors the key is made of, in argument order.
    fn tensors(&self) -> impl Iterator<Item = Table<'d>> + '_ {
        (0..self.args.len()).filter_map(move |k| {
            let (kind, t) = value_at(self.values, self.args.i32(k))?;
            let t = t?;
            match kind {
                tag::TENSOR => Some(t),
                tag::TENSOR_LIST | tag::OPTIONAL_TENSOR_LIST if self.lists => {
                    let items = t.vector(fb::IntList::VT_ITEMS)?;
                    (0..items.len()).find_map(|i| self.tensor(items.i32(i)))
                }
                _ => None,
            }
        })
    }

    /// The dtypes of the key's tensors, in order.
    pub fn dtypes(&self) -> impl Iterator<Item = ScalarType> + '_ {
        self.tensors()
            .filter_map(|t| ScalarType::from_i8(scalar_type(t)))
    }

    /// Number of tensor entries.
    pub fn len(&self) -> usize {
        self.tensors().count()
    }

    /// True when the call has no tensor arguments.
    pub fn is_empty(&self) -> bool {
        self.tensors().next().is_none()
    }

    /// The set of dtypes the entries use.
    pub fn dtype_mask(&self) -> crate::DtypeSet {
        self.dtypes().fold(crate::DtypeSet::EMPTY, |m, t| m.with(t))
    }

    /// The dtype all entries share, if any: the key etch's registry matches on.
    pub fn common_dtype(&self) -> Option<ScalarType> {
        let mut dtypes = self.dtypes();
        let first = dtypes.next()?;
        dtypes.all(|t| t == first).then_some(first)
    }
}

/// A `Tensor` table's raw `scalar_type`.
fn scalar_type(t: Table<'_>) -> i8 {
    t.uint(fb::Tensor::VT_SCALAR_TYPE, 1) as u8 as i8
}

impl fmt::Display for KernelKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // gen_oplist appends `dtype;dim_order|` per tensor to `v1/` and drops the last
        // character, so its key for a call without tensors is `v1`; the runtime's is empty.
        if self.lists && self.tensors().next().is_none() {
            return f.write_str("v1");
        }
        for (i, t) in self.tensors().enumerate() {
            f.write_str(if i == 0 { "v1/" } else { "|" })?;
            write!(f, "{};", scalar_type(t))?;
            let order = t.vector(fb::Tensor::VT_DIM_ORDER).unwrap_or(Vector::EMPTY);
            for k in 0..order.len() {
                if k > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{}", order.uint(k, 1))?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for KernelKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KernelKey({self})")
    }
}

/// One KernelCall of a method, with the runtime's kernel key.
#[derive(Clone, Copy, Debug)]
pub struct KernelCallInfo<'d> {
    /// Position in the method's instruction list (chains concatenated).
    pub instruction: usize,
    /// Index into the method's operator table.
    pub op_index: usize,
    /// The operator.
    pub operator: OperatorName<'d>,
    /// Tensor dtypes and dim orders of the arguments as exported: the runtime's key
    /// (tensor arguments only).
    pub key: KernelKey<'d>,
    /// The key ExecuTorch's selective-build tooling (`gen_oplist`) writes for this call:
    /// like `key`, but a tensor list contributes its first (non-null) element, and a call
    /// without tensors prints as `v1`.
    pub selection_key: KernelKey<'d>,
    /// Number of argument values (schema arguments plus the return slot).
    pub num_args: usize,
}

type Plan<'x> = fb::ExecutionPlan<'x>;

impl<'d> MethodMeta<'d> {
    /// The method's name.
    pub fn name(&self) -> &'d str {
        self.name
    }

    /// A vector field of the plan (`Plan::VT_*`).
    pub(crate) fn list(&self, vt: flatbuffers::VOffsetT) -> Option<Vector<'d>> {
        self.plan.vector(vt)
    }

    fn len_of(&self, vt: flatbuffers::VOffsetT) -> usize {
        self.list(vt).map_or(0, |v| v.len())
    }

    /// Number of inputs.
    pub fn num_inputs(&self) -> usize {
        self.len_of(Plan::VT_INPUTS)
    }

    /// Number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.len_of(Plan::VT_OUTPUTS)
    }

    fn value_tag(&self, index: i64) -> Result<Tag, Error> {
        let (tag, _) = self.value(index)?;
        // KernelTypes are numbered Null = 1 .. OptionalTensorList = 11.
        const TAGS: [Tag; 11] = [
            Tag::None,
            Tag::Int,
            Tag::Bool,
            Tag::Double,
            Tag::Tensor,
            Tag::String,
            Tag::ListInt,
            Tag::ListDouble,
            Tag::ListBool,
            Tag::ListTensor,
            Tag::ListOptionalTensor,
        ];
        TAGS.get(usize::from(tag).wrapping_sub(1))
            .copied()
            .ok_or(Error::InvalidProgram)
    }

    /// Value `index` of the value table: its `KernelTypes` tag and member table.
    fn value(&self, index: i64) -> Result<(u8, Option<Table<'d>>), Error> {
        let values = self.list(Plan::VT_VALUES).ok_or(Error::InvalidProgram)?;
        value_at(values, index).ok_or(Error::InvalidProgram)
    }

    fn io_index(&self, vt: flatbuffers::VOffsetT, i: usize) -> Result<i64, Error> {
        let list = self.list(vt).ok_or(Error::InvalidProgram)?;
        if i >= list.len() {
            return Err(Error::InvalidArgument);
        }
        Ok(list.i32(i))
    }

    /// The kind of input `i`.
    pub fn input_tag(&self, i: usize) -> Result<Tag, Error> {
        self.value_tag(self.io_index(Plan::VT_INPUTS, i)?)
    }

    /// The kind of output `i`.
    pub fn output_tag(&self, i: usize) -> Result<Tag, Error> {
        self.value_tag(self.io_index(Plan::VT_OUTPUTS, i)?)
    }

    /// Shape and dtype of tensor input `i` (`InvalidArgument` if it is not a tensor).
    pub fn input_tensor(&self, i: usize) -> Result<TensorInfo, Error> {
        self.tensor_info(self.io_index(Plan::VT_INPUTS, i)?)
    }

    /// Shape and dtype of tensor output `i`.
    pub fn output_tensor(&self, i: usize) -> Result<TensorInfo, Error> {
        self.tensor_info(self.io_index(Plan::VT_OUTPUTS, i)?)
    }

    fn tensor_info(&self, index: i64) -> Result<TensorInfo, Error> {
        match self.value(index)? {
            (tag::TENSOR, Some(t)) => TensorInfo::read(t),
            _ => Err(Error::InvalidArgument),
        }
    }

    /// Number of memory-planned buffers the caller must provide.
    pub fn num_planned_buffers(&self) -> usize {
        self.len_of(Plan::VT_NON_CONST_BUFFER_SIZES)
            .saturating_sub(1)
    }

    /// Size in bytes of planned buffer `i`.
    pub fn planned_buffer_size(&self, i: usize) -> Result<usize, Error> {
        let sizes = self
            .list(Plan::VT_NON_CONST_BUFFER_SIZES)
            .ok_or(Error::InvalidProgram)?;
        let i = i.checked_add(1).filter(|&i| i < sizes.len());
        let size = sizes.uint(i.ok_or(Error::InvalidArgument)?, 8) as i64;
        usize::try_from(size).map_err(|_| Error::InvalidProgram)
    }

    /// Number of values in the method's value table.
    pub fn num_values(&self) -> usize {
        self.len_of(Plan::VT_VALUES)
    }

    /// Number of instructions over all chains.
    pub fn num_instructions(&self) -> usize {
        let mut n = 0usize;
        if let Some(chains) = self.list(Plan::VT_CHAINS) {
            for c in 0..chains.len() {
                n += chains
                    .table(c)
                    .and_then(|c| c.vector(fb::Chain::VT_INSTRUCTIONS))
                    .map_or(0, |i| i.len());
            }
        }
        n
    }

    /// Number of operators in the method's operator table.
    pub fn num_operators(&self) -> usize {
        self.len_of(Plan::VT_OPERATORS)
    }

    /// Operator `i` of the method's operator table.
    pub fn operator(&self, i: usize) -> Result<OperatorName<'d>, Error> {
        let op = self
            .list(Plan::VT_OPERATORS)
            .and_then(|o| o.table(i))
            .ok_or(Error::InvalidProgram)?;
        Ok(OperatorName {
            name: op
                .string(fb::Operator::VT_NAME)
                .ok_or(Error::InvalidProgram)?,
            overload: op.string(fb::Operator::VT_OVERLOAD).unwrap_or(""),
        })
    }

    /// Backend ids of the method's delegates.
    pub fn delegates(&self) -> impl Iterator<Item = &'d str> {
        let list = self.list(Plan::VT_DELEGATES);
        (0..list.map_or(0, |l| l.len())).map(move |i| {
            list.and_then(|l| l.table(i))
                .and_then(|d| d.string(fb::BackendDelegate::VT_ID))
                .unwrap_or("")
        })
    }

    /// The plan's table.
    pub(crate) fn table(&self) -> Table<'d> {
        self.plan
    }

    /// Every KernelCall with its operator and runtime kernel key, in instruction order.
    /// Malformed calls yield an error item.
    pub fn kernel_calls(&self) -> impl Iterator<Item = Result<KernelCallInfo<'d>, Error>> + '_ {
        let chains = self.list(Plan::VT_CHAINS).unwrap_or(Vector::EMPTY);
        let instrs = (0..chains.len()).flat_map(move |c| {
            let list = chains
                .table(c)
                .and_then(|c| c.vector(fb::Chain::VT_INSTRUCTIONS))
                .unwrap_or(Vector::EMPTY);
            (0..list.len()).map(move |i| list.table(i))
        });
        instrs.enumerate().filter_map(move |(n, instr)| {
            type I<'x> = fb::Instruction<'x>;
            match instr?.union(I::VT_INSTR_ARGS_TYPE, I::VT_INSTR_ARGS) {
                (tag::KERNEL_CALL, Some(call)) => Some(self.kernel_call_info(n, call)),
                _ => None,
            }
        })
    }

    pub(crate) fn kernel_call_info(
        &self,
        instruction: usize,
        call: Table<'d>,
    ) -> Result<KernelCallInfo<'d>, Error> {
        let op_index = usize::try_from(call.int(fb::KernelCall::VT_OP_INDEX, 4))
            .map_err(|_| Error::InvalidProgram)?;
        let operator = self.operator(op_index)?;
        let args = call
            .vector(fb::KernelCall::VT_ARGS)
            .ok_or(Error::InvalidProgram)?;
        let values = self.list(Plan::VT_VALUES).ok_or(Error::InvalidProgram)?;
        // Validate every tensor the keys may read, so the keys' views never meet a
        // malformed tensor.
        for a in 0..args.len() {
            let (kind, t) = self.value(args.i32(a))?;
            let Some(t) = t else { continue };
            match kind {
                tag::TENSOR => {
                    TensorInfo::read(t)?;
                }
                tag::TENSOR_LIST | tag::OPTIONAL_TENSOR_LIST => {
                    let items = t.vector(fb::IntList::VT_ITEMS).unwrap_or(Vector::EMPTY);
                    for i in 0..items.len() {
                        if let Ok((tag::TENSOR, Some(t))) = self.value(items.i32(i)) {
                            TensorInfo::read(t)?;
                        }
                    }
                }
                _ => {}
            }
        }
        let key = KernelKey {
            values,
            args,
            lists: false,
        };
        let selection_key = KernelKey {
            values,
            args,
            lists: true,
        };
        Ok(KernelCallInfo {
            instruction,
            op_index,
            operator,
            key,
            selection_key,
            num_args: args.len(),
        })
    }

    /// Kernel calls that no registered kernel serves (by name and dtype key).
    pub fn missing_kernels(&self) -> impl Iterator<Item = KernelCallInfo<'d>> + '_ {
        self.kernel_calls()
            .filter_map(|c| c.ok())
            .filter(|c| crate::registry::resolve_kernel(&c.operator, &c.key).is_none())
    }

    /// A lower bound for the method allocator's size: value table, tensor metadata and
    /// instruction table. Useful to size the buffer passed to [`MemoryManager`](crate::MemoryManager).
    pub fn method_allocator_estimate(&self) -> usize {
        crate::method::estimate_method_memory(self)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::string::String;
    use std::vec::Vec;
    use std::{format, vec};

    use super::{Program, Verification};
    use crate::{FileLoader, MemoryManager};

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(path).unwrap()
    }

    fn fixtures() -> Vec<String> {
        let dir = format!("{}/../tests/fixtures", env!("CARGO_MANIFEST_DIR"));
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".pte"))
            .collect();
        names.sort();
        names
    }

    /// Everything the metadata API reports about a program, as text.
    fn describe(program: &Program<'_>) -> String {
        let mut out = String::new();
        for name in program.method_names() {
            out += &format!("method {name}\n");
            let Ok(meta) = program.method_meta(name) else {
                out += "  no meta\n";
                continue;
            };
            out += &format!(
                "  io {} {} planned {} values {} instrs {} ops {} estimate {}\n",
                meta.num_inputs(),
                meta.num_outputs(),
                meta.num_planned_buffers(),
                meta.num_values(),
                meta.num_instructions(),
                meta.num_operators(),
                meta.method_allocator_estimate(),
            );
            for i in 0..meta.num_planned_buffers() {
                out += &format!("  buffer {:?}\n", meta.planned_buffer_size(i));
            }
            for i in 0..meta.num_inputs() {
                out += &format!("  in {:?} {:?}\n", meta.input_tag(i), meta.input_tensor(i));
            }
            for i in 0..meta.num_outputs() {
                out += &format!(
                    "  out {:?} {:?}\n",
                    meta.output_tag(i),
                    meta.output_tensor(i)
                );
            }
            for i in 0..meta.num_operators() {
                out += &format!("  op {:?}\n", meta.operator(i));
            }
            for d in meta.delegates() {
                out += &format!("  delegate {d}\n");
            }
            for c in meta.kernel_calls() {
                match c {
                    Ok(c) => {
                        out += &format!(
                            "  call {} {} {} [{}] [{}] {:?} {:?} {}\n",
                            c.instruction,
                            c.operator,
                            c.num_args,
                            c.key,
                            c.selection_key,
                            c.key.common_dtype(),
                            c.key.dtype_mask(),
                            c.key.len(),
                        )
                    }
                    Err(e) => out += &format!("  bad call {e:?}\n"),
                }
            }
        }
        out
    }

    /// Loads, describes and (when memory allows) loads and runs every method of `bytes`
    /// with `verification`; must never panic. Returns the description when it loads.
    fn exercise(bytes: &[u8], verification: Verification) -> Option<String> {
        let loader = FileLoader::from_bytes(bytes);
        let program = Program::load_with(&loader, verification).ok()?;
        let text = describe(&program);
        let names: Vec<&str> = program.method_names().collect();
        for name in names {
            let Ok(meta) = program.method_meta(name) else {
                continue;
            };
            let sizes: Vec<usize> = (0..meta.num_planned_buffers())
                .map(|i| meta.planned_buffer_size(i).unwrap_or(0))
                .collect();
            let estimate = meta.method_allocator_estimate();
            let total = sizes.iter().fold(0usize, |a, &s| a.saturating_add(s));
            if total > 1 << 22 || estimate > 1 << 22 {
                continue;
            }
            let mut method_mem = vec![0u128; estimate.div_ceil(16)];
            let mut planned_mem: Vec<Vec<u128>> =
                sizes.iter().map(|s| vec![0u128; s.div_ceil(16)]).collect();
            let mut planned: Vec<&mut [u8]> = planned_mem
                .iter_mut()
                .map(|b| bytemuck(b.as_mut_slice()))
                .collect();
            let mut scratch = vec![0u128; 256];
            let mut memory = MemoryManager::new(
                bytemuck(&mut method_mem),
                &mut planned,
                bytemuck(&mut scratch),
            );
            let Ok(mut method) = program.load_method(name, &mut memory) else {
                continue;
            };
            method.set_instruction_limit(1000);
            for i in 0..method.num_inputs() {
                if let Ok(t) = method.input_tensor_mut(i) {
                    let _ = t.bytes_mut().map(|b| b.fill(0));
                }
            }
            let _ = method.execute();
            for i in 0..method.num_outputs() {
                let _ = method.output(i);
            }
        }
        Some(text)
    }

    fn bytemuck(words: &mut [u128]) -> &mut [u8] {
        // SAFETY: any initialized `u128` memory is valid as bytes; the borrow is unique.
        unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), words.len() * 16) }
    }

    /// Both verification levels read well-formed programs identically.
    #[test]
    fn minimal_verification_reads_the_same_metadata() {
        for name in fixtures() {
            let bytes = fixture(&name);
            let full = exercise(&bytes, Verification::InternalConsistency).unwrap();
            let minimal = exercise(&bytes, Verification::Minimal).unwrap();
            assert_eq!(full, minimal, "{name}");
            assert!(full.contains("method "), "{name}");
        }
    }

    /// Without the structural check, damaged programs are still errors, never panics (or
    /// undefined behaviour: the reader checks every access).
    #[test]
    fn minimal_verification_survives_damage() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for name in [
            "add.pte",
            "cond.pte",
            "dynamic_view.pte",
            "noop.pte",
            "mlp_xnnpack.pte",
        ] {
            let original = fixture(name);
            for len in (0..original.len()).step_by(7) {
                exercise(&original[..len], Verification::Minimal);
            }
            for _ in 0..400 {
                let mut bytes = original.clone();
                for _ in 0..(1 + next() % 4) {
                    let at = (next() as usize) % bytes.len();
                    bytes[at] = next() as u8;
                }
                exercise(&bytes, Verification::Minimal);
            }
        }
    }
}
