//! `Program`: a loaded `.pte` file — header, segments, constants and method metadata.

use core::fmt;

use crate::error::Error;
use crate::kernel::op_hash_parts;
use crate::loader::{DataLoader, PROGRAM_ALIGNMENT};
use crate::scalar_type::ScalarType;
use crate::schema::fb;
use crate::tensor::{ShapeDynamism, MAX_DIM};
use crate::value::Tag;

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
    root: fb::Program<'d>,
    header: Option<ExtendedHeader>,
    constants: &'d [u8],
    constant_offsets: Option<flatbuffers::Vector<'d, u64>>,
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

impl<'d> Program<'d> {
    /// Loads and checks a program: header, identifier, the flatbuffer's structure,
    /// version, and the constant segment. Every later access relies on these checks.
    pub fn load<L: DataLoader + Sync>(loader: &'d L) -> Result<Program<'d>, ProgramError> {
        let fail = |error, reason| ProgramError { error, reason };
        let size = loader.size();
        let head = loader
            .load(0, size.min(HEADER_PROBE))
            .map_err(|e| fail(e, "cannot read the file header"))?;
        if head.len() < 8 {
            return Err(fail(
                Error::InvalidProgram,
                "file is too short to be a program",
            ));
        }
        if &head[4..8] != FILE_IDENTIFIER {
            return Err(if &head[4..6] == b"ET" {
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
        let root = crate::schema::checked_root(data).map_err(|e| {
            fail(
                e,
                "the program's flatbuffer is malformed (truncated or corrupted)",
            )
        })?;
        if root.version() > MAX_SUPPORTED_VERSION {
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
        let Some(cs) = self.root.constant_segment() else {
            return Ok(());
        };
        let Some(offsets) = cs.offsets() else {
            return Ok(());
        };
        if offsets.len() <= 1 {
            // Only the reserved placeholder entry: the program has no constants.
            self.constant_offsets = Some(offsets);
            return Ok(());
        }
        if self.root.constant_buffer().is_some_and(|b| !b.is_empty()) {
            return Err(Error::InvalidProgram);
        }
        self.constants = self.segment(cs.segment_index() as usize)?;
        self.constant_offsets = Some(offsets);
        Ok(())
    }

    /// The bytes of segment `index`.
    pub(crate) fn segment(&self, index: usize) -> Result<&'d [u8], Error> {
        let header = self.header.ok_or(Error::NotFound)?;
        if header.segment_base_offset == 0 {
            return Err(Error::NotFound);
        }
        let segments = self.root.segments().ok_or(Error::NotFound)?;
        if index >= segments.len() {
            return Err(Error::NotFound);
        }
        let seg = segments.get(index);
        let start = header
            .segment_base_offset
            .checked_add(seg.offset())
            .ok_or(Error::InvalidProgram)?;
        let start = usize::try_from(start).map_err(|_| Error::InvalidProgram)?;
        let len = usize::try_from(seg.size()).map_err(|_| Error::InvalidProgram)?;
        self.loader.load(start, len)
    }

    /// `nbytes` of constant `index` (an index into the constant segment's offsets).
    pub(crate) fn constant_data(&self, index: u32, nbytes: usize) -> Result<&'d [u8], Error> {
        let index = index as usize;
        if let Some(offsets) = self.constant_offsets {
            if index >= offsets.len() {
                return Err(Error::InvalidProgram);
            }
            let start = usize::try_from(offsets.get(index)).map_err(|_| Error::InvalidProgram)?;
            let end = start.checked_add(nbytes).ok_or(Error::InvalidProgram)?;
            return self.constants.get(start..end).ok_or(Error::InvalidProgram);
        }
        // The deprecated inline constant buffers.
        let buffers = self.root.constant_buffer().ok_or(Error::InvalidProgram)?;
        if index >= buffers.len() {
            return Err(Error::InvalidProgram);
        }
        let storage = buffers.get(index).storage().ok_or(Error::InvalidProgram)?;
        storage.bytes().get(..nbytes).ok_or(Error::InvalidProgram)
    }

    /// The initial bytes of a mutable buffer (`mutable_data_segments[0]`).
    pub(crate) fn mutable_data(&self, index: u32, nbytes: usize) -> Result<&'d [u8], Error> {
        let segs = self
            .root
            .mutable_data_segments()
            .ok_or(Error::InvalidProgram)?;
        if segs.is_empty() {
            return Err(Error::InvalidProgram);
        }
        let sub = segs.get(0);
        let offsets = sub.offsets().ok_or(Error::InvalidProgram)?;
        if index as usize >= offsets.len() {
            return Err(Error::InvalidProgram);
        }
        let data = self.segment(sub.segment_index() as usize)?;
        let start =
            usize::try_from(offsets.get(index as usize)).map_err(|_| Error::InvalidProgram)?;
        let end = start.checked_add(nbytes).ok_or(Error::InvalidProgram)?;
        data.get(start..end).ok_or(Error::InvalidProgram)
    }

    /// A delegate's payload.
    pub(crate) fn delegate_payload(
        &self,
        r: fb::BackendDelegateDataReference<'d>,
    ) -> Result<&'d [u8], Error> {
        let index = r.index() as usize;
        match r.location() {
            fb::DataLocation::INLINE => {
                let inline = self
                    .root
                    .backend_delegate_data()
                    .ok_or(Error::InvalidProgram)?;
                if index >= inline.len() {
                    return Err(Error::InvalidProgram);
                }
                Ok(inline.get(index).data().map(|d| d.bytes()).unwrap_or(&[]))
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
        self.root.version()
    }

    /// Number of methods.
    pub fn num_methods(&self) -> usize {
        self.root.execution_plan().map_or(0, |p| p.len())
    }

    /// The name of method `index`.
    pub fn method_name(&self, index: usize) -> Result<&'d str, Error> {
        let plans = self.root.execution_plan().ok_or(Error::InvalidProgram)?;
        if index >= plans.len() {
            return Err(Error::InvalidArgument);
        }
        plans.get(index).name().ok_or(Error::InvalidProgram)
    }

    /// The method names, in file order.
    pub fn method_names(&self) -> impl Iterator<Item = &'d str> + '_ {
        (0..self.num_methods()).filter_map(|i| self.method_name(i).ok())
    }

    pub(crate) fn plan(&self, name: &str) -> Result<fb::ExecutionPlan<'d>, Error> {
        let plans = self.root.execution_plan().ok_or(Error::InvalidProgram)?;
        plans
            .iter()
            .find(|p| p.name() == Some(name))
            .ok_or(Error::InvalidArgument)
    }

    /// Metadata of method `name`: inputs, outputs, planned memory, operators.
    pub fn method_meta(&self, name: &str) -> Result<MethodMeta<'d>, Error> {
        let plan = self.plan(name)?;
        let name = plan.name().ok_or(Error::InvalidProgram)?;
        if plan.non_const_buffer_sizes().is_none()
            || plan.inputs().is_none()
            || plan.outputs().is_none()
        {
            return Err(Error::InvalidProgram);
        }
        Ok(MethodMeta { plan, name })
    }
}

