//! A word of 64 value codes as the uncompressed format stores it: six bit planes, bit `j` of
//! every code in plane `j`.

use crate::chess::Color;
use crate::table::values::{CODE_CURSED, CODE_EDGE};

/// `SPREAD[b]` has bit `i` of `b` in bit 0 of byte `i`: eight positions of a plane spread
/// over eight bytes.
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b] |= ((b as u64 >> i) & 1) << (8 * i);
            i += 1;
        }
        b += 1;
    }
    t
};

/// The 64 codes of a word of values given as its six bit planes.
#[inline]
pub fn codes_of_planes(planes: &[u64; 6]) -> [u8; 64] {
    let mut out = [0u8; 64];
    for (k, chunk) in out.chunks_exact_mut(8).enumerate() {
        let v = (0..6).fold(0u64, |v, j| v | SPREAD[((planes[j] >> (8 * k)) & 0xff) as usize] << j);
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    out
}

/// The six bit planes of a word of 64 codes (inverse of [`codes_of_planes`]).
#[inline]
pub fn planes_of_codes(codes: &[u8; 64]) -> [u64; 6] {
    std::array::from_fn(|j| codes.iter().enumerate().fold(0u64, |p, (b, &c)| p | (((c >> j) & 1) as u64) << b))
}

/// The positions of a word of values (its six bit planes) whose code is at most `code`: a
/// comparison bit plane by bit plane, the highest first.
#[inline]
pub fn at_most_mask(planes: &[u64; 6], code: u8) -> u64 {
    let (mut below, mut equal) = (0u64, !0u64);
    for j in (0..6).rev() {
        if code >> j & 1 == 1 {
            below |= equal & !planes[j];
            equal &= planes[j];
        } else {
            equal &= !planes[j];
        }
    }
    below | equal
}

/// The positions of a word of values (its six bit planes) that hold `code`.
#[inline]
pub fn code_mask(planes: &[u64; 6], code: u8) -> u64 {
    (0..6).fold(!0u64, |m, j| m & if code >> j & 1 == 1 { planes[j] } else { !planes[j] })
}

/// The positions of a word of values (its six bit planes) that white wins only without the
/// 50-move rule, or (wtm code 51) perhaps in exactly 100 plies: with a table's bitbase, the
/// positions white wins with or without the rule.
pub fn beyond_rule_mask(stm: Color, planes: &[u64; 6]) -> u64 {
    let is = |code: u8| code_mask(planes, code);
    match stm {
        Color::White => is(CODE_CURSED) | is(CODE_EDGE),
        Color::Black => is(CODE_CURSED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::values::CODE_EXACT_100;

    #[test]
    fn planes_round_trip_and_masks() {
        let codes: [u8; 64] = std::array::from_fn(|b| (b as u8 * 7) % 64);
        let planes = planes_of_codes(&codes);
        assert_eq!(codes_of_planes(&planes), codes);
        for code in 0..64 {
            let want = codes.iter().enumerate().fold(0u64, |m, (b, &c)| m | ((c == code) as u64) << b);
            assert_eq!(code_mask(&planes, code), want);
            let at_most = codes.iter().enumerate().fold(0u64, |m, (b, &c)| m | ((c <= code) as u64) << b);
            assert_eq!(at_most_mask(&planes, code), at_most, "code {code}");
        }
    }

    #[test]
    fn beyond_rule_masks() {
        // Eventual wins: the cursed codes of the side to move.
        let planes = |code: u8| -> [u64; 6] { std::array::from_fn(|j| if code >> j & 1 == 1 { 1 << 5 } else { 0 }) };
        assert_eq!(beyond_rule_mask(Color::White, &planes(CODE_CURSED)), 1 << 5);
        assert_eq!(beyond_rule_mask(Color::White, &planes(CODE_EDGE)), 1 << 5);
        assert_eq!(beyond_rule_mask(Color::White, &planes(CODE_EXACT_100)), 0);
        assert_eq!(beyond_rule_mask(Color::Black, &planes(CODE_EDGE)), 0);
        assert_eq!(beyond_rule_mask(Color::Black, &planes(CODE_CURSED)), 1 << 5);
    }
}
