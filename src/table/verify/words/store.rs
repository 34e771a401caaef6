//! Black's derived codes between the two halves of the check: written a block at a time
//! as the black chunks derive them, read a block at a time as the white chunks need them.
//! In RAM when the budget allows, otherwise in an unnamed temporary file (gone when the
//! process ends, however it ends), read and written with `pread`/`pwrite` so that its pages
//! stay in the page cache, not in the process.

use crate::table::error::{FormatError, TableError};
use crate::work::IoContext;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// A byte per slot of one side to move, in storage order.
pub(super) enum Store {
    Memory(Vec<u8>),
    /// The file, and the folder it lies in (for messages: it has no name).
    File(File, PathBuf),
}

impl Store {
    /// A store for `n_slots` codes: in RAM if `in_memory`, else a temporary file in `dir`
    /// (or in the system's temporary folder if `dir` is not writable).
    pub(super) fn new(n_slots: u64, in_memory: bool, dir: &Path) -> Result<Store, TableError> {
        if in_memory {
            return Ok(Store::Memory(vec![0; n_slots as usize]));
        }
        let (file, dir) = match tempfile::tempfile_in(dir) {
            Ok(file) => (file, dir.to_path_buf()),
            Err(_) => (
                tempfile::tempfile()
                    .doing(|| format!("creating a temporary file for black's derived codes in {}", dir.display()))
                    .map_err(FormatError::from)?,
                std::env::temp_dir(),
            ),
        };
        Ok(Store::File(file, dir))
    }

    /// Stores `codes` from slot `first` on.
    pub(super) fn write(&mut self, first: u64, codes: &[u8]) -> Result<(), TableError> {
        match self {
            Store::Memory(v) => v[first as usize..][..codes.len()].copy_from_slice(codes),
            Store::File(f, dir) => f
                .write_all_at(codes, first)
                .doing(|| {
                    format!("writing black's derived codes to a temporary file in {} (at {first})", dir.display())
                })
                .map_err(FormatError::from)?,
        }
        Ok(())
    }

    /// Reads the codes of slots `first..first + out.len()`.
    pub(super) fn read(&self, first: u64, out: &mut [u8]) -> Result<(), TableError> {
        match self {
            Store::Memory(v) => out.copy_from_slice(&v[first as usize..][..out.len()]),
            Store::File(f, dir) => f
                .read_exact_at(out, first)
                .doing(|| {
                    format!("reading black's derived codes from a temporary file in {} (at {first})", dir.display())
                })
                .map_err(FormatError::from)?,
        }
        Ok(())
    }
}