// SAFETY: a `Program` only reads immutable bytes borrowed from a `Sync` loader; the
// flatbuffer views it holds are plain (pointer, length) pairs into those bytes.
unsafe impl Sync for Program<'_> {}
// SAFETY: as above; nothing in a `Program` is tied to the thread that loaded it.
unsafe impl Send for Program<'_> {}

/// Metadata of one method, read from the program without loading it.
#[derive(Clone, Copy)]
pub struct MethodMeta<'d> {
    plan: fb::ExecutionPlan<'d>,
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

    pub(crate) fn from_fb(t: &fb::Tensor<'_>) -> Result<TensorInfo, Error> {
        let dtype = ScalarType::from_i8(t.scalar_type().0).ok_or(Error::InvalidProgram)?;
        let sizes = t.sizes().ok_or(Error::InvalidProgram)?;
        let order = t.dim_order().ok_or(Error::InvalidProgram)?;
        let rank = sizes.len();
        if rank > MAX_DIM || order.len() != rank {
            return Err(Error::InvalidProgram);
        }
        let mut info = TensorInfo {
            dtype,
            rank: rank as u8,
            sizes: [0; MAX_DIM],
            dim_order: [0; MAX_DIM],
            dynamism: match t.shape_dynamism().0 {
                0 => ShapeDynamism::Static,
                1 => ShapeDynamism::Bound,
                2 => ShapeDynamism::Unbound,
                _ => return Err(Error::InvalidProgram),
            },
        };
        let mut seen = 0u32;
        for i in 0..rank {
            let s = sizes.get(i);
            info.sizes[i] = usize::try_from(s).map_err(|_| Error::InvalidProgram)?;
            let d = order.get(i);
            if d as usize >= rank || seen & (1 << d) != 0 {
                return Err(Error::InvalidProgram);
            }
            seen |= 1 << d;
            info.dim_order[i] = d;
        }
        crate::tensor::checked_numel(info.sizes())
            .and_then(|n| n.checked_mul(dtype.element_size()))
            .ok_or(Error::InvalidProgram)?;
        Ok(info)
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
    values: flatbuffers::Vector<'d, flatbuffers::ForwardsUOffset<fb::EValue<'d>>>,
    args: flatbuffers::Vector<'d, i32>,
    /// Count a tensor list by its first tensor, as `gen_oplist` does.
    lists: bool,
}

