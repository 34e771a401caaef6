//! Finished tables: the file format, probing, the independent verifier and statistics.
//!
//! Nothing here builds. The build layer assembles a run in the uncompressed format
//! ([`format::PartialTable`]), converts it into the published compact format
//! ([`convert::compact_table`]) and reads its sub-endgames' bitbases from compact tables
//! ([`compact::CompactTable`]).

pub mod cache;
pub mod compact;
pub mod convert;
mod error;
pub mod format;
pub mod probe;
pub mod stats;
pub mod verify;

pub use error::TableError;
