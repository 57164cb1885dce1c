//! A small, non-generic reader of the `.pte` flatbuffer for the load path.
//!
//! The flatc-generated accessors are generic over each field's type, so every field read
//! instantiates its own copy of the vtable lookup; on the paths `Program::load` and
//! `load_method` take, that came to several kilobytes. Here a table or vector is a
//! two-register handle (the buffer's start, and its length and the position packed as two
//! `u32`s: flatbuffers are below 2 GiB), and every field read goes through one vtable
//! lookup and one bounds-checked little-endian load, both non-generic.
//!
//! `#[inline]` is a trade here. An inline function is compiled into every crate that
//! calls it (et-schema's metadata and et-runtime's loader), and LTO keeps both copies;
//! without it, the release profile (thin LTO, four codegen units) stops inlining the small
//! accessors into `load_method`. So the accessors, the vtable lookup (`Table::fields`) and
//! the checked load (`Table::read`) are `#[inline]`, and only `Table::field`, the lookup
//! of a single field, stays out of line. Measured on `many_adds.pte`'s `load_method`
//! (callgrind, per load): `fields` inline took 7% of the instructions off and made
//! `size_test` smaller; `read` inline another 4% (2-3% of the time) for a little more code.
//! Built for size (`opt-level` "s" or "z", which the build script turns into the cfg
//! `etch_size_first`), nothing here is `#[inline]`: fat LTO inlines what pays anyway, and
//! each accessor is compiled once instead of once per calling crate.
//! Vectors the loader walks element by element are read as one checked slice
//! (`Vector::element_bytes`): one bounds check per vector, not two calls per element.
//!
//! Reads are bounds-checked: a position outside the buffer reads as zero (an absent
//! field), strings are checked to be UTF-8 when read, and a vector longer than the bytes
//! after it reads as absent (so every loop over a vector is bounded by the buffer's
//! size). So the reader is safe on any bytes, whether or not the buffer passed the
//! structural check ([`verify_program`](crate::verify_program), [`Verification`](crate::header::Verification)).
//!
//! Fields are named by the generated code's vtable offsets (`fields::Tensor::VT_SIZES`, ...),
//! so a field read here is the field the generated accessor of that name reads.

use core::marker::PhantomData;
use core::ptr::NonNull;

/// A field's vtable offset, as flatc numbers them ([`fields`](crate::fields)).
pub type VOffsetT = u16;

/// `b` as a `str`, if it is UTF-8 (with the structural check's compact validator, which
/// decides exactly as `core::str::from_utf8` in a fraction of its code).
pub fn to_str(b: &[u8]) -> Option<&str> {
    // SAFETY: `is_utf8` accepted the bytes as well-formed UTF-8.
    crate::verify::is_utf8(b).then(|| unsafe { core::str::from_utf8_unchecked(b) })
}

/// A table of the program's flatbuffer (or, as [`Vector`], a vector's length prefix).
#[derive(Clone, Copy)]
pub struct Table<'a> {
    /// The start of the buffer, valid for reads of `len` bytes for 'a.
    base: NonNull<u8>,
    /// `len << 32 | pos`: the buffer's length and the table's position (`pos <= len`).
    /// (Two scalars, so a `Table` travels in two registers.)
    at: u64,
    _buf: PhantomData<&'a [u8]>,
}

/// A vector of the program's flatbuffer: the position of its `u32` length, followed by
/// the elements.
#[derive(Clone, Copy)]
pub struct Vector<'a>(Table<'a>);

impl core::fmt::Debug for Table<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Table(at {})", self.pos())
    }
}

impl core::fmt::Debug for Vector<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Vector(len {})", self.len())
    }
}