impl<'d> KernelKey<'d> {
    fn value(&self, index: i32) -> Option<fb::EValue<'d>> {
        let i = usize::try_from(index).ok()?;
        (i < self.values.len()).then(|| self.values.get(i))
    }

    /// The tensors the key is made of, in argument order.
    fn tensors(&self) -> impl Iterator<Item = fb::Tensor<'d>> + '_ {
        self.args.iter().filter_map(move |a| {
            let v = self.value(a)?;
            if let Some(t) = v.val_as_tensor() {
                return Some(t);
            }
            if !self.lists {
                return None;
            }
            let items = match v.val_type() {
                fb::KernelTypes::TensorList => v.val_as_tensor_list()?.items(),
                fb::KernelTypes::OptionalTensorList => v.val_as_optional_tensor_list()?.items(),
                _ => None,
            }?;
            items
                .iter()
                .filter_map(|i| self.value(i))
                .find_map(|e| e.val_as_tensor())
        })
    }

    /// The dtypes of the key's tensors, in order.
    pub fn dtypes(&self) -> impl Iterator<Item = ScalarType> + '_ {
        self.tensors()
            .filter_map(|t| ScalarType::from_i8(t.scalar_type().0))
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

impl fmt::Display for KernelKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.tensors().enumerate() {
            f.write_str(if i == 0 { "v1/" } else { "|" })?;
            write!(f, "{};", t.scalar_type().0)?;
            for (k, d) in t.dim_order().into_iter().flat_map(|o| o.iter()).enumerate() {
                if k > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{d}")?;
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
    /// like `key`, but a tensor list contributes its first (non-null) element.
    pub selection_key: KernelKey<'d>,
    /// Number of argument values (schema arguments plus the return slot).
    pub num_args: usize,
}

impl<'d> MethodMeta<'d> {
    /// The method's name.
    pub fn name(&self) -> &'d str {
        self.name
    }

    /// Number of inputs.
    pub fn num_inputs(&self) -> usize {
        self.plan.inputs().map_or(0, |v| v.len())
    }

