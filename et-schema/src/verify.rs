//! A compact structural check of a `.pte` flatbuffer. Once [`verify_program`] accepts a
//! buffer, every accessor of the flatc-generated code reachable from its root `Program`
//! (every field of every table, union members through `*_as_*`, every element of every
//! vector, every string) reads only bytes inside the buffer and only valid UTF-8 as `str`.
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
        /// The tables of `program.fbs`.
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
    let mut walk = Walk {
        buf,
        budget: buf.len().saturating_mul(2).saturating_add(BASE_BUDGET),
    };
    walk.root().ok_or(Error::InvalidProgram)
}

/// Whether `s` is well-formed UTF-8, exactly as `core::str::from_utf8` decides (a test
/// compares the two on every sequence of up to 3 bytes and on 4-byte ones), in a fraction
/// of its code size: the byte ranges of the Unicode standard's table 3-7 (no overlong
/// forms, no surrogates, nothing above U+10FFFF).
pub fn is_utf8(s: &[u8]) -> bool {
    let mut i = 0;
    while let Some(&lead) = s.get(i) {
        i += 1;
        // The number of continuation bytes and the range allowed for the first one.
        let (more, low, high) = match lead {
            0x00..=0x7f => continue,
            0xc2..=0xdf => (1, 0x80, 0xbf),
            0xe0 => (2, 0xa0, 0xbf),
            0xe1..=0xec | 0xee..=0xef => (2, 0x80, 0xbf),
            0xed => (2, 0x80, 0x9f),
            0xf0 => (3, 0x90, 0xbf),
            0xf1..=0xf3 => (3, 0x80, 0xbf),
            0xf4 => (3, 0x80, 0x8f),
            _ => return false,
        };
        match s.get(i) {
            Some(&b) if (low..=high).contains(&b) => {}
            _ => return false,
        }
        for k in 1..more {
            match s.get(i + k) {
                Some(&b) if b & 0xc0 == 0x80 => {}
                _ => return false,
            }
        }
        i += more;
    }
    true
}

/// The verifier's state: the buffer and the remaining work budget.
struct Walk<'b> {
    buf: &'b [u8],
    budget: usize,
}

