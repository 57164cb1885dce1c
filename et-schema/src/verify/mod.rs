//! A compact structural check of a `.pte` flatbuffer (and of a `.ptd` one, with the same
//! machinery and its own tables). Once [`verify_program`] accepts a buffer, every accessor
//! of the flatc-generated code reachable from its root `Program` (every field of every
//! table, union members through `*_as_*`, every element of every vector, every string)
//! reads only bytes inside the buffer and only valid UTF-8 as `str`;
//! [`verify_flat_tensor`] gives the same promise for a root `FlatTensor`.
//!
//! Why not the flatbuffers crate's verifier: its generated code is monomorphized per field
//! and costs ~57 KB of text for `program.fbs`. Here the schema is `const` data (two bytes
//! per field) interpreted by one small recursive function, whose depth is bounded by the
//! schema's nesting (the schema is acyclic; see `MAX_DEPTH`), with a compact UTF-8 check
//! instead of `core::str::from_utf8`'s larger one. Measured in `size_test` (release-size
//! profile, x86-64): this check adds ~2.5 KB of text; `flatbuffers::root` adds ~57.7 KB.
//!
//! What is checked, for the root and every table reachable from it:
//! - the root uoffset and every uoffset: 4-aligned, inside the buffer, target computed
//!   without overflow;
//! - each table: 4-aligned; its soffset leads (in `i32` arithmetic, as the accessors
//!   compute it) to a 2-aligned vtable inside the buffer, whose size is even and >= 4,
//!   and whose inline table size is >= 4 and lies inside the buffer;
//! - each present field of the schema: its offset is >= 4, the field lies inside the
//!   table's inline size, and it is aligned to its size (relative to the buffer start);
//! - vectors: the length prefix is 4-aligned, the elements are aligned to their size and
//!   `len * size` bytes (checked arithmetic) lie inside the buffer;
//! - strings: as `[u8]` vectors, followed by a NUL inside the buffer, valid UTF-8 (the
//!   accessors use `from_utf8_unchecked`);
//! - unions: the type tag and the value are both absent, or both present with a tag that
//!   names a member (1..=members); the value is then checked as that member table;
//! - a work budget, so that shared offsets (a DAG) cannot cause exponential time: every
//!   table visit costs `TABLE_COST`, every string its length plus 4; the budget is
//!   `2 * buf.len() + BASE_BUDGET`. A tree-shaped buffer spends at most `buf.len()`, since
//!   each table visit owns 8 distinct bytes (its soffset and the uoffset leading to it)
//!   and each string its own bytes. So the check is O(buf.len()).
//!
//! Fields not in the schema (from a newer writer) are ignored, as in any flatbuffers
//! reader. Scalar values are not interpreted: enums are open newtypes in the generated
//! code and bools are read as `!= 0`, so every bit pattern is a valid value.
//!
//! Relation to `flatbuffers::root::<fb::Program>` (the crate's full verifier), checked by
//! the tests below on fixtures, truncations and random mutations: whatever this check
//! accepts, the crate's verifier accepts too, except for the crate's denial-of-service
//! limits, which differ by design: it rejects more than 1,000,000 table visits, an
//! "apparent size" (bytes checked, counting shared data once per visit, including each
//! visit's vtable) above 2^31, and a depth above 64. Here the budget above replaces them
//! (so a buffer above ~4 MB made of more than a million tiny tables, or one whose tables
//! share a huge vtable, could be accepted here and refused there). In the other direction
//! this check is stricter: fields must lie inside their table's inline size, vtables and
//! tables must have size >= 4, field offsets must be >= 4, union tags must name a member
//! (the crate accepts unknown tags), scalars are aligned to their size (the crate uses the
//! target's `align_of`, which is 4 for `u64` on some 32-bit targets), and tables and
//! vtables must lie below 2 GiB.
//!
//! Alignment is relative to the start of the buffer. The generated accessors read every
//! scalar with an unaligned copy, so memory alignment of the buffer is not needed for
//! soundness; the program loader still requires `et_runtime::PROGRAM_ALIGNMENT` for data
//! that kernels view as typed slices.

use crate::Error;

