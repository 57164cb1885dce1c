//! `--data FILE.ptd`: the data files a program's named data continues in, opened in the
//! order given (the runtime searches them in that order, after the program's own).

use std::path::{Path, PathBuf};

use et_runtime::{BufferLoader, DataFile, MmapLoader, Program};

use crate::{open, Failure};

/// The mapped data files and the names errors show (the paths as given).
pub struct DataFiles {
    maps: Vec<(String, MmapLoader)>,
}

impl DataFiles {
    /// Maps every file; a missing file is a failure naming it.
    pub fn open(paths: &[PathBuf]) -> Result<DataFiles, Failure> {
        let maps = paths
            .iter()
            .map(|p| Ok((p.display().to_string(), open(p)?)))
            .collect::<Result<_, Failure>>()?;
        Ok(DataFiles { maps })
    }

    /// Opens each mapped file as a `.ptd`; a malformed one is a failure naming it.
    pub fn load(&self) -> Result<Vec<DataFile<'_>>, Failure> {
        self.maps
            .iter()
            .map(|(name, map)| {
                DataFile::load(map, name)
                    .map_err(|e| Failure(format!("{name}: cannot load data file: {e}")))
            })
            .collect()
    }
}

/// Loads `model` from `loader` with `data` attached.
pub fn load_program<'l>(
    model: &Path,
    loader: &'l BufferLoader<'l>,
    data: &'l [&'l DataFile<'l>],
) -> Result<Program<'l>, Failure> {
    Program::load_with_data(loader, et_runtime::Verification::default(), data)
        .map_err(|e| Failure(format!("{}: cannot load program: {e}", model.display())))
}