impl Walk<'_> {
    fn root(&mut self) -> Option<()> {
        let root = self.uoffset(0)?;
        self.table(root, T::Program, 0)
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
mod tests {
    extern crate std;

    use super::*;
    use crate::generated::{checked_root, fb};
    use core::fmt::Write as _;
    use std::path::{Path, PathBuf};
    use std::time::Instant;
    use std::vec::Vec;
    use std::{fs, vec};

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures");

    // --- schema description ---------------------------------------------------------

    /// The deepest table nesting of the schema description, panicking on a cycle.
    fn depth_of(t: T, seen: &mut Vec<u8>) -> u32 {
        assert!(
            !seen.contains(&(t as u8)),
            "schema description has a cycle through {}",
            TABLE_NAMES[t as usize]
        );
        seen.push(t as u8);
        let mut deepest = 0;
        for &f in TABLE_FIELDS[t as usize] {
            let children = match f {
                Table(c) | Tables(c) => vec![c],
                Union(u) => UNION_MEMBERS[u as usize].to_vec(),
                _ => vec![],
            };
            for c in children {
                deepest = deepest.max(1 + depth_of(c, seen));
            }
        }
        seen.pop();
        deepest
    }

    #[test]
    fn schema_description_is_acyclic_shallow_and_well_formed() {
        let depth = depth_of(T::Program, &mut Vec::new());
        assert_eq!(
            depth, 4,
            "Program > ExecutionPlan > EValue > Tensor > ExtraTensorInfo"
        );
        assert!(depth < MAX_DEPTH);
        for (t, fields) in TABLE_FIELDS.iter().enumerate() {
            // Unions come as tag + value, in adjacent slots.
            for (i, f) in fields.iter().enumerate() {
                let next_is_value = matches!(fields.get(i + 1), Some(Union(_)));
                assert_eq!(matches!(f, UnionType), next_is_value, "{}", TABLE_NAMES[t]);
                if let F::Scalar(n) | F::Vector(n) = f {
                    assert!(matches!(n, 1 | 2 | 4 | 8));
                }
            }
            let flat = &FIELDS[usize::from(FIRST[t])..usize::from(FIRST[t + 1])];
            assert_eq!(flat.len(), fields.len());
        }
        // Every generated table type appears (the generated code has one `*Args` struct
        // per table).
        let generated = include_str!("program_generated.rs");
        let n_generated = generated
            .lines()
            .filter(|l| l.starts_with("pub struct ") && l.contains("Args"))
            .count();
        assert_eq!(
            n_generated, N_TABLES,
            "a table of program.fbs is missing here"
        );
        for name in TABLE_NAMES {
            assert!(
                generated.contains(&std::format!("pub struct {name}<'a>")),
                "{name} is not a generated table"
            );
        }
    }

    /// The vtable slot of every field described here agrees with the generated `VT_*`
    /// constants: for each table, the number of slots equals the number of `VT_` consts.
    #[test]
    fn slot_counts_match_generated_code() {
        let generated = include_str!("program_generated.rs");
        for (t, name) in TABLE_NAMES.iter().enumerate() {
            let start = generated
                .find(&std::format!("impl<'a> {name}<'a> {{"))
                .unwrap();
            let body = &generated[start..];
            let body = &body[..body.find("\n}\n").unwrap()];
            let vts: Vec<u16> = body
                .lines()
                .filter_map(|l| {
                    let l = l.trim();
                    let rest = l.strip_prefix("pub const VT_")?;
                    let v = rest.rsplit('=').next()?.trim().trim_end_matches(';');
                    v.parse().ok()
                })
                .collect();
            let expect: Vec<u16> = (0..TABLE_FIELDS[t].len() as u16)
                .map(|i| 4 + 2 * i)
                .collect();
            assert_eq!(vts, expect, "{name}");
        }
    }

    // --- UTF-8 ------------------------------------------------------------------------

    #[test]
    fn is_utf8_agrees_with_core() {
        let same = |b: &[u8]| assert_eq!(is_utf8(b), core::str::from_utf8(b).is_ok(), "{b:x?}");
        same(&[]);
        // Every sequence of 1, 2 and 3 bytes.
        for x in 0..=0xff_ffffu32 {
            let [a, b, c, _] = x.to_le_bytes();
            same(&[a, b, c]);
            if x <= 0xffff {
                same(&[a, b]);
            }
            if x <= 0xff {
                same(&[a]);
            }
        }
        // 4-byte sequences: every lead byte from 0xf0, continuation bytes at every range
        // boundary; and each case between ASCII, to check positions.
        let edges = [
            0x00, 0x3f, 0x7f, 0x80, 0x81, 0x8f, 0x90, 0x9f, 0xa0, 0xa1, 0xbf, 0xc0, 0xc2, 0xe0,
            0xf0, 0xff,
        ];
        for lead in 0xf0..=0xff {
            for &b in &edges {
                for &c in &edges {
                    for &d in &edges {
                        same(&[lead, b, c, d]);
                        same(&[b'a', lead, b, c, d, b'z']);
                    }
                }
            }
        }
        // Longer mixed text, valid and cut at every byte.
        let text =
            "a\u{7f}\u{80}\u{7ff}\u{800}\u{d7ff}\u{e000}\u{fffd}\u{10000}\u{10ffff}z".as_bytes();
        for end in 0..=text.len() {
            same(&text[..end]);
            same(&text[end..]);
        }
    }

    // --- fixtures ---------------------------------------------------------------------

    fn pte_files() -> Vec<PathBuf> {
        let mut files = Vec::new();
        for dir in [FIXTURES.into(), Path::new(FIXTURES).join("opcases")] {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "pte") {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
    }

    fn read(name: &str) -> Vec<u8> {
        fs::read(Path::new(FIXTURES).join(name)).unwrap()
    }

    /// The flatbuffer part of a `.pte`: up to `program_size` if there is an eh00 header.
    fn program_region(file: &[u8]) -> &[u8] {
        if file.get(8..12) == Some(b"eh00") {
            let size = u64::from_le_bytes(file[16..24].try_into().unwrap());
            &file[..usize::try_from(size).unwrap()]
        } else {
            file
        }
    }

    /// Reads every field of every table reachable from the root through the generated
    /// accessors: the generated `Debug` impls call each field accessor, the `*_as_*`
    /// accessor of the tagged union member, and iterate every vector (strings are
    /// printed, so read entirely). Unlike a hand-written walk, this covers fields added
    /// to the schema later. Returns the length of the text, which is discarded.
    fn walk_everything(buf: &[u8]) -> usize {
        struct Count(usize);
        impl core::fmt::Write for Count {
            fn write_str(&mut self, s: &str) -> core::fmt::Result {
                self.0 += s.len();
                Ok(())
            }
        }
        let program = checked_root(buf).expect("accepted before");
        let mut count = Count(0);
        write!(count, "{program:?}").unwrap();
        // The raw union tables and the accessors Debug does not call.
        for plan in program.execution_plan().iter().flatten() {
            for v in plan.values().iter().flatten() {
                let _ = (
                    v.val(),
                    v.val_as_null(),
                    v.val_as_tensor(),
                    v.val_as_int_list(),
                );
            }
            for c in plan.chains().iter().flatten() {
                for i in c.instructions().iter().flatten() {
                    let _ = (i.instr_args(), i.instr_args_as_kernel_call());
                }
            }
        }
        count.0
    }

    /// Runs both verifiers. Whenever ours accepts, the crate's must accept too (see the
    /// module docs for the intentional differences, none of which these small inputs
    /// reach), and walking the whole tree must not panic.
    fn check(buf: &[u8]) -> bool {
        let ours = verify_program(buf).is_ok();
        if ours {
            if let Err(e) = flatbuffers::root::<fb::Program>(buf) {
                panic!("accepted here, rejected by the flatbuffers crate: {e}");
            }
            walk_everything(buf);
        }
        ours
    }

    #[test]
    fn every_fixture_passes_and_agrees_with_the_crate_verifier() {
        let files = pte_files();
        assert!(files.len() > 100, "fixtures not found under {FIXTURES}");
        for path in &files {
            let file = fs::read(path).unwrap();
            for buf in [&file[..], program_region(&file)] {
                if let Err(e) = verify_program(buf) {
                    panic!("{}: {e}", path.display());
                }
                if let Err(e) = flatbuffers::root::<fb::Program>(buf) {
                    panic!("{}: crate verifier: {e}", path.display());
                }
            }
            if file.len() < 1 << 20 {
                assert!(walk_everything(&file) > 0);
            }
        }
    }

    const SMALL: [&str; 6] = [
        "add.pte",
        "cond.pte",
        "dynamic.pte",
        "custom_ops.pte",
        "mlp_xnnpack.pte",
        "tiny_transformer.pte",
    ];

    #[test]
    fn every_truncation_is_handled() {
        for name in SMALL {
            let file = read(name);
            let region = program_region(&file).len();
            // Every length within the flatbuffer, then a few into the segment data (the
            // flatbuffer is intact there, so those all pass).
            let lengths = (0..=region).chain((region..file.len()).step_by(997));
            let mut accepted = 0;
            for len in lengths {
                if check(&file[..len]) {
                    accepted += 1;
                    assert!(
                        len >= region - 16,
                        "{name}: accepted a cut at {len}/{region}"
                    );
                }
            }
            assert!(accepted > 0, "{name}");
        }
    }

    /// A tiny deterministic PRNG (xorshift64).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Mutates `buf[..region]` in one of several ways aimed at flatbuffer structure.
    fn mutate(rng: &mut Rng, buf: &mut [u8], region: usize) {
        let pos = rng.below(region);
        let word = |rng: &mut Rng| match rng.below(8) {
            0 => 0,
            1 => u32::MAX,
            2 => i32::MAX as u32,
            3 => 0x8000_0000,
            4 => rng.below(64) as u32,
            5 => (rng.below(64) as u32).wrapping_neg(),
            _ => rng.next() as u32,
        };
        match rng.below(6) {
            0 => buf[pos] ^= 1 << rng.below(8),
            1 => buf[pos] = rng.next() as u8,
            2 | 3 => {
                let at = pos & !3;
                if at + 4 <= region {
                    let old = u32::from_le_bytes(buf[at..at + 4].try_into().unwrap());
                    let new = if rng.below(3) == 0 {
                        old.wrapping_add(rng.below(17) as u32).wrapping_sub(8)
                    } else {
                        word(rng)
                    };
                    buf[at..at + 4].copy_from_slice(&new.to_le_bytes());
                }
            }
            4 => {
                let at = pos & !1;
                if at + 2 <= region {
                    let new = match rng.below(5) {
                        0 => 0,
                        1 => 0xffff,
                        2 => rng.below(32) as u16,
                        _ => rng.next() as u16,
                    };
                    buf[at..at + 2].copy_from_slice(&new.to_le_bytes());
                }
            }
            _ => {
                mutate(rng, buf, region);
                mutate(rng, buf, region);
            }
        }
    }

    /// Mutated buffers per fixture: 10,000 take ~0.05 s per fixture in the workspace's
    /// test profile (opt-level 1), ~1.5 s at opt-level 0. Set `ETCH_VERIFY_MUTATIONS` to
    /// fuzz longer (1,000,000 per fixture has been run).
    fn mutations() -> usize {
        std::env::var("ETCH_VERIFY_MUTATIONS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000)
    }

    #[test]
    fn random_mutations_are_handled() {
        let started = Instant::now();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let n = mutations();
        for name in SMALL {
            let file = read(name);
            let region = program_region(&file).len();
            let mut buf = file.clone();
            let (mut accepted, mut rejected) = (0, 0);
            for i in 0..n {
                // Up to four mutations pile up before the buffer is restored.
                if i % 4 == 0 {
                    buf.copy_from_slice(&file);
                }
                mutate(&mut rng, &mut buf, region);
                if check(&buf) {
                    accepted += 1;
                } else {
                    rejected += 1;
                }
            }
            // Both outcomes must actually be exercised.
            assert!(
                accepted > 100 && rejected > 100,
                "{name}: {accepted}/{rejected}"
            );
        }
        std::eprintln!("mutations: {:?}", started.elapsed());
    }

    // --- hand-made hostile buffers ------------------------------------------------------

    /// A small valid program built with the flatbuffers builder, and where its parts are.
    struct Built {
        buf: Vec<u8>,
        root: usize,
        /// Length prefix of `execution_plan[0].values`.
        values: usize,
        /// The EValue `values[0]` (an Int) and `values[1]` (a Tensor).
        evalue: usize,
        /// First byte of the plan name.
        name: usize,
        name_len: usize,
    }

    fn vector_pos<T>(buf: &[u8], v: flatbuffers::Vector<'_, T>) -> usize {
        v.bytes().as_ptr() as usize - buf.as_ptr() as usize - 4
    }

    fn build() -> Built {
        use flatbuffers::FlatBufferBuilder;
        let mut b = FlatBufferBuilder::new();
        let sizes = b.create_vector(&[2i32, 3]);
        let dim_order = b.create_vector(&[0u8, 1]);
        let fqn = b.create_string("w");
        let extra = fb::ExtraTensorInfo::create(
            &mut b,
            &fb::ExtraTensorInfoArgs {
                fully_qualified_name: Some(fqn),
                ..Default::default()
            },
        );
        let tensor = fb::Tensor::create(
            &mut b,
            &fb::TensorArgs {
                scalar_type: fb::ScalarType::FLOAT,
                sizes: Some(sizes),
                dim_order: Some(dim_order),
                extra_tensor_info: Some(extra),
                ..Default::default()
            },
        );
        let int = fb::Int::create(&mut b, &fb::IntArgs { int_val: 7 });
        let values = [
            fb::EValue::create(
                &mut b,
                &fb::EValueArgs {
                    val_type: fb::KernelTypes::Int,
                    val: Some(int.as_union_value()),
                },
            ),
            fb::EValue::create(
                &mut b,
                &fb::EValueArgs {
                    val_type: fb::KernelTypes::Tensor,
                    val: Some(tensor.as_union_value()),
                },
            ),
        ];
        let values = b.create_vector(&values);
        let args = b.create_vector(&[0i32, 1]);
        let call = fb::KernelCall::create(
            &mut b,
            &fb::KernelCallArgs {
                op_index: 0,
                args: Some(args),
            },
        );
        let instr = fb::Instruction::create(
            &mut b,
            &fb::InstructionArgs {
                instr_args_type: fb::InstructionArguments::KernelCall,
                instr_args: Some(call.as_union_value()),
            },
        );
        let instrs = b.create_vector(&[instr]);
        let chain = fb::Chain::create(
            &mut b,
            &fb::ChainArgs {
                instructions: Some(instrs),
                ..Default::default()
            },
        );
        let chains = b.create_vector(&[chain]);
        let name = b.create_string("forward");
        let plan = fb::ExecutionPlan::create(
            &mut b,
            &fb::ExecutionPlanArgs {
                name: Some(name),
                values: Some(values),
                chains: Some(chains),
                ..Default::default()
            },
        );
        let plans = b.create_vector(&[plan]);
        let program = fb::Program::create(
            &mut b,
            &fb::ProgramArgs {
                version: 0,
                execution_plan: Some(plans),
                ..Default::default()
            },
        );
        fb::finish_program_buffer(&mut b, program);
        let buf = b.finished_data().to_vec();

        let p = checked_root(&buf).unwrap();
        let plan = p.execution_plan().unwrap().get(0);
        let values = plan.values().unwrap();
        let name = plan.name().unwrap();
        Built {
            root: p._tab.loc(),
            values: vector_pos(&buf, values),
            evalue: values.get(0)._tab.loc(),
            name: name.as_ptr() as usize - buf.as_ptr() as usize,
            name_len: name.len(),
            buf: buf.clone(),
        }
    }

    fn put_u32(buf: &mut [u8], at: usize, v: u32) {
        buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    fn put_u16(buf: &mut [u8], at: usize, v: u16) {
        buf[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }
    fn get_u16(buf: &[u8], at: usize) -> u16 {
        u16::from_le_bytes([buf[at], buf[at + 1]])
    }
    fn vtable_of(buf: &[u8], table: usize) -> usize {
        let soffset = i32::from_le_bytes(buf[table..table + 4].try_into().unwrap());
        (table as i64 - i64::from(soffset)) as usize
    }

    /// Applies `corrupt` to a fresh copy of the valid program and expects a rejection
    /// (and no panic from either verifier).
    fn rejects(what: &str, corrupt: impl FnOnce(&Built, &mut Vec<u8>)) {
        let built = build();
        let mut buf = built.buf.clone();
        corrupt(&built, &mut buf);
        assert_eq!(
            verify_program(&buf),
            Err(Error::InvalidProgram),
            "accepted: {what}"
        );
        let _ = flatbuffers::root::<fb::Program>(&buf);
    }

    #[test]
    fn hostile_buffers_are_rejected() {
        let built = build();
        assert!(check(&built.buf));

        // Root offset out of range, misaligned, or pointing at itself.
        rejects("root offset past the end", |_, b| {
            let n = b.len() as u32;
            put_u32(b, 0, n)
        });
        rejects("root offset u32::MAX", |_, b| put_u32(b, 0, u32::MAX));
        rejects("misaligned root", |bt, b| put_u32(b, 0, bt.root as u32 + 2));
        rejects("root at 0 (self)", |_, b| put_u32(b, 0, 0));
        rejects("empty buffer", |_, b| b.clear());

        // The root table's vtable offset out of range in both directions.
        for soffset in [i32::MIN, i32::MAX, -(1 << 20), 1 << 20, 2] {
            rejects("vtable offset out of range", |bt, b| {
                put_u32(b, bt.root, soffset as u32)
            });
        }
        // Vtable and table sizes.
        for (what, slot, value) in [
            ("odd vtable size", 0, 9),
            ("vtable size below 4", 0, 2),
            ("vtable past the end", 0, 0xfffe),
            ("table size below 4", 2, 0),
            ("table past the end", 2, 0xffff),
        ] {
            rejects(what, |bt, b| {
                let vt = vtable_of(b, bt.root);
                put_u16(b, vt + slot, value)
            });
        }
        // A field outside the table's inline size, and one overlapping the soffset.
        rejects("field beyond the table size", |bt, b| {
            let vt = vtable_of(b, bt.root);
            let size = get_u16(b, vt + 2);
            put_u16(b, vt + 6, size)
        });
        rejects("field over the soffset", |bt, b| {
            let vt = vtable_of(b, bt.evalue);
            put_u16(b, vt + 4, 1) // the u8 union tag, at table offset 1
        });

        // Huge vector lengths (the product overflows u32; on 32-bit targets usize too).
        for len in [
            u32::MAX,
            0x4000_0000,
            0x4000_0001,
            (built.buf.len() / 4) as u32,
        ] {
            rejects("vector length huge", |bt, b| put_u32(b, bt.values, len));
        }
        // A vector element offset of 0: the "table" is the offset itself.
        rejects("self-referencing element", |bt, b| {
            put_u32(b, bt.values + 4, 0)
        });

        // Strings: no NUL terminator, invalid UTF-8, running off the end.
        rejects("string without NUL", |bt, b| {
            b[bt.name + bt.name_len] = b'x'
        });
        rejects("invalid UTF-8", |bt, b| b[bt.name] = 0xff);
        rejects("string length past the end", |bt, b| {
            put_u32(b, bt.name - 4, u32::MAX - 3)
        });
        let cut = built.name + built.name_len;
        rejects("string cut before its NUL", |_, b| b.truncate(cut));

        // Unions: tags out of range, NONE with a value, tag or value missing.
        for tag in [0u8, 12, 200, 255] {
            rejects("bad union tag", |bt, b| {
                let vt = vtable_of(b, bt.evalue);
                let at = bt.evalue + usize::from(get_u16(b, vt + 4));
                b[at] = tag
            });
        }
        rejects("union value without tag", |bt, b| {
            let vt = vtable_of(b, bt.evalue);
            put_u16(b, vt + 4, 0)
        });
        rejects("union tag without value", |bt, b| {
            let vt = vtable_of(b, bt.evalue);
            put_u16(b, vt + 6, 0)
        });
        // A tag naming another member: the value is then checked as that member's table.
        // Whatever the outcome, both verifiers must agree and nothing may panic.
        let mut as_tensor = built.buf.clone();
        let vt = vtable_of(&as_tensor, built.evalue);
        let at = built.evalue + usize::from(get_u16(&as_tensor, vt + 4));
        as_tensor[at] = 5; // Int table read as a Tensor
        check(&as_tensor);
    }

    /// Builds a program whose offsets are shared at every level: `fan` plans that are
    /// all the same plan, with `fan` chains that are the same chain, and so on down to
    /// one Frame. Its tree has `fan^4` frames in a buffer of O(fan) bytes.
    fn shared_dag(fan: usize) -> Vec<u8> {
        let mut b = flatbuffers::FlatBufferBuilder::new();
        let s = b.create_string("f");
        let frame = fb::Frame::create(
            &mut b,
            &fb::FrameArgs {
                filename: Some(s),
                name: Some(s),
                context: Some(s),
                lineno: 1,
            },
        );
        let frames = b.create_vector(&vec![frame; fan]);
        let list = fb::FrameList::create(
            &mut b,
            &fb::FrameListArgs {
                items: Some(frames),
            },
        );
        let lists = b.create_vector(&vec![list; fan]);
        let chain = fb::Chain::create(
            &mut b,
            &fb::ChainArgs {
                stacktrace: Some(lists),
                ..Default::default()
            },
        );
        let chains = b.create_vector(&vec![chain; fan]);
        let plan = fb::ExecutionPlan::create(
            &mut b,
            &fb::ExecutionPlanArgs {
                chains: Some(chains),
                ..Default::default()
            },
        );
        let plans = b.create_vector(&vec![plan; fan]);
        let program = fb::Program::create(
            &mut b,
            &fb::ProgramArgs {
                execution_plan: Some(plans),
                ..Default::default()
            },
        );
        fb::finish_program_buffer(&mut b, program);
        b.finished_data().to_vec()
    }

    #[test]
    fn shared_offsets_are_bounded_by_the_budget() {
        // Modest sharing is legal flatbuffers and passes.
        let small = shared_dag(4);
        assert!(check(&small));
        // 1000^4 = 10^12 frames reachable from a ~16 KB buffer: rejected, quickly.
        let big = shared_dag(1000);
        assert!(big.len() < 20_000);
        let started = Instant::now();
        assert_eq!(verify_program(&big), Err(Error::InvalidProgram));
        assert!(started.elapsed().as_secs() < 2, "{:?}", started.elapsed());
    }

    #[test]
    fn checked_root_reads_a_fixture() {
        let file = read("add.pte");
        let program = checked_root(&file).unwrap();
        let plan = program.execution_plan().unwrap().get(0);
        assert_eq!(plan.name(), Some("forward"));
        assert!(checked_root(&file[..file.len() / 2]).is_err());
    }
}