/// How one vtable slot of a table is stored. Slot `i` of a table is at vtable byte offset
/// `4 + 2 * i`, in the table's declaration order (a union takes two slots: tag, value).
#[derive(Clone, Copy)]
enum F {
    /// An inline scalar of 1, 2, 4 or 8 bytes, aligned to its size.
    Scalar(u8),
    /// An offset to a vector of scalars of 1, 2, 4 or 8 bytes each.
    Vector(u8),
    /// An offset to a NUL-terminated UTF-8 string.
    Str,
    /// An offset to a table.
    Table(T),
    /// An offset to a vector of offsets to tables.
    Tables(T),
    /// A union's `u8` type tag. The schema puts the union's value in the next slot.
    UnionType,
    /// A union's value: an offset to the member table named by the preceding tag.
    Union(U),
}

use F::{Str, Table, Tables, Union, UnionType};

// Shorthands: inline scalars and vectors of scalars by size in bytes.
const S1: F = F::Scalar(1);
const S4: F = F::Scalar(4);
const S8: F = F::Scalar(8);
const V1: F = F::Vector(1);
const V4: F = F::Vector(4);
const V8: F = F::Vector(8);

impl F {
    /// Bytes the field takes inline in its table (also its alignment).
    const fn inline_size(self) -> usize {
        match self {
            F::Scalar(n) => n as usize,
            UnionType => 1,
            F::Vector(_) | Str | Table(_) | Tables(_) | Union(_) => 4,
        }
    }
}

/// Declares the tables (enum `T`, in declaration order) and their fields (`TABLE_FIELDS`,
/// in the same order), so that the two cannot disagree.
macro_rules! tables {
    ($($name:ident: [$($field:expr),* $(,)?],)*) => {
        /// The tables of `program.fbs`, then those of `flat_tensor.fbs` (named `Ft*`).
        #[derive(Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        enum T { $($name,)* }

        /// Each table's fields in vtable-slot order (compile time only; the verifier reads
        /// the flattened `FIELDS`/`FIRST`).
        const TABLE_FIELDS: &[&[F]] = &[$(&[$($field),*],)*];

        #[cfg(test)]
        const TABLE_NAMES: &[&str] = &[$(stringify!($name),)*];
    };
}

// `program.fbs`, field by field (name: type). Keep in declaration order.
tables! {
    // version: uint, execution_plan, constant_buffer, backend_delegate_data, segments,
    // constant_segment, mutable_data_segments, named_data
    Program: [
        S4,
        Tables(T::ExecutionPlan),
        Tables(T::Buffer),
        Tables(T::BackendDelegateInlineData),
        Tables(T::DataSegment),
        Table(T::SubsegmentOffsets),
        Tables(T::SubsegmentOffsets),
        Tables(T::NamedData),
    ],
    // name, container_meta_type, values, inputs: [int], outputs: [int], chains, operators,
    // delegates, non_const_buffer_sizes: [int64], non_const_buffer_device
    ExecutionPlan: [
        Str,
        Table(T::ContainerMetadata),
        Tables(T::EValue),
        V4,
        V4,
        Tables(T::Chain),
        Tables(T::Operator),
        Tables(T::BackendDelegate),
        V8,
        Tables(T::NonConstBufferDevice),
    ],
    // buffer_idx: int, device_type: DeviceType (byte), device_index: byte
    NonConstBufferDevice: [S4, S1, S1],
    // encoded_inp_str, encoded_out_str
    ContainerMetadata: [Str, Str],
    // inputs: [int], outputs: [int], instructions, stacktrace
    Chain: [V4, V4, Tables(T::Instruction), Tables(T::FrameList)],
    // instr_args: InstructionArguments
    Instruction: [UnionType, Union(U::InstructionArguments)],
    // op_index: int, args: [int]
    KernelCall: [S4, V4],
    // delegate_index: int, args: [int]
    DelegateCall: [S4, V4],
    // move_from: int, move_to: int
    MoveCall: [S4, S4],
    // cond_value_index: int, destination_instruction: int
    JumpFalseCall: [S4, S4],
    // value_index: int
    FreeCall: [S4],
    // filename, lineno: int, name, context
    Frame: [Str, S4, Str, Str],
    // items: [Frame]
    FrameList: [Tables(T::Frame)],
    // name, overload
    Operator: [Str, Str],
    // val: KernelTypes
    EValue: [UnionType, Union(U::KernelTypes)],
    Null: [],
    // int_val: long
    Int: [S8],
    // bool_val: bool
    Bool: [S1],
    // double_val: double
    Double: [S8],
    // string_val
    String: [Str],
    // items: [long]
    IntList: [V8],
    // items: [double]
    DoubleList: [V8],
    // items: [bool]
    BoolList: [V1],
    // items: [int]
    TensorList: [V4],
    // items: [int]
    OptionalTensorList: [V4],
    // scalar_type: byte, storage_offset: int, sizes: [int], dim_order: [ubyte],
    // requires_grad: bool, data_buffer_idx: uint, allocation_info, layout: byte,
    // shape_dynamism: byte, extra_tensor_info
    Tensor: [
        S1,
        S4,
        V4,
        V1,
        S1,
        S4,
        Table(T::AllocationDetails),
        S1,
        S1,
        Table(T::ExtraTensorInfo),
    ],
    // memory_id: uint, memory_offset_low: uint, memory_offset_high: uint
    AllocationDetails: [S4, S4, S4],
    // mutable_data_segments_idx: uint64, fully_qualified_name, location: byte,
    // device_type: byte, device_index: byte
    ExtraTensorInfo: [S8, Str, S1, S1, S1],
    // id, processed, compile_specs
    BackendDelegate: [
        Str,
        Table(T::BackendDelegateDataReference),
        Tables(T::CompileSpec),
    ],
    // location: DataLocation (byte), index: uint
    BackendDelegateDataReference: [S1, S4],
    // key, value: [ubyte]
    CompileSpec: [Str, V1],
    // storage: [ubyte]
    Buffer: [V1],
    // data: [ubyte]
    BackendDelegateInlineData: [V1],
    // offset: uint64, size: uint64
    DataSegment: [S8, S8],
    // segment_index: uint, offsets: [uint64]
    SubsegmentOffsets: [S4, V8],
    // key, segment_index: uint32
    NamedData: [Str, S4],

    // flat_tensor.fbs (the .ptd schema), each table prefixed `Ft`:
    // version: uint32, segments, named_data
    FtFlatTensor: [S4, Tables(T::FtDataSegment), Tables(T::FtNamedData)],
    // offset: uint64, size: uint64
    FtDataSegment: [S8, S8],
    // key, segment_index: uint32, tensor_layout
    FtNamedData: [Str, S4, Table(T::FtTensorLayout)],
    // scalar_type: ScalarType (byte), sizes: [int32], dim_order: [uint8]
    FtTensorLayout: [S1, V4, V1],
}

