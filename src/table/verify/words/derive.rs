//! One storage word derived at once: the other men's moves generated once and applied to
//! the 64 white-king squares together; where the white king stands decides, per lane,
//! whether a move is blocked, legal, and what its successor's value is. With pawns the word
//! lies in one slice (the pawns fixed): pawn moves are conversions, read from the slices a
//! push reaches and from the successor runs ([`super::pawns`]).

use super::lanes::{
    btm_code, btm_rank_capture, btm_rank_quiet, escaped, fold_king_steps, fold_max, fold_min, lane_bytes, lanes_where,
    permutations, wtm_rank_capture, wtm_rank_quiet, Lanes, BTM_ESCAPE, WTM_NO_WIN,
};
use super::load::Sub;
use super::targets::{Target, Targets};
use super::window::{Fetched, Window};
use crate::chess::attacks::{attacks, between, king_attacks, pawn_attack_set};
use crate::chess::square::triangle_code;
use crate::chess::{Color, Material, Role, Square, Symmetry, MAX_PIECES};
use crate::index::{Layout, Pawns};
use crate::table::men::Men;
use crate::table::values::{CODE_ILLEGAL, CODE_NONE};
use crate::table::verify::checks::side_name;
use memmap2::MmapMut;
use std::collections::HashMap;

/// The men of one word: everything but the white king.
#[derive(Clone, Copy)]
pub(super) struct Config {
    pub(super) bk_code: u8,
    pub(super) bk: Square,
    pub(super) sq: [Square; MAX_PIECES],
    /// Squares of the pieces, the pawns and the black king.
    pub(super) occ: u64,
    /// White's pieces, not its pawns.
    pub(super) white: u64,
    /// Black's pieces, not its king or pawns.
    pub(super) black: u64,
    /// The slice's pawns, and each side's as a bitboard.
    pub(super) pawns: Pawns,
    pub(super) wp: u64,
    pub(super) bp: u64,
    /// Two men on one square: every lane is illegal.
    doubled: bool,
}

impl Config {
    /// The squares a man's move `s -> t` changes (`None`: no move), and the occupancy after
    /// it (a capture leaves `t` occupied).
    fn after(&self, mv: Option<(Square, Square)>) -> (u64, u64) {
        match mv {
            Some((s, t)) => (1u64 << s | 1 << t, (self.occ & !(1u64 << s)) | 1 << t),
            None => (0, self.occ),
        }
    }
}

/// The classes of the slices of this run a pawn push reaches, by (slice, side to move), a
/// slice's class planes each.
pub(super) type SliceClasses = HashMap<(u32, Color), MmapMut>;

/// The slice a run with pawns is checked in, and what its pawn moves read.
pub(super) struct Slice<'a> {
    pub(super) number: u32,
    pub(super) pawns: Pawns,
    /// Whether its file pattern is its own mirror image (both orientations stored).
    pub(super) symmetric: bool,
    pub(super) targets: &'a Targets<'a>,
    pub(super) pushed: &'a SliceClasses,
}

/// Everything the workers of one run (with pawns, one slice of it) read but the chunks'
/// codes.
pub(super) struct Run<'a> {
    material: &'a Material,
    pub(super) layout: &'a Layout,
    /// Without pawns, the sub-endgame after the capture of the piece of layout index `j`;
    /// `None` when white is left with a bare king.
    subs: Vec<Option<&'a Sub>>,
    /// With pawns, the slice.
    pub(super) slice: Option<Slice<'a>>,
    pub(super) perms: [[u8; 64]; 8],
}

