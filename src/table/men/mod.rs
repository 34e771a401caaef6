//! The men of a position in fixed arrays: how probe and verify hold a position. The kings
//! apart, the other pieces in layout order (white's, then black's, each side Q R B N: the
//! order of every run's index, so that the squares go into it as they stand), the pawns
//! apart. Probes gather a position's men once ([`Men::gather`]), the verifier decodes a slot
//! into them ([`Men::of_slot`]); both play moves on them (`moves`). Nothing here allocates.
//!
//! Owns: a position's men and their moves. May import `chess` and `index`, never `probe` or
//! `verify`, which use it.

mod moves;
pub use moves::{ahead, beside, on_last_rank, on_start_rank};
#[cfg(test)]
mod tests;

use super::keys::{role_weight, PIECE_SETS, PIECE_SET_INDEX};
use crate::chess::position::board_field;
use crate::chess::square::square_name;
use crate::chess::{Color, Piece, Position, Role, Square, Symmetry, MAX_PIECES};
use crate::index::slices::MAX_PAWNS;
use crate::index::{Layout, Pawns};

/// The men of a position (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Men {
    /// The kings' squares, white's then black's ([`Color::index`]).
    pub kings: [Square; 2],
    /// The squares of the pieces (neither kings nor pawns) in layout order: the first `n`.
    pub sq: [Square; MAX_PIECES],
    /// Their roles.
    pub role: [Role; MAX_PIECES],
    /// Number of pieces.
    pub n: usize,
    /// How many of them are white's (the first ones).
    pub n_white: usize,
    /// The pawns, white's then black's.
    pub pawns: Pawns,
}

impl Men {
    /// No men but the kings.
    #[inline]
    pub fn only_kings(white: Square, black: Square) -> Men {
        Men {
            kings: [white, black],
            sq: [0; MAX_PIECES],
            role: [Role::King; MAX_PIECES],
            n: 0,
            n_white: 0,
            pawns: Pawns::none(),
        }
    }

    /// The men of a position of `layout`'s run: the black king on `bk`, the pieces on `pieces`
    /// (in `layout.pieces` order), the white king on `wk`, the pawns.
    #[inline]
    pub fn of_squares(layout: &Layout, bk: Square, pieces: &[Square], wk: Square, pawns: Pawns) -> Men {
        let mut men = Men::only_kings(wk, bk);
        for (k, (p, &s)) in layout.pieces.iter().zip(pieces).enumerate() {
            men.sq[k] = s;
            men.role[k] = p.role;
            men.n_white += (p.color == Color::White) as usize;
        }
        men.n = pieces.len();
        men.pawns = pawns;
        men
    }

    /// The men of a storage slot of `layout`'s run (possibly overlapping: a broken slot).
    #[inline]
    pub fn of_slot(layout: &Layout, slot: u64) -> Men {
        let index = layout.index_of_slot(slot);
        let mut sq = [0; MAX_PIECES];
        let n = layout.pieces.len();
        let (code, wk) = layout.decode_into(index, &mut sq[..n]);
        let pawns = match &layout.slices {
            Some(slices) => slices.pawns((index >> layout.total_bits) as u32),
            None => Pawns::none(),
        };
        Men::of_squares(layout, layout.bk_square(code), &sq[..n], wk, pawns)
    }

    /// Gathers a position's men; with `swap`, those of its colour swap flipped top to bottom
    /// (black's men become white's), so that the side to move can be read as white.
    #[inline]
    pub fn gather(pos: &Position, swap: bool) -> Men {
        let xf = if swap { 56 } else { 0 };
        let mut men = Men::only_kings(0, 0);
        let (mut wp, mut bp) = ([0 as Square; MAX_PAWNS], [0 as Square; MAX_PAWNS]);
        let (mut nwp, mut nbp) = (0, 0);
        // (colour, role order) of each piece, for the insertion sort.
        let mut rank = [0u8; MAX_PIECES];
        for (s, p) in pos.pieces() {
            let s = s ^ xf;
            let c = ((p.color == Color::Black) != swap) as usize;
            if p.role == Role::King {
                men.kings[c] = s;
                continue;
            }
            if p.role == Role::Pawn {
                assert!(nwp + nbp < MAX_PAWNS, "a position holds at most {MAX_PAWNS} pawns");
                if c == 0 {
                    wp[nwp] = s;
                    nwp += 1;
                } else {
                    bp[nbp] = s;
                    nbp += 1;
                }
                continue;
            }
            if c == 0 {
                men.n_white += 1;
            }
            let key = (c as u8) << 4 | p.role as u8;
            let mut i = men.n;
            assert!(i < MAX_PIECES, "a position holds at most {MAX_PIECES} pieces besides the kings");
            while i > 0 && rank[i - 1] > key {
                rank[i] = rank[i - 1];
                men.sq[i] = men.sq[i - 1];
                men.role[i] = men.role[i - 1];
                i -= 1;
            }
            rank[i] = key;
            men.sq[i] = s;
            men.role[i] = p.role;
            men.n += 1;
        }
        men.pawns = Pawns::new(&wp[..nwp], &bp[..nbp]);
        men
    }

