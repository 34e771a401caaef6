//! Where a reader of a run's table takes its value codes from, whichever the format: 64 per
//! storage word, in the codes of the uncompressed format ([`super::values`]: 63 for an illegal
//! position, black's losses in a compact table [`CODE_LOST_UNMEASURED`]).
//!
//! [`CODE_LOST_UNMEASURED`]: super::values::CODE_LOST_UNMEASURED

use super::compact::{CompactTable, WDL_BLOCK_BITS};
use super::error::TableError;
use super::uncompressed::{codes_of_planes, TableFile};
use crate::chess::Color;
use crate::index::Layout;

/// Storage words of one block of a compact table's class sections: the most a reader takes
/// at a time.
pub(crate) const BATCH_WORDS: usize = 1 << (WDL_BLOCK_BITS - 6);

/// A run's 6-bit value codes as bit planes, 64 positions a word (`[u64; 6]`, plane `j` holding
/// bit `j` of each position's code): an uncompressed table, or the generator's delta streams
/// read straight into the compact format.
pub trait PlaneSource: Sync {
    /// Stored positions per side to move.
    fn n_slots(&self) -> u64;
    /// The planes of words `first..first + n` of a side to move, into `out` (cleared first).
    fn read_planes(&self, stm: Color, first: usize, n: usize, out: &mut Vec<[u64; 6]>) -> Result<(), TableError>;

    /// The wtm positions of words `first..first + n` whose side to move wins by a zeroing
    /// move (a capture or a pawn move into a position lost with a fresh counter: the
    /// generator's `c`), into `out` (cleared first); false, with `out` left empty, when the
    /// source does not know them.
    fn zeroing_wins(&self, first: usize, n: usize, out: &mut Vec<u64>) -> Result<bool, TableError> {
        let _ = (first, n);
        out.clear();
        Ok(false)
    }

    /// The same words as value codes, 64 per word.
    fn read_codes(&self, stm: Color, first: usize, n: usize, out: &mut Vec<[u8; 64]>) -> Result<(), TableError> {
        let mut planes = Vec::with_capacity(n);
        self.read_planes(stm, first, n, &mut planes)?;
        out.clear();
        out.extend(planes.iter().map(codes_of_planes));
        Ok(())
    }
}

impl PlaneSource for TableFile {
    fn n_slots(&self) -> u64 {
        self.header.n_slots
    }

    fn read_planes(&self, stm: Color, first: usize, n: usize, out: &mut Vec<[u64; 6]>) -> Result<(), TableError> {
        Ok(TableFile::read_planes(self, stm, first, n, out)?)
    }
}

/// Where a scan reads a run's value codes: 64 per storage word, in the codes of the
/// uncompressed format (`docs/FORMAT.md`, 63 for an illegal position), read in batches so
/// that a scan holds only the batches in flight.
pub(crate) enum CodeSource<'a> {
    /// Value planes: an uncompressed table (a file to convert), or a run's delta
    /// streams.
    Plain(&'a dyn PlaneSource),
    /// A compact table: classes, wtm distances, legality from the position.
    Compact(&'a CompactTable, &'a Layout),
}

impl CodeSource<'_> {
    pub(crate) fn n_slots(&self) -> u64 {
        match self {
            CodeSource::Plain(f) => f.n_slots(),
            CodeSource::Compact(t, _) => t.header.n_slots,
        }
    }

    /// The codes of words `first..first + n`, which must lie in one block of the compact
    /// format's class sections (`first` a multiple of [`BATCH_WORDS`], `n` at most that).
    pub(crate) fn read(&self, stm: Color, first: usize, n: usize, out: &mut Vec<[u8; 64]>) -> Result<(), TableError> {
        match self {
            CodeSource::Plain(f) => f.read_codes(stm, first, n, out),
            CodeSource::Compact(t, l) => Ok(t.read_codes(Some(l), stm, first, n, out)?),
        }
    }
}
