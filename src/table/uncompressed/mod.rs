//! The uncompressed table file of one white-wins run (`docs/FORMAT.md`, Part II, format
//! versions 1 and 2): a checksummed header and four sections (five with pawns: the fifth
//! lists the run's slices and levels), every position's 6-bit value code in bit planes and
//! the final bitbases. Older builds published it ([`TableFile`] reads those for the
//! conversion into the compact format), and the verifier expands compact tables into it
//! ([`PartialTable`]).
//!
//! Owns: the older format and the tables written in it. May import `table`'s `values`,
//! `version`, `header` and `error`, never the compact format or its readers.

mod file;
mod header;
mod partial;
mod planes;
mod sections;

pub use file::TableFile;
pub use header::Header;
pub use partial::PartialTable;
pub use planes::{at_most_mask, beyond_rule_mask, code_mask, codes_of_planes, planes_of_codes};
pub use sections::{slice_section, LevelRecord, Section, SectionEntry, LEVEL_RECORD_BYTES, VALUE_WORD_BYTES};
