//! Data loaders: where program bytes come from.

use crate::error::Error;

/// Alignment the program data must have: flatbuffer tables and constant tensors inside it
/// are aligned relative to the start, so the start must be aligned like `max_align_t`.
pub const PROGRAM_ALIGNMENT: usize = 16;

/// A source of program bytes. Returned slices must stay valid and unchanged for as long
/// as the loader is borrowed: constants are used in place (zero-copy).
pub trait DataLoader {
    /// Total size in bytes.
    fn size(&self) -> usize;

    /// `size` bytes starting at `offset`; `AccessFailed`/`InvalidProgram` when out of range.
    fn load(&self, offset: usize, size: usize) -> Result<&[u8], Error>;
}

/// A loader over bytes already in memory (a static array, a buffer the caller read).
#[derive(Clone, Copy, Debug)]
pub struct BufferLoader<'a> {
    data: &'a [u8],
}

impl<'a> BufferLoader<'a> {
    /// Wraps `data`, which must start at a 16-byte aligned address
    /// ([`PROGRAM_ALIGNMENT`]); `InvalidArgument` otherwise.
    pub fn new(data: &'a [u8]) -> Result<Self, Error> {
        if !(data.as_ptr() as usize).is_multiple_of(PROGRAM_ALIGNMENT) {
            return Err(Error::InvalidArgument);
        }
        Ok(BufferLoader { data })
    }
}

impl DataLoader for BufferLoader<'_> {
    fn size(&self) -> usize {
        self.data.len()
    }

    fn load(&self, offset: usize, size: usize) -> Result<&[u8], Error> {
        let end = offset.checked_add(size).ok_or(Error::InvalidProgram)?;
        self.data.get(offset..end).ok_or(Error::InvalidProgram)
    }
}

#[cfg(feature = "std")]
mod file {
    use super::DataLoader;
    use crate::error::Error;
    use std::path::Path;
    use std::vec::Vec;

    /// Reads a whole file into an aligned heap buffer (`std` feature).
    #[derive(Debug)]
    pub struct FileLoader {
        // u128 elements give the 16-byte alignment programs need.
        words: Vec<u128>,
        len: usize,
    }

    impl FileLoader {
        /// Reads `path`.
        pub fn open(path: impl AsRef<Path>) -> std::io::Result<FileLoader> {
            let bytes = std::fs::read(path)?;
            Ok(FileLoader::from_bytes(&bytes))
        }

        /// Copies `bytes` into an aligned buffer.
        pub fn from_bytes(bytes: &[u8]) -> FileLoader {
            let mut words = std::vec![0u128; bytes.len().div_ceil(16)];
            for (w, chunk) in words.iter_mut().zip(bytes.chunks(16)) {
                let mut b = [0u8; 16];
                b[..chunk.len()].copy_from_slice(chunk);
                *w = u128::from_le_bytes(b);
            }
            FileLoader {
                words,
                len: bytes.len(),
            }
        }

        /// The file's bytes.
        pub fn bytes(&self) -> &[u8] {
            // SAFETY: `words` owns at least `len` initialized bytes (16 per element), u8
            // has no alignment requirement, and the slice borrows `self`.
            unsafe { core::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
        }
    }

    impl DataLoader for FileLoader {
        fn size(&self) -> usize {
            self.len
        }

        fn load(&self, offset: usize, size: usize) -> Result<&[u8], Error> {
            let end = offset.checked_add(size).ok_or(Error::InvalidProgram)?;
            self.bytes().get(offset..end).ok_or(Error::InvalidProgram)
        }
    }

    /// Maps a file into memory (`std` feature). Page alignment satisfies the program
    /// alignment; pages are read on first touch.
    #[derive(Debug)]
    pub struct MmapLoader {
        map: memmap2::Mmap,
    }

    impl MmapLoader {
        /// Maps `path` read-only.
        ///
        /// The file must not be modified while mapped (the usual contract of read-only
        /// maps); etch treats the bytes as immutable program data.
        pub fn open(path: impl AsRef<Path>) -> std::io::Result<MmapLoader> {
            let file = std::fs::File::open(path)?;
            // SAFETY: a read-only private map; the documented contract above (no
            // concurrent modification of the file) is the caller's, as for any mmap.
            let map = unsafe { memmap2::Mmap::map(&file)? };
            Ok(MmapLoader { map })
        }
    }

    impl DataLoader for MmapLoader {
        fn size(&self) -> usize {
            self.map.len()
        }

        fn load(&self, offset: usize, size: usize) -> Result<&[u8], Error> {
            let end = offset.checked_add(size).ok_or(Error::InvalidProgram)?;
            self.map.get(offset..end).ok_or(Error::InvalidProgram)
        }
    }
}

/// A [`DataLoader`] that can be shared between threads.
pub trait DataLoaderSync: DataLoader + Sync {}
impl<T: DataLoader + Sync> DataLoaderSync for T {}

#[cfg(feature = "std")]
pub use file::{FileLoader, MmapLoader};