impl<'a> Table<'a> {
    /// The root table of the flatbuffer `buf`; `None` when the root offset leads outside.
    pub fn root(buf: &'a [u8]) -> Option<Table<'a>> {
        // Only the first 4 GiB are visible (a flatbuffer lies below 2 GiB); a position
        // past them reads as absent.
        let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        let start = Table {
            base: NonNull::from(buf).cast(),
            at: u64::from(len) << 32,
            _buf: PhantomData,
        };
        start.follow(0)
    }

    /// The buffer's length.
    #[cfg_attr(not(etch_size_first), inline)]
    fn len(self) -> u64 {
        self.at >> 32
    }

    /// The buffer (its first 4 GiB).
    pub fn buf(self) -> &'a [u8] {
        // SAFETY: `base` is valid for reads of `len` bytes for 'a (it came from such a
        // slice, whose length is at least `len`).
        unsafe { core::slice::from_raw_parts(self.base.as_ptr(), self.len() as usize) }
    }

    /// The table's position in the buffer.
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn pos(self) -> usize {
        self.at as u32 as usize
    }

    /// The same buffer at position `pos` (`None` past its end).
    #[cfg_attr(not(etch_size_first), inline)]
    fn at(self, pos: u64) -> Option<Table<'a>> {
        (pos <= self.len()).then_some(Table {
            at: self.len() << 32 | pos,
            ..self
        })
    }

    /// The little-endian unsigned integer of `n` (at most 8) bytes at `pos`; 0 when the
    /// bytes are not all inside the buffer.
    #[cfg_attr(not(etch_size_first), inline)]
    fn read(self, pos: u64, n: u32) -> u64 {
        let len = self.len();
        let p = pos as usize;
        // The common case first: one comparison covers every `n`.
        if pos + 8 <= len {
            // One unaligned 8-byte load, masked to `n` bytes.
            // SAFETY: `pos + 8 <= len`: eight bytes inside the buffer.
            let w = unsafe { self.base.as_ptr().add(p).cast::<[u8; 8]>().read_unaligned() };
            let v = u64::from_le_bytes(w);
            return v & (u64::MAX >> (64 - 8 * n.clamp(1, 8)));
        }
        if pos + u64::from(n) > len {
            return 0;
        }
        // Near the end of the buffer: byte by byte.
        let mut v = 0u64;
        for i in (0..n as usize).rev() {
            // SAFETY: `pos + i < pos + n <= len`, inside the buffer.
            v = v << 8 | u64::from(unsafe { *self.base.as_ptr().add(p + i) });
        }
        v
    }

    /// The table with its vtable found, for reading several of its fields: each then
    /// costs one load rather than three.
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn fields(self) -> Fields<'a> {
        // The vtable is at the table's position minus the soffset stored there; its first
        // u16 is its size in bytes (a vtable outside the buffer reads as size 0: every
        // field absent).
        let pos = self.pos() as u64;
        let soffset = self.read(pos, 4) as u32 as i32;
        let vtable = u64::try_from(pos as i64 - i64::from(soffset)).ok();
        Fields {
            table: self,
            vtable: vtable.unwrap_or(0),
            vtable_size: vtable.map_or(0, |v| self.read(v, 2)),
        }
    }

    /// The position of the inline value of the field at vtable offset `vt`, or `None`
    /// when the field is absent.
    fn field(self, vt: VOffsetT) -> Option<u64> {
        self.fields().field(vt)
    }

    /// Whether field `vt` is present (written by the serializer, not defaulted).
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn has(self, vt: VOffsetT) -> bool {
        self.field(vt).is_some()
    }

    /// Scalar field `vt` of `n` bytes, zero-extended (absent fields read as 0, the
    /// default of every scalar in `program.fbs`).
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn uint(self, vt: VOffsetT, n: u32) -> u64 {
        self.field(vt).map_or(0, |p| self.read(p, n))
    }

    /// Scalar field `vt` of `n` bytes (1, 2, 4 or 8), sign-extended.
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn int(self, vt: VOffsetT, n: u32) -> i64 {
        sign_extend(self.uint(vt, n), n)
    }

    /// Where the uoffset at `pos` leads.
    #[cfg_attr(not(etch_size_first), inline)]
    fn follow(self, pos: u64) -> Option<Table<'a>> {
        self.at(pos + self.read(pos, 4))
    }

    /// Table field `vt`.
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn table(self, vt: VOffsetT) -> Option<Table<'a>> {
        self.follow(self.field(vt)?)
    }

    /// Vector field `vt`; `None` when absent, or when it claims more elements than there
    /// are bytes after it (every element takes at least one).
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn vector(self, vt: VOffsetT) -> Option<Vector<'a>> {
        Vector::checked(self.table(vt)?)
    }

    /// As [`Fields::vector_bytes`].
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn vector_bytes(self, vt: VOffsetT, n: usize) -> Option<&'a [u8]> {
        Vector(self.table(vt)?).element_bytes(n)
    }

    /// Byte-vector (or string) field `vt` as a slice; `None` when absent (or, which a
    /// verified buffer never has, not inside the buffer).
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn bytes(self, vt: VOffsetT) -> Option<&'a [u8]> {
        let v = self.vector(vt)?;
        let start = v.0.pos() + 4;
        self.buf().get(start..start.checked_add(v.len())?)
    }

    /// String field `vt`; `None` when absent or not UTF-8.
    pub fn string(self, vt: VOffsetT) -> Option<&'a str> {
        to_str(self.bytes(vt)?)
    }

    /// A union with its type tag in field `tag` and its member in field `member`: the
    /// tag (0 when absent) and the member table.
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn union(self, tag: VOffsetT, member: VOffsetT) -> (u8, Option<Table<'a>>) {
        (self.uint(tag, 1) as u8, self.table(member))
    }
}

