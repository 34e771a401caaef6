//! Koistinen's interleaved-bit position index, its hole-free storage order, and the chunks
//! that cut it for one side's passes.
//!
//! Owns: where a position lives in a run's table and in a chunk. May import `chess` only.
//!
//! A position of a white-wins run (black king in the a1-d1-d4 triangle) gets an index whose
//! bits are, from the top: the black-king code and the H digits of every other man,
//! interleaved between black and white (black first); then the L digits of every non-king
//! piece; then the white-king square (6 bits). One 64-bit word therefore holds the 64
//! positions that differ only in the white king's square. See `docs/FORMAT.md`.

mod chunks;
mod identical;
mod illegal;
mod order;
pub mod slices;
mod twins;

pub(crate) use chunks::extract_mask;
pub use chunks::{Block, ChunkKey, ChunkScheme};
pub use illegal::illegal_word;
pub use order::{Man, StoredOrder, ORDER_RECORD_BYTES};
pub use twins::StoredMen;

use crate::chess::square::TRIANGLE;
use crate::chess::{Color, Material, Role, Square, Symmetry};
pub use slices::{Pawns, Slices};

/// The square-code diagram of the seed, rank 8 first: two octal digits `HL` per square.
/// `H` is shared by all symmetric images of a square, `L` says which image it is.
const DIAGRAM: [[u8; 8]; 8] = [
    [0o64, 0o04, 0o14, 0o24, 0o26, 0o16, 0o06, 0o66],
    [0o05, 0o65, 0o34, 0o44, 0o46, 0o36, 0o67, 0o07],
    [0o15, 0o35, 0o74, 0o54, 0o56, 0o76, 0o37, 0o17],
    [0o25, 0o45, 0o55, 0o75, 0o77, 0o57, 0o47, 0o27],
    [0o21, 0o41, 0o51, 0o71, 0o73, 0o53, 0o43, 0o23],
    [0o11, 0o31, 0o70, 0o50, 0o52, 0o72, 0o33, 0o13],
    [0o01, 0o61, 0o30, 0o40, 0o42, 0o32, 0o63, 0o03],
    [0o60, 0o00, 0o10, 0o20, 0o22, 0o12, 0o02, 0o62],
];

/// The 6-bit code `H*8 + L` of a square.
#[inline]
pub const fn square_code(sq: Square) -> u8 {
    DIAGRAM[7 - (sq >> 3) as usize][(sq & 7) as usize]
}

/// The square of each 6-bit code (inverse of the diagram).
const SQUARE_OF_CODE: [Square; 64] = {
    let mut t = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        t[square_code(sq) as usize] = sq;
        sq += 1;
    }
    t
};

/// The square of a 6-bit code `H*8 + L`.
#[inline]
pub fn square_of_code(code: u8) -> Square {
    SQUARE_OF_CODE[code as usize & 63]
}