/// The unions of `program.fbs`, indexing `UNION_MEMBERS`.
#[derive(Clone, Copy)]
#[repr(u8)]
enum U {
    KernelTypes,
    InstructionArguments,
}

/// Each union's member tables; tag `k` (1-based, 0 is NONE) names member `k - 1`.
static UNION_MEMBERS: [&[T]; 2] = [
    &[
        T::Null,
        T::Int,
        T::Bool,
        T::Double,
        T::Tensor,
        T::String,
        T::IntList,
        T::DoubleList,
        T::BoolList,
        T::TensorList,
        T::OptionalTensorList,
    ],
    &[
        T::KernelCall,
        T::DelegateCall,
        T::MoveCall,
        T::JumpFalseCall,
        T::FreeCall,
    ],
];

const N_TABLES: usize = TABLE_FIELDS.len();

const N_FIELDS: usize = {
    let mut n = 0;
    let mut t = 0;
    while t < N_TABLES {
        n += TABLE_FIELDS[t].len();
        t += 1;
    }
    n
};

/// All tables' fields, concatenated: table `t`'s are `FIELDS[FIRST[t]..FIRST[t + 1]]`.
/// (Flattened at compile time: a byte per table instead of a slice reference.)
static FIELDS: [F; N_FIELDS] = {
    let mut out = [S1; N_FIELDS];
    let (mut k, mut t) = (0, 0);
    while t < N_TABLES {
        let mut i = 0;
        while i < TABLE_FIELDS[t].len() {
            out[k] = TABLE_FIELDS[t][i];
            k += 1;
            i += 1;
        }
        t += 1;
    }
    out
};

static FIRST: [u8; N_TABLES + 1] = {
    assert!(N_FIELDS <= u8::MAX as usize);
    let mut out = [0u8; N_TABLES + 1];
    let mut t = 0;
    while t < N_TABLES {
        out[t + 1] = out[t] + TABLE_FIELDS[t].len() as u8;
        t += 1;
    }
    out
};

