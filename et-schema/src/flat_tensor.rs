//! The `.ptd` data file (ExecuTorch's FlatTensor format): named blobs, usually tensors,
//! that programs refer to by key instead of carrying them.
//!
//! A file is laid out as
//!
//! ```text
//! 0   root offset (u32) | "FT01" | FH01 header (at byte 8) | rest of the flatbuffer
//!     ^-------------- the flatbuffer region: flatbuffer_offset + flatbuffer_size bytes
//! segment_base_offset: segment 0 | padding | segment 1 | ...  (segment_data_size bytes)
//! ```
//!
//! The exporter writes the flatbuffer, then inserts the header after its first 8 bytes
//! (shifting the root offset), so the flatbuffer's root is still read from byte 0 and
//! `flatbuffer_offset` is the header's padded length, not where anything starts.
//!
//! Everything is checked when the file is opened ([`DataFileView::from_region`]): the
//! header's sizes against the file, the flatbuffer's structure (with
//! [`Verification::InternalConsistency`]), and every entry: its key is UTF-8, its segment
//! exists and lies inside the segment area, and its tensor layout, when it has one, names a
//! known dtype, a rank of at most [`MAX_DIM`], sizes that are not negative, a dim order
//! that is a permutation, and a byte size that fits a `usize` (whether it equals the
//! blob's is for whoever binds the blob to a tensor to check). Lookups afterwards
//! cannot fail on a file that opened. Reads go through [`reader`](crate::reader), so even
//! a flatbuffer that skipped the structural check reads safely.

use core::fmt;

use crate::error::Error;
use crate::flat_tensor_fields as ft;
use crate::header::Verification;
use crate::meta::MAX_DIM;
use crate::reader::{Table, Vector};
use crate::scalar_type::ScalarType;

/// The flatbuffer file identifier of a `.ptd` file, at bytes 4..8.
pub const FILE_IDENTIFIER: &[u8; 4] = b"FT01";
/// The magic of the FlatTensor header, at bytes 8..12.
pub const HEADER_MAGIC: &[u8; 4] = b"FH01";
/// Where the header starts.
pub const HEADER_OFFSET: usize = 8;
/// The header's fields: magic, length (u32), then four u64s.
pub const HEADER_MIN_LEN: usize = 40;
/// How many leading bytes of a file [`DataFileHeader::locate`] needs (the identifier and
/// the header lie within them).
pub const HEADER_PROBE: usize = HEADER_OFFSET + HEADER_MIN_LEN;
/// The highest `FlatTensor.version` this reader accepts (ExecuTorch 1.5 writes 0).
pub const MAX_SUPPORTED_VERSION: u32 = 0;

/// Why a file was rejected as a `.ptd` data file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataFileError {
    /// ExecuTorch's error code (`InvalidExternalData` for a malformed file).
    pub error: Error,
    /// What was wrong.
    pub reason: &'static str,
}

impl fmt::Display for DataFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.reason.is_empty() {
            write!(f, "{}", self.error)
        } else {
            write!(f, "{}: {}", self.reason, self.error)
        }
    }
}

impl core::error::Error for DataFileError {}

impl From<DataFileError> for Error {
    fn from(e: DataFileError) -> Error {
        e.error
    }
}

const fn malformed(reason: &'static str) -> DataFileError {
    DataFileError {
        error: Error::InvalidExternalData,
        reason: crate::error::message(reason),
    }
}

/// The `FH01` header: where the flatbuffer ends and where the segments lie.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataFileHeader {
    /// The header's padded length (the flatbuffer region is
    /// `flatbuffer_offset + flatbuffer_size` bytes from the start of the file).
    pub flatbuffer_offset: u64,
    /// The flatbuffer's size before the header was inserted.
    pub flatbuffer_size: u64,
    /// Absolute offset of the segment area; segment offsets count from here.
    pub segment_base_offset: u64,
    /// Bytes of the segment area.
    pub segment_data_size: u64,
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Where a file's parts lie, every offset checked against the file's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataFileLayout {
    /// The header as written.
    pub header: DataFileHeader,
    /// Bytes of the flatbuffer region, from the start of the file.
    pub flatbuffer_end: usize,
    /// The segment area: `segment_base..segment_end`, inside the file.
    pub segment_base: usize,
    /// End of the segment area.
    pub segment_end: usize,
}

