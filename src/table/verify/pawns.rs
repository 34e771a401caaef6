//! The verifier's path for runs with pawns (`../shared/docs/pawns.md`, sections 2, 3, 5-7).
//!
//! The rules are those of the pawnless path, with the pawn moves among the conversions:
//!
//! - a conversion resets the 50-move counter: every capture and **every pawn move** (push,
//!   double step, promotion to each of Q R B N, pawn capture). A capture or a promotion is
//!   read from a sub-run's final bitbase (`t99` wtm, `t100` btm; a run where white is left
//!   with nothing holds no wins), a push or a double step from this run's own final bitbase
//!   (the target stands in a higher level of the same table);
//! - en passant is never stored; it is valued at the double step. After white's double step
//!   with a black pawn beside it, black loses iff `(T or (S and E)) and A`: `T` the target's
//!   own `t100` bit, `A` every legal en-passant capture leads to a white win (the sub-run's
//!   `t99`, white's pawn gone), `E` some en-passant capture is legal, `S` black is not in
//!   check and has no other legal move. After black's double step white wins iff the
//!   target's `t99` bit is set or some legal en-passant capture by white leads to a black
//!   loss (the sub-run's `t100`);
//! - the only symmetry is the left-right mirror: when a slot's pawn configuration is its own
//!   file-pattern mirror, both orientations are stored, and the mirrored position's slot
//!   must hold the same value (it is checked against the smaller of the two slots);
//! - the slice section must list the layout's slices and levels, each level's last step
//!   must be the longest distance stored in it, and its range checksums must match.
//!
//! The move generator is plain and one position at a time, on the attack tables of
//! [`crate::chess::attacks`]; it shares nothing with `solve`. Nothing allocates per slot.

use super::expand::derive_btm;
use super::sample::{Sampled, Sampler};
use super::{
    check_bit_and_count, check_derived, check_illegal, side_name, verify_side, CheckSlot, Checked, SideReport, Sources,
    Values,
};
use crate::chess::attacks::{attacks, king_attacks, pawn_attacks};
use crate::chess::position::board_field;
use crate::chess::square::square_name;
use crate::chess::{Color, Material, Move, Piece, Position, Role, Square, MAX_PIECES};
use crate::index::slices::MAX_PAWNS;
use crate::index::{Layout, Pawns, Slices};
use crate::table::compact::{CompactTable, LevelEntry};
use crate::table::uncompressed::TableFile;
use crate::table::values::{
    describe_code, is_beyond_rule, lost_only_without_rule_after, Class, BTM_MAX_CODE, CODE_CURSED, CODE_EDGE,
    CODE_ILLEGAL, CODE_NONE, WTM_MAX_CODE,
};
use crate::table::TableError;
use std::cmp::Ordering;

/// The men of a position of a run with pawns, or of one of its sub-runs.
#[derive(Clone, Copy, Debug)]
struct Men {
    wk: Square,
    bk: Square,
    /// Number of pieces (neither kings nor pawns).
    n: usize,
    /// The pieces sorted by colour (white first) then role (Q R B N): the order of every
    /// layout's pieces, so that `sq[..n]` indexes the run of the men's material directly.
    piece: [Piece; MAX_PIECES],
    sq: [Square; MAX_PIECES],
    pawns: Pawns,
}

/// A material as a number: three bits per (colour, role) count, kings left out.
fn material_key_of(color: Color, role: Role) -> u32 {
    1 << (3 * (5 * color.index() + role as usize - 1))
}

fn material_key(m: &Material) -> u32 {
    let side = |c: Color| m.side(c).iter().map(move |&r| material_key_of(c, r));
    side(Color::White).chain(side(Color::Black)).sum()
}

/// Whether a pawn on `a` stands beside the square `b` (same rank, next file).
fn beside(a: Square, b: Square) -> bool {
    a / 8 == b / 8 && (a % 8).abs_diff(b % 8) == 1
}

/// The square in front of `sq` for a pawn of `color`.
fn ahead(color: Color, sq: Square) -> Square {
    if color == Color::White {
        sq + 8
    } else {
        sq - 8
    }
}

/// Whether a pawn of `color` on `sq` may double-step.
fn on_start_rank(color: Color, sq: Square) -> bool {
    sq / 8 == if color == Color::White { 1 } else { 6 }
}

/// Whether a pawn of `color` arriving on `sq` promotes.
fn on_last_rank(color: Color, sq: Square) -> bool {
    sq / 8 == if color == Color::White { 7 } else { 0 }
}

