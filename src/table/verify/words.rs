//! The pawnless verifier, a word at a time: the 64 positions of a storage word differ only
//! in the white king's square (the index's low six bits), so the verifier generates the
//! other men's moves once per word and applies each to the 64 white-king squares together,
//! as byte lanes. Where the white king stands decides, per lane, whether a move is blocked
//! (the king on the ray), legal (the mover's king not left attacked, the king blocking a
//! slider) and what its successor's value is (the successor word's lane, through the
//! symmetry that brings a moved black king back into the triangle).
//!
//! The rules are those of the module above (`super`), restated per lane as an order: a
//! white-to-move value is the least rank among its moves' successors (a win in fewer plies
//! first, then the cursed results), a black-to-move value the greatest (an escape beats a
//! loss only without the rule, which beats the longest loss). Every slot is derived,
//! symmetric images included, and each image is also compared with its smaller slot.
//!
//! Memory: white's codes of the whole run (a byte per slot), and black's derived codes of one
//! black-king square at a time (a tenth), since white's moves never move the black king; the
//! sub-endgames' codes of the side a capture leads to.

use super::{describe_men, open_compact, side_name, Checked, Men, SideReport};
use crate::chess::attacks::{attacks, between, king_attacks};
use crate::chess::square::{triangle_code, TRIANGLE};
use crate::chess::{Color, Material, Role, Square, Symmetry, MAX_PIECES};
use crate::index::{deposit_mask, extract_mask, Layout};
use crate::pipeline::{self, Order};
use crate::table::codes::CodeSource;
use crate::table::compact::{
    planes_at, CompactTable, Part, Summary, SUMMARY_DISTANCES, WDL_BLOCK_BITS, WDL_WORD_BYTES,
};
use crate::table::error::TableError;
use crate::table::values::{
    code_to_distance, describe_code, Class, CODE_CURSED, CODE_EDGE, CODE_EXACT_100, CODE_ILLEGAL, CODE_NONE,
};
use std::path::Path;

/// Storage words a worker takes at a time.
const BATCH_WORDS: usize = 1 << 10;

/// A rank no move of white reaches (white's accumulator starts there: not won).
const WTM_NO_WIN: u8 = 255;
/// Black ranks: a loss only without the rule, and an escape (a draw or better).
const BTM_CURSED: u8 = 100;
const BTM_ESCAPE: u8 = 200;

/// White's rank of a quiet move into a black-to-move code: its own wtm code (1..=50 a win
/// in `2c - 1` plies, 51 the edge, 52 cursed), or no win.
#[inline(always)]
fn wtm_rank_quiet(c: u8) -> u8 {
    if c.wrapping_sub(1) < 52 {
        c
    } else {
        WTM_NO_WIN
    }
}

/// White's rank of a capture into a sub-endgame's black-to-move code (read as classes: 62 or
/// a distance lost under the rule, 52 lost only without it).
#[inline(always)]
fn wtm_rank_capture(c: u8) -> u8 {
    match c {
        CODE_NONE | CODE_ILLEGAL => WTM_NO_WIN,
        CODE_CURSED => CODE_CURSED,
        _ => 1,
    }
}