impl DataFileHeader {
    /// Reads and checks the identifier and header from the first bytes of a file (at
    /// least [`HEADER_PROBE`], or the whole file when shorter), and checks every offset it
    /// gives against `file_size`.
    pub fn locate(head: &[u8], file_size: usize) -> Result<DataFileLayout, DataFileError> {
        match head.get(4..8) {
            Some(id) if id == FILE_IDENTIFIER => {}
            Some(id) if id.starts_with(b"FT") => {
                return Err(DataFileError {
                    error: Error::NotSupported,
                    reason: crate::error::message(
                        "unsupported data file format version (identifier is not FT01)",
                    ),
                })
            }
            Some(_) => {
                return Err(malformed(
                    "not an ExecuTorch data file (no FT01 identifier at byte 4)",
                ))
            }
            None => return Err(malformed("file is too short to be a data file")),
        }
        if head.get(HEADER_OFFSET..HEADER_OFFSET + 4) != Some(&HEADER_MAGIC[..]) {
            return Err(malformed("no FH01 header at byte 8"));
        }
        let too_short = || malformed("the FH01 header is shorter than 40 bytes");
        let len = read_u32(head, HEADER_OFFSET + 4).ok_or_else(too_short)?;
        if (len as usize) < HEADER_MIN_LEN {
            return Err(too_short());
        }
        let field = |i: usize| read_u64(head, HEADER_OFFSET + 8 + 8 * i).ok_or_else(too_short);
        let header = DataFileHeader {
            flatbuffer_offset: field(0)?,
            flatbuffer_size: field(1)?,
            segment_base_offset: field(2)?,
            segment_data_size: field(3)?,
        };
        let file = file_size as u64;
        let flatbuffer_end = header
            .flatbuffer_offset
            .checked_add(header.flatbuffer_size)
            .filter(|&end| end <= file)
            .ok_or(malformed(
                "file is truncated: the header puts the flatbuffer past the end of the file",
            ))?;
        if flatbuffer_end < (HEADER_OFFSET + HEADER_MIN_LEN) as u64 {
            return Err(malformed("the header gives an impossible flatbuffer size"));
        }
        let segment_end = header
            .segment_base_offset
            .checked_add(header.segment_data_size)
            .filter(|&end| end <= file)
            .ok_or(malformed(
                "file is truncated: the header describes more segment data than the file holds",
            ))?;
        if header.segment_data_size > 0 && header.segment_base_offset < flatbuffer_end {
            return Err(malformed("the segment area overlaps the flatbuffer"));
        }
        // All three are at most `file_size`, a `usize`.
        Ok(DataFileLayout {
            header,
            flatbuffer_end: flatbuffer_end as usize,
            segment_base: header.segment_base_offset as usize,
            segment_end: segment_end as usize,
        })
    }
}

/// The flatbuffer of an opened `.ptd` file, its entries checked.
#[derive(Clone, Copy)]
pub struct DataFileView<'d> {
    layout: DataFileLayout,
    segments: Vector<'d>,
    entries: Vector<'d>,
}

impl fmt::Debug for DataFileView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataFileView")
            .field("entries", &self.len())
            .field("layout", &self.layout)
            .finish()
    }
}

/// One named blob: its key, where its bytes lie in the file, and its tensor layout.
#[derive(Clone, Copy, Debug)]
pub struct DataEntry<'d> {
    /// The key programs use.
    pub key: &'d str,
    /// Absolute offset of the bytes in the file (inside the segment area).
    pub offset: usize,
    /// Number of bytes.
    pub size: usize,
    /// How the bytes are laid out as a tensor, when the file says.
    pub layout: Option<DataLayout<'d>>,
}

