//! Attacks, legality and moves on [`Men`], one position at a time, on the attack tables of
//! [`crate::chess::attacks`] (nothing shared with the bit-parallel passes of `solve`). En
//! passant is left out: no stored position allows it, and the verifier values it at the
//! double step ([`Men::en_passant`]).

use super::Men;
use crate::chess::attacks::{attacks, king_attacks, pawn_attack_set, pawn_attacks};
use crate::chess::{Color, Move, Piece, Role, Square};

/// Whether a pawn on `a` stands beside the square `b` (same rank, next file).
#[inline]
pub fn beside(a: Square, b: Square) -> bool {
    a / 8 == b / 8 && (a % 8).abs_diff(b % 8) == 1
}

/// The square in front of `sq` for a pawn of `color`.
#[inline]
pub fn ahead(color: Color, sq: Square) -> Square {
    if color == Color::White {
        sq + 8
    } else {
        sq - 8
    }
}

/// Whether a pawn of `color` on `sq` may double-step.
#[inline]
pub fn on_start_rank(color: Color, sq: Square) -> bool {
    sq / 8 == if color == Color::White { 1 } else { 6 }
}

/// Whether a pawn of `color` arriving on `sq` promotes.
#[inline]
pub fn on_last_rank(color: Color, sq: Square) -> bool {
    sq / 8 == if color == Color::White { 7 } else { 0 }
}

/// Calls `play(from, to)` for each target square until one returns true; returns whether
/// one did.
#[inline]
fn each_target(from: Square, mut targets: u64, play: &mut dyn FnMut(Square, Square) -> bool) -> bool {
    while targets != 0 {
        let to = targets.trailing_zeros() as Square;
        targets &= targets - 1;
        if play(from, to) {
            return true;
        }
    }
    false
}

impl Men {
    /// Takes the man (piece or pawn, not a king) on `x` off the board.
    pub fn remove(&mut self, x: Square) {
        if let Some(i) = self.pieces().iter().position(|&s| s == x) {
            self.sq.copy_within(i + 1..self.n, i);
            self.role.copy_within(i + 1..self.n, i);
            self.n -= 1;
            if i < self.n_white {
                self.n_white -= 1;
            }
        } else {
            self.pawns = self.pawns.moved(x, None);
        }
    }

    /// Puts a new piece on `x`, keeping the pieces in layout order.
    pub fn insert(&mut self, piece: Piece, x: Square) {
        let side = self.range(piece.color);
        let i = side.clone().find(|&i| self.role[i] > piece.role).unwrap_or(side.end);
        self.sq.copy_within(i..self.n, i + 1);
        self.role.copy_within(i..self.n, i + 1);
        self.sq[i] = x;
        self.role[i] = piece.role;
        self.n += 1;
        if piece.color == Color::White {
            self.n_white += 1;
        }
    }

    /// The men after the man on `from` goes to `to` (a pawn becoming `promotion`, if any),
    /// the man on `taken` (if any) captured.
    pub fn after(&self, from: Square, to: Square, promotion: Option<Role>, taken: Option<Square>) -> Men {
        let mut m = *self;
        if let Some(x) = taken {
            m.remove(x);
        }
        if let Some(k) = m.kings.iter().position(|&k| k == from) {
            m.kings[k] = to;
        } else if let Some(i) = m.pieces().iter().position(|&s| s == from) {
            m.sq[i] = to;
        } else {
            let color = if m.pawns.occupied_by(Color::White) & (1 << from) != 0 { Color::White } else { Color::Black };
            m.pawns = m.pawns.moved(from, promotion.is_none().then_some(to));
            if let Some(role) = promotion {
                m.insert(Piece { color, role }, to);
            }
        }
        m
    }

    /// Whether `target` is attacked by `by`'s men with the board occupied by `occ`, the men
    /// on `skip` (just captured) left out.
    #[inline]
    pub fn attacked(&self, target: Square, by: Color, occ: u64, skip: u64) -> bool {
        let t = 1u64 << target;
        if king_attacks(self.king(by)) & t != 0
            || pawn_attacks(by.other(), target) & self.pawns.occupied_by(by) & !skip != 0
        {
            return true;
        }
        self.range(by).any(|i| (1u64 << self.sq[i]) & skip == 0 && attacks(self.role[i], self.sq[i], occ) & t != 0)
    }

    /// Whether the king of `color` is attacked.
    #[inline]
    pub fn in_check(&self, color: Color) -> bool {
        self.attacked(self.king(color), color.other(), self.occupancy(), 0)
    }

    /// Whether the men form a legal position with `stm` to move: no two on a square, the side
    /// not to move not in check.
    #[inline]
    pub fn legal(&self, stm: Color) -> bool {
        self.apart() && !self.in_check(stm.other())
    }

    /// Squares the king of `us` may not step to: those the other side attacks through it. A
    /// man the king would capture does not attack its own square, and rays to that square
    /// stop there, so capturing it is safe exactly when nothing else guards it.
    #[inline]
    pub fn king_danger(&self, us: Color) -> u64 {
        let them = us.other();
        let occ = self.occupancy() & !(1u64 << self.king(us));
        let mut danger = king_attacks(self.king(them)) | pawn_attack_set(them, self.pawns.occupied_by(them));
        for i in self.range(them) {
            danger |= attacks(self.role[i], self.sq[i], occ);
        }
        danger
    }

