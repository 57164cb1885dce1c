//! The file around the flatbuffer: the `ET12` identifier, the optional `eh00` extended
//! header that locates the segments, and the checks that give the root `Program` table.

use core::fmt;

use crate::error::Error;
use crate::fields as fb;
use crate::reader::Table;

/// The file identifier every supported program carries at bytes 4..8.
pub const FILE_IDENTIFIER: &[u8; 4] = b"ET12";
/// The highest `Program.version` this runtime accepts (as ExecuTorch 1.5.1).
pub const MAX_SUPPORTED_VERSION: u32 = 0;

const HEADER_MAGIC: &[u8; 4] = b"eh00";
const HEADER_OFFSET: usize = 8;
const HEADER_MIN_LEN: usize = 24;
/// How many leading bytes of a file [`locate`] reads (the identifier and the extended
/// header lie within them).
pub const HEADER_PROBE: usize = 64;

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
        // Compared as one word, not as bytes through a slice comparison call.
        if read_u32(head, HEADER_OFFSET) != Some(u32::from_le_bytes(*HEADER_MAGIC)) {
            return Ok(None);
        }
        // The length, program size and segment base all end by byte 32, and a header
        // without any of them is malformed whatever its length says: one check covers
        // the three reads (within the fixed-size window, theirs are proved and dropped).
        let Some(fixed) = head.first_chunk::<{ HEADER_OFFSET + HEADER_MIN_LEN }>() else {
            return Err(Error::InvalidProgram);
        };
        let len = read_u32(fixed, HEADER_OFFSET + 4).unwrap_or_default() as usize;
        if len < HEADER_MIN_LEN {
            return Err(Error::InvalidProgram);
        }
        let program_size = read_u64(fixed, HEADER_OFFSET + 8).unwrap_or_default();
        let segment_base_offset = read_u64(fixed, HEADER_OFFSET + 16).unwrap_or_default();
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

/// Why a file was rejected as a program (`Program::load` in et-runtime), or a part of
/// one as what it claims to be (a delegate payload, a bundled program): the code and
/// what was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramError {
    /// ExecuTorch's error code.
    pub error: Error,
    /// What was wrong (only with the feature `messages`: without it the error is its
    /// code alone, 4 bytes, and results carrying it travel in registers).
    #[cfg(feature = "messages")]
    reason: &'static str,
}

impl ProgramError {
    /// An error with its reason; the reason is dropped unless the feature `messages` is
    /// on, so a binary that prints codes only carries no error text.
    #[inline(always)]
    pub const fn new(error: Error, reason: &'static str) -> ProgramError {
        #[cfg(not(feature = "messages"))]
        let _ = reason;
        ProgramError {
            error,
            #[cfg(feature = "messages")]
            reason,
        }
    }

    /// What was wrong (`""` without the feature `messages`).
    #[inline(always)]
    pub const fn reason(&self) -> &'static str {
        #[cfg(feature = "messages")]
        return self.reason;
        #[cfg(not(feature = "messages"))]
        ""
    }
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.reason().is_empty() {
            write!(f, "{}", self.error)
        } else {
            write!(f, "{}: {}", self.reason(), self.error)
        }
    }
}

impl core::error::Error for ProgramError {}

impl From<ProgramError> for Error {
    fn from(e: ProgramError) -> Error {
        e.error
    }
}

/// How much of a program is checked before it is used, as ExecuTorch's
/// `Program::Verification` (et-runtime's `Program::load_with`).
///
/// Either way no input can cause undefined behaviour or a panic: every read of the
/// flatbuffer is bounds-checked and strings are checked to be UTF-8 when read. The
/// difference is when a malformed file is found: up front, or when the damaged part is
/// read (an `Err` from `load_method` or a metadata call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verification {
    /// The header, identifier, version and constant segment only (ExecuTorch's
    /// default). Saves the structural check's time and, in a binary that never asks for
    /// it, its code.
    Minimal,
    /// Also the whole flatbuffer's structure, in time linear in its size (what
    /// `Program::load` does).
    #[default]
    InternalConsistency,
}

/// Where the flatbuffer ends, from the first bytes of a file (at least the first 64, or
/// the whole file when shorter) and the file's size: the identifier is checked, the
/// extended header parsed and its sizes checked against the file.
// Inline: the runtime's `Program::load` is its only caller on a device, and inlined
// there the error reasons a binary never reads are dropped.
#[inline]
pub fn locate(
    head: &[u8],
    file_size: usize,
) -> Result<(Option<ExtendedHeader>, usize), ProgramError> {
    let fail = ProgramError::new;
    let Some(id) = head.get(4..8) else {
        return Err(fail(
            Error::InvalidProgram,
            "file is too short to be a program",
        ));
    };
    if id != FILE_IDENTIFIER {
        return Err(if matches!(id, [b'E', b'T', ..]) {
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
            if expected_end.is_some_and(|end| end > file_size as u64) {
                return Err(fail(
                    Error::InvalidProgram,
                    "file is truncated: the header describes more data than the file holds",
                ));
            }
            match usize::try_from(h.program_size) {
                Ok(ps) if (8..=file_size).contains(&ps) => ps,
                _ => {
                    return Err(fail(
                        Error::InvalidProgram,
                        "extended header gives an impossible program size",
                    ))
                }
            }
        }
        None => file_size,
    };
    Ok((header, program_size))
}

/// The root `Program` table of the flatbuffer region `data` (`file[..program_size]`),
/// after the checks `verification` asks for, and the schema version check.
#[inline]
pub fn root(data: &[u8], verification: Verification) -> Result<Table<'_>, ProgramError> {
    let malformed = |error| {
        ProgramError::new(
            error,
            "the program's flatbuffer is malformed (truncated or corrupted)",
        )
    };
    if verification == Verification::InternalConsistency {
        crate::verify::verify_program(data).map_err(malformed)?;
    }
    let root = Table::root(data).ok_or_else(|| malformed(Error::InvalidProgram))?;
    if root.uint(fb::Program::VT_VERSION, 4) > MAX_SUPPORTED_VERSION as u64 {
        // The reason is static text (it costs nothing without the `messages` feature), so
        // it spells out the version etch reads; the assertion keeps the two in step.
        const _: () = assert!(MAX_SUPPORTED_VERSION == 0, "update the message below");
        return Err(ProgramError::new(
            Error::InvalidProgram,
            "program schema version is newer than etch reads: etch reads Program.version 0 \
             (ExecuTorch 1.x programs); re-export the model with a matching ExecuTorch",
        ));
    }
    Ok(root)
}