/// Black's rank of a quiet move into a white-to-move code: the win's code, a loss only
/// without the rule (52, 51, or 53 which the move makes 101 plies), or an escape.
#[inline(always)]
fn btm_rank_quiet(c: u8) -> u8 {
    if c.wrapping_sub(1) < 50 {
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
fn btm_rank_capture(c: u8) -> u8 {
    match c {
        CODE_NONE | CODE_ILLEGAL => BTM_ESCAPE,
        CODE_CURSED | CODE_EDGE => BTM_CURSED,
        _ => 1,
    }
}

/// The black-to-move code of an accumulated rank (`checked`: the black king is in check,
/// for a lane without moves).
#[inline]
fn btm_code(rank: u8, checked: bool) -> u8 {
    match rank {
        0 if checked => 1,
        0 => CODE_NONE,
        BTM_ESCAPE => CODE_NONE,
        BTM_CURSED => CODE_CURSED,
        w => w + 1,
    }
}

/// The 64 lanes of a word.
type Lanes = [u8; 64];

/// Byte lanes of a lane mask: 0xff where set.
#[inline(always)]
fn lane_bytes(mask: u64) -> Lanes {
    std::array::from_fn(|l| 0u8.wrapping_sub(((mask >> l) & 1) as u8))
}

/// `acc = min(acc, rank(succ))` in the lanes of `mask` (succ's lanes permuted by `perm`).
#[inline(always)]
fn fold_min(acc: &mut Lanes, mask: u64, succ: &[u8], perm: Option<&[u8; 64]>, rank: impl Fn(u8) -> u8) {
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
fn fold_max(acc: &mut Lanes, mask: u64, succ: &[u8], perm: Option<&[u8; 64]>, rank: impl Fn(u8) -> u8) {
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

/// The lanes whose rank is an escape, the highest: eight lanes at a time, a byte's high bit
/// set where it equals `BTM_ESCAPE`, the eight high bits gathered by one multiplication.
fn escaped(acc: &Lanes) -> u64 {
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
fn permutations() -> [[u8; 64]; 8] {
    std::array::from_fn(|s| std::array::from_fn(|l| Symmetry::all().nth(s).expect("8").apply(l as Square)))
}

/// The men of one word: everything but the white king.
#[derive(Clone, Copy)]
struct Config {
    bk_code: u8,
    bk: Square,
    sq: [Square; MAX_PIECES],
    /// Squares of the pieces and the black king.
    occ: u64,
    white: u64,
    /// Black's pieces, not its king.
    black: u64,
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

/// A sub-endgame's codes of the side a capture leads to.
struct Sub {
    layout: Layout,
    codes: Vec<u8>,
}

/// Everything the workers of one pawnless run read.
struct Run<'a> {
    material: &'a Material,
    layout: &'a Layout,
    /// White's codes, a byte per slot.
    wtm: &'a [u8],
    /// The sub-endgame after the capture of the piece of layout index `j`; `None` when white
    /// is left with a bare king.
    subs: Vec<Option<&'a Sub>>,
    perms: [[u8; 64]; 8],
    /// Index bits other than the black king's, and each piece's share of them (a slot's
    /// place among the slots of its black-king square).
    rest_mask: u64,
    local_contrib: Vec<[u64; 64]>,
}

impl<'a> Run<'a> {
    fn new(material: &'a Material, layout: &'a Layout, wtm: &'a [u8], subs: Vec<Option<&'a Sub>>) -> Run<'a> {
        let bk_mask = layout.bk_bits.iter().fold(0u64, |m, &b| m | 1 << b);
        let rest_mask = ((1u64 << layout.total_bits) - 1) & !bk_mask;
        let local_contrib = (0..layout.pieces.len())
            .map(|k| std::array::from_fn(|sq| extract_mask(layout.piece_contrib(k, sq as Square), rest_mask)))
            .collect();
        Run { material, layout, wtm, subs, perms: permutations(), rest_mask, local_contrib }
    }

    fn n_pieces(&self) -> usize {
        self.layout.pieces.len()
    }

    fn role(&self, k: usize) -> Role {
        self.layout.pieces[k].role
    }

    fn is_white(&self, k: usize) -> bool {
        self.layout.pieces[k].color == Color::White
    }

    /// Storage words per black-king square.
    fn local_words(&self) -> usize {
        (self.layout.n_slots / 10 / 64) as usize
    }

    /// The men of the `u`-th word of black-king code `bk_code`, and its storage word.
    fn config(&self, bk_code: u8, u: usize) -> (Config, usize) {
        let index = self.layout.bk_contrib(bk_code) | deposit_mask((u as u64) << 6, self.rest_mask);
        let word = (self.layout.slot(index).expect("a triangle code") >> 6) as usize;
        let n = self.n_pieces();
        let mut sq = [0; MAX_PIECES];
        let (code, _) = self.layout.decode_into(index, &mut sq[..n]);
        debug_assert_eq!(code, bk_code);
        let bk = TRIANGLE[bk_code as usize];
        let (mut occ, mut white, mut black, mut doubled) = (1u64 << bk, 0, 0, false);
        for (k, &s) in sq[..n].iter().enumerate() {
            doubled |= occ & (1 << s) != 0;
            occ |= 1 << s;
            if self.is_white(k) {
                white |= 1 << s;
            } else {
                black |= 1 << s;
            }
        }
        (Config { bk_code, bk, sq, occ, white, black, doubled }, word)
    }

    /// The piece (layout index) on `s`.
    fn piece_on(&self, c: &Config, s: Square) -> usize {
        c.sq[..self.n_pieces()].iter().position(|&p| p == s).expect("a piece on the square")
    }

    /// Every piece's attacks in the word (occupancy `c.occ`, the white king left out):
    /// a move changes only those whose lines pass through its two squares.
    fn piece_attacks(&self, c: &Config) -> [u64; MAX_PIECES] {
        std::array::from_fn(|k| if k < self.n_pieces() { attacks(self.role(k), c.sq[k], c.occ) } else { 0 })
    }

    /// Squares black attacks after a white move `s -> t` (`None`: as the word stands), the
    /// piece `skip` (just captured) left out: where the white king may not stand. The white
    /// king is left out of the occupancy: it never shields its own square.
    fn black_attacks(
        &self,
        c: &Config,
        att: &[u64; MAX_PIECES],
        mv: Option<(Square, Square)>,
        skip: Option<usize>,
    ) -> u64 {
        let (changed, occ) = c.after(mv);
        (0..self.n_pieces()).filter(|&k| !self.is_white(k) && Some(k) != skip).fold(king_attacks(c.bk), |a, k| {
            a | if att[k] & changed != 0 { attacks(self.role(k), c.sq[k], occ) } else { att[k] }
        })
    }

    /// Lanes (white-king squares) where white's men give check to the black king on `c.bk`
    /// after a black piece's move `s -> t` (`None`: as the word stands), the piece `skip`
    /// left out: the white king itself next to it, or a piece whose line to it the white
    /// king does not block.
    fn white_checks(
        &self,
        c: &Config,
        att: &[u64; MAX_PIECES],
        mv: Option<(Square, Square)>,
        skip: Option<usize>,
    ) -> u64 {
        let (changed, occ) = c.after(mv);
        let bk = 1u64 << c.bk;
        (0..self.n_pieces())
            .filter(|&k| self.is_white(k) && Some(k) != skip)
            .filter(|&k| {
                if between(c.sq[k], c.bk) & changed != 0 {
                    attacks(self.role(k), c.sq[k], occ) & bk != 0
                } else {
                    att[k] & bk != 0
                }
            })
            .fold(king_attacks(c.bk), |a, k| a | !between(c.sq[k], c.bk))
    }

    /// Lanes where white's men attack `t`, where the black king steps from `c.bk`, the
    /// piece `skip` (taken there) left out: a piece attacks it as the word stands, or
    /// through the square the king leaves.
    fn white_attacks_on_step(&self, c: &Config, att: &[u64; MAX_PIECES], t: Square, skip: Option<usize>) -> u64 {
        let (bk, to) = (1u64 << c.bk, 1u64 << t);
        (0..self.n_pieces())
            .filter(|&k| self.is_white(k) && Some(k) != skip)
            .filter(|&k| att[k] & to != 0 || (att[k] & bk != 0 && between(c.sq[k], t) & bk != 0))
            .fold(king_attacks(t), |a, k| a | !between(c.sq[k], t))
    }

    /// The storage word of the men `sq` (layout `layout`) with the black king on code `bk_code`.
    fn word_of(layout: &Layout, bk_code: u8, sq: &[Square]) -> usize {
        (layout.slot(layout.index(bk_code, sq, 0)).expect("a triangle code") >> 6) as usize
    }

    /// The place of the men `sq` among the words of their black-king square.
    fn local_word(&self, sq: &[Square]) -> usize {
        (sq.iter().enumerate().fold(0, |a, (k, &s)| a | self.local_contrib[k][s as usize]) >> 6) as usize
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
    /// are checkmate and stalemate.
    fn derive_btm(&self, c: &Config) -> (Lanes, u64, u64) {
        if c.doubled {
            return ([CODE_ILLEGAL; 64], 0, 0);
        }
        let n = self.n_pieces();
        let att = self.piece_attacks(c);
        let illegal = c.occ | self.black_attacks(c, &att, None, None);
        let legal = !illegal;
        let checked = self.white_checks(c, &att, None, None) & legal;
        let mut acc = [0u8; 64];
        // The black king's moves (its captures included): the successor's black king may
        // leave the triangle, and its word is read through the symmetry that brings it back.
        let mut targets = king_attacks(c.bk) & !c.black;
        while targets != 0 {
            let t = targets.trailing_zeros() as Square;
            targets &= targets - 1;
            let captured = (c.white & (1 << t) != 0).then(|| self.piece_on(c, t));
            let lanes = legal & !self.white_attacks_on_step(c, &att, t, captured);
            if lanes == 0 {
                continue;
            }
            let sym = Symmetry::to_triangle(t);
            let code = triangle_code(sym.apply(t)).expect("mapped into the triangle");
            let perm = (sym.code() != 0).then(|| &self.perms[sym.code() as usize]);
            let mut moved = [0; MAX_PIECES];
            for (m, &s) in moved.iter_mut().zip(&c.sq[..n]) {
                *m = sym.apply(s);
            }
            match captured {
                None => {
                    let w = Self::word_of(self.layout, code, &moved[..n]);
                    fold_max(&mut acc, lanes, &self.wtm[64 * w..64 * w + 64], perm, btm_rank_quiet);
                }
                Some(j) => self.fold_capture_btm(&mut acc, lanes, j, code, &moved, perm),
            }
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
            let mut targets = attacks(self.role(i), s, c.occ) & !(c.black | 1 << c.bk);
            while targets != 0 {
                let t = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let captured = (c.white & (1 << t) != 0).then(|| self.piece_on(c, t));
                let mut moved = c.sq;
                moved[i] = t;
                let blocked = between(s, t) | 1 << t;
                let lanes = legal & !blocked & !self.white_checks(c, &att, Some((s, t)), captured);
                if lanes == 0 {
                    continue;
                }
                match captured {
                    None => {
                        let w = Self::word_of(self.layout, c.bk_code, &moved[..n]);
                        fold_max(&mut acc, lanes, &self.wtm[64 * w..64 * w + 64], None, btm_rank_quiet);
                    }
                    Some(j) => self.fold_capture_btm(&mut acc, lanes, j, c.bk_code, &moved, None),
                }
            }
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

    /// A black capture of white's piece `j` (the men `sq`, the black king on `bk_code`).
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
        fold_max(acc, lanes, &sub.codes[64 * w..64 * w + 64], perm, btm_rank_capture);
    }

    /// White-to-move codes derived for the word's 64 lanes (illegal lanes 63), from black's
    /// derived codes of the same black-king square (`btm`, in local order).
    fn derive_wtm(&self, c: &Config, u: usize, btm: &[u8]) -> Lanes {
        if c.doubled {
            return [CODE_ILLEGAL; 64];
        }
        let n = self.n_pieces();
        let att = self.piece_attacks(c);
        let illegal = c.occ | self.white_checks(c, &att, None, None);
        let legal = !illegal;
        let mut acc = [WTM_NO_WIN; 64];
        let own = &btm[64 * u..][..64];
        // The white king's quiet moves: lane to lane within the word.
        let safe = !(c.occ | self.black_attacks(c, &att, None, None));
        let mut lanes = legal;
        while lanes != 0 {
            let l = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let mut to = king_attacks(l as Square) & safe;
            while to != 0 {
                let t = to.trailing_zeros() as usize;
                to &= to - 1;
                acc[l] = acc[l].min(wtm_rank_quiet(own[t]));
            }
        }
        // Its captures: one successor for every lane next to the black piece.
        for j in (0..n).filter(|&k| !self.is_white(k)) {
            let t = c.sq[j];
            if self.black_attacks(c, &att, None, Some(j)) & (1 << t) != 0 {
                continue;
            }
            let sub = self.subs[j].expect("white keeps its pieces when it captures");
            let (rest, m) = self.without(&c.sq, j);
            let slot = sub.layout.slot(sub.layout.index(c.bk_code, &rest[..m], t)).expect("a triangle code");
            let r = wtm_rank_capture(sub.codes[slot as usize]);
            let mut lanes = king_attacks(t) & legal;
            while lanes != 0 {
                let l = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                acc[l] = acc[l].min(r);
            }
        }
        // White's pieces: the king blocks a ray in some lanes and is exposed in others.
        for i in (0..n).filter(|&k| self.is_white(k)) {
            let s = c.sq[i];
            let mut targets = attacks(self.role(i), s, c.occ) & !(c.white | 1 << c.bk);
            while targets != 0 {
                let t = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let captured = (c.black & (1 << t) != 0).then(|| self.piece_on(c, t));
                let mut moved = c.sq;
                moved[i] = t;
                let blocked = between(s, t) | 1 << t;
                let lanes = legal & !blocked & !self.black_attacks(c, &att, Some((s, t)), captured);
                if lanes == 0 {
                    continue;
                }
                match captured {
                    None => {
                        let w = self.local_word(&moved[..n]);
                        fold_min(&mut acc, lanes, &btm[64 * w..64 * w + 64], None, wtm_rank_quiet);
                    }
                    Some(j) => {
                        let sub = self.subs[j].expect("white keeps its pieces when it captures");
                        let (rest, m) = self.without(&moved, j);
                        let w = Self::word_of(&sub.layout, c.bk_code, &rest[..m]);
                        fold_min(&mut acc, lanes, &sub.codes[64 * w..64 * w + 64], None, wtm_rank_capture);
                    }
                }
            }
        }
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

    /// Whether identical men stand in increasing square order (the position counted once
    /// in the distance summary, as `stats` counts it).
    fn in_order(&self, c: &Config) -> bool {
        self.layout.identical_in_order(&c.sq[..self.n_pieces()])
    }

    /// The transposed image of a word whose black king is on the long diagonal (stored
    /// twice), identical men put in increasing order if `sorted`: its place among the local words and its
    /// storage word, or `None` elsewhere.
    fn transposed(&self, c: &Config, sorted: bool) -> Option<(usize, usize)> {
        if c.bk & 7 != c.bk >> 3 || c.doubled {
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
        Some((self.local_word(&img[..n]), Self::word_of(self.layout, c.bk_code, &img[..n])))
    }

    /// Lanes of storage word `word` (men `c`) whose transposed image (see
    /// [`Run::transposed`]) is not a smaller slot: every lane off the diagonal.
    fn first_images(&self, c: &Config, word: usize, sorted: bool) -> u64 {
        match self.transposed(c, sorted) {
            Some((_, img)) => (0..64).fold(0u64, |m, l| {
                let t = Symmetry::TRANSPOSE.apply(l as Square) as usize;
                m | (((img, t) >= (word, l)) as u64) << l
            }),
            None => !0,
        }
    }

    fn describe(&self, c: &Config, stm: Color, lane: usize, word: usize) -> String {
        let n = self.n_pieces();
        let men = Men { wk: lane as Square, bk: c.bk, n, sq: c.sq };
        format!(
            "{} {} slot {}: {}",
            self.material,
            side_name(stm),
            64 * word + lane,
            describe_men(self.layout, &men, stm)
        )
    }
}

/// Counts one checked legal lane.
fn count(stm: Color, code: u8, rep: &mut SideReport) {
    let beyond = code == CODE_CURSED || (stm == Color::White && code == CODE_EDGE);
    if code == CODE_NONE {
        rep.not_won += 1;
    } else if beyond {
        rep.cursed += 1;
    } else {
        rep.won += 1;
        rep.longest = rep.longest.max(code_to_distance(stm, code));
    }
}

/// Loads the codes of one side of a compact table, a byte per slot (`CodeSource`'s codes:
/// black's losses as 62), with `threads` workers.
fn load_codes(table: &CompactTable, layout: &Layout, stm: Color, threads: usize) -> Result<Vec<u8>, TableError> {
    let mut out = vec![0u8; layout.n_slots as usize];
    let per = 1usize << WDL_BLOCK_BITS;
    let source = CodeSource::Compact(table, layout);
    fill_blocks(&mut out, per, threads, |i, len| {
        let mut codes = Vec::new();
        source.read(stm, i * per / 64, len / 64, &mut codes)?;
        Ok(codes.as_flattened().to_vec())
    })?;
    Ok(out)
}

/// Loads the decoded class section of one side of a compact table (two bit planes per
/// word, `compact::planes_at`), with `threads` workers.
fn load_classes(table: &CompactTable, stm: Color, threads: usize) -> Result<Vec<u8>, TableError> {
    let mut out = vec![0u8; WDL_WORD_BYTES * (table.header.n_slots / 64) as usize];
    let part = Part::wdl(stm);
    fill_blocks(&mut out, WDL_WORD_BYTES << (WDL_BLOCK_BITS - 6), threads, |i, _| {
        let mut block = Vec::new();
        table.block_into(part, i, &mut block)?;
        Ok(block)
    })?;
    Ok(out)
}

/// Fills `out` block by block (`per` bytes, the last one shorter) with what `decode(i, len)`
/// gives for block `i`, on `threads` workers; a block of the wrong length is an error.
fn fill_blocks(
    out: &mut [u8],
    per: usize,
    threads: usize,
    decode: impl Fn(usize, usize) -> Result<Vec<u8>, TableError> + Sync,
) -> Result<(), TableError> {
    let len = |i: usize| per.min(out.len() - i * per);
    let lens: Vec<usize> = (0..out.len().div_ceil(per)).map(len).collect();
    pipeline::run(
        lens.len(),
        threads,
        Order::Completion,
        Ok,
        |i, _| decode(i, lens[i]),
        |i, bytes| {
            if bytes.len() != lens[i] {
                return Err(TableError::Wrong(format!("block {i} decodes to {} bytes, not {}", bytes.len(), lens[i])));
            }
            out[i * per..i * per + bytes.len()].copy_from_slice(&bytes);
            Ok(())
        },
    )
}

/// What one batch of black's words found.
#[derive(Default)]
struct BtmBatch {
    rep: SideReport,
    by_distance: Vec<u64>,
    /// The smallest slot of a longest loss in the batch.
    longest: Option<(u8, u64)>,
}

/// Derives black's codes of the local words `words` of black-king code `bk_code` into `out`
/// and checks them against the stored classes (`stored`, the decoded class section) and
/// against where the reader finds illegal positions.
fn check_btm_batch(
    ctx: &Run,
    bk_code: u8,
    words: std::ops::Range<usize>,
    stored: &[u8],
) -> Result<(BtmBatch, Vec<u8>), TableError> {
    let mut b = BtmBatch { by_distance: vec![0; SUMMARY_DISTANCES], ..Default::default() };
    let mut out = Vec::with_capacity(64 * words.len());
    for u in words {
        let (c, word) = ctx.config(bk_code, u);
        let (codes, mates, stalemates) = ctx.derive_btm(&c);
        let (_, reader_illegal) = crate::index::illegal_word(ctx.layout, word as u64);
        let [lo, hi] = planes_at(stored, word);
        // The positions the summary counts: each position once, as `stats` counts them.
        let counted = if ctx.in_order(&c) { ctx.first_images(&c, word, true) } else { 0 };
        for (l, &want) in codes.iter().enumerate() {
            let illegal = reader_illegal >> l & 1 != 0;
            let got = Class::of_planes(lo, hi, l as u64);
            let expected = Class::of_code(Color::Black, want);
            if illegal != (want == CODE_ILLEGAL) || (!illegal && got != expected) {
                let s = if illegal { "illegal" } else { got.btm_name() };
                let w = if want == CODE_ILLEGAL { "illegal" } else { expected.btm_name() };
                let msg = format!(
                    "{}: black to move is stored as {s}, but its moves make it {w} (code {want})",
                    ctx.describe(&c, Color::Black, l, word)
                );
                return Err(TableError::Wrong(msg));
            }
            if want == CODE_ILLEGAL {
                b.rep.illegal += 1;
                continue;
            }
            count(Color::Black, want, &mut b.rep);
            if let Some(d) = code_to_distance(Color::Black, want).filter(|_| counted >> l & 1 != 0) {
                b.by_distance[d as usize] += 1;
                let slot = 64 * word as u64 + l as u64;
                if b.longest.is_none_or(|(ld, ls)| d > ld || (d == ld && slot < ls)) {
                    b.longest = Some((d, slot));
                }
            }
        }
        // Mates and stalemates are counted once per position pair, as derived slots.
        let derived = ctx.first_images(&c, word, false);
        b.rep.mates += (mates & derived).count_ones() as u64;
        b.rep.stalemates += (stalemates & derived).count_ones() as u64;
        out.extend_from_slice(&codes);
    }
    Ok((b, out))
}

/// Derives white's codes of the local words `words` of black-king code `bk_code` from
/// black's (`btm`, that black-king square's) and compares them with the stored ones; checks
/// that the transposed images (black king on the diagonal) hold the same values, both
/// sides. Returns white's counts and black's split between derived and by-symmetry slots.
fn check_wtm_batch(
    ctx: &Run,
    bk_code: u8,
    words: std::ops::Range<usize>,
    btm: &[u8],
) -> Result<(SideReport, SideReport), TableError> {
    let (mut rep, mut btm_rep) = (SideReport::default(), SideReport::default());
    let wrong = |msg: String| Err(TableError::Wrong(msg));
    for u in words {
        let (c, word) = ctx.config(bk_code, u);
        let derived = ctx.derive_wtm(&c, u, btm);
        let stored = &ctx.wtm[64 * word..][..64];
        let image = ctx.transposed(&c, false);
        for (l, (&got, &want)) in stored.iter().zip(&derived).enumerate() {
            if want == CODE_ILLEGAL {
                if got != CODE_ILLEGAL {
                    let here = ctx.describe(&c, Color::White, l, word);
                    return wrong(format!(
                        "{here}: illegal position stored as {}, expected code 63",
                        describe_code(Color::White, got)
                    ));
                }
                rep.illegal += 1;
                continue;
            }
            let edge = want == CODE_EDGE && matches!(got, CODE_CURSED | CODE_EXACT_100);
            if got != want && !edge {
                let here = ctx.describe(&c, Color::White, l, word);
                let (g, w) = (describe_code(Color::White, got), describe_code(Color::White, want));
                return wrong(format!("{here}: stored {g}, expected {w}"));
            }
            count(Color::White, got, &mut rep);
        }
        // The transposed images, stored too when the black king is on the diagonal.
        for (stm, r) in [(Color::White, &mut rep), (Color::Black, &mut btm_rep)] {
            let (codes, own): (&[u8], usize) = match stm {
                Color::White => (ctx.wtm, word),
                Color::Black => (btm, u),
            };
            for l in (0..64).filter(|&l| codes[64 * own + l] != CODE_ILLEGAL) {
                let t = Symmetry::TRANSPOSE.apply(l as Square) as usize;
                match image {
                    Some((local, img_word)) if (img_word, t) < (word, l) => {
                        let img = if stm == Color::White { 64 * img_word + t } else { 64 * local + t };
                        if codes[img] != codes[64 * own + l] {
                            let here = ctx.describe(&c, stm, l, word);
                            let (v, i) = (describe_code(stm, codes[64 * own + l]), describe_code(stm, codes[img]));
                            let at = 64 * img_word + t;
                            return wrong(format!("{here}: value {v}, but its symmetric image at slot {at} holds {i}"));
                        }
                        r.by_symmetry += 1;
                    }
                    _ => r.derived += 1,
                }
            }
        }
    }
    Ok((rep, btm_rep))
}

/// Bytes of RAM [`verify_words`] takes for a pawnless run: a byte per position for white's
/// codes, a quarter for black's stored classes, a tenth for black's derived codes, and a byte
/// per position of the sub-endgames that captures lead to (KQRvKQR: 14.1 GiB).
pub(super) fn memory_needed(run: &Material) -> u64 {
    let layout = Layout::new(run);
    let n = layout.n_slots;
    let mut subs: Vec<(Material, Color)> = layout
        .pieces
        .iter()
        .map(|p| (capture_of(run, p.color, p.role), p.color))
        .filter(|(m, _)| !m.white_bare())
        .collect();
    subs.sort_by_key(|(m, c)| (m.clone(), c.index()));
    subs.dedup();
    n + n / 4 + n / 10 + subs.iter().map(|(m, _)| Layout::new(m).n_slots).sum::<u64>()
}

/// Checks every slot of a pawnless run, both sides to move, a word at a time; returns the
/// counts and black's distance summary (to compare with the stored one).
pub(super) fn verify_words(
    run: &Material,
    table: &CompactTable,
    tables_dir: &Path,
    threads: usize,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Checked, Summary), TableError> {
    let layout = Layout::new(run);
    let n = layout.n_slots;
    progress(0, 3 * n);
    let wtm = load_codes(table, &layout, Color::White, threads)?;
    let stored_btm = load_classes(table, Color::Black, threads)?;
    let loaded = load_subs(run, &layout, tables_dir, threads)?;
    let subs = layout
        .pieces
        .iter()
        .map(|p| loaded.iter().find(|(m, stm, _)| *m == capture_of(run, p.color, p.role) && *stm == p.color))
        .map(|s| s.map(|(_, _, sub)| sub))
        .collect();
    let ctx = Run::new(run, &layout, &wtm, subs);
    progress(n, 3 * n);
    let words = ctx.local_words();
    let (mut wtm_rep, mut btm_rep) = (SideReport::default(), SideReport::default());
    let mut by_distance = vec![0u64; SUMMARY_DISTANCES];
    let mut longest: Option<(u8, u64)> = None;
    let mut btm = vec![0u8; 64 * words];
    let batches = words.div_ceil(BATCH_WORDS);
    let range = |b: usize| b * BATCH_WORDS..words.min((b + 1) * BATCH_WORDS);
    // In word order: the error reported is the one of the smallest wrong word.
    let order = Order::Sequence { window: 8 * threads.max(1) };
    for bk_code in 0..10u8 {
        // Black's codes of this black-king square: derived, their classes checked.
        let check_btm = |b, _| check_btm_batch(&ctx, bk_code, range(b), &stored_btm);
        pipeline::run(batches, threads, order, Ok, check_btm, |b, (batch, codes): (BtmBatch, Vec<u8>)| {
            btm[64 * range(b).start..][..codes.len()].copy_from_slice(&codes);
            btm_rep.add(&batch.rep);
            for (a, x) in by_distance.iter_mut().zip(&batch.by_distance) {
                *a += x;
            }
            if let Some((d, s)) = batch.longest {
                if longest.is_none_or(|(ld, ls)| d > ld || (d == ld && s < ls)) {
                    longest = Some((d, s));
                }
            }
            Ok(())
        })?;
        // White's codes of this black-king square, derived from black's and compared.
        let check_wtm = |b, _| check_wtm_batch(&ctx, bk_code, range(b), &btm);
        pipeline::run(batches, threads, order, Ok, check_wtm, |_, (w, b): (SideReport, SideReport)| {
            wtm_rep.add(&w);
            btm_rep.derived += b.derived;
            btm_rep.by_symmetry += b.by_symmetry;
            Ok(())
        })?;
        progress(n + 2 * n * (bk_code as u64 + 1) / 10, 3 * n);
    }
    let mut sub_runs: Vec<Material> = loaded.into_iter().map(|(m, _, _)| m).collect();
    sub_runs.sort();
    sub_runs.dedup();
    let summary =
        Summary { by_distance: by_distance.try_into().expect("101 distances"), longest_slot: longest.map(|(_, s)| s) };
    Ok((Checked { wtm: wtm_rep, btm: btm_rep, sub_runs }, summary))
}

/// The run a capture of the `color` piece `role` leads to.
fn capture_of(run: &Material, color: Color, role: Role) -> Material {
    match color {
        Color::White => run.without_white(role),
        Color::Black => run.without_black(role),
    }
}

/// The sub-endgames' codes a capture leads to: (run, side to move after it, codes); white
/// left with a bare king has none.
fn load_subs(
    run: &Material,
    layout: &Layout,
    dir: &Path,
    threads: usize,
) -> Result<Vec<(Material, Color, Sub)>, TableError> {
    let mut loaded: Vec<(Material, Color, Sub)> = Vec::new();
    for p in &layout.pieces {
        // The captured piece's side moves next.
        let (sub, stm) = (capture_of(run, p.color, p.role), p.color);
        if sub.white_bare() || loaded.iter().any(|(m, s, _)| *m == sub && *s == stm) {
            continue;
        }
        let verifying =
            |e: TableError| TableError::Verifying { run: run.clone(), needed: Some(sub.clone()), cause: Box::new(e) };
        let t = open_compact(dir, &sub).map_err(verifying)?;
        let sub_layout = Layout::new(&sub);
        let codes = load_codes(&t, &sub_layout, stm, threads).map_err(verifying)?;
        loaded.push((sub, stm, Sub { layout: sub_layout, codes }));
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

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
