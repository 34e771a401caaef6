//! The compact table file that tables are published in (format version 7, `docs/FORMAT.md`,
//! Part I): per side to move a win/draw/loss class, per white-to-move position a distance
//! code, each section stored in an order of its own (`index::StoredOrder`: neighbouring
//! squares near each other) and cut into blocks that are compressed on their own (zstd)
//! behind a checksummed block index; without pawns the larger slot of each pair of transposed
//! twins is not stored (`index::Layout::kept_slot`), nor a position whose identical men are
//! out of order (`index::Layout::identical_partner`), nor the distance of a win by a zeroing
//! move (a reader searches those moves). Versions 3 (every section in slot order), 4 (every
//! twin stored), 5 (every win's distance stored) and 6 (identical men in both orders) are
//! still read. Opening a table checks its header and indexes
//! only; a block's
//! checksum is checked the first time it is decoded, so that a probe on a cold cache reads a
//! few kilobytes, never the table.
//!
//! Owns: the published format, reading and writing. May import `table`'s `values`, `version`,
//! `header` and `error`, never `probe`, `verify` or `stats`, which read through it.
//!
//! Nothing is stored for illegal positions (they take whatever value compresses best), and
//! black-to-move distances are not stored: they follow from the white-to-move distances by a
//! one-ply search (`docs/FORMAT.md`, "Black-to-move distances"). The distance histograms of
//! both sides to move (black's alone before version 6) are kept in a small summary section,
//! for `stats`.
//!
//! [`CompactWriter`] writes a table block by block in storage order (it never holds more than
//! the blocks in flight) and resumes an interrupted write from its last complete block.

mod codec;
mod header;
mod masked;
mod part;
mod reader;
mod slices;
mod spill;
mod summary;
mod writer;

pub use codec::{class_at, pack_block, planes_at, BlockData, BYTE_MASKS, DEFAULT_ZSTD_LEVEL, MIN_MATCH};
pub use header::{CompactHeader, TableMeta, CODEC_ZSTD};
pub use masked::pack_masked;
pub use part::{
    block_positions, n_blocks, Part, PartEntry, DTZ_BLOCK_BITS, INDEX_ENTRY_BYTES, WDL_BLOCK_BITS, WDL_WORD_BYTES,
};
pub use reader::CompactTable;
pub use slices::{slice_bytes, LevelEntry, LEVEL_BYTES};
pub use spill::Spill;
pub use summary::{summary_bytes, Summary, SUMMARY_BYTES, SUMMARY_DISTANCES};
pub use writer::{CompactWriter, WritePosition};

pub use crate::table::version::VERSION_COMPACT;