impl<'a> Vector<'a> {
    /// A vector with no elements.
    pub const EMPTY: Vector<'static> = Vector(Table {
        base: NonNull::dangling(),
        at: 0,
        _buf: PhantomData,
    });

    /// The vector whose length is at `at`; `None` when it claims more elements than
    /// there are bytes after it (every element takes at least one).
    #[cfg_attr(not(etch_size_first), inline)]
    fn checked(at: Table<'a>) -> Option<Vector<'a>> {
        let v = Vector(at);
        (v.0.pos() as u64 + 4 + v.len() as u64 <= v.0.len()).then_some(v)
    }

    /// Whether the vector has no elements.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Number of elements.
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn len(self) -> usize {
        self.0.read(self.0.pos() as u64, 4) as usize
    }

    /// The position of element `i` of `n` bytes (`None` past the end).
    #[cfg_attr(not(etch_size_first), inline)]
    fn element(self, i: usize, n: u32) -> Option<u64> {
        (i < self.len()).then(|| self.0.pos() as u64 + 4 + i as u64 * u64::from(n))
    }

    /// The bytes of all elements of a vector of `n`-byte scalars (`len * n` of them);
    /// `None` when they are not all inside the buffer. For loops over many elements: one
    /// bounds check for the vector rather than one per element.
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn element_bytes(self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() == 0 {
            // `EMPTY`, the only vector of an empty buffer.
            return Some(&[]);
        }
        let start = self.0.pos() + 4;
        let bytes = self.len().checked_mul(n)?;
        self.0.buf().get(start..start.checked_add(bytes)?)
    }

    /// Element `i` of a vector of `n`-byte scalars, zero-extended (0 past the end).
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn uint(self, i: usize, n: u32) -> u64 {
        self.element(i, n).map_or(0, |p| self.0.read(p, n))
    }

    /// Element `i` of a vector of `i32`s, sign-extended (0 past the end).
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn i32(self, i: usize) -> i64 {
        self.uint(i, 4) as u32 as i32 as i64
    }

    /// Element `i` of a vector of tables (`None` past the end).
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn table(self, i: usize) -> Option<Table<'a>> {
        self.0.follow(self.element(i, 4)?)
    }
}

/// `v`, an `n`-byte integer (1, 2, 4 or 8), sign-extended.
#[cfg_attr(not(etch_size_first), inline)]
fn sign_extend(v: u64, n: u32) -> i64 {
    let shift = 64 - 8 * n;
    ((v << shift) as i64) >> shift
}