/// Guard on table nesting. The schema is acyclic and nests at most 5 tables deep
/// (Program > ExecutionPlan > EValue > Tensor > ExtraTensorInfo), so this never rejects a
/// well-formed buffer; it only bounds the recursion if the schema description is ever
/// edited into a cycle (a unit test checks the schema's depth against it).
const MAX_DEPTH: u32 = 8;
/// Budget cost of one table visit (the 8 bytes each table owns in a tree-shaped buffer).
const TABLE_COST: usize = 8;
/// Budget cost of a string on top of its length (its length prefix).
const STRING_COST: usize = 4;
/// Budget floor, so that small buffers may still share some data (8192 table visits).
const BASE_BUDGET: usize = 1 << 16;

/// Checks that `buf` holds a flatbuffer whose root is a `Program` that every generated
/// accessor can read safely (see the module documentation for the exact checks).
///
/// `buf` is the flatbuffer region of the file: the whole file works too (segment data
/// after the flatbuffer is never looked at), but passing `file[..program_size]` keeps the
/// check honest about where the flatbuffer ends. It neither checks the `ET12` identifier
/// nor interprets any value (indices, sizes, enums): the loader does that.
pub fn verify_program(buf: &[u8]) -> Result<(), Error> {
    verify_root(buf, T::Program).ok_or(Error::InvalidProgram)
}

/// Checks that `buf` holds a flatbuffer whose root is a `FlatTensor` (flat_tensor.fbs, the
/// `.ptd` schema) that every generated accessor can read safely: the same checks as
/// [`verify_program`], on that schema's tables. `buf` is the file's flatbuffer region
/// (`file[..flatbuffer_offset + flatbuffer_size]`); the `FT01` identifier and the values
/// are left to [`crate::flat_tensor`]. Fails with `InvalidExternalData`.
pub fn verify_flat_tensor(buf: &[u8]) -> Result<(), Error> {
    verify_root(buf, T::FtFlatTensor).ok_or(Error::InvalidExternalData)
}

fn verify_root(buf: &[u8], root: T) -> Option<()> {
    let mut walk = Walk {
        buf,
        budget: buf.len().saturating_mul(2).saturating_add(BASE_BUDGET),
    };
    walk.root(root)
}

/// Whether `s` is well-formed UTF-8, exactly as `core::str::from_utf8` decides (a test
/// compares the two on every sequence of up to 3 bytes and on 4-byte ones), in a fraction
/// of its code size: each sequence is decoded and its code point checked to need that
/// many bytes (no overlong forms), to be at most U+10FFFF and not a surrogate.
pub fn is_utf8(s: &[u8]) -> bool {
    let mut i = 0;
    while let Some(&lead) = s.get(i) {
        i += 1;
        if lead < 0x80 {
            continue;
        }
        // The lead byte's leading ones count the sequence's bytes (one for a stray
        // continuation byte, which `more == 0` refuses).
        let more = lead.leading_ones() as usize - 1;
        let Some(&min) = [0x80, 0x800, 0x1_0000].get(more.wrapping_sub(1)) else {
            return false;
        };
        let mut code = u32::from(lead) & (0x7f >> more);
        for _ in 0..more {
            match s.get(i) {
                Some(&b) if b & 0xc0 == 0x80 => code = code << 6 | u32::from(b & 0x3f),
                _ => return false,
            }
            i += 1;
        }
        if code < min || code > 0x10_ffff || (0xd800..=0xdfff).contains(&code) {
            return false;
        }
    }
    true
}

/// The verifier's state: the buffer and the remaining work budget.
struct Walk<'b> {
    buf: &'b [u8],
    budget: usize,
}

