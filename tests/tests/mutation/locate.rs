//! Finding fields in a flatbuffer by their vtable offsets, to corrupt exactly one field.
//!
//! The library's reader keeps positions private (it only hands out values), so the suite
//! follows offsets itself: a table's vtable, a field's inline position, a vector's length
//! word and elements. Each read is checked; `None` means the field is absent (or the
//! fixture is not shaped as expected, which the suite then simply skips).

/// A little-endian unsigned integer of `n` bytes at `pos`.
pub fn rd(buf: &[u8], pos: usize, n: usize) -> Option<u64> {
    let b = buf.get(pos..pos.checked_add(n)?)?;
    Some(b.iter().rev().fold(0, |v, &x| v << 8 | u64::from(x)))
}

/// Where the uoffset at `pos` leads.
pub fn follow(buf: &[u8], pos: usize) -> Option<usize> {
    pos.checked_add(rd(buf, pos, 4)? as usize)
}

/// The root table of the flatbuffer starting at `base`.
pub fn root(buf: &[u8], base: usize) -> Option<usize> {
    follow(buf, base)
}

/// The inline position of field `vt` of the table at `table`.
pub fn field(buf: &[u8], table: usize, vt: u16) -> Option<usize> {
    let soffset = rd(buf, table, 4)? as u32 as i32;
    let vtable = usize::try_from(table as i64 - i64::from(soffset)).ok()?;
    let vt = usize::from(vt);
    if vt + 2 > rd(buf, vtable, 2)? as usize {
        return None;
    }
    match rd(buf, vtable + vt, 2)? as usize {
        0 => None,
        off => Some(table + off),
    }
}

/// The positions of every field present in the table at `table` (vtable order).
pub fn all_fields(buf: &[u8], table: usize) -> Vec<usize> {
    let Some(soffset) = rd(buf, table, 4) else {
        return Vec::new();
    };
    let Ok(vtable) = usize::try_from(table as i64 - i64::from(soffset as u32 as i32)) else {
        return Vec::new();
    };
    let size = rd(buf, vtable, 2).unwrap_or(0) as usize;
    (4..size)
        .step_by(2)
        .filter_map(|vt| field(buf, table, vt as u16))
        .collect()
}

/// The table in field `vt`.
pub fn table(buf: &[u8], t: usize, vt: u16) -> Option<usize> {
    follow(buf, field(buf, t, vt)?)
}

/// A vector: the position of its `u32` length and its length.
#[derive(Clone, Copy, Debug)]
pub struct Vector {
    pub len_pos: usize,
    pub len: usize,
}

impl Vector {
    /// The position of element `i` of `width` bytes.
    pub fn at(self, i: usize, width: usize) -> usize {
        self.len_pos + 4 + i * width
    }

    /// The table that element `i` (a uoffset) leads to.
    pub fn table(self, buf: &[u8], i: usize) -> Option<usize> {
        follow(buf, self.at(i, 4))
    }
}

/// The vector in field `vt` (absent, or longer than the buffer: `None`).
pub fn vector(buf: &[u8], t: usize, vt: u16) -> Option<Vector> {
    let len_pos = table(buf, t, vt)?;
    let len = rd(buf, len_pos, 4)? as usize;
    (len_pos + 4 + len <= buf.len()).then_some(Vector { len_pos, len })
}

/// One write of a mutation: `width` little-endian bytes of `value` at `pos`.
#[derive(Clone, Copy, Debug)]
pub struct Write {
    pub pos: usize,
    pub width: usize,
    pub value: u64,
}

/// A targeted corruption: what it does, and its writes.
#[derive(Clone, Debug)]
pub struct Mutation {
    pub label: String,
    pub writes: Vec<Write>,
}

impl Mutation {
    /// The file with the writes applied (writes past the end are dropped).
    pub fn apply(&self, original: &[u8]) -> Vec<u8> {
        let mut bytes = original.to_vec();
        for w in &self.writes {
            if let Some(dst) = bytes.get_mut(w.pos..w.pos + w.width) {
                dst.copy_from_slice(&w.value.to_le_bytes()[..w.width]);
            }
        }
        bytes
    }
}

/// Collects mutations; `every` keeps one element in `every` of long lists so that the
/// suite stays bounded on large programs.
#[derive(Debug, Default)]
pub struct Targets {
    pub list: Vec<Mutation>,
}

impl Targets {
    /// One mutation per value in `values`, each writing field `pos` of `width` bytes.
    pub fn field(
        &mut self,
        label: impl Into<String>,
        pos: Option<usize>,
        width: usize,
        values: &[i64],
    ) {
        let Some(pos) = pos else { return };
        let label = label.into();
        for &v in values {
            self.list.push(Mutation {
                label: format!("{label} = {v}"),
                writes: vec![Write {
                    pos,
                    width,
                    value: v as u64,
                }],
            });
        }
    }

    /// One mutation with several writes.
    pub fn multi(&mut self, label: impl Into<String>, writes: Vec<Write>) {
        if !writes.is_empty() {
            self.list.push(Mutation {
                label: label.into(),
                writes,
            });
        }
    }
}

/// The indices `0..n` thinned to at most `cap` (evenly spread, first and last kept).
pub fn sample(n: usize, cap: usize) -> Vec<usize> {
    if n <= cap {
        return (0..n).collect();
    }
    let mut v: Vec<usize> = (0..cap).map(|k| k * n / cap).collect();
    v.push(n - 1);
    v.dedup();
    v
}
