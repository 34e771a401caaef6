//! The marks every table file opens with, whatever its format: the magic, the format version
//! (`docs/FORMAT.md`: the compact format is Part I, the uncompressed one Part II) and the
//! header's length; and the name of a run's table in a folder.

use crate::chess::Material;
use std::path::{Path, PathBuf};

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"TBSTREAM";
/// Bytes of the header of every version (its last eight the header's checksum).
pub const HEADER_LEN: usize = 256;
/// Format version of the compact tables the generator publishes (Part I): version 6 whose
/// positions with identical men out of order (by H digit) are don't-cares
/// (`index::Layout::identical_partner`).
pub const VERSION_COMPACT: u16 = 7;
/// Format version of the compact tables whose white-to-move wins by a zeroing move are
/// don't-cares in the distance section (a reader searches those moves first), with white's
/// distance histogram in the summary, identical men stored in both orders: still read.
pub const VERSION_COMPACT_ZEROING: u16 = 6;
/// Format version of the compact tables whose transposed twins of the larger slot are
/// don't-cares (`index::TwinWord`), every won position's distance stored (Part I): still read.
pub const VERSION_COMPACT_TWINS: u16 = 5;
/// Format version of the compact tables with a stored order per block section and every
/// slot's value stored (Part I): still read.
pub const VERSION_COMPACT_ORDERS: u16 = 4;
/// Format version of the compact tables published before stored orders (Part I; every
/// section in slot order): still read.
pub const VERSION_COMPACT_SLOT_ORDER: u16 = 3;
/// Format version of uncompressed tables of pawnless runs (Part II; tables published by
/// older builds, and `verify`'s expansions).
pub const VERSION_UNCOMPRESSED: u16 = 1;
/// Format version of uncompressed tables of runs with pawns (Part II).
pub const VERSION_UNCOMPRESSED_PAWNS: u16 = 2;
/// File name extension of a run's table.
pub const EXTENSION: &str = "tbs";

/// Path of a run's table in a folder.
pub fn table_path(dir: &Path, material: &Material) -> PathBuf {
    dir.join(format!("{material}.{EXTENSION}"))
}
