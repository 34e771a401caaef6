//! What can go wrong with the files of a work folder.

use std::path::PathBuf;

/// An error of the work folder's storage: a failed system call, or damage found by a
/// checksum. The layer above decides what damage means (rebuild a block, restart a run).
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A system call failed; `doing` says what was being done (`writing X at offset N`).
    #[error("{doing}")]
    Io {
        doing: String,
        #[source]
        source: std::io::Error,
    },
    /// A block of a bit table does not match its recorded checksum.
    #[error("{}: checksum mismatch in block {block} at offset {offset} (file damaged)", path.display())]
    ChecksumMismatch { path: PathBuf, block: usize, offset: u64 },
    /// The streams of a finished chunk do not match the checksum in its log record.
    #[error("{}: checksum mismatch in the streams of chunk {chunk} at offset {offset}", path.display())]
    StreamsMismatch { path: PathBuf, chunk: u32, offset: u64 },
    /// A small file (block checksums, manifest, log) is damaged or inconsistent.
    #[error("{}: {what}", path.display())]
    Damaged { path: PathBuf, what: String },
    /// A manifest's JSON could not be parsed.
    #[error("parsing {}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

impl StorageError {
    /// Whether the error is damage found by a checksum (as opposed to a failed system call).
    pub fn is_damage(&self) -> bool {
        !matches!(self, StorageError::Io { .. })
    }
}

/// Attaches what was being done to an I/O error.
pub trait IoContext<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T, StorageError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T, StorageError> {
        self.map_err(|source| StorageError::Io { doing: what(), source })
    }
}
