//! Finished tables: the file format, probing, the independent verifier and statistics.
//!
//! Nothing here builds; the build layer writes tables through [`format::TableWriter`] and
//! reads its sub-endgames through [`format::TableFile`].

pub mod cache;
pub mod compact;
pub mod convert;
mod error;
pub mod format;
pub mod probe;
pub mod stats;
pub mod verify;

pub use error::TableError;
