//! The ranks the word verifier folds per lane: each move's successor value turned into a
//! rank that orders the side to move's choices (white takes the least, black the greatest),
//! folded over the 64 white-king squares of a word as byte lanes.

use crate::chess::{Color, Square, Symmetry};
use crate::table::values::{
    Class, CODE_CURSED, CODE_EDGE, CODE_ILLEGAL, CODE_LOST_UNMEASURED, CODE_NONE, WTM_MAX_CODE,
};

/// A rank no move of white reaches (white's accumulator starts there: not won).
pub(super) const WTM_NO_WIN: u8 = 255;
/// Black ranks: a loss only without the rule, and an escape (a draw or better).
pub(super) const BTM_CURSED: u8 = 100;
pub(super) const BTM_ESCAPE: u8 = 200;

/// White's rank of a quiet move into a black-to-move code: its own wtm code (1..=50 a win
/// in `2c - 1` plies, 51 the edge, 52 cursed), or no win.
#[inline(always)]
pub(super) fn wtm_rank_quiet(c: u8) -> u8 {
    if c.wrapping_sub(1) < CODE_CURSED {
        c
    } else {
        WTM_NO_WIN
    }
}

/// White's rank of a capture into a sub-endgame's black-to-move code (read as classes: 62 or
/// a distance lost under the rule, 52 lost only without it).
#[inline(always)]
pub(super) fn wtm_rank_capture(c: u8) -> u8 {
    match c {
        CODE_NONE | CODE_ILLEGAL => WTM_NO_WIN,
        CODE_CURSED => CODE_CURSED,
        _ => 1,
    }
}

/// Black's rank of a quiet move into a white-to-move code: the win's code, a loss only
/// without the rule (52, 51, or 53 which the move makes 101 plies), or an escape.
#[inline(always)]
pub(super) fn btm_rank_quiet(c: u8) -> u8 {
    if c.wrapping_sub(1) < WTM_MAX_CODE {
        c
    } else if c.wrapping_sub(CODE_EDGE) < 3 {
        BTM_CURSED
    } else {
        BTM_ESCAPE
    }
}

/// Black's rank of a capture into a sub-endgame's white-to-move code: a win under the rule
/// costs black nothing more (rank 1, the least loss), one only without the rule is cursed.
#[inline(always)]
pub(super) fn btm_rank_capture(c: u8) -> u8 {
    match c {
        CODE_NONE | CODE_ILLEGAL => BTM_ESCAPE,
        CODE_CURSED | CODE_EDGE => BTM_CURSED,
        _ => 1,
    }
}

/// The black-to-move code of an accumulated rank (`checked`: the black king is in check,
/// for a lane without moves).
#[inline]
pub(super) fn btm_code(rank: u8, checked: bool) -> u8 {
    match rank {
        0 if checked => 1,
        0 => CODE_NONE,
        BTM_ESCAPE => CODE_NONE,
        BTM_CURSED => CODE_CURSED,
        w => w + 1,
    }
}

/// The 64 lanes of a word.
pub(super) type Lanes = [u8; 64];

/// The codes a word's two class planes stand for, as a compact table's reader gives them
/// (a win as code 1 for white to move, [`CODE_LOST_UNMEASURED`] for black): enough for the
/// capture ranks, which read only the class.
#[inline]
pub(super) fn lanes_of_classes([lo, hi]: [u64; 2], stm: Color) -> Lanes {
    std::array::from_fn(|l| code_of_class(Class::of_planes(lo, hi, l as u64), stm))
}

/// The code a class stands for, as [`lanes_of_classes`] gives it.
#[inline]
pub(super) fn code_of_class(class: Class, stm: Color) -> u8 {
    match class {
        Class::NotWon => CODE_NONE,
        Class::Win if stm == Color::White => 1,
        Class::Win => CODE_LOST_UNMEASURED,
        Class::Cursed => CODE_CURSED,
        Class::Edge => CODE_EDGE,
    }
}

/// The mask of the lanes whose code satisfies `pred`.
#[inline(always)]
pub(super) fn lanes_where(codes: &Lanes, pred: impl Fn(u8) -> bool) -> u64 {
    codes.iter().enumerate().fold(0, |m, (l, &c)| m | (pred(c) as u64) << l)
}

/// The lanes set in `mask`, in increasing order.
#[inline]
pub(super) fn lanes(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let l = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            l
        })
    })
}

/// Byte lanes of a lane mask: 0xff where set.
#[inline(always)]
pub(super) fn lane_bytes(mask: u64) -> Lanes {
    std::array::from_fn(|l| 0u8.wrapping_sub(((mask >> l) & 1) as u8))
}

/// `acc = min(acc, rank(succ))` in the lanes of `mask` (succ's lanes permuted by `perm`).
#[inline(always)]
pub(super) fn fold_min(acc: &mut Lanes, mask: u64, succ: &[u8], perm: Option<&[u8; 64]>, rank: impl Fn(u8) -> u8) {
    let m = lane_bytes(mask);
    match perm {
        None => {
            let succ: &Lanes = succ.try_into().expect("a word");
            for l in 0..64 {
                let r = rank(succ[l]) | !m[l];
                acc[l] = acc[l].min(r);
            }
        }
        Some(p) => {
            for l in 0..64 {
                let r = rank(succ[p[l] as usize]) | !m[l];
                acc[l] = acc[l].min(r);
            }
        }
    }
}