impl<'a> Run<'a> {
    pub(super) fn new(
        material: &'a Material,
        layout: &'a Layout,
        subs: Vec<Option<&'a Sub>>,
        slice: Option<Slice<'a>>,
    ) -> Run<'a> {
        Run { material, layout, subs, slice, perms: permutations() }
    }

    /// The first slot of the run's slice (0 without pawns).
    #[inline]
    pub(super) fn base(&self) -> u64 {
        self.slice.as_ref().map_or(0, |s| (s.number as u64) << self.layout.total_bits)
    }

    pub(super) fn n_pieces(&self) -> usize {
        self.layout.pieces.len()
    }

    fn role(&self, k: usize) -> Role {
        self.layout.pieces[k].role
    }

    fn is_white(&self, k: usize) -> bool {
        self.layout.pieces[k].color == Color::White
    }

    /// The men of the storage word `word`, whose first position has index `index` (with
    /// pawns, in the run's slice).
    pub(super) fn config(&self, index: u64, word: usize) -> Config {
        debug_assert_eq!(self.layout.slot(index).map(|s| s + self.base()), Some(64 * word as u64));
        let n = self.n_pieces();
        let mut sq = [0; MAX_PIECES];
        let (bk_code, _) = self.layout.decode_into(index, &mut sq[..n]);
        let bk = self.layout.bk_square(bk_code);
        let pawns = self.slice.as_ref().map_or(Pawns::none(), |s| s.pawns);
        let (wp, bp) = (pawns.occupied_by(Color::White), pawns.occupied_by(Color::Black));
        let (mut occ, mut white, mut black, mut doubled) = (1u64 << bk | wp | bp, 0, 0, (wp | bp) & 1 << bk != 0);
        for (k, &s) in sq[..n].iter().enumerate() {
            doubled |= occ & (1 << s) != 0;
            occ |= 1 << s;
            if self.is_white(k) {
                white |= 1 << s;
            } else {
                black |= 1 << s;
            }
        }
        Config { bk_code, bk, sq, occ, white, black, pawns, wp, bp, doubled }
    }

    /// The piece (layout index) on `s`.
    pub(super) fn piece_on(&self, c: &Config, s: Square) -> usize {
        c.sq[..self.n_pieces()].iter().position(|&p| p == s).expect("a piece on the square")
    }

    /// Every piece's attacks in the word (occupancy `c.occ`, the white king left out):
    /// a move changes only those whose lines pass through its two squares.
    pub(super) fn piece_attacks(&self, c: &Config) -> [u64; MAX_PIECES] {
        std::array::from_fn(|k| if k < self.n_pieces() { attacks(self.role(k), c.sq[k], c.occ) } else { 0 })
    }

    /// Squares black attacks after a white move `s -> t` (`None`: as the word stands), the
    /// man on `taken` (a square's bit: just captured) left out: where the white king may not
    /// stand. The white king is left out of the occupancy: it never shields its own square.
    pub(super) fn black_attacks(
        &self,
        c: &Config,
        att: &[u64; MAX_PIECES],
        mv: Option<(Square, Square)>,
        taken: u64,
    ) -> u64 {
        let (changed, occ) = c.after(mv);
        let base = king_attacks(c.bk) | pawn_attack_set(Color::Black, c.bp & !taken);
        (0..self.n_pieces())
            .filter(|&k| !self.is_white(k) && 1 << c.sq[k] != taken)
            .fold(base, |a, k| a | if att[k] & changed != 0 { attacks(self.role(k), c.sq[k], occ) } else { att[k] })
    }

    /// Lanes (white-king squares) where white's men give check to the black king on `c.bk`
    /// after a black man's move `s -> t` (`None`: as the word stands), the man on `taken`
    /// left out: the white king itself next to it, a pawn (every lane), or a piece whose line
    /// to it the white king does not block.
    pub(super) fn white_checks(
        &self,
        c: &Config,
        att: &[u64; MAX_PIECES],
        mv: Option<(Square, Square)>,
        taken: u64,
    ) -> u64 {
        let (changed, occ) = c.after(mv);
        let bk = 1u64 << c.bk;
        if pawn_attack_set(Color::White, c.wp & !taken) & bk != 0 {
            return !0;
        }
        (0..self.n_pieces())
            .filter(|&k| self.is_white(k) && 1 << c.sq[k] != taken)
            .filter(|&k| {
                if between(c.sq[k], c.bk) & changed != 0 {
                    attacks(self.role(k), c.sq[k], occ) & bk != 0
                } else {
                    att[k] & bk != 0
                }
            })
            .fold(king_attacks(c.bk), |a, k| a | !between(c.sq[k], c.bk))
    }

    /// Lanes where white's men attack `t`, where the black king steps from `c.bk`, the man
    /// taken there left out: a pawn (every lane), a piece as the word stands, or through the
    /// square the king leaves.
    fn white_attacks_on_step(&self, c: &Config, att: &[u64; MAX_PIECES], t: Square) -> u64 {
        let (bk, to) = (1u64 << c.bk, 1u64 << t);
        if pawn_attack_set(Color::White, c.wp) & to != 0 {
            return !0;
        }
        (0..self.n_pieces())
            .filter(|&k| self.is_white(k) && c.sq[k] != t)
            .filter(|&k| att[k] & to != 0 || (att[k] & bk != 0 && between(c.sq[k], t) & bk != 0))
            .fold(king_attacks(t), |a, k| a | !between(c.sq[k], t))
    }

    /// The storage word of the men `sq` (layout `layout`) with the black king on code `bk_code`.
    fn word_of(layout: &Layout, bk_code: u8, sq: &[Square]) -> usize {
        (layout.slot(layout.index(bk_code, sq, 0)).expect("a triangle code") >> 6) as usize
    }

    /// The men after the piece `gone` is captured (the sub-endgame's order: ours without it).
    fn without(&self, sq: &[Square], gone: usize) -> ([Square; MAX_PIECES], usize) {
        let mut out = [0; MAX_PIECES];
        let mut n = 0;
        for (k, &s) in sq[..self.n_pieces()].iter().enumerate() {
            if k != gone {
                out[n] = s;
                n += 1;
            }
        }
        (out, n)
    }

    /// Black-to-move codes of the word's 64 lanes (illegal lanes 63), with the lanes that
    /// are checkmate and stalemate, from white's codes of the word's black chunk (`wtm`).
    #[inline(always)]
    pub(super) fn derive_btm(&self, c: &Config, wtm: &Window) -> (Lanes, u64, u64) {
        if c.doubled {
            return ([CODE_ILLEGAL; 64], 0, 0);
        }
        let n = self.n_pieces();
        let att = self.piece_attacks(c);
        let illegal = c.occ | self.black_attacks(c, &att, None, 0);
        let legal = !illegal;
        let checked = self.white_checks(c, &att, None, 0) & legal;
        let mut acc = [0u8; 64];
        let mut fetched = Fetched::new();
        // The black king's moves (its captures included): without pawns the successor's black
        // king may leave the triangle, and its word is read through the symmetry that brings
        // it back.
        let mut targets = king_attacks(c.bk) & !(c.black | c.bp);
        while targets != 0 {
            let t = targets.trailing_zeros() as Square;
            targets &= targets - 1;
            let lanes = legal & !self.white_attacks_on_step(c, &att, t);
            if lanes == 0 {
                continue;
            }
            if self.slice.is_some() {
                match self.taken_by(c, Color::Black, t) {
                    None => fold_max(&mut acc, lanes, wtm.lanes(t, &c.sq[..n]), None, btm_rank_quiet),
                    Some((target, pawns)) => self.fold_conversion_btm(&mut acc, lanes, target, t, &c.sq, &pawns),
                }
                continue;
            }
            let captured = (c.white & (1 << t) != 0).then(|| self.piece_on(c, t));
            let sym = Symmetry::to_triangle(t);
            let code = triangle_code(sym.apply(t)).expect("mapped into the triangle");
            let perm = (sym.code() != 0).then(|| &self.perms[sym.code() as usize]);
            let mut moved = [0; MAX_PIECES];
            for (m, &s) in moved.iter_mut().zip(&c.sq[..n]) {
                *m = sym.apply(s);
            }
            match captured {
                None => fetched.push(wtm, lanes, wtm.chunking.word(code, &moved[..n]), sym.code()),
                Some(j) => self.fold_capture_btm(&mut acc, lanes, j, code, &moved, perm),
            }
        }
        for &(lanes, w, sym) in fetched.drain() {
            let perm = (sym != 0).then(|| &self.perms[sym as usize]);
            fold_max(&mut acc, lanes, wtm.at(w), perm, btm_rank_quiet);
        }
        // The other pieces' moves: the black king stays, so do the lanes. (This loop and
        // white's in `derive_wtm` look alike; one generic over the side ran 13-20% slower.)
        // Once every legal lane has an escape, no move can change its rank: the rest are
        // skipped (most black-to-move positions of a run black holds).
        for i in (0..n).filter(|&k| !self.is_white(k)) {
            if legal & !escaped(&acc) == 0 {
                break;
            }
            let s = c.sq[i];
            let mut targets = attacks(self.role(i), s, c.occ) & !(c.black | c.bp | 1 << c.bk);
            while targets != 0 {
                let t = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let taken = (c.white | c.wp) & 1 << t;
                let mut moved = c.sq;
                moved[i] = t;
                let blocked = between(s, t) | 1 << t;
                let lanes = legal & !blocked & !self.white_checks(c, &att, Some((s, t)), taken);
                if lanes == 0 {
                    continue;
                }
                if taken == 0 {
                    fetched.push(wtm, lanes, wtm.chunking.word(c.bk_code, &moved[..n]), 0);
                } else if self.slice.is_some() {
                    let (target, pawns) = self.taken_by(c, Color::Black, t).expect("a man taken");
                    self.fold_conversion_btm(&mut acc, lanes, target, c.bk, &moved, &pawns);
                } else {
                    self.fold_capture_btm(&mut acc, lanes, self.piece_on(c, t), c.bk_code, &moved, None);
                }
            }
            for &(lanes, w, _) in fetched.drain() {
                fold_max(&mut acc, lanes, wtm.at(w), None, btm_rank_quiet);
            }
        }
        if c.bp != 0 && legal & !escaped(&acc) != 0 {
            self.pawn_moves(Color::Black, c, &att, legal, &mut acc);
        }
        let (mut mates, mut stalemates) = (0u64, 0u64);
        let codes = std::array::from_fn(|l| {
            if illegal >> l & 1 != 0 {
                return CODE_ILLEGAL;
            }
            if acc[l] == 0 {
                if checked >> l & 1 != 0 {
                    mates |= 1 << l;
                } else {
                    stalemates |= 1 << l;
                }
            }
            btm_code(acc[l], checked >> l & 1 != 0)
        });
        (codes, mates, stalemates)
    }

    /// A black capture of white's piece `j` in a pawnless run (the men `sq`, the black king
    /// on `bk_code`).
    #[inline(always)]
    fn fold_capture_btm(
        &self,
        acc: &mut Lanes,
        lanes: u64,
        j: usize,
        bk_code: u8,
        sq: &[Square; MAX_PIECES],
        perm: Option<&[u8; 64]>,
    ) {
        let Some(sub) = self.subs[j] else {
            // White is left with a bare king: black escapes.
            fold_max(acc, lanes, &[0; 64], None, |_| BTM_ESCAPE);
            return;
        };
        let (rest, m) = self.without(sq, j);
        let w = Self::word_of(&sub.layout, bk_code, &rest[..m]);
        fold_max(acc, lanes, &sub.word(w), perm, btm_rank_capture);
    }

    /// The conversion target of a capture on `t` by a man of `by` in a run with pawns, with
    /// the pawns after it (the taken one gone); `None` if `t` is empty.
    #[inline]
    pub(super) fn taken_by(&self, c: &Config, by: Color, t: Square) -> Option<(&'a Target<'a>, Pawns)> {
        let targets = self.slice.as_ref().expect("a run with pawns").targets;
        let (pieces, pawns) = match by {
            Color::White => (c.black, c.bp),
            Color::Black => (c.white, c.wp),
        };
        if pieces & 1 << t != 0 {
            Some((&targets.capture[self.piece_on(c, t)], c.pawns))
        } else if pawns & 1 << t != 0 {
            let target = targets.pawn_taken[by.other().index()].as_ref().expect("a pawn to take");
            Some((target, c.pawns.moved(t, None)))
        } else {
            None
        }
    }

    /// The successor word of a conversion (the black king on `bk`, the mover's men `ext`
    /// after the move, the pawns `pawns`), with the permutation that maps our lanes into it;
    /// `None` where white is left with a bare king.
    #[inline]
    pub(super) fn successor(
        &self,
        target: &Target,
        bk: Square,
        ext: &[Square; MAX_PIECES + 1],
        pawns: &Pawns,
    ) -> Option<(Lanes, Option<&[u8; 64]>)> {
        let sub = target.sub?;
        let (sq, m) = target.pieces(ext);
        let (slot, sym) = sub.layout.canonical_slot(bk, &sq[..m], 0, pawns).expect("pawns on ranks 2 to 7");
        let perm = (sym.code() != 0).then(|| &self.perms[sym.code() as usize]);
        Some((sub.word((slot >> 6) as usize), perm))
    }

    /// Folds a black conversion into the word's lanes `lanes` (the black king on `bk`, the
    /// men `sq` after the move, a promoted piece on `sq[MAX_PIECES]`).
    #[inline(always)]
    pub(super) fn fold_conversion_btm(
        &self,
        acc: &mut Lanes,
        lanes: u64,
        target: &Target,
        bk: Square,
        sq: &[Square],
        pawns: &Pawns,
    ) {
        match self.successor(target, bk, &extended(sq), pawns) {
            None => fold_max(acc, lanes, &[0; 64], None, |_| BTM_ESCAPE),
            Some((succ, perm)) => fold_max(acc, lanes, &succ, perm, btm_rank_capture),
        }
    }

    /// Folds a white conversion into the word's lanes `lanes` (as
    /// [`Run::fold_conversion_btm`]).
    #[inline(always)]
    pub(super) fn fold_conversion_wtm(
        &self,
        acc: &mut Lanes,
        lanes: u64,
        target: &Target,
        bk: Square,
        sq: &[Square],
        pawns: &Pawns,
    ) {
        let (succ, perm) = self.successor(target, bk, &extended(sq), pawns).expect("white keeps a man");
        fold_min(acc, lanes, &succ, perm, wtm_rank_capture);
    }

    /// White-to-move codes derived for the word's 64 lanes (illegal lanes 63), from black's
    /// derived codes of the word's white chunk (`btm`; the word is its local word `u`).
    #[inline(always)]
    pub(super) fn derive_wtm(&self, c: &Config, u: usize, btm: &Window) -> Lanes {
        let (acc, illegal) = self.fold_wtm(c, Some((u, btm)), !0);
        std::array::from_fn(|l| {
            if illegal >> l & 1 != 0 {
                CODE_ILLEGAL
            } else if acc[l] == WTM_NO_WIN {
                CODE_NONE
            } else {
                acc[l]
            }
        })
    }

    /// The lanes among `want` (legal ones) where white wins by a zeroing move (a capture, a
    /// promotion or a pawn move into a position lost for black with a fresh counter): in 1
    /// ply, whatever a version 6 table stores as their distance. Read from the successor runs
    /// and the pushed slices only, never from a chunk's codes.
    pub(super) fn zeroing_wins(&self, c: &Config, want: u64) -> u64 {
        let (acc, illegal) = self.fold_wtm(c, None, want);
        lanes_where(&acc, |r| r == 1) & want & !illegal
    }

    /// White's ranks of the word's lanes folded over its moves, and its illegal lanes: every
    /// move with `quiet` (black's derived codes of the word's white chunk, the word its local
    /// word), else the zeroing moves only, and only in the lanes `want` (legal lanes: their
    /// legality is not found again; others may keep any rank).
    #[inline(always)]
    fn fold_wtm(&self, c: &Config, quiet: Option<(usize, &Window)>, want: u64) -> (Lanes, u64) {
        if c.doubled {
            return ([WTM_NO_WIN; 64], !0);
        }
        let n = self.n_pieces();
        let att = self.piece_attacks(c);
        let (illegal, legal) = match quiet {
            Some(_) => {
                let illegal = c.occ | self.white_checks(c, &att, None, 0);
                (illegal, !illegal)
            }
            None => (!want, want),
        };
        let mut acc = [WTM_NO_WIN; 64];
        if let Some((u, btm)) = quiet {
            let own = btm.at(u);
            // The white king's quiet moves: lane to lane within the word (illegal lanes fold
            // too, and are marked illegal at the end).
            let safe = lane_bytes(!(c.occ | self.black_attacks(c, &att, None, 0)));
            let ranks: Lanes = std::array::from_fn(|t| wtm_rank_quiet(own[t]) | !safe[t]);
            fold_king_steps(&mut acc, &ranks);
        }
        // Its captures: one successor for every lane next to the black man.
        let mut prey = c.black | c.bp;
        while prey != 0 {
            let t = prey.trailing_zeros() as Square;
            prey &= prey - 1;
            if king_attacks(t) & legal == 0 || self.black_attacks(c, &att, None, 1 << t) & (1 << t) != 0 {
                continue;
            }
            let code = if self.slice.is_some() {
                let (target, pawns) = self.taken_by(c, Color::White, t).expect("a man taken");
                let (succ, perm) = self.successor(target, c.bk, &extended(&c.sq), &pawns).expect("white keeps a man");
                succ[perm.map_or(t, |p| p[t as usize]) as usize]
            } else {
                let j = self.piece_on(c, t);
                let sub = self.subs[j].expect("white keeps its pieces when it captures");
                let (rest, m) = self.without(&c.sq, j);
                sub.code(sub.layout.slot(sub.layout.index(c.bk_code, &rest[..m], t)).expect("a triangle code"))
            };
            let r = wtm_rank_capture(code);
            let mut lanes = king_attacks(t) & legal;
            while lanes != 0 {
                let l = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                acc[l] = acc[l].min(r);
            }
        }
        // White's pieces: the king blocks a ray in some lanes and is exposed in others.
        let mut fetched = Fetched::new();
        for i in (0..n).filter(|&k| self.is_white(k)) {
            let s = c.sq[i];
            let mut targets = attacks(self.role(i), s, c.occ) & !(c.white | c.wp | 1 << c.bk);
            if quiet.is_none() {
                targets &= c.black | c.bp;
            }
            while targets != 0 {
                let t = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let taken = (c.black | c.bp) & 1 << t;
                let mut moved = c.sq;
                moved[i] = t;
                let blocked = between(s, t) | 1 << t;
                if legal & !blocked == 0 {
                    continue;
                }
                let lanes = legal & !blocked & !self.black_attacks(c, &att, Some((s, t)), taken);
                if lanes == 0 {
                    continue;
                }
                if taken == 0 {
                    if let Some((_, btm)) = quiet {
                        fetched.push(btm, lanes, btm.chunking.word(c.bk_code, &moved[..n]), 0);
                    }
                } else if self.slice.is_some() {
                    let (target, pawns) = self.taken_by(c, Color::White, t).expect("a man taken");
                    self.fold_conversion_wtm(&mut acc, lanes, target, c.bk, &moved, &pawns);
                } else {
                    let j = self.piece_on(c, t);
                    let sub = self.subs[j].expect("white keeps its pieces when it captures");
                    let (rest, m) = self.without(&moved, j);
                    let w = Self::word_of(&sub.layout, c.bk_code, &rest[..m]);
                    fold_min(&mut acc, lanes, &sub.word(w), None, wtm_rank_capture);
                }
            }
            if let Some((_, btm)) = quiet {
                for &(lanes, w, _) in fetched.drain() {
                    fold_min(&mut acc, lanes, btm.at(w), None, wtm_rank_quiet);
                }
            }
        }
        if c.wp != 0 {
            self.pawn_moves(Color::White, c, &att, legal, &mut acc);
        }
        (acc, illegal)
    }

    /// Whether identical men stand in increasing square order (the position counted once
    /// in the distance summary, as `stats` counts it).
    pub(super) fn in_order(&self, c: &Config) -> bool {
        self.layout.identical_in_order(&c.sq[..self.n_pieces()])
    }

    /// The transposed image of a word whose black king is on the long diagonal (stored
    /// twice), identical men put in increasing order if `sorted`: its men and its storage
    /// word, or `None` elsewhere and in runs with pawns. (The image lies in the word's chunks:
    /// the transposition keeps the black king and every high digit.)
    pub(super) fn transposed(&self, c: &Config, sorted: bool) -> Option<([Square; MAX_PIECES], usize)> {
        if c.bk & 7 != c.bk >> 3 || c.doubled || self.slice.is_some() {
            return None;
        }
        let n = self.n_pieces();
        let mut img = [0; MAX_PIECES];
        for (m, &s) in img.iter_mut().zip(&c.sq[..n]) {
            *m = Symmetry::TRANSPOSE.apply(s);
        }
        if sorted {
            self.layout.sort_identical(&mut img[..n]);
        }
        Some((img, Self::word_of(self.layout, c.bk_code, &img[..n])))
    }

    /// The storage word of the left-right mirror image of a word in a slice whose file
    /// pattern is its own mirror (stored in both orientations; the image's lanes are `l ^ 7`),
    /// identical men put in increasing order if `sorted`; `None` elsewhere.
    fn mirrored(&self, c: &Config, sorted: bool) -> Option<usize> {
        if !self.slice.as_ref().is_some_and(|s| s.symmetric) || c.doubled {
            return None;
        }
        let n = self.n_pieces();
        let mut img = c.sq.map(|s| s ^ 7);
        if sorted {
            self.layout.sort_identical(&mut img[..n]);
        }
        let (slot, _) =
            self.layout.canonical_slot(c.bk ^ 7, &img[..n], 0, &c.pawns.mirrored()).expect("a stored image");
        Some((slot >> 6) as usize)
    }

    /// Lanes of storage word `word` (men `c`) whose symmetric image (the transposed one, see
    /// [`Run::transposed`], or with pawns the mirrored one) is not a smaller slot: the
    /// positions counted once.
    pub(super) fn first_images(&self, c: &Config, word: usize, sorted: bool) -> u64 {
        let (img, lane): (usize, fn(usize) -> usize) = match (self.transposed(c, sorted), self.mirrored(c, sorted)) {
            (Some((_, img)), _) => (img, |l| Symmetry::TRANSPOSE.apply(l as Square) as usize),
            (None, Some(img)) => (img, |l| l ^ 7),
            (None, None) => return !0,
        };
        (0..64).fold(0u64, |m, l| m | (((img, lane(l)) >= (word, l)) as u64) << l)
    }

    pub(super) fn describe(&self, c: &Config, stm: Color, lane: usize, word: usize) -> String {
        let men = Men::of_squares(self.layout, c.bk, &c.sq[..self.n_pieces()], lane as Square, c.pawns);
        format!("{} {} slot {}: {}", self.material, side_name(stm), 64 * word + lane, men.describe(stm))
    }
}

/// The mover's men as conversions read them: the pieces, then a promoted piece's square at
/// `MAX_PIECES` (`sq` may hold it already).
#[inline]
fn extended(sq: &[Square]) -> [Square; MAX_PIECES + 1] {
    std::array::from_fn(|k| sq.get(k).copied().unwrap_or(0))
}