/// The pawns after the one on `from` moves to `to` (`None`: it leaves the board).
fn pawns_moved(p: &Pawns, from: Square, to: Option<Square>) -> Pawns {
    let (mut w, mut b) = ([0; MAX_PAWNS], [0; MAX_PAWNS]);
    let (mut nw, mut nb) = (0, 0);
    for (i, &s) in p.sq[..p.n].iter().enumerate() {
        let s = match (s == from, to) {
            (false, _) => s,
            (true, Some(t)) => t,
            (true, None) => continue,
        };
        if i < p.n_white {
            w[nw] = s;
            nw += 1;
        } else {
            b[nb] = s;
            nb += 1;
        }
    }
    Pawns::new(&w[..nw], &b[..nb])
}

impl Men {
    fn pieces(&self) -> &[Square] {
        &self.sq[..self.n]
    }

    fn king(&self, color: Color) -> Square {
        if color == Color::White {
            self.wk
        } else {
            self.bk
        }
    }

    fn pawn_bb(&self, color: Color) -> u64 {
        self.pawns.of(color).iter().fold(0, |b, &s| b | 1 << s)
    }

    /// The squares of one side's men, its king included.
    fn men_of(&self, color: Color) -> u64 {
        let pieces = self.piece[..self.n].iter().zip(self.pieces()).filter(|(p, _)| p.color == color);
        pieces.fold(self.pawn_bb(color) | 1 << self.king(color), |b, (_, &s)| b | 1 << s)
    }

    fn occupancy(&self) -> u64 {
        self.men_of(Color::White) | self.men_of(Color::Black)
    }

    /// Whether no two men share a square.
    fn apart(&self) -> bool {
        self.occupancy().count_ones() as usize == 2 + self.n + self.pawns.n
    }

    fn material_key(&self) -> u32 {
        let pieces: u32 = self.piece[..self.n].iter().map(|p| material_key_of(p.color, p.role)).sum();
        pieces
            + self.pawns.n_white as u32 * material_key_of(Color::White, Role::Pawn)
            + (self.pawns.n - self.pawns.n_white) as u32 * material_key_of(Color::Black, Role::Pawn)
    }

    /// The left-right mirror image.
    fn mirrored(&self) -> Men {
        let mut m = *self;
        m.wk ^= 7;
        m.bk ^= 7;
        for s in &mut m.sq[..m.n] {
            *s ^= 7;
        }
        m.pawns = self.pawns.mirrored();
        m
    }

    /// Takes the man (piece or pawn, not a king) on `x` off the board.
    fn remove(&mut self, x: Square) {
        if let Some(i) = self.pieces().iter().position(|&s| s == x) {
            self.piece.copy_within(i + 1..self.n, i);
            self.sq.copy_within(i + 1..self.n, i);
            self.n -= 1;
        } else {
            self.pawns = pawns_moved(&self.pawns, x, None);
        }
    }

    /// Puts a new piece on `x`, keeping the pieces in layout order.
    fn insert(&mut self, piece: Piece, x: Square) {
        let key = |p: &Piece| (p.color.index(), p.role);
        let i = self.piece[..self.n].iter().position(|p| key(p) > key(&piece)).unwrap_or(self.n);
        self.piece.copy_within(i..self.n, i + 1);
        self.sq.copy_within(i..self.n, i + 1);
        self.piece[i] = piece;
        self.sq[i] = x;
        self.n += 1;
    }

    /// The men after the man on `from` goes to `to` (a pawn becoming `promotion`, if any),
    /// the man on `taken` (if any) captured.
    fn after(&self, from: Square, to: Square, promotion: Option<Role>, taken: Option<Square>) -> Men {
        let mut m = *self;
        if let Some(x) = taken {
            m.remove(x);
        }
        if m.wk == from {
            m.wk = to;
        } else if m.bk == from {
            m.bk = to;
        } else if let Some(i) = m.pieces().iter().position(|&s| s == from) {
            m.sq[i] = to;
        } else {
            let color = if m.pawn_bb(Color::White) & (1 << from) != 0 { Color::White } else { Color::Black };
            m.pawns = pawns_moved(&m.pawns, from, promotion.is_none().then_some(to));
            if let Some(role) = promotion {
                m.insert(Piece { color, role }, to);
            }
        }
        m
    }

    /// Whether `target` is attacked by `by`'s men (pawns included); `occ` is the occupancy.
    fn attacked(&self, target: Square, by: Color, occ: u64) -> bool {
        let t = 1u64 << target;
        if king_attacks(self.king(by)) & t != 0 || pawn_attacks(by.other(), target) & self.pawn_bb(by) != 0 {
            return true;
        }
        self.piece[..self.n].iter().zip(self.pieces()).any(|(p, &s)| p.color == by && attacks(p.role, s, occ) & t != 0)
    }

