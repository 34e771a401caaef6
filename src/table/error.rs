//! What can go wrong when tables are opened, probed, verified or counted.

use super::format::FormatError;
use crate::chess::Material;
use crate::pipeline::WorkerPanicked;
use std::path::PathBuf;

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
