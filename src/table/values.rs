//! What a finished table says of a position, in one place: the 6-bit value codes, the
//! win/draw/loss classes of the compact format, and the distances in plies they stand for.
//!
//! A run's values are white's (`docs/FORMAT.md`): with white to move, whether and how fast
//! white wins; with black to move, whether and how slowly black loses. The uncompressed
//! format (Part II) stores a 6-bit code per position, which every reader of a table speaks
//! (the compact reader gives its values in these codes too); the compact format (Part I)
//! stores a class per position and the distance code of white-to-move wins only.
//!
//! Every limit derives from the 50-move rule ([`RULE_PLIES`]): a win under the rule takes at
//! most 100 plies, and a wtm code `c` in `1..=50` is a win in `2c - 1` plies, a btm code `c`
//! in `1..=51` a loss in `2(c - 1)`.

use crate::chess::{Color, RULE_PLIES};

/// The longest distance a table stores, in plies (a win under the 50-move rule).
pub const MAX_DISTANCE: usize = RULE_PLIES as usize;

/// Value code of a position not won for white.
pub const CODE_NONE: u8 = 0;
/// Largest wtm distance code: a win in 99 plies, the longest odd distance under the rule.
pub const WTM_MAX_CODE: u8 = (RULE_PLIES / 2) as u8;
/// Largest btm distance code: a loss in 100 plies.
pub const BTM_MAX_CODE: u8 = WTM_MAX_CODE + 1;
/// Wtm value code of a position first won at step 101 in tables built before the edge was
/// followed: white wins in exactly 100 plies (the last one black's forced zeroing move) or in
/// 101 (a cursed win); see the header's `edge_exact` flag. Tables built now store
/// [`CODE_EXACT_100`] or [`CODE_CURSED`] instead.
pub const CODE_EDGE: u8 = 51;
/// Value code of a position won for white only without the 50-move rule: a cursed win
/// (wtm), or a loss for black that the rule turns into a draw (btm, a blessed loss).
pub const CODE_CURSED: u8 = 52;
/// Wtm value code of a win in exactly 100 plies, the last one black's forced zeroing move (a
/// position of step 101 that needs one ply less, `docs/CURSED.md`): a win under the rule.
pub const CODE_EXACT_100: u8 = 53;
/// The code a reader of a compact table gives a black-to-move loss, whose distance is not
/// stored (its histogram is in the summary; the verifier derives it).
pub const CODE_LOST_UNMEASURED: u8 = 62;
/// Value code of an illegal or broken position.
pub const CODE_ILLEGAL: u8 = 63;

/// Value code of step `k`'s new positions (odd k: wtm, even k: btm); beyond the rule's last
/// step, cursed (the merge gives step 101's wins of exactly 100 plies [`CODE_EXACT_100`]).
#[inline]
pub fn step_code(k: u16) -> u8 {
    if k > RULE_PLIES {
        return CODE_CURSED;
    }
    let k = k as u8;
    if k % 2 == 1 {
        k.div_ceil(2)
    } else {
        k / 2 + 1
    }
}

/// Distance (plies, chain parity; exactly 100 for [`CODE_EXACT_100`]) of a value code; `None`
/// for "not won", cursed and illegal.
#[inline]
pub fn code_to_distance(stm: Color, code: u8) -> Option<u8> {
    match (stm, code) {
        (Color::White, c @ 1..=WTM_MAX_CODE) => Some(2 * c - 1),
        (Color::White, CODE_EXACT_100) => Some(RULE_PLIES as u8),
        (Color::Black, c @ 1..=BTM_MAX_CODE) => Some(2 * (c - 1)),
        _ => None,
    }
}

/// Whether a value code marks a position white wins only without the 50-move rule, or (wtm
/// [`CODE_EDGE`]) perhaps in exactly 100 plies.
#[inline]
pub fn is_beyond_rule(stm: Color, code: u8) -> bool {
    code == CODE_CURSED || (stm == Color::White && code == CODE_EDGE)
}

/// Whether a value code of a legal position is a win for white under the 50-move rule (for
/// black to move, a loss; [`CODE_LOST_UNMEASURED`] counts): what the final bitbases hold.
#[inline]
pub fn is_rule_win(stm: Color, code: u8) -> bool {
    code != CODE_NONE && code != CODE_ILLEGAL && !is_beyond_rule(stm, code)
}

/// Whether black's quiet move into a wtm position of `code` loses only without the 50-move
/// rule: white wins it only so ([`CODE_CURSED`], or [`CODE_EDGE`] in older tables), or in
/// exactly 100 plies ([`CODE_EXACT_100`]), which the black move makes 101.
#[inline]
pub fn lost_only_without_rule_after(code: u8) -> bool {
    matches!(code, CODE_CURSED | CODE_EDGE | CODE_EXACT_100)
}