/// A table whose vtable is found ([`Table::fields`]): the same accessors as [`Table`],
/// each one bounds-checked load cheaper. (`Table`'s own accessors keep one out-of-line
/// field lookup rather than delegating here, which would inline the lookup into every
/// caller.)
#[derive(Clone, Copy)]
pub struct Fields<'a> {
    table: Table<'a>,
    /// The vtable's position (0 when it is not in the buffer).
    vtable: u64,
    /// The vtable's size in bytes (0 when it is not in the buffer).
    vtable_size: u64,
}

impl core::fmt::Debug for Fields<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Fields(at {})", self.table.pos())
    }
}

impl<'a> Fields<'a> {
    /// The position of the inline value of field `vt`, or `None` when it is absent.
    #[cfg_attr(not(etch_size_first), inline)]
    fn field(self, vt: VOffsetT) -> Option<u64> {
        let vt = u64::from(vt);
        if vt + 2 > self.vtable_size {
            return None;
        }
        match self.table.read(self.vtable + vt, 2) {
            0 => None,
            off => Some(self.table.pos() as u64 + off),
        }
    }

    /// As [`Table::uint`].
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn uint(self, vt: VOffsetT, n: u32) -> u64 {
        self.field(vt).map_or(0, |p| self.table.read(p, n))
    }

    /// As [`Table::int`].
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn int(self, vt: VOffsetT, n: u32) -> i64 {
        sign_extend(self.uint(vt, n), n)
    }

    /// As [`Table::table`].
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn table(self, vt: VOffsetT) -> Option<Table<'a>> {
        self.table.follow(self.field(vt)?)
    }

    /// As [`Table::vector`].
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn vector(self, vt: VOffsetT) -> Option<Vector<'a>> {
        Vector::checked(self.table(vt)?)
    }

    /// The elements of vector field `vt` of `n`-byte scalars as one slice
    /// ([`Vector::element_bytes`]); `None` when absent or not inside the buffer.
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn vector_bytes(self, vt: VOffsetT, n: usize) -> Option<&'a [u8]> {
        Vector(self.table(vt)?).element_bytes(n)
    }

    /// As [`Table::union`].
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn union(self, tag: VOffsetT, member: VOffsetT) -> (u8, Option<Table<'a>>) {
        (self.uint(tag, 1) as u8, self.table(member))
    }
}

// SAFETY: a `Table` is a shared view of immutable bytes (like the `&'a [u8]` it came
// from, which is `Send` and `Sync`).
unsafe impl Send for Table<'_> {}
// SAFETY: as above.
unsafe impl Sync for Table<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vector at position `pos` of `buf`.
    fn vector_at(buf: &[u8], pos: u64) -> Vector<'_> {
        let root = Table::root(buf).expect("a root offset inside the buffer");
        Vector(root.at(pos).expect("inside the buffer"))
    }

    #[test]
    fn element_bytes_are_the_whole_vector_or_nothing() {
        // A root offset (unused here), then a vector of three u32s at position 4.
        let mut buf = [0u8; 4 + 4 + 12];
        buf[4..8].copy_from_slice(&3u32.to_le_bytes());
        for (k, v) in [7u32, 8, 9].iter().enumerate() {
            buf[8 + 4 * k..12 + 4 * k].copy_from_slice(&v.to_le_bytes());
        }
        let v = vector_at(&buf, 4);
        assert_eq!(v.element_bytes(4), Some(&buf[8..20]));
        // As bytes, the first three; as u64s the elements would run past the end.
        assert_eq!(v.element_bytes(1), Some(&buf[8..11]));
        assert_eq!(v.element_bytes(8), None);
        // A length that overflows the multiplication is refused, not wrapped.
        let mut huge = buf;
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(vector_at(&huge, 4).element_bytes(usize::MAX / 2), None);
        assert_eq!(vector_at(&huge, 4).element_bytes(4), None);
        // The length prefix itself outside the buffer: no elements can be read.
        assert_eq!(vector_at(&buf, 18).element_bytes(1), None);
        assert_eq!(Vector::EMPTY.element_bytes(8), Some(&[][..]));
    }
}