    fn in_check(&self, color: Color) -> bool {
        self.attacked(self.king(color), color.other(), self.occupancy())
    }

    /// Whether the men form a legal position with `stm` to move: no two on a square, the side
    /// not to move not in check.
    fn legal(&self, stm: Color) -> bool {
        self.apart() && !self.in_check(stm.other())
    }

    /// Calls `f` with each legal move of `stm` (en passant excepted: a stored position never
    /// allows it) and the men after it, until `f` returns true; returns whether it did.
    fn for_each_move(&self, stm: Color, f: &mut impl FnMut(Move, &Men) -> bool) -> bool {
        let them = stm.other();
        let occ = self.occupancy();
        let own = self.men_of(stm);
        let victims = self.men_of(them) & !(1u64 << self.king(them));
        let mut play = |from: Square, to: Square, promotion: Option<Role>, pawn: bool| {
            let capture = victims & (1 << to) != 0;
            let child = self.after(from, to, promotion, capture.then_some(to));
            let child_occ = (occ & !(1u64 << from)) | 1 << to;
            !child.attacked(child.king(stm), them, child_occ)
                && f(Move { from, to, capture, promotion, pawn, en_passant: false }, &child)
        };
        /// Plays `from` to each target until one stops.
        fn each(from: Square, mut targets: u64, play: &mut dyn FnMut(Square, Square) -> bool) -> bool {
            while targets != 0 {
                let to = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                if play(from, to) {
                    return true;
                }
            }
            false
        }
        let reachable = !own & !(1u64 << self.king(them));
        let king = self.king(stm);
        if each(king, king_attacks(king) & reachable, &mut |from, to| play(from, to, None, false)) {
            return true;
        }
        for (p, &from) in self.piece[..self.n].iter().zip(self.pieces()) {
            if p.color == stm && each(from, attacks(p.role, from, occ) & reachable, &mut |f, t| play(f, t, None, false))
            {
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
            if each(from, targets, &mut pawn_move) {
                return true;
            }
        }
        false
    }

    /// The men after each legal en-passant capture by `by` of the pawn that has just
    /// double-stepped to `to`, and their number.
    fn en_passant(&self, by: Color, to: Square) -> ([Men; 2], usize) {
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

    /// Whether `stm` has a legal move (en passant excepted).
    fn has_move(&self, stm: Color) -> bool {
        self.for_each_move(stm, &mut |_, _| true)
    }

    /// A FEN of the men, possibly overlapping (the later man is shown, the overlap named).
    fn describe(&self, stm: Color) -> String {
        let mut board: [Option<char>; 64] = [None; 64];
        let mut overlaps = Vec::new();
        let mut put = |sq: Square, piece: Piece| {
            if board[sq as usize].is_some() {
                overlaps.push(square_name(sq));
            }
            board[sq as usize] = Some(piece.letter());
        };
        for color in [Color::White, Color::Black] {
            put(self.king(color), Piece { color, role: Role::King });
            for &s in self.pawns.of(color) {
                put(s, Piece { color, role: Role::Pawn });
            }
        }
        for (&p, &s) in self.piece[..self.n].iter().zip(self.pieces()) {
            put(s, p);
        }
        let mut s = board_field(&board);
        s.push_str(if stm == Color::White { " w - - 0 1" } else { " b - - 0 1" });
        if !overlaps.is_empty() {
            s.push_str(&format!(" (two men on {})", overlaps.join(", ")));
        }
        s
    }

    /// The position of legal men.
    fn position(&self, stm: Color) -> Position {
        let king = |color| Piece { color, role: Role::King };
        let pawn = |color| Piece { color, role: Role::Pawn };
        let mut list = [(self.wk, king(Color::White)); 2 + MAX_PIECES];
        list[1] = (self.bk, king(Color::Black));
        let mut len = 2;
        for (&p, &s) in self.piece[..self.n].iter().zip(self.pieces()) {
            list[len] = (s, p);
            len += 1;
        }
        for (i, &s) in self.pawns.sq[..self.pawns.n].iter().enumerate() {
            list[len] = (s, pawn(if i < self.pawns.n_white { Color::White } else { Color::Black }));
            len += 1;
        }
        Position::from_men(&list[..len], stm).expect("a legal position")
    }
}

/// What a move does to the 50-move counter and where its result is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A king or piece move without capture: this run, same slice.
    Quiet,
    /// A pawn push: this run's final bitbase of a higher level.
    Push,
    /// A pawn double step: as a push, with the en-passant replies valued here.
    Double,
    /// A capture or a promotion: a sub-run's final bitbase.
    Sub,
}

fn kind(mv: &Move) -> Kind {
    if mv.capture || mv.promotion.is_some() {
        Kind::Sub
    } else if !mv.pawn {
        Kind::Quiet
    } else if mv.from.abs_diff(mv.to) == 16 {
        Kind::Double
    } else {
        Kind::Push
    }
}

/// A sub-run's table and layout, `None` when white is left with nothing (no wins).
type Sub<'a, V> = Option<(Layout, &'a V)>;

