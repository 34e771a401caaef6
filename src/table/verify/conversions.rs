//! Where the verifier reads the result of a conversion, a move that resets the 50-move
//! counter: a capture or a promotion leads into a sub-run, whose final bitbase (`t99` wtm,
//! `t100` btm) says whether white wins it with a fresh counter (a run where white is left with
//! a bare king holds no wins); a pawn push or double step leads into a higher level of this
//! run's own table. En passant is never stored: it is valued at the double step
//! (`../shared/docs/pawns.md`, sections 5 and 6). After white's double step with a black
//! pawn beside it, black loses iff `(T or (S and E)) and A`: `T` the target's own `t100` bit,
//! `A` every legal en-passant capture leads to a white win (the sub-run's `t99`, white's pawn
//! gone), `E` some en-passant capture is legal, `S` black is not in check and has no other
//! legal move. After black's double step white wins iff the target's `t99` bit is set or
//! some legal en-passant capture by white leads to a black loss (the sub-run's `t100`).

use super::checks::Values;
use super::positions::Positions;
use crate::chess::{Color, Move};
use crate::table::men::Men;
use crate::table::values::is_beyond_rule;

/// Where a conversion's result is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A pawn push: this run's final bitbase of a higher level.
    Push,
    /// A pawn double step: as a push, with the en-passant replies valued here.
    Double,
    /// A capture or a promotion: a sub-run's final bitbase.
    Sub,
}

fn kind(mv: &Move) -> Kind {
    debug_assert!(mv.is_zeroing(), "quiet moves are valued by code");
    if mv.capture || mv.promotion.is_some() {
        Kind::Sub
    } else if mv.from.abs_diff(mv.to) == 16 {
        Kind::Double
    } else {
        Kind::Push
    }
}

impl<V: Values> Positions<'_, V> {
    /// The final bitbase bit (`t99` wtm, `t100` btm) of the position `men` of a sub-run, with
    /// a fresh counter; false where white is left with nothing. With `eventual`, whether
    /// white wins it with or without the rule.
    fn sub_bit(&self, men: &Men, stm: Color, eventual: bool) -> bool {
        let key = men.run_key();
        let (_, sub) = self.subs.iter().find(|(k, _)| *k == key).expect("a conversion leads to a successor run");
        let Some((layout, file)) = sub else { return false };
        let found = layout.canonical_slot(men.king(Color::Black), men.pieces(), men.king(Color::White), &men.pawns);
        let slot = found.expect("pawns on ranks 2 to 7").0;
        file.bit(stm, slot) || (eventual && is_beyond_rule(stm, file.value_code(stm, slot)))
    }

    /// The final bitbase bit of a slot of this table; with `eventual`, whether white wins it
    /// with or without the rule.
    fn own_bit(&self, stm: Color, slot: u64, eventual: bool) -> bool {
        self.file.bit(stm, slot) || (eventual && is_beyond_rule(stm, self.file.value_code(stm, slot)))
    }

    /// Whether white's double step `mv`, leading to `child` (slot `slot`), wins: black's
    /// en-passant replies are valued here.
    fn white_double_step_wins(&self, mv: &Move, child: &Men, slot: u64, eventual: bool) -> bool {
        let lost = self.own_bit(Color::Black, slot, eventual);
        let (replies, n) = child.en_passant(Color::Black, mv.to);
        // Black loses iff every en-passant capture loses and either the position without
        // en passant is lost or an en-passant capture is forced (no other move, no check).
        replies[..n].iter().all(|ep| self.sub_bit(ep, Color::White, eventual))
            && (lost || (n > 0 && !child.in_check(Color::Black) && !child.has_move(Color::Black)))
    }

    /// Whether black's double step `mv`, leading to `child` (slot `slot`), loses: white's
    /// en-passant replies are valued here.
    fn black_double_step_loses(&self, mv: &Move, child: &Men, slot: u64, eventual: bool) -> bool {
        let (replies, n) = child.en_passant(Color::White, mv.to);
        self.own_bit(Color::White, slot, eventual)
            || replies[..n].iter().any(|ep| self.sub_bit(ep, Color::Black, eventual))
    }

    /// Whether a conversion `mv` (push, double step, capture, promotion) leading to `child`
    /// wins for white (`stm`, the side to move after it, black) or loses for black (`stm`
    /// white); with `eventual`, with or without the rule.
    pub(super) fn conversion_won(&self, mv: &Move, child: &Men, stm: Color, eventual: bool) -> bool {
        match kind(mv) {
            Kind::Push => self.own_bit(stm, self.own_slot(child), eventual),
            Kind::Double if stm == Color::Black => {
                self.white_double_step_wins(mv, child, self.own_slot(child), eventual)
            }
            Kind::Double => self.black_double_step_loses(mv, child, self.own_slot(child), eventual),
            Kind::Sub => self.sub_bit(child, stm, eventual),
        }
    }
}
