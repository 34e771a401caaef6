//! What can go wrong with the files of a work folder.

use std::path::PathBuf;

/// An error of the work folder's storage: a failed system call, or damage found by a
/// checksum. The layer above decides what damage means (rebuild a block, restart a run).
/// Messages include their cause (an OS or JSON error), so `{}` tells the whole story.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A system call failed; `doing` says what was being done (`writing X at offset N`).
    #[error("{doing}: {cause}")]
    Io { doing: String, cause: std::io::Error },
    /// A block of a bit table does not match its recorded checksum.
    #[error("{}: checksum mismatch in block {block} at offset {offset} (file damaged)", path.display())]
    ChecksumMismatch { path: PathBuf, block: usize, offset: u64 },
    /// The streams of a finished chunk do not match the checksum in its log record.
    #[error("{}: checksum mismatch in the streams of chunk {chunk} at offset {offset}", path.display())]
    StreamsMismatch { path: PathBuf, chunk: u32, offset: u64 },
    /// A small file (block checksums, manifest, log) is damaged or inconsistent.
    #[error("{}: {what}", path.display())]
    Damaged { path: PathBuf, what: String },
    /// Another process holds the lock on a folder or table.
    #[error("{what} is in use by another tbstream job ({}): {holder}; wait for it to finish, or use another folder", path.display())]
    Locked { what: String, holder: String, path: PathBuf },
    /// A manifest's JSON could not be parsed.
    #[error("parsing {}: {cause}", path.display())]
    Parse { path: PathBuf, cause: serde_json::Error },
}

impl StorageError {
    /// Whether the error is damage found by a checksum (as opposed to a failed system call).
    pub fn is_damage(&self) -> bool {
        !matches!(self, StorageError::Io { .. } | StorageError::Locked { .. })
    }
}

/// Attaches what was being done to an I/O error.
pub trait IoContext<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T, StorageError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T, StorageError> {
        self.map_err(|cause| StorageError::Io { doing: what(), cause })
    }
}