/// Everything the workers of one run with pawns read.
pub(super) struct PawnCtx<'a, V: Values> {
    material: &'a Material,
    layout: Layout,
    file: &'a V,
    /// The run's pieces in layout order.
    piece: [Piece; MAX_PIECES],
    /// Each slice's pawns, and whether its file pattern is its own mirror image.
    slices: Vec<(Pawns, bool)>,
    /// The successor runs by material key.
    subs: Vec<(u32, Sub<'a, V>)>,
    /// Whether the run's black-to-move codes are derived from white's where they are read
    /// (a compact table stores only their classes).
    derive_black: bool,
}

impl<'a, V: Values> PawnCtx<'a, V> {
    /// The checks of `run` over its own values `file` and its successor runs' `subs`.
    pub(super) fn new(run: &'a Material, file: &'a V, subs: &[(Material, Option<&'a V>)], derive_black: bool) -> Self {
        let layout = Layout::new(run);
        let subs = subs.iter().map(|(m, t)| (material_key(m), t.map(|f| (Layout::new(m), f)))).collect();
        let slices = layout.slices.as_ref().expect("a run with pawns");
        let slices = (0..slices.len() as u32)
            .map(|s| {
                let p = slices.pawns(s);
                (p, p.orientation() == Ordering::Equal)
            })
            .collect();
        let mut piece = [Piece { color: Color::White, role: Role::King }; MAX_PIECES];
        for (p, slot) in piece.iter_mut().zip(&layout.pieces) {
            *p = Piece { color: slot.color, role: slot.role };
        }
        PawnCtx { material: run, layout, file, piece, slices, subs, derive_black }
    }

    /// The run's own value code of a slot (black's derived with `derive_black`).
    fn own_code(&self, stm: Color, slot: u64) -> u8 {
        if stm == Color::White || !self.derive_black {
            return self.file.value_code(stm, slot);
        }
        let men = self.men_of_slot(slot);
        if !men.legal(Color::Black) {
            return CODE_ILLEGAL;
        }
        self.derive_btm(&men, slot, &mut SideReport::default()).0
    }

    fn slice_mask(&self) -> u64 {
        (1u64 << self.layout.total_bits) - 1
    }

    fn men_of_slot(&self, slot: u64) -> Men {
        let mut sq = [0; MAX_PIECES];
        let n = self.layout.pieces.len();
        let (bk, wk) = self.layout.decode_into(slot & self.slice_mask(), &mut sq[..n]);
        let pawns = self.slices[(slot >> self.layout.total_bits) as usize].0;
        Men { wk, bk, n, piece: self.piece, sq, pawns }
    }

    /// The slot of a position of this run (the pawns in any orientation).
    fn own_slot(&self, men: &Men) -> u64 {
        let found = self.layout.canonical_slot(men.bk, men.pieces(), men.wk, &men.pawns);
        found.expect("pawns of the run on ranks 2 to 7").0
    }

    /// The slot, in the slice of `slot`, of the position after a quiet move from it.
    fn quiet_slot(&self, slot: u64, child: &Men) -> u64 {
        (slot & !self.slice_mask()) | self.layout.index(child.bk, child.pieces(), child.wk)
    }

    /// The final bitbase bit (`t99` wtm, `t100` btm) of the position `men` of a sub-run, with
    /// a fresh counter; false where white is left with nothing. With `eventual`, whether
    /// white wins it with or without the rule.
    fn sub_bit(&self, men: &Men, stm: Color, eventual: bool) -> bool {
        let key = men.material_key();
        let (_, sub) = self.subs.iter().find(|(k, _)| *k == key).expect("a conversion leads to a successor run");
        let Some((layout, file)) = sub else { return false };
        let found = layout.canonical_slot(men.bk, men.pieces(), men.wk, &men.pawns);
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

    /// Whether a conversion (push, double step, capture, promotion) wins for white (`stm`,
    /// the side to move after it, black) or loses for black (`stm` white); with `eventual`,
    /// with or without the rule.
    fn conversion_won(&self, mv: &Move, child: &Men, stm: Color, eventual: bool) -> bool {
        match kind(mv) {
            Kind::Quiet => unreachable!("quiet moves are valued by code"),
            Kind::Push => self.own_bit(stm, self.own_slot(child), eventual),
            Kind::Double if stm == Color::Black => {
                self.white_double_step_wins(mv, child, self.own_slot(child), eventual)
            }
            Kind::Double => self.black_double_step_loses(mv, child, self.own_slot(child), eventual),
            Kind::Sub => self.sub_bit(child, stm, eventual),
        }
    }

    /// The expected wtm code of a legal position in `slot`, and the move that decides it.
    fn derive_wtm(&self, men: &Men, slot: u64) -> (u8, Option<Move>) {
        let mut best = (CODE_NONE, None);
        let mut winning = None;
        let mut cursed = None;
        men.for_each_move(Color::White, &mut |mv, child| {
            let wins = match kind(&mv) {
                Kind::Quiet => {
                    let c = self.own_code(Color::Black, self.quiet_slot(slot, child));
                    // btm code c = distance 2(c-1), so the move wins in 2c-1 plies: wtm code c.
                    if (1..=WTM_MAX_CODE).contains(&c) && (best.0 == CODE_NONE || c < best.0) {
                        best = (c, Some(mv));
                    }
                    // Into a loss of 100 plies or one only without the rule: a cursed win.
                    // (Its step is 101 after a loss of 100 plies, later after a cursed one.)
                    let code = if c == BTM_MAX_CODE { CODE_EDGE } else { CODE_CURSED };
                    if (c == BTM_MAX_CODE || c == CODE_CURSED) && cursed.is_none_or(|(best, _)| code < best) {
                        cursed = Some((code, mv));
                    }
                    false
                }
                _ => {
                    let wins = self.conversion_won(&mv, child, Color::Black, false);
                    // Into a loss only without the rule: a cursed win.
                    if !wins && cursed.is_none() && self.conversion_won(&mv, child, Color::Black, true) {
                        cursed = Some((CODE_CURSED, mv));
                    }
                    wins
                }
            };
            if wins {
                winning = Some(mv);
            }
            wins
        });
        match (winning, cursed) {
            (Some(mv), _) => (1, Some(mv)),
            (None, Some((code, mv))) if best.0 == CODE_NONE => (code, Some(mv)),
            _ => best,
        }
    }

    /// The expected btm code of a legal position in `slot`, the move that decides it, and
    /// whether black is checkmated or stalemated.
    fn derive_btm(&self, men: &Men, slot: u64, rep: &mut SideReport) -> (u8, Option<Move>) {
        let mut worst = (1u8, None);
        let mut moves = 0u32;
        let mut escape = None;
        let mut cursed = None;
        men.for_each_move(Color::Black, &mut |mv, child| {
            moves += 1;
            let loses = match kind(&mv) {
                Kind::Quiet => {
                    let c = self.own_code(Color::White, self.quiet_slot(slot, child));
                    let won = (1..=WTM_MAX_CODE).contains(&c);
                    if won && (c > worst.0 || worst.1.is_none()) {
                        worst = (worst.0.max(c), Some(mv));
                    }
                    // A loss only without the rule: no escape, and the position's loss is so.
                    let beyond = lost_only_without_rule_after(c);
                    if beyond {
                        cursed = cursed.or(Some(mv));
                    }
                    won || beyond
                }
                _ => {
                    let loses = self.conversion_won(&mv, child, Color::White, false);
                    // Into a win only without the rule: no escape, and the loss is so.
                    if !loses && self.conversion_won(&mv, child, Color::White, true) {
                        cursed = cursed.or(Some(mv));
                        true
                    } else {
                        loses
                    }
                }
            };
            if !loses {
                escape = Some(mv);
            }
            !loses
        });
        if escape.is_some() {
            return (CODE_NONE, escape);
        }
        if moves == 0 {
            return if men.in_check(Color::Black) {
                rep.mates += 1;
                (1, None)
            } else {
                rep.stalemates += 1;
                (CODE_NONE, None)
            };
        }
        if cursed.is_some() {
            return (CODE_CURSED, cursed);
        }
        // Every move wins for white within 2*worst - 1 plies: black loses in 2*worst, code worst + 1.
        (worst.0 + 1, worst.1)
    }
}

impl Sampler for PawnCtx<'_, Sampled<'_>> {
    fn material(&self) -> &Material {
        self.material
    }
    fn stored_black_class(&self, slot: u64) -> Class {
        self.file.class(Color::Black, slot).unwrap_or(Class::NotWon)
    }
    fn legal_slot(&self, stm: Color, slot: u64) -> bool {
        self.men_of_slot(slot).legal(stm)
    }
    fn black_expected(&self, slot: u64) -> (u8, Option<Move>, Position) {
        let men = self.men_of_slot(slot);
        let (code, via) = self.derive_btm(&men, slot, &mut SideReport::default());
        (code, via, men.position(Color::Black))
    }
}

impl<V: Values> CheckSlot for PawnCtx<'_, V> {
    fn check_slot(&self, stm: Color, slot: u64, rep: &mut SideReport) -> Result<(), TableError> {
        let men = self.men_of_slot(slot);
        let stored = self.own_code(stm, slot);
        let stored_bit = self.file.bit(stm, slot);
        let here = || format!("{} {} slot {slot}", self.material, side_name(stm));
        if !men.legal(stm) {
            return check_illegal(stm, stored, stored_bit, || format!("{}: {}", here(), men.describe(stm)), rep);
        }
        let fen = || format!("{}: {}", here(), men.position(stm).fen());
        let mut representative = slot;
        if self.slices[(slot >> self.layout.total_bits) as usize].1 {
            // Both orientations are stored: the mirror image must hold the same value.
            let image = men.mirrored();
            let other = self.own_slot(&image);
            let code = self.own_code(stm, other);
            if code != stored {
                wrong!(
                    "{}: stored {}, but its mirror image at slot {other}, {}, holds {}",
                    fen(),
                    describe_code(stm, stored),
                    image.position(stm).fen(),
                    describe_code(stm, code)
                );
            }
            representative = representative.min(other);
        }
        if representative == slot {
            let (expected, via) = match stm {
                Color::White => self.derive_wtm(&men, slot),
                Color::Black => self.derive_btm(&men, slot, rep),
            };
            check_derived(stm, stored, (expected, via), &fen, &|mv| men.position(stm).play(mv).fen())?;
            rep.derived += 1;
        } else {
            rep.by_symmetry += 1;
        }
        check_bit_and_count(stm, stored, stored_bit, &fen, rep)
    }
}

/// Checks the slice section against the layout's slices: the keys in storage order, each
/// level's first slice and count. Returns the levels' records.
fn check_slice_section(run: &Material, table: &CompactTable, layout: &Layout) -> Result<Vec<LevelEntry>, TableError> {
    let slices: &Slices = layout.slices.as_ref().expect("a run with pawns");
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

/// Checks every slot of a run with pawns, both sides to move, level by level; then each
/// level's last step.
pub(super) fn verify_sides(
    run: &Material,
    sources: &Sources,
    threads: usize,
    progress: &mut impl FnMut(u64, u64),
) -> Result<Checked, TableError> {
    let layout = Layout::new(run);
    let records = check_slice_section(run, sources.table, &layout)?;
    let subs: Vec<(Material, Option<&TableFile>)> = sources.subs.iter().map(|(m, t)| (m.clone(), *t)).collect();
    let ctx = PawnCtx::new(run, &sources.own.file, &subs, false);
    let levels = ctx.layout.levels();
    let n = ctx.layout.n_slots;
    let total = 3 * n;
    progress(0, total);
    let derive = |slot: u64| {
        let men = ctx.men_of_slot(slot);
        men.legal(Color::Black).then(|| ctx.derive_btm(&men, slot, &mut SideReport::default()).0)
    };
    let describe = |slot: u64| format!("{run} btm slot {slot}: {}", ctx.men_of_slot(slot).describe(Color::Black));
    derive_btm(sources.table, sources.own, 0..n, threads, &derive, &describe, &mut |d| progress(d, total))?;
    let mut done = n;
    let mut sides = [SideReport::default(), SideReport::default()];
    let mut longest = vec![None; levels.len()];
    for (stm, side) in [Color::White, Color::Black].into_iter().zip(&mut sides) {
        for (l, level_longest) in levels.iter().zip(&mut longest) {
            let range = l.first_slot..l.first_slot + l.n_slots;
            let rep = verify_side(&ctx, stm, range, threads, done, total, progress)?;
            done += l.n_slots;
            *level_longest = rep.longest.max(*level_longest);
            side.add(&rep);
        }
    }
    for ((l, record), level_longest) in levels.iter().zip(&records).zip(&longest) {
        let level_longest = level_longest.unwrap_or(0);
        if record.last_step != level_longest {
            wrong!(
                "{run}: level {}'s last step is {}, but the longest distance stored in it is {level_longest}",
                l.number,
                record.last_step
            );
        }
    }
    let [wtm, btm] = sides;
    Ok(Checked {
        wtm,
        btm,
        sub_runs: sources.subs.iter().filter(|(_, t)| t.is_some()).map(|(m, _)| m.clone()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*, enough to draw positions.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
        }
    }

    /// Random men of `material` (pawns on ranks 2 to 7), possibly overlapping.
    fn random_men(rng: &mut Rng, material: &Material) -> Men {
        let layout = Layout::new(material);
        let mut men = Men {
            wk: rng.below(64) as Square,
            bk: rng.below(64) as Square,
            n: layout.pieces.len(),
            piece: [Piece { color: Color::White, role: Role::King }; MAX_PIECES],
            sq: [0; MAX_PIECES],
            pawns: Pawns::none(),
        };
        for (k, p) in layout.pieces.iter().enumerate() {
            men.piece[k] = Piece { color: p.color, role: p.role };
            men.sq[k] = rng.below(64) as Square;
        }
        let mut pawns = |n| (0..n).map(|_| 8 + rng.below(48) as Square).collect::<Vec<_>>();
        let (w, b) = (pawns(material.pawns(Color::White)), pawns(material.pawns(Color::Black)));
        men.pawns = Pawns::new(&w, &b);
        men
    }

    /// The board field of a FEN.
    fn board(fen: &str) -> &str {
        fen.split(' ').next().unwrap()
    }

    /// The verifier's moves, legality and successors agree with `Position` (no en passant:
    /// stored positions never allow it), and the material keys of the successors with their
    /// materials.
    #[test]
    fn moves_agree_with_position() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut checked = [0u64; 4];
        for material in ["KPvK", "KPvKP", "KQvKP", "KRPvKR", "KPPvKN", "KBPvKP", "KNPvKB"] {
            let material = Material::parse(material).unwrap();
            for _ in 0..20_000 {
                let men = random_men(&mut rng, &material);
                let stm = if rng.below(2) == 0 { Color::White } else { Color::Black };
                if !men.apart() {
                    continue;
                }
                let pos = Position::from_fen(&men.describe(stm));
                assert_eq!(pos.is_ok(), men.legal(stm), "{}", men.describe(stm));
                let Ok(pos) = pos else { continue };
                assert_eq!(men.position(stm), pos);
                let expected = pos.legal_moves();
                let mut seen = 0;
                men.for_each_move(stm, &mut |mv, child| {
                    assert!(expected.contains(&mv), "{}: {mv} {mv:?} is not legal", pos.fen());
                    let after = pos.play(mv);
                    assert_eq!(board(&child.position(stm.other()).fen()), board(&after.fen()), "{} {mv}", pos.fen());
                    assert_eq!(child.material_key(), material_key(&after.material()), "{} {mv}", pos.fen());
                    checked[kind(&mv) as usize] += 1;
                    seen += 1;
                    false
                });
                assert_eq!(seen, expected.len(), "{}: {expected:?}", pos.fen());
                assert_eq!(men.has_move(stm), !expected.is_empty());
            }
        }
        assert!(checked.iter().all(|&n| n > 1000), "every kind of move seen: {checked:?}");
    }

    /// The en-passant replies to a double step, and whether they are forced, agree with
    /// `Position` (which sets the en-passant square after a double step only when a capture
    /// is legal).
    #[test]
    fn en_passant_agrees_with_position() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut seen = [0u64; 3];
        for material in ["KPvKP", "KRPvKP", "KBPvKP", "KPvKRP", "KPPvKP", "KPvKPP"] {
            let material = Material::parse(material).unwrap();
            for _ in 0..2_000 {
                let mut men = random_men(&mut rng, &material);
                let stm = if rng.below(2) == 0 { Color::White } else { Color::Black };
                // A pawn of the mover on its start rank, an enemy pawn beside its target.
                let file = rng.below(8) as Square;
                let (from, beside_to) = if stm == Color::White { (8 + file, 24) } else { (48 + file, 32) };
                let enemy = match (file, rng.below(2)) {
                    (0, _) | (1..=6, 0) => beside_to + file + 1,
                    _ => beside_to + file - 1,
                };
                let (mut w, mut b) = (men.pawns.of(Color::White).to_vec(), men.pawns.of(Color::Black).to_vec());
                let (own, theirs) = if stm == Color::White { (&mut w, &mut b) } else { (&mut b, &mut w) };
                own[0] = from;
                theirs[0] = enemy;
                men.pawns = Pawns::new(&w, &b);
                if !men.legal(stm) {
                    continue;
                }
                let pos = men.position(stm);
                men.for_each_move(stm, &mut |mv, child| {
                    if kind(&mv) != Kind::Double {
                        return false;
                    }
                    let after = pos.play(mv);
                    let (replies, n) = child.en_passant(stm.other(), mv.to);
                    assert_eq!(after.ep.is_some(), n > 0, "{} {mv}", pos.fen());
                    let captures: Vec<Move> = after.legal_moves().into_iter().filter(|m| m.en_passant).collect();
                    assert_eq!(captures.len(), n, "{} {mv}", pos.fen());
                    for (c, ep) in captures.iter().zip(&replies[..n]) {
                        assert_eq!(
                            board(&after.play(*c).fen()),
                            board(&ep.position(stm).fen()),
                            "{} {mv} {c}",
                            pos.fen()
                        );
                        assert_eq!(ep.material_key(), material_key(&after.play(*c).material()));
                    }
                    let forced = after.legal_moves().iter().all(|m| m.en_passant) && !after.in_check(stm.other());
                    assert_eq!(forced && n > 0, n > 0 && !child.in_check(stm.other()) && !child.has_move(stm.other()));
                    seen[0] += 1;
                    seen[1] += (n > 0) as u64;
                    false
                });
            }
        }
        assert!(seen[1] > 1000, "double steps, with en passant: {seen:?}");
    }

    /// Men from a list of (square, piece), in layout order.
    fn men_of(list: &[(Square, Piece)]) -> Men {
        let king = |c: Color| list.iter().find(|(_, p)| *p == Piece { color: c, role: Role::King }).unwrap().0;
        let pawns = |c: Color| {
            list.iter().filter(|(_, p)| *p == Piece { color: c, role: Role::Pawn }).map(|&(s, _)| s).collect::<Vec<_>>()
        };
        let mut men = Men {
            wk: king(Color::White),
            bk: king(Color::Black),
            n: 0,
            piece: [Piece { color: Color::White, role: Role::King }; MAX_PIECES],
            sq: [0; MAX_PIECES],
            pawns: Pawns::new(&pawns(Color::White), &pawns(Color::Black)),
        };
        for &(s, p) in list.iter().filter(|(_, p)| p.role != Role::King && p.role != Role::Pawn) {
            men.insert(p, s);
        }
        men
    }

    /// pawns.md §6: after a2-a4 in `8/8/8/8/1p6/1B6/P7/k1K5 w` the en-passant capture is
    /// black's only move; after e2-e4 in `8/8/8/8/R2p3k/8/4P3/4K3 w` it is illegal (a rank pin).
    #[test]
    fn en_passant_forced_and_pinned() {
        let pos = Position::from_fen("8/8/8/8/1p6/1B6/P7/k1K5 w - - 0 1").unwrap();
        let men = men_of(&pos.pieces().collect::<Vec<_>>());
        assert_eq!(men.position(Color::White), pos);
        let mut found = [false; 2];
        men.for_each_move(Color::White, &mut |mv, child| {
            if mv.to_string() == "a2a4" {
                let (replies, n) = child.en_passant(Color::Black, mv.to);
                assert_eq!(n, 1);
                assert_eq!(board(&replies[0].position(Color::White).fen()), "8/8/8/8/8/pB6/8/k1K5");
                assert!(!child.in_check(Color::Black) && !child.has_move(Color::Black));
                found[0] = true;
            }
            false
        });
        let pos = Position::from_fen("8/8/8/8/R2p3k/8/4P3/4K3 w - - 0 1").unwrap();
        let men = men_of(&pos.pieces().collect::<Vec<_>>());
        men.for_each_move(Color::White, &mut |mv, child| {
            if mv.to_string() == "e2e4" {
                assert_eq!(child.en_passant(Color::Black, mv.to).1, 0);
                assert!(child.has_move(Color::Black));
                found[1] = true;
            }
            false
        });
        assert_eq!(found, [true, true]);
    }

    #[test]
    fn en_passant_neighbours_and_ranks() {
        assert!(beside(27, 28) && beside(28, 27) && !beside(31, 32) && !beside(27, 35));
        assert!(on_start_rank(Color::White, 12) && on_start_rank(Color::Black, 52) && !on_start_rank(Color::White, 52));
        assert!(on_last_rank(Color::White, 60) && on_last_rank(Color::Black, 4) && !on_last_rank(Color::Black, 60));
    }
}
