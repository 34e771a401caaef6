//! The pawn moves of a word of a run with pawns, all conversions (a pawn move resets the
//! 50-move counter, so only the class of its successor counts): pushes and double steps
//! into the slices of this run they reach, captures and promotions into successor runs.
//! En passant is never stored: it is valued at the double step it answers
//! (`../shared/docs/pawns.md`), lane by lane on the men of the position, as `super`'s
//! rules say: after white's double step with a black pawn beside it, black loses iff every
//! legal en-passant capture loses and either the position without en passant is lost or an
//! en-passant capture is forced (no other move, no check); after black's, white wins iff the
//! position is won or some legal en-passant capture by white wins.

use super::derive::{Config, Run};
use super::lanes::{
    btm_rank_capture, fold_max, fold_min, lanes, lanes_of_classes, wtm_rank_capture, Lanes, BTM_CURSED, BTM_ESCAPE,
    WTM_NO_WIN,
};
use super::targets::Target;
use crate::chess::attacks::pawn_attacks;
use crate::chess::{Color, Role, Square, MAX_PIECES};
use crate::index::Pawns;
use crate::table::compact::planes_at;
use crate::table::men::{ahead, beside, on_last_rank, on_start_rank, Men};
use crate::table::values::{is_beyond_rule, is_rule_win, CODE_CURSED};

/// Whether white wins a position of `code` (side to move `stm`) under the rule, or with
/// `eventual` with or without it.
#[inline]
fn won(stm: Color, code: u8, eventual: bool) -> bool {
    is_rule_win(stm, code) || (eventual && is_beyond_rule(stm, code))
}