/// Black-king code of each square of the a1-d1-d4 triangle, `u8::MAX` elsewhere.
const TRIANGLE_CODE: [u8; 64] = {
    let mut t = [u8::MAX; 64];
    let mut i = 0;
    while i < TRIANGLE.len() {
        t[TRIANGLE[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// Where one non-king piece of a run sits in the index.
#[derive(Clone, Debug)]
pub struct PieceSlot {
    pub color: Color,
    pub role: Role,
    /// Global bit positions of the H digit, most significant bit first.
    pub h_bits: [u32; 3],
    /// Shift of the 3-bit L digit.
    pub l_shift: u32,
}

/// The index layout of one white-wins run.
///
/// Pawnless: the black king's triangle code (4 bits) and every piece's H digit on top,
/// interleaved between the sides, then the L digits, then the white king; holes (codes
/// 10..15) are left out of the storage order. With pawns: a slice per canonical pawn
/// configuration ([`Slices`]); inside a slice the black king is an ordinary man (its H digit
/// on top with black's, its L digit first in the low part), there are no holes, and the slot
/// is `slice << total_bits | index`.
#[derive(Clone, Debug)]
pub struct Layout {
    pub material: Material,
    /// Non-king pieces other than pawns: white's (Q R B N order), then black's.
    pub pieces: Vec<PieceSlot>,
    /// The pawn configurations of a run with pawns.
    pub slices: Option<Slices>,
    /// Number of index bits (holes included); with pawns, of the index inside a slice.
    pub total_bits: u32,
    /// Bits of the low part: L digits and the white king.
    pub low_bits: u32,
    /// Global bit positions of the black king's high part (the triangle code, or with pawns
    /// its H digit), most significant first.
    pub bk_bits: Vec<u32>,
    /// Stored positions per side to move: `10 * 64^(men-1)` without pawns, `slices << bits`
    /// with.
    pub n_slots: u64,
    /// Index contribution of each black-king code: a triangle code (0..10), or with pawns a
    /// square (0..64).
    bk_contrib: Vec<u64>,
    piece_contrib: Vec<[u64; 64]>,
}

/// A level of a run: the slots solved together, as one contiguous range of the storage order.
/// A pawnless run is one level; with pawns, a level holds the pawn configurations of one
/// advancement (pawn moves lead to higher levels, which are solved first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// The level's number (higher levels are solved first).
    pub number: u8,
    /// Its first storage slot, a multiple of 64.
    pub first_slot: u64,
    /// Its stored positions per side to move, a multiple of 64.
    pub n_slots: u64,
}

impl Level {
    /// Words of one of the level's bit tables.
    pub fn n_words(&self) -> usize {
        (self.n_slots / 64) as usize
    }
}

/// Places the bits of `value` (most significant first) at `positions`.
#[inline]
pub(crate) fn deposit(value: u64, positions: &[u32]) -> u64 {
    let n = positions.len();
    positions.iter().enumerate().map(|(i, &p)| ((value >> (n - 1 - i)) & 1) << p).fold(0, |a, b| a | b)
}

/// Reads the bits at `positions` (most significant first) into a number.
#[inline]
pub(crate) fn extract(index: u64, positions: &[u32]) -> u64 {
    positions.iter().fold(0, |acc, &p| (acc << 1) | ((index >> p) & 1))
}

/// Bits of the top prefix that holds the whole black-king code:
/// `k3 W2 k2 W1 k1 W0 k0` (k = black-king code, W = H digit of white's first piece).
pub(crate) const PREFIX_BITS: u32 = 7;

/// Rank of each 7-bit prefix among the prefixes whose black-king code is below 10, in
/// increasing order; `u8::MAX` for a hole. 80 prefixes are stored.
const PREFIX_RANK: [u8; 128] = {
    let mut t = [u8::MAX; 128];
    let mut p = 0;
    let mut rank = 0;
    while p < 128 {
        let code = ((p >> 3) & 8) | ((p >> 2) & 4) | ((p >> 1) & 2) | (p & 1);
        if code < 10 {
            t[p] = rank;
            rank += 1;
        }
        p += 1;
    }
    t
};

/// The 7-bit prefix of each stored rank (inverse of [`PREFIX_RANK`]).
const PREFIX_OF_RANK: [u8; 80] = {
    let mut t = [0u8; 80];
    let mut p = 0;
    while p < 128 {
        if PREFIX_RANK[p] != u8::MAX {
            t[PREFIX_RANK[p] as usize] = p as u8;
        }
        p += 1;
    }
    t
};

impl Layout {
    /// The layout of `material`'s white-wins run. White must have at least one man.
    pub fn new(material: &Material) -> Layout {
        assert!(!material.white_bare(), "a run where white is bare is never stored");
        let not_pawn = |r: &&Role| **r != Role::Pawn;
        let mut pieces: Vec<(Color, Role)> =
            material.white.iter().filter(not_pawn).map(|&r| (Color::White, r)).collect();
        pieces.extend(material.black.iter().filter(not_pawn).map(|&r| (Color::Black, r)));
        if material.has_pawns() {
            return Layout::with_pawns(material, &pieces);
        }
        let np = pieces.len() as u32;
        let low_bits = 3 * np + 6;
        let total_bits = 4 + 3 * np + low_bits;
        let (bk_bits, h_bits) = interleave_high_bits(&pieces, 4, total_bits);
        let pieces: Vec<PieceSlot> = pieces
            .iter()
            .enumerate()
            .map(|(k, &(color, role))| PieceSlot {
                color,
                role,
                h_bits: h_bits[k],
                l_shift: 6 + 3 * (np - 1 - k as u32),
            })
            .collect();
        let bk_contrib = (0..10).map(|c| deposit(c as u64, &bk_bits)).collect();
        let piece_contrib = pieces
            .iter()
            .map(|p| {
                std::array::from_fn(|sq| {
                    let code = square_code(sq as Square) as u64;
                    deposit(code >> 3, &p.h_bits) | ((code & 7) << p.l_shift)
                })
            })
            .collect();
        Layout {
            material: material.clone(),
            n_slots: 10u64 << (6 * (np + 1)),
            slices: None,
            pieces,
            total_bits,
            low_bits,
            bk_bits,
            bk_contrib,
            piece_contrib,
        }
    }

    /// The layout of a run with pawns (see [`Layout`]).
    fn with_pawns(material: &Material, pieces: &[(Color, Role)]) -> Layout {
        let np = pieces.len() as u32;
        let low_bits = 3 * (np + 1) + 6;
        let total_bits = 3 * (np + 1) + low_bits;
        let (bk_bits, h_bits) = interleave_high_bits(pieces, 3, total_bits);
        let bk_l_shift = 6 + 3 * np;
        let pieces: Vec<PieceSlot> = pieces
            .iter()
            .enumerate()
            .map(|(k, &(color, role))| PieceSlot {
                color,
                role,
                h_bits: h_bits[k],
                l_shift: 6 + 3 * (np - 1 - k as u32),
            })
            .collect();
        let contrib = |h_bits: &[u32], l_shift: u32, sq: Square| {
            let code = square_code(sq) as u64;
            deposit(code >> 3, h_bits) | ((code & 7) << l_shift)
        };
        let bk_contrib = (0..64).map(|sq| contrib(&bk_bits, bk_l_shift, sq)).collect();
        let piece_contrib =
            pieces.iter().map(|p| std::array::from_fn(|sq| contrib(&p.h_bits, p.l_shift, sq as Square))).collect();
        let slices = Slices::new(material.pawns(Color::White), material.pawns(Color::Black));
        Layout {
            material: material.clone(),
            n_slots: (slices.len() as u64) << total_bits,
            slices: Some(slices),
            pieces,
            total_bits,
            low_bits,
            bk_bits,
            bk_contrib,
            piece_contrib,
        }
    }

    /// Whether pieces `k` and `k + 1` are identical (same colour and role): such men are
    /// stored in both orders.
    #[inline]
    fn same_as_next(&self, k: usize) -> bool {
        self.pieces.get(k + 1).is_some_and(|n| n.color == self.pieces[k].color && n.role == self.pieces[k].role)
    }

    /// Puts identical men (`squares` in `pieces` order) in increasing square order: the
    /// one order in which a position is counted once.
    pub fn sort_identical(&self, squares: &mut [Square]) {
        self.sort_identical_by_key(squares, |sq| sq);
    }

    /// Sorts each run of identical men (`squares` in `pieces` order) by `key`, men of equal
    /// key keeping their order.
    #[inline]
    fn sort_identical_by_key<K: Ord>(&self, squares: &mut [Square], key: impl Fn(Square) -> K + Copy) {
        let mut start = 0;
        for k in 0..squares.len() {
            if !self.same_as_next(k) {
                if k > start {
                    squares[start..=k].sort_by_key(|&sq| key(sq));
                }
                start = k + 1;
            }
        }
    }

    /// Whether identical men stand in increasing square order.
    pub fn identical_in_order(&self, squares: &[Square]) -> bool {
        squares.windows(2).enumerate().all(|(k, w)| !self.same_as_next(k) || w[0] < w[1])
    }

    /// Whether two of the men are identical (same colour and role).
    pub fn has_identical_men(&self) -> bool {
        (0..self.pieces.len()).any(|k| self.same_as_next(k))
    }

    /// Whether the run has pawns (and slices).
    pub fn has_pawns(&self) -> bool {
        self.slices.is_some()
    }

    /// Number of black-king codes: 10 triangle squares, or 64 squares with pawns.
    pub fn bk_codes(&self) -> u8 {
        self.bk_contrib.len() as u8
    }

    /// The square of a black-king code.
    #[inline]
    pub fn bk_square(&self, code: u8) -> Square {
        if self.slices.is_some() {
            code
        } else {
            TRIANGLE[code as usize]
        }
    }

    /// The levels of the run, in the order they are solved.
    pub fn levels(&self) -> Vec<Level> {
        match &self.slices {
            None => vec![Level { number: 0, first_slot: 0, n_slots: self.n_slots }],
            Some(slices) => slices
                .levels
                .iter()
                .map(|l| Level {
                    number: l.level,
                    first_slot: (l.first as u64) << self.total_bits,
                    n_slots: (l.count as u64) << self.total_bits,
                })
                .collect(),
        }
    }

    /// Number of 64-position words per side to move.
    pub fn n_words(&self) -> usize {
        (self.n_slots / 64) as usize
    }

    /// Index of a position whose black king is on triangle code `bk_code`, given the squares
    /// of the pieces (in `pieces` order) and of the white king.
    #[inline]
    pub fn index(&self, bk_code: u8, piece_squares: &[Square], wk: Square) -> u64 {
        let mut idx = self.bk_contrib[bk_code as usize] | wk as u64;
        for (k, &sq) in piece_squares.iter().enumerate() {
            idx |= self.piece_contrib[k][sq as usize];
        }
        idx
    }

    /// Contribution of piece `k` on `sq` to the index.
    #[inline]
    pub fn piece_contrib(&self, k: usize, sq: Square) -> u64 {
        self.piece_contrib[k][sq as usize]
    }

    /// Contribution of the black king's triangle code.
    #[inline]
    pub fn bk_contrib(&self, code: u8) -> u64 {
        self.bk_contrib[code as usize]
    }

    /// Storage slot of an index, or `None` for a hole (black-king code 10..15): the index
    /// order with the holes left out.
    #[inline]
    pub fn slot(&self, index: u64) -> Option<u64> {
        if self.slices.is_some() {
            return Some(index);
        }
        let shift = self.total_bits - PREFIX_BITS;
        let rank = PREFIX_RANK[(index >> shift) as usize];
        (rank != u8::MAX).then(|| ((rank as u64) << shift) | (index & ((1 << shift) - 1)))
    }

    /// The index stored in a slot (inverse of [`Layout::slot`]).
    pub fn index_of_slot(&self, slot: u64) -> u64 {
        if self.slices.is_some() {
            return slot;
        }
        let shift = self.total_bits - PREFIX_BITS;
        let p = PREFIX_OF_RANK[(slot >> shift) as usize] as u64;
        (p << shift) | (slot & ((1 << shift) - 1))
    }

    /// Splits an index into (black-king code, piece squares, white-king square); with pawns,
    /// the index inside its slice (the slice is `index >> total_bits`).
    pub fn decode(&self, index: u64) -> (u8, Vec<Square>, Square) {
        let mut squares = vec![0; self.pieces.len()];
        let (bk, wk) = self.decode_into(index, &mut squares);
        (bk, squares, wk)
    }

    /// Like [`Layout::decode`] without allocating: the piece squares go to `squares` (at
    /// least as long as `pieces`); returns (black-king code, white-king square).
    #[inline]
    pub fn decode_into(&self, index: u64, squares: &mut [Square]) -> (u8, Square) {
        for (p, sq) in self.pieces.iter().zip(squares.iter_mut()) {
            let h = extract(index, &p.h_bits) as u8;
            let l = ((index >> p.l_shift) & 7) as u8;
            *sq = square_of_code(h * 8 + l);
        }
        let high = extract(index, &self.bk_bits) as u8;
        let code = if self.slices.is_some() {
            let l = ((index >> (6 + 3 * self.pieces.len() as u32)) & 7) as u8;
            square_of_code(high * 8 + l)
        } else {
            high
        };
        (code, (index & 63) as Square)
    }

    /// Canonical index of a position given by plain squares (black king anywhere): maps the
    /// black king into the triangle. Returns the index and the symmetry used. Allocates
    /// nothing.
    #[inline]
    pub fn canonical_index(&self, bk: Square, piece_squares: &[Square], wk: Square) -> (u64, Symmetry) {
        let sym = Symmetry::to_triangle(bk);
        let code = TRIANGLE_CODE[sym.apply(bk) as usize];
        assert!(code < 10, "the symmetry brings the black king into the triangle");
        // Without allocating: probes go through here.
        let mut idx = self.bk_contrib[code as usize] | sym.apply(wk) as u64;
        for (k, &sq) in piece_squares.iter().enumerate() {
            idx |= self.piece_contrib[k][sym.apply(sq) as usize];
        }
        (idx, sym)
    }

    /// Storage slot of a position given by plain squares in any orientation, and the symmetry
    /// that brings it to its stored image: without pawns the black king may stand anywhere
    /// (`pawns` must be empty); with pawns, the configuration is mirrored when its mirror is
    /// the stored one. `None` when the pawns are not a stored configuration (a pawn on rank
    /// 1 or 8, or the wrong number of pawns). Allocates nothing.
    #[inline]
    pub fn canonical_slot(&self, bk: Square, pieces: &[Square], wk: Square, pawns: &Pawns) -> Option<(u64, Symmetry)> {
        let Some(slices) = &self.slices else {
            let (idx, sym) = self.canonical_index(bk, pieces, wk);
            return Some((self.slot(idx).expect("canonical index is not a hole"), sym));
        };
        let (sym, pawns) = match pawns.orientation() {
            std::cmp::Ordering::Greater => (Symmetry::MIRROR_FILES, pawns.mirrored()),
            _ => (Symmetry::IDENTITY, *pawns),
        };
        let slice = slices.find(&pawns)? as u64;
        let mut idx = (slice << self.total_bits) | self.bk_contrib[sym.apply(bk) as usize] | sym.apply(wk) as u64;
        for (k, &sq) in pieces.iter().enumerate() {
            idx |= self.piece_contrib[k][sym.apply(sq) as usize];
        }
        Some((idx, sym))
    }
}

/// The index bits of the high part, from `total_bits - 1` down: the black king's
/// `bk_width` bits and black's pieces' H digits interleaved with white's pieces' H digits,
/// one bit each in turn (Koistinen's interleaving). Returns the black king's bit positions
/// (least significant first) and each piece's three H bit positions (likewise).
fn interleave_high_bits(pieces: &[(Color, Role)], bk_width: u32, total_bits: u32) -> (Vec<u32>, Vec<[u32; 3]>) {
    // High-bit owners, most significant first: None = black king, Some(k) = piece k.
    type Bit = (Option<usize>, u32);
    let mut black_seq: Vec<Bit> = (0..bk_width).rev().map(|b| (None, b)).collect();
    let mut white_seq: Vec<Bit> = Vec::new();
    for (k, &(c, _)) in pieces.iter().enumerate() {
        let seq = if c == Color::White { &mut white_seq } else { &mut black_seq };
        seq.extend((0..3).rev().map(|b| (Some(k), b)));
    }
    let mut merged = Vec::new();
    for i in 0..black_seq.len().max(white_seq.len()) {
        merged.extend(black_seq.get(i));
        merged.extend(white_seq.get(i));
    }
    let mut bk_bits = vec![0u32; bk_width as usize];
    let mut h_bits = vec![[0u32; 3]; pieces.len()];
    for (i, &(owner, b)) in merged.iter().enumerate() {
        let pos = total_bits - 1 - i as u32;
        match owner {
            None => bk_bits[(bk_width - 1 - b) as usize] = pos,
            Some(k) => h_bits[k][2 - b as usize] = pos,
        }
    }
    (bk_bits, h_bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::square::triangle_code;

    #[test]
    fn h_digit_is_symmetry_invariant_and_l_separates_images() {
        for sym in Symmetry::all() {
            for sq in 0..64u8 {
                assert_eq!(square_code(sym.apply(sq)) >> 3, square_code(sq) >> 3);
            }
        }
        let mut seen = [false; 64];
        for sq in 0..64u8 {
            let c = square_code(sq) as usize;
            assert!(!seen[c]);
            seen[c] = true;
        }
    }

    #[test]
    fn seed_example_bit_order() {
        // QN vs RB from the seed: k3 Q5 k2 Q4 k1 Q3 k0 N5 r5 N4 r4 N3 r3 b5 b4 b3 ...
        let l = Layout::new(&Material::parse("KQNvKRB").unwrap());
        assert_eq!(l.total_bits, 34);
        assert_eq!(l.bk_bits, [33, 31, 29, 27]);
        assert_eq!(l.pieces[0].h_bits, [32, 30, 28]); // Q
        assert_eq!(l.pieces[1].h_bits, [26, 24, 22]); // N
        assert_eq!(l.pieces[2].h_bits, [25, 23, 21]); // r
        assert_eq!(l.pieces[3].h_bits, [20, 19, 18]); // b
    }

    #[test]
    fn slots_are_dense_and_ordered() {
        let l = Layout::new(&Material::parse("KQvKR").unwrap());
        let mut last = None;
        let mut count = 0u64;
        for idx in 0..(1u64 << l.total_bits) {
            if let Some(s) = l.slot(idx) {
                assert!(last.is_none_or(|p| s > p));
                assert_eq!(l.index_of_slot(s), idx);
                last = Some(s);
                count += 1;
            } else {
                let (bk, _, _) = l.decode(idx);
                assert!(bk >= 10);
            }
        }
        assert_eq!(count, l.n_slots);
        assert_eq!(last, Some(l.n_slots - 1));
    }

    #[test]
    fn encode_decode_round_trip() {
        let l = Layout::new(&Material::parse("KRBvKN").unwrap());
        for (i, bk) in TRIANGLE.iter().enumerate() {
            for sq in 0..64u8 {
                let pieces = [sq, (sq + 7) % 64, (sq * 5 + 3) % 64];
                let idx = l.index(i as u8, &pieces, 63 - sq);
                let (c, p, wk) = l.decode(idx);
                assert_eq!((c, p.as_slice(), wk), (triangle_code(*bk).unwrap(), &pieces[..], 63 - sq));
            }
        }
    }
}
