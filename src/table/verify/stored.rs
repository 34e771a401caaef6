//! White's codes of a version 6 table as its sections store them. In version 6 the distance
//! byte of a win by a zeroing move is a don't-care, and [`CompactTable::read_codes`] gives
//! such a byte as 1 where it holds no win's code; the verifier reads the bytes themselves
//! instead, so that a position whose stored byte must be its code (a win in 1 ply by a quiet
//! mate alone, whose code is 1) is checked against what is stored, and resolves the
//! don't-cares itself (`words::check::resolve_zeroing_wins`, `expand::resolve_zeroing_wins`,
//! `positions::Positions::own_code`).

use crate::chess::Color;
use crate::index::{illegal_word, Layout};
use crate::table::compact::{planes_at, CompactTable, Part, DTZ_BLOCK_BITS, WDL_BLOCK_BITS, WDL_WORD_BYTES};
use crate::table::error::TableError;
use crate::table::values::{CODE_CURSED, CODE_EDGE, CODE_ILLEGAL, CODE_NONE};

/// White's stored codes of some words, with the lanes of each word whose class is 1.
#[derive(Default)]
pub(super) struct StoredWtm {
    /// A word's codes, in the codes of the uncompressed format as
    /// [`CompactTable::read_codes`] gives them (63 for an illegal position, 52 for a cursed
    /// class, 51 for an edge class, 0 for a position not won), but a win's byte as stored.
    pub(super) codes: Vec<[u8; 64]>,
    /// A word's legal lanes of class 1.
    pub(super) wins: Vec<u64>,
}

/// White's stored codes of words `first..first + n` of `table` (`layout` its layout, which
/// finds the illegal positions), into `out` (cleared first). The words must lie in one block
/// of the class section.
pub(super) fn read_stored_wtm(
    table: &CompactTable,
    layout: &Layout,
    first: usize,
    n: usize,
    out: &mut StoredWtm,
) -> Result<(), TableError> {
    let per_wdl = 1usize << (WDL_BLOCK_BITS - 6);
    assert!(n > 0 && first / per_wdl == (first + n - 1) / per_wdl, "words of one class block");
    let mut classes = Vec::new();
    table.block_into(Part::WtmWdl, first / per_wdl, &mut classes)?;
    let per_dtz = 1usize << (DTZ_BLOCK_BITS - 6);
    let (mut bytes, mut block) = (Vec::new(), Vec::new());
    for i in first / per_dtz..(first + n).div_ceil(per_dtz) {
        table.block_into(Part::WtmDtz, i, &mut block)?;
        bytes.extend_from_slice(&block);
    }
    let (class_first, dtz_first) = (first % per_wdl, first % per_dtz);
    if classes.len() < WDL_WORD_BYTES * (class_first + n) || bytes.len() < 64 * (dtz_first + n) {
        return Err(TableError::Wrong(format!(
            "{}: white's blocks of words {first}..{} decode short",
            table.path.display(),
            first + n
        )));
    }
    out.codes.clear();
    out.wins.clear();
    for w in 0..n {
        let illegal = illegal_word(layout, (first + w) as u64, Color::White);
        let [lo, hi] = planes_at(&classes, class_first + w);
        let stored = &bytes[64 * (dtz_first + w)..][..64];
        out.codes.push(std::array::from_fn(|l| {
            let class = (lo >> l & 1) | (hi >> l & 1) << 1;
            match (illegal >> l & 1, class) {
                (1, _) => CODE_ILLEGAL,
                (_, 0) => CODE_NONE,
                (_, 1) => stored[l],
                (_, 2) => CODE_CURSED,
                _ => CODE_EDGE,
            }
        }));
        out.wins.push(lo & !hi & !illegal);
    }
    Ok(())
}
