//! A flatbuffer writer over a fixed caller buffer, front to back: no allocation.
//!
//! flatc's builders write back to front and keep every child's position in a growable
//! list until its parent is written. Writing front to back instead, a parent comes first
//! with its offset fields left blank, and each blank is filled in once the child it
//! points to is written after it: uoffsets then point forward, as the format requires,
//! and nothing but the positions on the current path needs remembering.
//!
//! Every position is absolute in the output, whose start is the file's start (size
//! prefix included); scalars are aligned to their size from there, as readers check.

/// The output buffer is too small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Full;

/// A field of a table being written: its vtable offset (`VT_*` of the schema's
/// generated field module) and what it holds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Field {
    /// A 32-bit offset to a child written later: [`Table::slot`] names its position.
    Offset(u16),
    I32(u16, i32),
    U32(u16, u32),
    U64(u16, u64),
}

impl Field {
    fn voffset(&self) -> u16 {
        match *self {
            Field::Offset(v) | Field::I32(v, _) | Field::U32(v, _) | Field::U64(v, _) => v,
        }
    }

    fn size(&self) -> usize {
        match self {
            Field::U64(..) => 8,
            _ => 4,
        }
    }
}

/// The most fields a table of the ETDump schema has.
const MAX_FIELDS: usize = 8;

/// A written table: where each of its fields landed, in the order they were given.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Table {
    start: usize,
    at: [usize; MAX_FIELDS],
}

impl Table {
    /// The table's position (what offsets to it point at).
    pub(crate) fn start(&self) -> usize {
        self.start
    }

    /// The position of field `i` (of those given to [`Writer::table`]), for
    /// [`Writer::point`] when it is an offset.
    pub(crate) fn slot(&self, i: usize) -> usize {
        self.at[i]
    }
}