    /// The squares of the pieces.
    #[inline]
    pub fn pieces(&self) -> &[Square] {
        &self.sq[..self.n]
    }

    /// The king of `color`.
    #[inline]
    pub fn king(&self, color: Color) -> Square {
        self.kings[color.index()]
    }

    /// Indices of `color`'s pieces.
    #[inline]
    pub fn range(&self, color: Color) -> std::ops::Range<usize> {
        match color {
            Color::White => 0..self.n_white,
            Color::Black => self.n_white..self.n,
        }
    }

    /// The colour of piece `i`.
    #[inline]
    pub fn color(&self, i: usize) -> Color {
        if i < self.n_white {
            Color::White
        } else {
            Color::Black
        }
    }

    /// The squares of `color`'s men, its king and pawns included.
    #[inline]
    pub fn occupied_by(&self, color: Color) -> u64 {
        let pieces = self.range(color).fold(0u64, |b, i| b | 1 << self.sq[i]);
        pieces | self.pawns.occupied_by(color) | 1 << self.king(color)
    }

    /// The occupied squares.
    #[inline]
    pub fn occupancy(&self) -> u64 {
        self.occupied_by(Color::White) | self.occupied_by(Color::Black)
    }

    /// Whether no two men share a square.
    #[inline]
    pub fn apart(&self) -> bool {
        self.occupancy().count_ones() as usize == 2 + self.n + self.pawns.n
    }

    /// Each side's piece set ([`super::keys`]): what the men are, as two numbers.
    #[inline]
    pub fn piece_sets(&self) -> [usize; 2] {
        [Color::White, Color::Black].map(|c| {
            let pieces: usize = self.range(c).map(|i| role_weight(self.role[i])).sum();
            PIECE_SET_INDEX[pieces + role_weight(Role::Pawn) * self.pawns.of(c).len()] as usize
        })
    }

    /// The run key of the men's material ([`super::keys::run_key`]).
    #[inline]
    pub fn run_key(&self) -> usize {
        let [w, b] = self.piece_sets();
        w * PIECE_SETS + b
    }

    /// The left-right mirror image.
    #[inline]
    pub fn mirrored(&self) -> Men {
        let mut m = *self;
        for k in &mut m.kings {
            *k ^= 7;
        }
        for s in &mut m.sq[..m.n] {
            *s ^= 7;
        }
        m.pawns = self.pawns.mirrored();
        m
    }

    /// The image under a symmetry of the board (with pawns only the left-right mirror, which
    /// keeps pawns pawns).
    #[inline]
    pub fn image(&self, sym: Symmetry) -> Men {
        if sym == Symmetry::MIRROR_FILES {
            return self.mirrored();
        }
        debug_assert!(self.pawns.n == 0, "pawns have no symmetric images but the mirror's");
        let mut m = *self;
        for k in &mut m.kings {
            *k = sym.apply(*k);
        }
        for s in &mut m.sq[..m.n] {
            *s = sym.apply(*s);
        }
        m
    }

    /// The men as a FEN board with `stm` to move; men sharing a square (a broken slot) are
    /// named after it, the later one shown.
    pub fn describe(&self, stm: Color) -> String {
        let mut board: [Option<char>; 64] = [None; 64];
        let mut overlaps = Vec::new();
        let mut put = |sq: Square, piece: Piece| {
            if board[sq as usize].is_some() {
                overlaps.push(square_name(sq));
            }
            board[sq as usize] = Some(piece.letter());
        };
        for (color, &king) in [Color::White, Color::Black].iter().zip(&self.kings) {
            put(king, Piece { color: *color, role: Role::King });
        }
        for i in 0..self.n {
            put(self.sq[i], Piece { color: self.color(i), role: self.role[i] });
        }
        for color in [Color::White, Color::Black] {
            for &s in self.pawns.of(color) {
                put(s, Piece { color, role: Role::Pawn });
            }
        }
        let mut s = board_field(&board);
        s.push_str(if stm == Color::White { " w - - 0 1" } else { " b - - 0 1" });
        if !overlaps.is_empty() {
            s.push_str(&format!(" (two men on {})", overlaps.join(", ")));
        }
        s
    }

    /// The position of the men with `stm` to move, if it is legal.
    pub fn position(&self, stm: Color) -> Option<Position> {
        let king = |color| Piece { color, role: Role::King };
        let mut list = [(self.kings[0], king(Color::White)); 2 + MAX_PIECES + MAX_PAWNS];
        list[1] = (self.kings[1], king(Color::Black));
        let mut len = 2;
        for i in 0..self.n {
            list[len] = (self.sq[i], Piece { color: self.color(i), role: self.role[i] });
            len += 1;
        }
        for color in [Color::White, Color::Black] {
            for &s in self.pawns.of(color) {
                list[len] = (s, Piece { color, role: Role::Pawn });
                len += 1;
            }
        }
        Position::from_men(&list[..len], stm).ok()
    }
}
