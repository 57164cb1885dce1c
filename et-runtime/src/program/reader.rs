//! A small, non-generic reader of the `.pte` flatbuffer for the load path.
//!
//! The flatc-generated accessors are generic over each field's type, so every field read
//! instantiates its own copy of the vtable lookup; on the paths `Program::load` and
//! `load_method` take, that came to several kilobytes. Here a table is a (buffer,
//! position) pair, and every field read goes through one out-of-line vtable lookup
//! ([`Table::field`]) and one out-of-line little-endian load ([`read`]).
//!
//! Reads are bounds-checked: a position outside the buffer reads as zero (an absent
//! field or an empty vector), so no read can leave the buffer whatever the bytes say.
//! Only the UTF-8 of strings relies on the structural check (`schema::verify_program`),
//! which every buffer handed to [`Table::of`] has passed: see [`Table::string`].
//!
//! Fields are named by the generated code's vtable offsets (`fb::Tensor::VT_SIZES`, ...),
//! so a field read here is the field the generated accessor of that name reads.

use flatbuffers::VOffsetT;

/// The little-endian unsigned integer of `n` (at most 8) bytes at `pos`; 0 when the bytes
/// are not all inside `buf`.
#[inline(never)]
pub(crate) fn read(buf: &[u8], pos: usize, n: usize) -> u64 {
    match pos.checked_add(n).and_then(|end| buf.get(pos..end)) {
        Some(b) => b.iter().rev().fold(0, |v, &x| v << 8 | x as u64),
        None => 0,
    }
}

/// A table of the program's flatbuffer.
#[derive(Clone, Copy)]
pub(crate) struct Table<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// A vector of the program's flatbuffer: `len` elements from byte `start`.
#[derive(Clone, Copy)]
pub(crate) struct Vector<'a> {
    buf: &'a [u8],
    start: usize,
    len: usize,
}

impl<'a> Table<'a> {
    /// The same table as a generated accessor's, whose buffer passed
    /// `schema::checked_root` (the contract [`string`](Self::string) relies on).
    pub(crate) fn of(t: flatbuffers::Table<'a>) -> Table<'a> {
        Table {
            buf: t.buf(),
            pos: t.loc(),
        }
    }

    /// The buffer.
    pub(crate) fn buf(self) -> &'a [u8] {
        self.buf
    }

    /// The table's position in the buffer.
    pub(crate) fn pos(self) -> usize {
        self.pos
    }

    /// The position of the inline value of the field at vtable offset `vt`, or `None`
    /// when the field is absent.
    #[inline(never)]
    fn field(self, vt: VOffsetT) -> Option<usize> {
        // The vtable is at the table's position minus the soffset stored there; its first
        // u16 is its size in bytes.
        let soffset = read(self.buf, self.pos, 4) as u32 as i32;
        let vtable = usize::try_from(self.pos as i64 - soffset as i64).ok()?;
        let vt = usize::from(vt);
        if vt + 2 > read(self.buf, vtable, 2) as usize {
            return None;
        }
        match read(self.buf, vtable.wrapping_add(vt), 2) as usize {
            0 => None,
            off => Some(self.pos.wrapping_add(off)),
        }
    }

    /// Scalar field `vt` of `n` bytes, zero-extended (absent fields read as 0, the
    /// default of every scalar in `program.fbs`).
    pub(crate) fn uint(self, vt: VOffsetT, n: usize) -> u64 {
        self.field(vt).map_or(0, |p| read(self.buf, p, n))
    }

    /// Scalar field `vt` of `n` bytes (1, 2, 4 or 8), sign-extended.
    pub(crate) fn int(self, vt: VOffsetT, n: usize) -> i64 {
        let shift = 64 - 8 * n as u32;
        ((self.uint(vt, n) << shift) as i64) >> shift
    }

    /// Where the uoffset in field `vt` leads.
    fn follow(self, vt: VOffsetT) -> Option<usize> {
        let p = self.field(vt)?;
        Some(p.wrapping_add(read(self.buf, p, 4) as usize))
    }

    /// Table field `vt`.
    pub(crate) fn table(self, vt: VOffsetT) -> Option<Table<'a>> {
        Some(Table {
            buf: self.buf,
            pos: self.follow(vt)?,
        })
    }

    /// Vector field `vt`.
    pub(crate) fn vector(self, vt: VOffsetT) -> Option<Vector<'a>> {
        let p = self.follow(vt)?;
        Some(Vector {
            buf: self.buf,
            start: p.wrapping_add(4),
            len: read(self.buf, p, 4) as usize,
        })
    }

    /// Byte-vector (or string) field `vt` as a slice; `None` when absent (or, which a
    /// verified buffer never has, not inside the buffer).
    pub(crate) fn bytes(self, vt: VOffsetT) -> Option<&'a [u8]> {
        let v = self.vector(vt)?;
        self.buf.get(v.start..v.start.checked_add(v.len)?)
    }

    /// String field `vt`.
    ///
    /// # Safety
    /// `vt` must be the vtable offset of a `string` field of this table's type (a `VT_`
    /// constant of that table in the generated code), and the table must have been
    /// reached from a root given to [`of`](Self::of) by following the schema.
    pub(crate) unsafe fn string(self, vt: VOffsetT) -> Option<&'a str> {
        let b = self.bytes(vt)?;
        // SAFETY: `verify_program` checked that every string field of every table
        // reachable from the root holds valid UTF-8 (at the position the generated
        // accessors compute, which `follow` and `vector` compute the same way), and the
        // caller guarantees this is such a field.
        Some(unsafe { core::str::from_utf8_unchecked(b) })
    }

    /// A union with its type tag in field `tag` and its member in field `member`: the
    /// tag (0 when absent) and the member table.
    pub(crate) fn union(self, tag: VOffsetT, member: VOffsetT) -> (u8, Option<Table<'a>>) {
        (self.uint(tag, 1) as u8, self.table(member))
    }
}

impl<'a> Vector<'a> {
    /// A vector with no elements.
    pub(crate) const EMPTY: Vector<'static> = Vector {
        buf: &[],
        start: 0,
        len: 0,
    };

    /// Number of elements.
    pub(crate) fn len(self) -> usize {
        self.len
    }

    /// Element `i` of a vector of `n`-byte scalars, zero-extended (0 past the end).
    pub(crate) fn uint(self, i: usize, n: usize) -> u64 {
        if i >= self.len {
            return 0;
        }
        read(self.buf, self.start.wrapping_add(i.wrapping_mul(n)), n)
    }

    /// Element `i` of a vector of `i32`s, sign-extended (0 past the end).
    pub(crate) fn i32(self, i: usize) -> i64 {
        self.uint(i, 4) as u32 as i32 as i64
    }

    /// Element `i` of a vector of tables (`None` past the end).
    pub(crate) fn table(self, i: usize) -> Option<Table<'a>> {
        if i >= self.len {
            return None;
        }
        let p = self.start.wrapping_add(i.wrapping_mul(4));
        Some(Table {
            buf: self.buf,
            pos: p.wrapping_add(read(self.buf, p, 4) as usize),
        })
    }
}