/// Writes into `buf[..len]`.
#[derive(Debug)]
pub(crate) struct Writer<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl<'b> Writer<'b> {
    pub(crate) fn new(buf: &'b mut [u8]) -> Writer<'b> {
        Writer { buf, len: 0 }
    }

    /// Bytes written so far.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Zero-pads to a multiple of `align` (a power of two).
    pub(crate) fn align(&mut self, align: usize) -> Result<(), Full> {
        let padded = self.len.next_multiple_of(align);
        self.reserve(padded - self.len).map(|_| ())
    }

    /// `n` zeroed bytes at the end; returns their position.
    fn reserve(&mut self, n: usize) -> Result<usize, Full> {
        let at = self.len;
        let end = at.checked_add(n).ok_or(Full)?;
        self.buf.get_mut(at..end).ok_or(Full)?.fill(0);
        self.len = end;
        Ok(at)
    }

    /// Writes `bytes` at `at` (inside what is already written).
    fn put(&mut self, at: usize, bytes: &[u8]) {
        self.buf[at..at + bytes.len()].copy_from_slice(bytes);
    }

    pub(crate) fn put_u32(&mut self, at: usize, v: u32) {
        self.put(at, &v.to_le_bytes());
    }

    /// Appends raw bytes (the file identifier).
    pub(crate) fn bytes(&mut self, bytes: &[u8]) -> Result<usize, Full> {
        let at = self.reserve(bytes.len())?;
        self.put(at, bytes);
        Ok(at)
    }

    /// Fills the offset field at `slot` to point at `target` (written after it).
    pub(crate) fn point(&mut self, slot: usize, target: usize) -> Result<(), Full> {
        let offset = target.checked_sub(slot).ok_or(Full)?;
        self.put_u32(slot, u32::try_from(offset).map_err(|_| Full)?);
        Ok(())
    }

    /// A table holding `fields`, preceded by its vtable. Offset fields are left zero
    /// (absent to a reader) until [`point`](Self::point) fills them.
    pub(crate) fn table(&mut self, fields: &[Field]) -> Result<Table, Full> {
        debug_assert!(fields.len() <= MAX_FIELDS);
        // Lay the fields out after the 4-byte vtable offset, widest first so that none
        // needs padding but the one before the first 8-byte field.
        let mut layout = [(0usize, 0usize); MAX_FIELDS];
        let mut size = 4usize;
        for wide in [true, false] {
            for (i, f) in fields.iter().enumerate() {
                if (f.size() == 8) == wide {
                    size = size.next_multiple_of(f.size());
                    layout[i] = (size, f.size());
                    size += f.size();
                }
            }
        }
        let slots = fields
            .iter()
            .map(|f| usize::from(f.voffset()) / 2 - 1)
            .max()
            .unwrap_or(0);
        // The vtable: its size, the table's size, then each field's offset (0: absent).
        self.align(2)?;
        let vtable = self.reserve(4 + 2 * slots)?;
        let vt_len = u16::try_from(4 + 2 * slots).map_err(|_| Full)?;
        let table_len = u16::try_from(size).map_err(|_| Full)?;
        self.put(vtable, &vt_len.to_le_bytes());
        self.put(vtable + 2, &table_len.to_le_bytes());
        for (f, &(offset, _)) in fields.iter().zip(&layout) {
            // `offset < size`, which fits a u16 (checked above).
            self.put(
                vtable + usize::from(f.voffset()),
                &(offset as u16).to_le_bytes(),
            );
        }
        // The table, 8-aligned so that every field is aligned to its size.
        self.align(8)?;
        let table = self.reserve(size)?;
        let back = i32::try_from(table - vtable).map_err(|_| Full)?;
        self.put(table, &back.to_le_bytes());
        let mut at = [0usize; MAX_FIELDS];
        for (i, (f, &(offset, _))) in fields.iter().zip(&layout).enumerate() {
            at[i] = table + offset;
            match *f {
                Field::Offset(_) => {}
                Field::I32(_, v) => self.put(table + offset, &v.to_le_bytes()),
                Field::U32(_, v) => self.put(table + offset, &v.to_le_bytes()),
                Field::U64(_, v) => self.put(table + offset, &v.to_le_bytes()),
            }
        }
        Ok(Table { start: table, at })
    }

    /// A string (length, bytes, NUL); returns its position.
    pub(crate) fn string(&mut self, s: &[u8]) -> Result<usize, Full> {
        self.align(4)?;
        let len = u32::try_from(s.len()).map_err(|_| Full)?;
        let at = self.reserve(4 + s.len() + 1)?;
        self.put_u32(at, len);
        self.put(at + 4, s);
        Ok(at)
    }

    /// A vector of `n` offsets, all blank; returns its position. Element `i`'s slot is
    /// `position + 4 + 4 * i`.
    pub(crate) fn offsets(&mut self, n: usize) -> Result<usize, Full> {
        self.align(4)?;
        let bytes = n
            .checked_mul(4)
            .and_then(|b| b.checked_add(4))
            .ok_or(Full)?;
        let at = self.reserve(bytes)?;
        self.put_u32(at, u32::try_from(n).map_err(|_| Full)?);
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_aligned_and_point_back_to_their_vtables() {
        let mut buf = [0u8; 128];
        let mut w = Writer::new(&mut buf);
        w.bytes(&[1, 2, 3]).unwrap();
        let t = w
            .table(&[Field::I32(4, -1), Field::U64(8, 7), Field::Offset(6)])
            .unwrap();
        let s = w.string(b"hi").unwrap();
        w.point(t.slot(2), s).unwrap();
        // The soffset, padding, the u64 at 8, then the i32 and the offset.
        let table = t.start();
        assert_eq!(t.slot(1), table + 8);
        assert_eq!(table % 8, 0);
        assert_eq!(t.slot(0), table + 16);
        let back = i32::from_le_bytes(buf[table..table + 4].try_into().unwrap());
        let vtable = table - back as usize;
        let u16_at = |i: usize| u16::from_le_bytes([buf[i], buf[i + 1]]);
        assert_eq!(u16_at(vtable), 4 + 2 * 3);
        assert_eq!(u16_at(vtable + 2), 24);
        assert_eq!(u16_at(vtable + 4), 16); // I32 at voffset 4
        assert_eq!(u16_at(vtable + 6), 20); // the offset at voffset 6
        assert_eq!(u16_at(vtable + 8), 8); // the u64 at voffset 8
        let slot = t.slot(2);
        let rel = u32::from_le_bytes(buf[slot..slot + 4].try_into().unwrap()) as usize;
        assert_eq!(
            &buf[slot + rel..slot + rel + 7],
            &[2, 0, 0, 0, b'h', b'i', 0]
        );
    }

    #[test]
    fn a_full_buffer_is_an_error() {
        let mut buf = [0u8; 8];
        let mut w = Writer::new(&mut buf);
        assert_eq!(w.string(b"too long for eight"), Err(Full));
        assert!(w.table(&[Field::U64(4, 1)]).is_err());
    }
}