    /// Whether `us` has a legal move (en passant excepted), stopping at the first one found:
    /// the king's steps first, then the pieces' moves that keep the king out of check.
    #[inline]
    pub fn has_legal_move(&self, us: Color) -> bool {
        let them = us.other();
        let occ = self.occupancy();
        let barred = self.occupied_by(us) | (1u64 << self.king(them));
        if king_attacks(self.king(us)) & !barred & !self.king_danger(us) != 0 {
            return true;
        }
        if self.pawns.n > 0 {
            return self.has_move(us);
        }
        for i in self.range(us) {
            let from = self.sq[i];
            let mut targets = attacks(self.role[i], from, occ) & !barred;
            while targets != 0 {
                let to = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let after = (occ & !(1u64 << from)) | (1u64 << to);
                if !self.attacked(self.king(us), them, after, 1u64 << to) {
                    return true;
                }
            }
        }
        false
    }

    /// Calls `f` with the men after each legal move of `us` that resets nothing (a king or
    /// piece move without capture), until it returns true (which this returns then).
    #[inline]
    pub fn find_quiet_move(&self, us: Color, mut f: impl FnMut(&Men) -> bool) -> bool {
        let them = us.other();
        let occ = self.occupancy();
        let empty = !occ;
        let k = us.index();
        let mut targets = king_attacks(self.kings[k]) & empty & !self.king_danger(us);
        while targets != 0 {
            let to = targets.trailing_zeros() as Square;
            targets &= targets - 1;
            let mut child = *self;
            child.kings[k] = to;
            if f(&child) {
                return true;
            }
        }
        for i in self.range(us) {
            let from = self.sq[i];
            let mut targets = attacks(self.role[i], from, occ) & empty;
            while targets != 0 {
                let to = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let after = (occ & !(1u64 << from)) | (1u64 << to);
                if self.attacked(self.king(us), them, after, 0) {
                    continue;
                }
                let mut child = *self;
                child.sq[i] = to;
                if f(&child) {
                    return true;
                }
            }
        }
        false
    }

    /// Calls `f` with each legal move of `stm` (en passant excepted: a stored position never
    /// allows it) and the men after it, until `f` returns true; returns whether it did.
    pub fn for_each_move(&self, stm: Color, f: &mut impl FnMut(Move, &Men) -> bool) -> bool {
        self.moves_onto(stm, !0, f)
    }

    /// [`Men::for_each_move`] for the captures only (the men after the others are never built).
    pub fn for_each_capture(&self, stm: Color, f: &mut impl FnMut(Move, &Men) -> bool) -> bool {
        self.moves_onto(stm, self.occupied_by(stm.other()), f)
    }

    /// [`Men::for_each_move`] for the moves that end on a square of `onto`.
    fn moves_onto(&self, stm: Color, onto: u64, f: &mut impl FnMut(Move, &Men) -> bool) -> bool {
        let them = stm.other();
        let occ = self.occupancy();
        let own = self.occupied_by(stm);
        let victims = self.occupied_by(them) & !(1u64 << self.king(them));
        let mut play = |from: Square, to: Square, promotion: Option<Role>, pawn: bool| {
            let capture = victims & (1 << to) != 0;
            let child = self.after(from, to, promotion, capture.then_some(to));
            let child_occ = (occ & !(1u64 << from)) | 1 << to;
            !child.attacked(child.king(stm), them, child_occ, 0)
                && f(Move { from, to, capture, promotion, pawn, en_passant: false }, &child)
        };
        let reachable = !own & !(1u64 << self.king(them)) & onto;
        let king = self.king(stm);
        if each_target(king, king_attacks(king) & reachable, &mut |from, to| play(from, to, None, false)) {
            return true;
        }
        for i in self.range(stm) {
            let from = self.sq[i];
            let targets = attacks(self.role[i], from, occ) & reachable;
            if each_target(from, targets, &mut |f, t| play(f, t, None, false)) {
                return true;
            }
        }
        for &from in self.pawns.of(stm) {
            let mut targets = pawn_attacks(stm, from) & victims;
            let one = ahead(stm, from);
            if occ & (1 << one) == 0 {
                targets |= 1 << one;
                if on_start_rank(stm, from) && occ & (1 << ahead(stm, one)) == 0 {
                    targets |= 1 << ahead(stm, one);
                }
            }
            let mut pawn_move = |from: Square, to: Square| {
                if on_last_rank(stm, to) {
                    Role::PROMOTIONS.iter().any(|&r| play(from, to, Some(r), true))
                } else {
                    play(from, to, None, true)
                }
            };
            if each_target(from, targets & onto, &mut pawn_move) {
                return true;
            }
        }
        false
    }

    /// Whether `stm` has a legal move (en passant excepted).
    pub fn has_move(&self, stm: Color) -> bool {
        self.for_each_move(stm, &mut |_, _| true)
    }

    /// The men after each legal en-passant capture by `by` of the pawn that has just
    /// double-stepped to `to`, and their number.
    pub fn en_passant(&self, by: Color, to: Square) -> ([Men; 2], usize) {
        let mut out = [*self; 2];
        let mut n = 0;
        for &p in self.pawns.of(by) {
            if beside(p, to) {
                let ep = self.after(p, ahead(by, to), None, Some(to));
                if !ep.in_check(by) {
                    out[n] = ep;
                    n += 1;
                }
            }
        }
        (out, n)
    }
}