/// Human reading of a value code.
pub fn describe_code(stm: Color, code: u8) -> String {
    match (stm, code) {
        (_, CODE_NONE) => "code 0 (not won)".to_string(),
        (_, CODE_ILLEGAL) => "code 63 (illegal)".to_string(),
        (_, CODE_CURSED) => "code 52 (won for white only without the 50-move rule)".to_string(),
        (Color::White, CODE_EDGE) => "code 51 (white wins in 100 or, without the rule, 101 plies)".to_string(),
        (Color::White, CODE_EXACT_100) => "code 53 (white wins in exactly 100 plies)".to_string(),
        (Color::White, c) if c <= WTM_MAX_CODE => format!("code {c} (white wins in {} plies)", 2 * c - 1),
        (Color::Black, c) if c <= BTM_MAX_CODE => format!("code {c} (black loses in {} plies)", 2 * (c - 1)),
        (_, c) => format!("code {c} (out of range)"),
    }
}

/// The class of a position in the compact format's win/draw/loss sections (two bits): what
/// white gets with a fresh 50-move counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Class {
    /// Not won for white (a draw, or black wins).
    NotWon = 0,
    /// White wins under the 50-move rule (wtm: white wins; btm: black loses).
    Win = 1,
    /// White wins only without the rule: a cursed win (wtm), a blessed loss (btm).
    Cursed = 2,
    /// Wtm only, in tables converted from files that did not tell them apart: white wins in
    /// exactly 100 plies or, only without the rule, in 101.
    Edge = 3,
}

impl Class {
    /// The class of two bits (higher bits ignored).
    #[inline]
    pub const fn from_bits(bits: u8) -> Class {
        match bits & 3 {
            0 => Class::NotWon,
            1 => Class::Win,
            2 => Class::Cursed,
            _ => Class::Edge,
        }
    }

    /// The class of bit `b` of a word's two bit planes (`lo` the class's bit 0, `hi` its bit 1).
    #[inline]
    pub const fn of_planes(lo: u64, hi: u64, b: u64) -> Class {
        Class::from_bits(((lo >> b) & 1 | ((hi >> b) & 1) << 1) as u8)
    }

    /// The two bits.
    #[inline]
    pub const fn bits(self) -> u8 {
        self as u8
    }

    /// What the class says of a position with black to move, in words.
    pub fn btm_name(self) -> &'static str {
        match self {
            Class::NotWon => "not lost",
            Class::Win => "lost",
            Class::Cursed => "lost only without the 50-move rule",
            Class::Edge => "class 3 (a white-to-move class)",
        }
    }

    /// The class of a legal position's value code (a btm code's class is never
    /// [`Class::Edge`]: a btm loss of 100 plies is a win under the rule).
    #[inline]
    pub fn of_code(stm: Color, code: u8) -> Class {
        match (stm, code) {
            (_, CODE_NONE) => Class::NotWon,
            (_, CODE_CURSED) => Class::Cursed,
            (Color::White, CODE_EDGE) => Class::Edge,
            _ => Class::Win,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_codes_and_distances() {
        assert_eq!(step_code(1), 1);
        assert_eq!(step_code(99), 50);
        assert_eq!(step_code(0), 1);
        assert_eq!(step_code(100), 51);
        // Past 100: cursed; step 101's wins of exactly 100 plies get 53 in the merge.
        assert_eq!(step_code(101), CODE_CURSED);
        assert_eq!(step_code(131), CODE_CURSED);
        assert_eq!(step_code(300), CODE_CURSED);
        assert_eq!(code_to_distance(Color::White, 50), Some(99));
        assert_eq!(code_to_distance(Color::White, CODE_EXACT_100), Some(100));
        assert_eq!(code_to_distance(Color::White, CODE_EDGE), None);
        assert_eq!(code_to_distance(Color::Black, 51), Some(100));
        assert_eq!(code_to_distance(Color::Black, CODE_CURSED), None);
        assert_eq!(code_to_distance(Color::Black, CODE_EXACT_100), None);
        assert_eq!((WTM_MAX_CODE, BTM_MAX_CODE, MAX_DISTANCE), (50, 51, 100));
    }

    #[test]
    fn classes_of_codes() {
        for stm in [Color::White, Color::Black] {
            for code in 0..CODE_ILLEGAL {
                let class = Class::of_code(stm, code);
                assert_eq!(Class::from_bits(class.bits()), class);
                assert_eq!(class == Class::Win, is_rule_win(stm, code), "{stm:?} {code}");
                assert_eq!(matches!(class, Class::Cursed | Class::Edge), is_beyond_rule(stm, code));
            }
        }
        assert_eq!(Class::of_code(Color::Black, BTM_MAX_CODE), Class::Win);
        assert_eq!(Class::of_code(Color::Black, CODE_LOST_UNMEASURED), Class::Win);
        assert_eq!(Class::of_planes(0b10, 0b11, 1), Class::Edge);
        assert_eq!(Class::of_planes(0b10, 0b11, 0), Class::Cursed);
    }
}
