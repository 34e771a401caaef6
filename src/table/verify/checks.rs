//! What every method of the verifier compares: a slot's stored value against the one its
//! successors give, an illegal slot's encoding, a bitbase bit against its value, and the
//! counts of what was checked.

use super::SideReport;
use crate::chess::{Color, Material, Move};
use crate::index::{Layout, Level};
use crate::table::compact::{CompactTable, LevelEntry};
use crate::table::error::TableError;
use crate::table::uncompressed::TableFile;
use crate::table::values::{
    code_to_distance, describe_code, is_rule_win, CODE_CURSED, CODE_EDGE, CODE_EXACT_100, CODE_ILLEGAL, CODE_NONE,
};

/// What the checks read of a table: each slot's 6-bit value code ([`crate::table::values`]) and
/// its bitbase bit. An expanded table holds both; [`super::sample::Sampled`] reads a compact
/// one where it stands.
pub(super) trait Values: Sync {
    fn value_code(&self, stm: Color, slot: u64) -> u8;
    fn bit(&self, stm: Color, slot: u64) -> bool;
}

impl Values for TableFile {
    #[inline]
    fn value_code(&self, stm: Color, slot: u64) -> u8 {
        TableFile::value_code(self, stm, slot)
    }
    #[inline]
    fn bit(&self, stm: Color, slot: u64) -> bool {
        (self.bitbase_word(stm, (slot >> 6) as usize) >> (slot & 63)) & 1 != 0
    }
}

/// An illegal position must hold code 63, bitbase bit 1 (wtm) or 0 (btm); `here` names it.
pub(super) fn check_illegal(
    stm: Color,
    stored: u8,
    stored_bit: bool,
    here: impl Fn() -> String,
    rep: &mut SideReport,
) -> Result<(), TableError> {
    if stored != CODE_ILLEGAL {
        wrong!("{}: illegal position stored as {}, expected code 63", here(), describe_code(stm, stored));
    }
    let want_bit = stm == Color::White;
    if stored_bit != want_bit {
        wrong!("{}: illegal position has bitbase bit {}, expected {}", here(), stored_bit as u8, want_bit as u8);
    }
    rep.illegal += 1;
    Ok(())
}

/// A derived code must be the stored one; a mismatch names the position, both codes, and
/// the move that decides it with the position it leads to (`child`).
pub(super) fn check_derived(
    stm: Color,
    stored: u8,
    (expected, via): (u8, Option<Move>),
    fen: &dyn Fn() -> String,
    child: &dyn Fn(Move) -> String,
) -> Result<(), TableError> {
    // One ply cannot tell a win of exactly 100 plies (53) from a cursed win of 101 (52): both
    // follow from a quiet move into a loss stored at 100 plies, whose own exactness is a step
    // deeper (tables from before the edge was followed store 51 for both).
    let edge = stm == Color::White && expected == CODE_EDGE && matches!(stored, CODE_CURSED | CODE_EXACT_100);
    if expected != stored && !edge {
        let why = via.map_or(String::new(), |mv| format!(" (decided by {mv}, leading to {})", child(mv)));
        wrong!("{}: stored {}, expected {}{why}", fen(), describe_code(stm, stored), describe_code(stm, expected));
    }
    Ok(())
}

/// A legal position's bitbase bit must be set iff its (checked) value is a win; counts it.
pub(super) fn check_bit_and_count(
    stm: Color,
    stored: u8,
    stored_bit: bool,
    fen: &dyn Fn() -> String,
    rep: &mut SideReport,
) -> Result<(), TableError> {
    let rule_win = is_rule_win(stm, stored);
    if stored_bit != rule_win {
        wrong!(
            "{}: value {} but bitbase ({}) bit {}",
            fen(),
            describe_code(stm, stored),
            if stm == Color::White { "t99" } else { "t100" },
            stored_bit as u8
        );
    }
    count(stm, stored, rep);
    Ok(())
}

/// Counts a legal position's (checked) value: not won, won only without the rule, or won
/// with its distance.
pub(super) fn count(stm: Color, code: u8, rep: &mut SideReport) {
    if code == CODE_NONE {
        rep.not_won += 1;
    } else if !is_rule_win(stm, code) {
        rep.cursed += 1;
    } else {
        rep.won += 1;
        rep.longest = rep.longest.max(code_to_distance(stm, code));
    }
}

/// "wtm" or "btm".
pub(super) fn side_name(stm: Color) -> &'static str {
    if stm == Color::White {
        "wtm"
    } else {
        "btm"
    }
}

/// Checks the slice section of a run with pawns against its layout's slices: the keys in
/// storage order, each level's first slice and count. Returns the levels' records.
pub(super) fn check_slice_section(
    run: &Material,
    table: &CompactTable,
    layout: &Layout,
) -> Result<Vec<LevelEntry>, TableError> {
    let slices = layout.slices.as_ref().expect("a run with pawns");
    for (i, (&stored, &key)) in table.slice_keys().iter().zip(&slices.keys).enumerate() {
        if stored != key {
            wrong!("{run}: slice {i} of the slice section has key {stored:#x}, expected {key:#x}");
        }
    }
    let records = table.levels();
    for (level, record) in slices.levels.iter().zip(&records) {
        if (record.first, record.count) != (level.first, level.count) {
            wrong!(
                "{run}: level {} holds slices {}..+{} in the slice section, expected {}..+{}",
                level.level,
                record.first,
                record.count,
                level.first,
                level.count
            );
        }
    }
    Ok(records)
}

/// Each level's stored last step must be the longest distance its slots hold (`longest`,
/// per level of `levels`, both sides to move).
pub(super) fn check_level_steps(
    run: &Material,
    levels: &[Level],
    records: &[LevelEntry],
    longest: &[Option<u8>],
) -> Result<(), TableError> {
    for ((l, record), level_longest) in levels.iter().zip(records).zip(longest) {
        let level_longest = level_longest.unwrap_or(0);
        if record.last_step != level_longest {
            wrong!(
                "{run}: level {}'s last step is {}, but the longest distance stored in it is {level_longest}",
                l.number,
                record.last_step
            );
        }
    }
    Ok(())
}