impl Walk<'_> {
    fn root(&mut self, t: T) -> Option<()> {
        let root = self.uoffset(0)?;
        self.table(root, t, 0)
    }

    /// Spends `cost` of the budget, failing when it runs out.
    fn charge(&mut self, cost: usize) -> Option<()> {
        self.budget = self.budget.checked_sub(cost)?;
        Some(())
    }

    /// `len` bytes at `pos` lie inside the buffer, and `pos` is a multiple of `align`
    /// (a power of two).
    fn span(&self, pos: usize, len: usize, align: usize) -> Option<()> {
        let end = pos.checked_add(len)?;
        (end <= self.buf.len() && pos & (align - 1) == 0).then_some(())
    }

    /// The `N` bytes at `pos`, which must be a multiple of `N` (a power of two).
    fn bytes<const N: usize>(&self, pos: usize) -> Option<[u8; N]> {
        if pos & (N - 1) != 0 {
            return None;
        }
        let b = self.buf.get(pos..pos.checked_add(N)?)?;
        <[u8; N]>::try_from(b).ok()
    }

    fn u16_at(&self, pos: usize) -> Option<usize> {
        Some(usize::from(u16::from_le_bytes(self.bytes::<2>(pos)?)))
    }

    fn u32_at(&self, pos: usize) -> Option<usize> {
        usize::try_from(u32::from_le_bytes(self.bytes::<4>(pos)?)).ok()
    }

    /// Follows the uoffset at `pos`. The target is only known not to overflow; whoever
    /// reads it checks its bounds.
    fn uoffset(&self, pos: usize) -> Option<usize> {
        pos.checked_add(self.u32_at(pos)?)
    }

    /// Checks the vector whose length prefix is at `pos`, with elements of `elem` bytes;
    /// returns the position of its first element and its length.
    fn vector(&self, pos: usize, elem: usize) -> Option<(usize, usize)> {
        let len = self.u32_at(pos)?;
        let start = pos.checked_add(4)?;
        self.span(start, len.checked_mul(elem)?, elem)?;
        Some((start, len))
    }

    /// Checks the string whose length prefix is at `pos`.
    fn string(&mut self, pos: usize) -> Option<()> {
        let (start, len) = self.vector(pos, 1)?;
        self.charge(len.checked_add(STRING_COST)?)?;
        let end = start.checked_add(len)?;
        if *self.buf.get(end)? != 0 {
            return None;
        }
        is_utf8(self.buf.get(start..end)?).then_some(())
    }

    /// Checks the table of type `t` at `pos` and, recursively, everything it refers to.
    fn table(&mut self, pos: usize, t: T, depth: u32) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.charge(TABLE_COST)?;
        // The accessors compute the vtable position as `pos as i32 - soffset`: require
        // that to be exact (no truncation, no overflow, not negative).
        let soffset = i32::from_le_bytes(self.bytes::<4>(pos)?);
        let vtable = usize::try_from(i32::try_from(pos).ok()?.checked_sub(soffset)?).ok()?;
        let vtable_size = self.u16_at(vtable)?;
        let table_size = self.u16_at(vtable.checked_add(2)?)?;
        if vtable_size < 4 || vtable_size & 1 != 0 || table_size < 4 {
            return None;
        }
        self.span(vtable, vtable_size, 2)?;
        self.span(pos, table_size, 4)?;

        let first = usize::from(*FIRST.get(t as usize)?);
        let end = usize::from(*FIRST.get(t as usize + 1)?);
        // The union tag seen in the previous slot, if present.
        let mut tag: Option<u8> = None;
        for (i, &field) in FIELDS.get(first..end)?.iter().enumerate() {
            // Slots past the vtable's end are absent. Both are even, so a slot below the
            // size is wholly inside the vtable, which lies inside the buffer.
            let slot = 4 + 2 * i;
            let offset = if slot < vtable_size {
                self.u16_at(vtable + slot)?
            } else {
                0
            };
            if offset == 0 {
                if matches!(field, Union(_)) && tag.is_some() {
                    return None; // a tag without a value
                }
                continue;
            }
            // Inside the table (so inside the buffer; no overflow: the table's span was
            // checked, and offset and size are small), after the soffset, aligned.
            let size = field.inline_size();
            if offset < 4 || offset + size > table_size {
                return None;
            }
            let at = pos + offset;
            if at & (size - 1) != 0 {
                return None;
            }
            // Offsets to tables are followed below, by one call site: a table field or
            // a union value is a run of one offset at `at`, a vector of tables a run of
            // `len` offsets at its first element.
            let (mut element, count, child) = match field {
                F::Scalar(_) => continue,
                UnionType => {
                    tag = Some(*self.buf.get(at)?);
                    continue;
                }
                Str => {
                    let target = self.uoffset(at)?;
                    self.string(target)?;
                    continue;
                }
                F::Vector(elem) => {
                    self.vector(self.uoffset(at)?, usize::from(elem))?;
                    continue;
                }
                Table(child) => (at, 1, child),
                Tables(child) => {
                    let (first, len) = self.vector(self.uoffset(at)?, 4)?;
                    (first, len, child)
                }
                Union(u) => {
                    // A value needs a tag naming a member (NONE = 0 has none).
                    let member = usize::from(tag.take()?.checked_sub(1)?);
                    (at, 1, *UNION_MEMBERS.get(u as usize)?.get(member)?)
                }
            };
            for _ in 0..count {
                self.table(self.uoffset(element)?, child, depth + 1)?;
                // Stays <= the end of the run, which is inside the buffer.
                element += 4;
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests;
