//! The sections of a compact table and how the block sections are cut: which positions a
//! block holds and how many bytes they decode to.

use crate::chess::Color;

/// Positions per block of a class section, as a power of two (64 KiB decoded).
pub const WDL_BLOCK_BITS: u32 = 18;
/// Positions per block of the distance section, as a power of two (64 KiB decoded).
pub const DTZ_BLOCK_BITS: u32 = 16;
/// Bytes of one block-index entry: the end offset of the block's bytes and their checksum.
pub const INDEX_ENTRY_BYTES: u64 = 16;
/// Bytes of decoded class data per 64-position word: two bit planes.
pub const WDL_WORD_BYTES: usize = 16;

/// The sections of a compact table, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// White to move: class per position (blocks of 2^18 positions, two bit planes per word).
    WtmWdl = 0,
    /// White to move: distance code per position (blocks of 2^16 positions, a byte each).
    WtmDtz = 1,
    /// Black to move: class per position.
    BtmWdl = 2,
    /// Black-to-move distances: a count per distance and a slot of a longest loss.
    Summary = 3,
    /// With pawns: the slices' keys and the levels.
    Slices = 4,
}

impl Part {
    /// Every section, in file order.
    pub const ALL: [Part; 5] = [Part::WtmWdl, Part::WtmDtz, Part::BtmWdl, Part::Summary, Part::Slices];
    /// The sections cut into compressed blocks, in file (and writing) order.
    pub const BLOCKED: [Part; 3] = [Part::WtmWdl, Part::WtmDtz, Part::BtmWdl];

    /// The class section of a side to move.
    pub fn wdl(stm: Color) -> Part {
        if stm == Color::White {
            Part::WtmWdl
        } else {
            Part::BtmWdl
        }
    }

    /// The side to move of a class section; white for the distance section (block sections
    /// only).
    pub fn side(self) -> Color {
        if self == Part::BtmWdl {
            Color::Black
        } else {
            Color::White
        }
    }

    /// Positions per block, as a power of two (block sections only).
    pub fn block_bits(self) -> u32 {
        if self == Part::WtmDtz {
            DTZ_BLOCK_BITS
        } else {
            WDL_BLOCK_BITS
        }
    }

    /// Decoded bytes of `positions` positions of this block section.
    pub fn raw_bytes(self, positions: u64) -> usize {
        if self == Part::WtmDtz {
            positions as usize
        } else {
            positions as usize / 64 * WDL_WORD_BYTES
        }
    }

    pub(super) fn is_blocked(self) -> bool {
        (self as usize) < 3
    }
}

/// Where a section lies, and its checksum (of the index, for a block section; of the whole
/// section otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartEntry {
    pub offset: u64,
    pub length: u64,
    pub checksum: u64,
}

/// Number of blocks of a block section of a table of `n_slots` positions per side.
pub fn n_blocks(part: Part, n_slots: u64) -> usize {
    n_slots.div_ceil(1 << part.block_bits()) as usize
}

/// Positions in block `i` of a block section (the last one may be short).
pub fn block_positions(part: Part, n_slots: u64, i: usize) -> u64 {
    let size = 1u64 << part.block_bits();
    size.min(n_slots - i as u64 * size)
}

/// Sections follow the header and each other, each at the next multiple of 8.
pub(super) fn align8(x: u64) -> u64 {
    x.div_ceil(8) * 8
}