    /// Number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.plan.outputs().map_or(0, |v| v.len())
    }

    fn value_tag(&self, index: i32) -> Result<Tag, Error> {
        let ev = self.value(index)?;
        Ok(match ev.val_type() {
            fb::KernelTypes::Null => Tag::None,
            fb::KernelTypes::Int => Tag::Int,
            fb::KernelTypes::Bool => Tag::Bool,
            fb::KernelTypes::Double => Tag::Double,
            fb::KernelTypes::Tensor => Tag::Tensor,
            fb::KernelTypes::String => Tag::String,
            fb::KernelTypes::IntList => Tag::ListInt,
            fb::KernelTypes::DoubleList => Tag::ListDouble,
            fb::KernelTypes::BoolList => Tag::ListBool,
            fb::KernelTypes::TensorList => Tag::ListTensor,
            fb::KernelTypes::OptionalTensorList => Tag::ListOptionalTensor,
            _ => return Err(Error::InvalidProgram),
        })
    }

    fn value(&self, index: i32) -> Result<fb::EValue<'d>, Error> {
        let values = self.plan.values().ok_or(Error::InvalidProgram)?;
        let i = usize::try_from(index).map_err(|_| Error::InvalidProgram)?;
        if i >= values.len() {
            return Err(Error::InvalidProgram);
        }
        Ok(values.get(i))
    }

    fn io_index(&self, list: Option<flatbuffers::Vector<'d, i32>>, i: usize) -> Result<i32, Error> {
        let list = list.ok_or(Error::InvalidProgram)?;
        if i >= list.len() {
            return Err(Error::InvalidArgument);
        }
        Ok(list.get(i))
    }

    /// The kind of input `i`.
    pub fn input_tag(&self, i: usize) -> Result<Tag, Error> {
        self.value_tag(self.io_index(self.plan.inputs(), i)?)
    }

    /// The kind of output `i`.
    pub fn output_tag(&self, i: usize) -> Result<Tag, Error> {
        self.value_tag(self.io_index(self.plan.outputs(), i)?)
    }

    /// Shape and dtype of tensor input `i` (`InvalidArgument` if it is not a tensor).
    pub fn input_tensor(&self, i: usize) -> Result<TensorInfo, Error> {
        self.tensor_info(self.io_index(self.plan.inputs(), i)?)
    }

    /// Shape and dtype of tensor output `i`.
    pub fn output_tensor(&self, i: usize) -> Result<TensorInfo, Error> {
        self.tensor_info(self.io_index(self.plan.outputs(), i)?)
    }

    fn tensor_info(&self, index: i32) -> Result<TensorInfo, Error> {
        let t = self
            .value(index)?
            .val_as_tensor()
            .ok_or(Error::InvalidArgument)?;
        TensorInfo::from_fb(&t)
    }

    /// Number of memory-planned buffers the caller must provide.
    pub fn num_planned_buffers(&self) -> usize {
        self.plan
            .non_const_buffer_sizes()
            .map_or(0, |v| v.len().saturating_sub(1))
    }

    /// Size in bytes of planned buffer `i`.
    pub fn planned_buffer_size(&self, i: usize) -> Result<usize, Error> {
        let sizes = self
            .plan
            .non_const_buffer_sizes()
            .ok_or(Error::InvalidProgram)?;
        if i + 1 >= sizes.len() {
            return Err(Error::InvalidArgument);
        }
        usize::try_from(sizes.get(i + 1)).map_err(|_| Error::InvalidProgram)
    }

    /// Number of values in the method's value table.
    pub fn num_values(&self) -> usize {
        self.plan.values().map_or(0, |v| v.len())
    }

    /// Number of instructions over all chains.
    pub fn num_instructions(&self) -> usize {
        self.plan.chains().map_or(0, |c| {
            c.iter()
                .map(|ch| ch.instructions().map_or(0, |i| i.len()))
                .sum()
        })
    }

    /// Number of operators in the method's operator table.
    pub fn num_operators(&self) -> usize {
        self.plan.operators().map_or(0, |o| o.len())
    }

    /// Operator `i` of the method's operator table.
    pub fn operator(&self, i: usize) -> Result<OperatorName<'d>, Error> {
        let ops = self.plan.operators().ok_or(Error::InvalidProgram)?;
        if i >= ops.len() {
            return Err(Error::InvalidProgram);
        }
        let op = ops.get(i);
        Ok(OperatorName {
            name: op.name().ok_or(Error::InvalidProgram)?,
            overload: op.overload().unwrap_or(""),
        })
    }

    /// Backend ids of the method's delegates.
    pub fn delegates(&self) -> impl Iterator<Item = &'d str> {
        self.plan
            .delegates()
            .into_iter()
            .flat_map(|d| d.iter())
            .map(|d| d.id().unwrap_or(""))
    }

    /// Every KernelCall with its operator and runtime kernel key, in instruction order.
    /// Malformed calls yield an error item.
    pub fn kernel_calls(&self) -> impl Iterator<Item = Result<KernelCallInfo<'d>, Error>> + '_ {
        let chains = self.plan.chains();
        let instrs = chains
            .into_iter()
            .flat_map(|c| c.iter())
            .flat_map(|ch| ch.instructions().into_iter().flat_map(|i| i.iter()));
        instrs.enumerate().filter_map(move |(n, instr)| {
            let call = instr.instr_args_as_kernel_call()?;
            Some(self.kernel_call_info(n, call))
        })
    }

    pub(crate) fn kernel_call_info(
        &self,
        instruction: usize,
        call: fb::KernelCall<'d>,
    ) -> Result<KernelCallInfo<'d>, Error> {
        let op_index = usize::try_from(call.op_index()).map_err(|_| Error::InvalidProgram)?;
        let operator = self.operator(op_index)?;
        let args = call.args().ok_or(Error::InvalidProgram)?;
        let values = self.plan.values().ok_or(Error::InvalidProgram)?;
        // Validate every tensor the keys may read, so the keys' views never meet a
        // malformed tensor.
        for a in args.iter() {
            let v = self.value(a)?;
            if let Some(t) = v.val_as_tensor() {
                TensorInfo::from_fb(&t)?;
            }
            let items = v
                .val_as_tensor_list()
                .and_then(|l| l.items())
                .or_else(|| v.val_as_optional_tensor_list().and_then(|l| l.items()));
            for i in items.into_iter().flat_map(|i| i.iter()) {
                if let Some(t) = self.value(i).ok().and_then(|e| e.val_as_tensor()) {
                    TensorInfo::from_fb(&t)?;
                }
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

    pub(crate) fn plan(&self) -> fb::ExecutionPlan<'d> {
        self.plan
    }
}