/// `acc = max(acc, rank(succ))` in the lanes of `mask`.
#[inline(always)]
pub(super) fn fold_max(acc: &mut Lanes, mask: u64, succ: &[u8], perm: Option<&[u8; 64]>, rank: impl Fn(u8) -> u8) {
    let m = lane_bytes(mask);
    match perm {
        None => {
            let succ: &Lanes = succ.try_into().expect("a word");
            for l in 0..64 {
                acc[l] = acc[l].max(rank(succ[l]) & m[l]);
            }
        }
        Some(p) => {
            for l in 0..64 {
                acc[l] = acc[l].max(rank(succ[p[l] as usize]) & m[l]);
            }
        }
    }
}

/// The white king's eight steps as lane offsets, each with the lanes it may start from as
/// byte masks (0xff where the step stays on the board, without wrapping to the other edge).
const KING_STEPS: [(isize, Lanes); 8] = {
    let steps: [(isize, isize, isize); 8] =
        [(-9, -1, -1), (-8, 0, -1), (-7, 1, -1), (-1, -1, 0), (1, 1, 0), (7, -1, 1), (8, 0, 1), (9, 1, 1)];
    let mut out = [(0, [0u8; 64]); 8];
    let mut k = 0;
    while k < 8 {
        let (d, df, dr) = steps[k];
        let mut l = 0;
        while l < 64 {
            let (f, r) = ((l % 8) as isize + df, (l / 8) as isize + dr);
            if f >= 0 && f < 8 && r >= 0 && r < 8 {
                out[k].1[l] = 0xff;
            }
            l += 1;
        }
        out[k].0 = d;
        k += 1;
    }
    out
};

/// `acc[l] = min(acc[l], ranks[t])` over the king's steps `l -> t` from every lane, eight
/// shifted copies of `ranks` instead of a loop per lane and step; `ranks` holds
/// [`WTM_NO_WIN`] where the king may not step.
#[inline(always)]
pub(super) fn fold_king_steps(acc: &mut Lanes, ranks: &Lanes) {
    let mut padded = [WTM_NO_WIN; 192];
    padded[64..128].copy_from_slice(ranks);
    for (d, from) in &KING_STEPS {
        let shifted: &Lanes = padded[(64 + d) as usize..][..64].try_into().expect("a word");
        for l in 0..64 {
            acc[l] = acc[l].min(shifted[l] | !from[l]);
        }
    }
}

/// The lanes whose rank is an escape, the highest: eight lanes at a time, a byte's high bit
/// set where it equals `BTM_ESCAPE`, the eight high bits gathered by one multiplication.
#[inline(always)]
pub(super) fn escaped(acc: &Lanes) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut m = 0;
    for (k, eight) in acc.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(eight.try_into().expect("8 lanes")) ^ (BTM_ESCAPE as u64 * 0x0101_0101_0101_0101);
        let zero = !(((x & LOW7) + LOW7) | x) & !LOW7;
        m |= ((zero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    m
}

/// Each symmetry's square permutation: lane `l` of a position reads lane `perm[l]` of its image.
pub(super) fn permutations() -> [[u8; 64]; 8] {
    std::array::from_fn(|s| std::array::from_fn(|l| Symmetry::all().nth(s).expect("8").apply(l as Square)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shifted folds give what a loop over each lane's king steps gives.
    #[test]
    fn king_steps_fold_like_the_loop() {
        use crate::chess::attacks::king_attacks;
        let mut rng = crate::test_rng::Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng.next();
        for _ in 0..200 {
            let ranks: Lanes = std::array::from_fn(|_| if next() % 3 == 0 { WTM_NO_WIN } else { (next() % 60) as u8 });
            let start: Lanes = std::array::from_fn(|_| (next() % 256) as u8);
            let mut want = start;
            for (l, w) in want.iter_mut().enumerate() {
                let mut to = king_attacks(l as Square);
                while to != 0 {
                    let t = to.trailing_zeros() as usize;
                    to &= to - 1;
                    *w = (*w).min(ranks[t]);
                }
            }
            let mut got = start;
            fold_king_steps(&mut got, &ranks);
            assert_eq!(got, want);
        }
    }

    #[test]
    fn escaped_lanes_are_those_at_the_escape_rank() {
        let mut acc = [0u8; 64];
        for (l, r) in acc.iter_mut().enumerate() {
            *r = [0, 1, 50, 100, BTM_ESCAPE, 199, 201, 255][l * 7 % 8];
        }
        let want = acc.iter().enumerate().fold(0u64, |m, (l, &r)| m | ((r == BTM_ESCAPE) as u64) << l);
        assert_eq!(escaped(&acc), want);
        assert_eq!(escaped(&[BTM_ESCAPE; 64]), u64::MAX);
        assert_eq!(escaped(&[0; 64]), 0);
    }
}
