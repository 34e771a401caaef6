//! Finished tables: the file formats, probing, the independent verifier and statistics.
//!
//! Owns: the bytes of finished tables and what they mean. May import `chess`, `index`, `work`
//! (crash-safe publishing), `pipeline` and `progress`; never `solve` (the reader is independent
//! of the generator), `generate` or `cli`.
//!
//! Nothing here builds. The generate layer writes a run's compact table from its value planes
//! ([`convert::planes_to_compact`]), converts old uncompressed tables
//! ([`convert::uncompressed_to_compact`]) and reads its sub-endgames' bitbases from compact
//! tables ([`compact::CompactTable`]). What a table says of a position (value codes, classes,
//! distances) is defined once, in [`values`].

pub mod cache;
mod codes;
pub mod compact;
pub mod convert;
mod error;
pub mod header;
mod keys;
pub(crate) mod men;
pub mod probe;
pub mod published;
pub mod stats;
pub mod uncompressed;
pub mod values;
pub mod verify;
pub mod version;

pub use codes::PlaneSource;
pub use error::{FormatError, TableError};