impl Run<'_> {
    /// The word a pawn push or double step of the word's men `c` leads to (the pawns after
    /// it `pawns`, `stm` to move there), read as classes, with the permutation of its lanes.
    fn pushed(&self, stm: Color, c: &Config, pawns: &Pawns) -> (Lanes, Option<&[u8; 64]>) {
        let slice = self.slice.as_ref().expect("a run with pawns");
        let tb = self.layout.total_bits;
        let (slot, sym) = self
            .layout
            .canonical_slot(c.bk, &c.sq[..self.n_pieces()], 0, pawns)
            .expect("a pushed pawn below the last rank");
        let planes = slice.pushed.get(&((slot >> tb) as u32, stm)).expect("the slices a push reaches are loaded");
        let w = ((slot & ((1 << tb) - 1)) >> 6) as usize;
        (lanes_of_classes(planes_at(planes, w), stm), (sym.code() != 0).then(|| &self.perms[sym.code() as usize]))
    }

    /// Whether white wins (`eventual`: with or without the rule) the successor-run position
    /// `men`, `stm` to move.
    fn sub_won(&self, target: &Target, men: &Men, stm: Color, eventual: bool) -> bool {
        let Some(sub) = target.sub else { return false };
        let (bk, wk) = (men.king(Color::Black), men.king(Color::White));
        let (slot, _) = sub.layout.canonical_slot(bk, men.pieces(), wk, &men.pawns).expect("pawns on ranks 2 to 7");
        won(stm, sub.code(slot), eventual)
    }

    /// The promotions of the pawn on `s` to `t` (`taken`: the piece captured there), folded
    /// for `mover` into `acc`.
    fn fold_promotions(&self, mover: Color, c: &Config, lanes: u64, s: Square, t: Square, acc: &mut Lanes) {
        let targets = self.slice.as_ref().expect("a run with pawns").targets;
        let mut ext = [0; MAX_PIECES + 1];
        ext[..MAX_PIECES].copy_from_slice(&c.sq);
        ext[MAX_PIECES] = t;
        let pawns = c.pawns.moved(s, None);
        let taken = (c.white | c.black) & 1 << t != 0;
        for q in 0..Role::PROMOTIONS.len() {
            let target = match taken {
                true => &targets.promote_capture[mover.index()][q][self.piece_on(c, t)],
                false => &targets.promote[mover.index()][q],
            };
            match mover {
                Color::White => self.fold_conversion_wtm(acc, lanes, target, c.bk, &ext, &pawns),
                Color::Black => self.fold_conversion_btm(acc, lanes, target, c.bk, &ext, &pawns),
            }
        }
    }

    /// The pawn moves of `mover` in the word (legal lanes `legal`) folded into `acc`:
    /// white's take the least rank, black's the greatest.
    pub(super) fn pawn_moves(&self, mover: Color, c: &Config, att: &[u64; MAX_PIECES], legal: u64, acc: &mut Lanes) {
        let white = mover == Color::White;
        // Lanes where the mover's king stands attacked after its pawn's move `s -> t`.
        let exposed = |s: Square, t: Square, taken: u64| match white {
            true => self.black_attacks(c, att, Some((s, t)), taken),
            false => self.white_checks(c, att, Some((s, t)), taken),
        };
        let push = |acc: &mut Lanes, lanes: u64, pawns: &Pawns| {
            let (succ, perm) = self.pushed(mover.other(), c, pawns);
            match white {
                true => fold_min(acc, lanes, &succ, perm, wtm_rank_capture),
                false => fold_max(acc, lanes, &succ, perm, btm_rank_capture),
            }
        };
        let prey = if white { c.black | c.bp } else { c.white | c.wp };
        for &s in c.pawns.of(mover) {
            let one = ahead(mover, s);
            if c.occ & 1 << one == 0 {
                let lanes = legal & !(1 << one) & !exposed(s, one, 0);
                if lanes != 0 && on_last_rank(mover, one) {
                    self.fold_promotions(mover, c, lanes, s, one, acc);
                } else if lanes != 0 {
                    push(acc, lanes, &c.pawns.moved(s, Some(one)));
                }
                let two = ahead(mover, one);
                if on_start_rank(mover, s) && c.occ & 1 << two == 0 {
                    let lanes = legal & !(1 << one | 1 << two) & !exposed(s, two, 0);
                    let pawns = c.pawns.moved(s, Some(two));
                    if lanes != 0 && c.pawns.of(mover.other()).iter().any(|&p| beside(p, two)) {
                        match white {
                            true => self.white_double_step_with_replies(c, lanes, two, &pawns, acc),
                            false => self.black_double_step_with_replies(c, lanes, two, &pawns, acc),
                        }
                    } else if lanes != 0 {
                        push(acc, lanes, &pawns);
                    }
                }
            }
            let mut targets = pawn_attacks(mover, s) & prey;
            while targets != 0 {
                let t = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let lanes = legal & !exposed(s, t, 1 << t);
                if lanes == 0 {
                    continue;
                }
                if on_last_rank(mover, t) {
                    self.fold_promotions(mover, c, lanes, s, t, acc);
                    continue;
                }
                let (target, pawns) = self.taken_by(c, mover, t).expect("a man taken");
                let pawns = pawns.moved(s, Some(t));
                match white {
                    true => self.fold_conversion_wtm(acc, lanes, target, c.bk, &c.sq, &pawns),
                    false => self.fold_conversion_btm(acc, lanes, target, c.bk, &c.sq, &pawns),
                }
            }
        }
    }

    /// White's double step to `two` (pawns after it `pawns`) with a black pawn beside it,
    /// lane by lane: black's en-passant replies valued here.
    fn white_double_step_with_replies(&self, c: &Config, mask: u64, two: Square, pawns: &Pawns, acc: &mut Lanes) {
        let targets = self.slice.as_ref().expect("a run with pawns").targets;
        let taken = targets.pawn_taken[Color::White.index()].as_ref().expect("white has a pawn");
        let (own, perm) = self.pushed(Color::Black, c, pawns);
        for l in lanes(mask) {
            let child = Men::of_squares(self.layout, c.bk, &c.sq[..self.n_pieces()], l as Square, *pawns);
            let code = own[perm.map_or(l, |p| p[l] as usize)];
            let (replies, n) = child.en_passant(Color::Black, two);
            let forced = n > 0 && !child.in_check(Color::Black) && !child.has_move(Color::Black);
            let wins = |eventual| {
                replies[..n].iter().all(|ep| self.sub_won(taken, ep, Color::White, eventual))
                    && (won(Color::Black, code, eventual) || forced)
            };
            let rank = if wins(false) {
                1
            } else if wins(true) {
                CODE_CURSED
            } else {
                WTM_NO_WIN
            };
            acc[l] = acc[l].min(rank);
        }
    }

    /// Black's double step to `two` with a white pawn beside it, lane by lane: white's
    /// en-passant replies valued here.
    fn black_double_step_with_replies(&self, c: &Config, mask: u64, two: Square, pawns: &Pawns, acc: &mut Lanes) {
        let targets = self.slice.as_ref().expect("a run with pawns").targets;
        let taken = targets.pawn_taken[Color::Black.index()].as_ref().expect("black has a pawn");
        let (own, perm) = self.pushed(Color::White, c, pawns);
        for l in lanes(mask) {
            let child = Men::of_squares(self.layout, c.bk, &c.sq[..self.n_pieces()], l as Square, *pawns);
            let code = own[perm.map_or(l, |p| p[l] as usize)];
            let (replies, n) = child.en_passant(Color::White, two);
            let loses = |eventual| {
                won(Color::White, code, eventual)
                    || replies[..n].iter().any(|ep| self.sub_won(taken, ep, Color::Black, eventual))
            };
            let rank = if loses(false) {
                1
            } else if loses(true) {
                BTM_CURSED
            } else {
                BTM_ESCAPE
            };
            acc[l] = acc[l].max(rank);
        }
    }
}
