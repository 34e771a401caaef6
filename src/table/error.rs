//! What can go wrong when tables are opened, probed, verified or counted: what a file
//! contains ([`FormatError`]), and what a caller of the table layer meets ([`TableError`]).

use super::compact::Part;
use super::uncompressed::Section;
use super::version::{
    HEADER_LEN, VERSION_COMPACT, VERSION_COMPACT_SLOT_ORDER, VERSION_UNCOMPRESSED, VERSION_UNCOMPRESSED_PAWNS,
};
use crate::chess::Material;
use crate::pipeline::WorkerPanicked;
use crate::work::StorageError;
use std::path::PathBuf;

/// Problems with a table file's contents.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("{0}: not a tbstream table (bad magic)")]
    BadMagic(PathBuf),
    #[error("{0}: format version {1} is not supported (this build reads versions {VERSION_COMPACT_SLOT_ORDER} to {VERSION_COMPACT}, and converts versions {VERSION_UNCOMPRESSED} and {VERSION_UNCOMPRESSED_PAWNS} with `tbstream compact`)")]
    Version(PathBuf, u16),
    #[error("{path}: this table is in the uncompressed format of version {version}, which this build no longer reads; convert the folder with `tbstream compact {}` (no need to regenerate)", path.parent().map_or(".".into(), |p| p.display().to_string()))]
    OldFormat { path: PathBuf, version: u16 },
    #[error("{path}: {}checksum mismatch in section {part:?} (file damaged)", block.map_or(String::new(), |b| format!("block {b}: ")))]
    PartChecksum { path: PathBuf, part: Part, block: Option<usize> },
    #[error("{path}: block {block} of section {part:?} does not decode ({reason}); file damaged")]
    BlockDecode { path: PathBuf, part: Part, block: usize, reason: String },
    #[error("{path}: block index of section {part:?} damaged: {why}")]
    Index { path: PathBuf, part: Part, why: String },
    #[error("{0}: header checksum mismatch (file damaged)")]
    HeaderChecksum(PathBuf),
    #[error("{0}: file is {1} bytes, shorter than the {HEADER_LEN}-byte header: truncated or empty")]
    ShortHeader(PathBuf, u64),
    #[error("{0}: file is {1} bytes, header says {2}: truncated or damaged")]
    Length(PathBuf, u64, u64),
    #[error("{path}: section {section:?} checksum mismatch at offset {offset} (file damaged)")]
    SectionChecksum { path: PathBuf, section: Section, offset: u64 },
    #[error("{0}: header is inconsistent: {1}")]
    Inconsistent(PathBuf, String),
    #[error("{path}: holds the table of {found}, not {expected} (misnamed file)")]
    WrongRun { path: PathBuf, found: Material, expected: Material },
    /// Opening, mapping, writing or publishing the file failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A table was written wrongly (a bug, not a file problem).
    #[error("writing {0}: {1}")]
    Writer(PathBuf, &'static str),
}

/// An error of the table layer. File problems come as [`FormatError`]s (bad magic, damaged
/// section, truncated file), wrapped with the table they concern. Messages include their
/// cause, so `{}` tells the whole story.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("table folder {} does not exist", .0.display())]
    NoFolder(PathBuf),
    /// A table a probe or a check needs is not in the folder.
    #[error("missing table {} (generate it with `tbstream gen {signature}`)", path.display())]
    Missing { path: PathBuf, signature: Material },
    /// A sub-endgame's table that a distance of `run` needs is not in the folder: a won
    /// position's distance is searched through its captures and promotions when the table
    /// leaves the wins by a zeroing move out (format 6).
    #[error(
        "missing table {} of a sub-endgame of {run} (its distances search the captures and promotions into it; generate it with `tbstream gen {signature}`)",
        path.display()
    )]
    MissingForSearch { path: PathBuf, signature: Material, run: Material },
    #[error("{0} has too many pieces")]
    TooManyPieces(Material),
    #[error("{0}: neither side can win, there is no table")]
    NoTable(Material),
    #[error("{0}: white has a bare king, the run has no table")]
    BareWhite(Material),
    /// Opening a run's table failed.
    #[error("opening table for {material}: {cause}")]
    Opening { material: Material, cause: Box<FormatError> },
    /// A table the verifier needs could not be opened.
    #[error("verifying {run}{}: {cause}", needed.as_ref().map(|s| format!(": sub-endgame {s} is needed")).unwrap_or_default())]
    Verifying {
        run: Material,
        /// The sub-endgame whose table failed, if it is not the run's own.
        needed: Option<Material>,
        cause: Box<TableError>,
    },
    /// The verifier found a stored value that its successors contradict; the message names
    /// the position (as a FEN), the stored and the expected value.
    #[error("{0}")]
    Wrong(String),
    #[error(transparent)]
    Format(Box<FormatError>),
    #[error(transparent)]
    Panicked(#[from] WorkerPanicked),
}

impl From<FormatError> for TableError {
    fn from(e: FormatError) -> TableError {
        TableError::Format(Box::new(e))
    }
}