/// A tensor layout from a data file: dtype, sizes and dim order, checked when the file
/// was opened (known dtype, rank at most [`MAX_DIM`], sizes not negative, dim order a
/// permutation of the dimensions, byte size within a `usize`).
#[derive(Clone, Copy)]
pub struct DataLayout<'d> {
    dtype: ScalarType,
    sizes: Vector<'d>,
    dim_order: &'d [u8],
}

impl fmt::Debug for DataLayout<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataLayout")
            .field("dtype", &self.dtype)
            .field("sizes", &DebugSizes(*self))
            .field("dim_order", &self.dim_order)
            .finish()
    }
}

struct DebugSizes<'d>(DataLayout<'d>);

impl fmt::Debug for DebugSizes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.sizes()).finish()
    }
}

impl<'d> DataLayout<'d> {
    /// The element type.
    pub fn dtype(&self) -> ScalarType {
        self.dtype
    }

    /// The number of dimensions (at most [`MAX_DIM`]).
    pub fn rank(&self) -> usize {
        self.dim_order.len()
    }

    /// The length of dimension `dim` (`None` past the rank).
    pub fn size(&self, dim: usize) -> Option<usize> {
        (dim < self.rank()).then(|| self.sizes.i32(dim) as usize)
    }

    /// The length of each dimension, outermost first.
    pub fn sizes(&self) -> impl ExactSizeIterator<Item = usize> + 'd {
        let sizes = self.sizes;
        // Checked not negative when the file was opened.
        (0..self.rank()).map(move |i| sizes.i32(i) as usize)
    }

    /// The dimensions from outermost to innermost in memory.
    pub fn dim_order(&self) -> &'d [u8] {
        self.dim_order
    }

    /// The number of elements (checked not to overflow when the file was opened).
    pub fn numel(&self) -> usize {
        self.sizes().product()
    }

    /// The number of bytes the tensor's elements take.
    pub fn nbytes(&self) -> usize {
        self.numel() * self.dtype.element_size()
    }

    /// Reads and checks a `TensorLayout` table.
    fn read(t: Table<'d>) -> Option<DataLayout<'d>> {
        type L<'x> = ft::TensorLayout<'x>;
        let dtype = ScalarType::from_i8(t.uint(L::VT_SCALAR_TYPE, 1) as u8 as i8)?;
        let sizes = t.vector(L::VT_SIZES).unwrap_or(Vector::EMPTY);
        let dim_order = t.bytes(L::VT_DIM_ORDER).unwrap_or(&[]);
        let rank = dim_order.len();
        if sizes.len() != rank || rank > MAX_DIM {
            return None;
        }
        let mut seen = 0u32;
        let mut nbytes = dtype.element_size();
        for (i, &d) in dim_order.iter().enumerate() {
            let size = usize::try_from(sizes.i32(i)).ok()?;
            nbytes = nbytes.checked_mul(size)?;
            if usize::from(d) >= rank || seen & (1 << d) != 0 {
                return None;
            }
            seen |= 1 << d;
        }
        Some(DataLayout {
            dtype,
            sizes,
            dim_order,
        })
    }
}

impl<'d> DataFileView<'d> {
    /// A whole `.ptd` file in memory ([`DataFileHeader::locate`], then
    /// [`from_region`](Self::from_region)).
    pub fn parse(file: &'d [u8], verification: Verification) -> Result<Self, DataFileError> {
        let layout = DataFileHeader::locate(file, file.len())?;
        // `locate` checked the region against the file's length.
        let region = file.get(..layout.flatbuffer_end).unwrap_or(&[]);
        Self::from_region(region, layout, verification)
    }

    /// The flatbuffer region `file[..layout.flatbuffer_end]` of a file whose header
    /// [`DataFileHeader::locate`] read: checks the structure (when `verification` asks),
    /// the version, and every entry (see the module documentation).
    pub fn from_region(
        region: &'d [u8],
        layout: DataFileLayout,
        verification: Verification,
    ) -> Result<Self, DataFileError> {
        if region.len() != layout.flatbuffer_end {
            return Err(malformed("the flatbuffer region is not the header's size"));
        }
        if verification == Verification::InternalConsistency {
            crate::verify::verify_flat_tensor(region).map_err(|_| {
                malformed("the data file's flatbuffer is malformed (truncated or corrupted)")
            })?;
        }
        let root = Table::root(region).ok_or(malformed("the root offset leads outside"))?;
        if root.uint(ft::FlatTensor::VT_VERSION, 4) > u64::from(MAX_SUPPORTED_VERSION) {
            return Err(DataFileError {
                error: Error::NotSupported,
                reason: crate::error::message(
                    "data file schema version is newer than this runtime supports",
                ),
            });
        }
        let segments = root
            .vector(ft::FlatTensor::VT_SEGMENTS)
            .ok_or(malformed("the data file has no segment list"))?;
        let entries = root
            .vector(ft::FlatTensor::VT_NAMED_DATA)
            .ok_or(malformed("the data file has no named data list"))?;
        let view = DataFileView {
            layout,
            segments,
            entries,
        };
        for i in 0..entries.len() {
            view.read_entry(i)?;
        }
        Ok(view)
    }

    /// Where the file's parts lie.
    pub fn layout(&self) -> DataFileLayout {
        self.layout
    }

    /// Number of named entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the file names nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `index` (`None` past the end).
    pub fn entry(&self, index: usize) -> Option<DataEntry<'d>> {
        // Every entry was checked by `from_region`.
        self.read_entry(index).ok()
    }

    /// The entries, in file order.
    pub fn entries(self) -> impl Iterator<Item = DataEntry<'d>> {
        (0..self.len()).filter_map(move |i| self.entry(i))
    }

    /// The first entry named `key`.
    pub fn find(&self, key: &str) -> Option<DataEntry<'d>> {
        self.entries().find(|e| e.key == key)
    }

    /// Reads and checks entry `index`.
    fn read_entry(&self, index: usize) -> Result<DataEntry<'d>, DataFileError> {
        type N<'x> = ft::NamedData<'x>;
        let e = self
            .entries
            .table(index)
            .ok_or(malformed("a named data entry is missing"))?;
        let key = e.string(N::VT_KEY).ok_or(malformed(
            "a named data entry has no key, or one that is not UTF-8",
        ))?;
        let seg = self
            .segments
            .table(e.uint(N::VT_SEGMENT_INDEX, 4) as usize)
            .ok_or(malformed(
                "a named data entry names a segment that does not exist",
            ))?;
        type S<'x> = ft::DataSegment<'x>;
        let (offset, size) = (seg.uint(S::VT_OFFSET, 8), seg.uint(S::VT_SIZE, 8));
        let area = (self.layout.segment_end - self.layout.segment_base) as u64;
        if offset.checked_add(size).is_none_or(|end| end > area) {
            return Err(malformed(
                "a segment lies outside the segment area (truncated or corrupted file)",
            ));
        }
        // Both inside the file, whose size is a `usize`.
        let (offset, size) = (self.layout.segment_base + offset as usize, size as usize);
        let layout = match e.table(N::VT_TENSOR_LAYOUT) {
            None => None,
            Some(t) => {
                // A layout whose byte size differs from its blob is well formed: whoever
                // binds the blob to a tensor compares the sizes and names the key.
                Some(DataLayout::read(t).ok_or(malformed(
                    "a tensor layout is malformed (dtype, sizes or dim order)",
                ))?)
            }
        };
        Ok(DataEntry {
            key,
            offset,
            size,
            layout,
        })
    }
}

#[cfg(test)]
mod tests;
