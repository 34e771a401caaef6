//! Koistinen's interleaved-bit position index, its hole-free storage order, and chunks.
//!
//! A position of a white-wins run (black king in the a1-d1-d4 triangle) gets an index whose
//! bits are, from the top: the black-king code and the H digits of every other man,
//! interleaved between black and white (black first); then the L digits of every non-king
//! piece; then the white-king square (6 bits). One 64-bit word therefore holds the 64
//! positions that differ only in the white king's square. See `docs/FORMAT.md`.

use crate::attacks::Role;
use crate::material::{Color, Material};
use crate::square::{Square, Symmetry};

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
    while i < crate::square::TRIANGLE.len() {
        t[crate::square::TRIANGLE[i] as usize] = i as u8;
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
#[derive(Clone, Debug)]
pub struct Layout {
    pub material: Material,
    /// Non-king pieces: white's (Q R B N order), then black's.
    pub pieces: Vec<PieceSlot>,
    /// Number of index bits (holes included).
    pub total_bits: u32,
    /// Bits of the low part: L digits and the white king.
    pub low_bits: u32,
    /// Global bit positions of the black-king code, most significant first.
    pub bk_bits: [u32; 4],
    /// Stored positions per side to move: `10 * 64^(men-1)`.
    pub n_slots: u64,
    bk_contrib: [u64; 10],
    piece_contrib: Vec<[u64; 64]>,
}

/// Places the bits of `value` (most significant first) at `positions`.
#[inline]
fn deposit(value: u64, positions: &[u32]) -> u64 {
    let n = positions.len();
    positions.iter().enumerate().map(|(i, &p)| ((value >> (n - 1 - i)) & 1) << p).fold(0, |a, b| a | b)
}

/// Reads the bits at `positions` (most significant first) into a number.
#[inline]
fn extract(index: u64, positions: &[u32]) -> u64 {
    positions.iter().fold(0, |acc, &p| (acc << 1) | ((index >> p) & 1))
}

/// Bits of the top prefix that holds the whole black-king code:
/// `k3 W2 k2 W1 k1 W0 k0` (k = black-king code, W = H digit of white's first piece).
const PREFIX_BITS: u32 = 7;

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

impl Layout {
    /// The layout of `material`'s white-wins run. White must have at least one piece.
    pub fn new(material: &Material) -> Layout {
        assert!(!material.white_bare(), "a run where white is bare is never stored");
        let mut pieces: Vec<(Color, Role)> = material.white.iter().map(|&r| (Color::White, r)).collect();
        pieces.extend(material.black.iter().map(|&r| (Color::Black, r)));
        let np = pieces.len() as u32;
        let low_bits = 3 * np + 6;
        let total_bits = 4 + 3 * np + low_bits;
        // High-bit owners, most significant first: None = black king, Some(k) = piece k.
        type Bit = (Option<usize>, u32);
        let mut black_seq: Vec<Bit> = (0..4).rev().map(|b| (None, b)).collect();
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
        let mut bk_bits = [0u32; 4];
        let mut h_bits = vec![[0u32; 3]; pieces.len()];
        for (i, &(owner, b)) in merged.iter().enumerate() {
            let pos = total_bits - 1 - i as u32;
            match owner {
                None => bk_bits[3 - b as usize] = pos,
                Some(k) => h_bits[k][2 - b as usize] = pos,
            }
        }
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
        let bk_contrib = std::array::from_fn(|c| deposit(c as u64, &bk_bits));
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
            pieces,
            total_bits,
            low_bits,
            bk_bits,
            bk_contrib,
            piece_contrib,
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
        let shift = self.total_bits - PREFIX_BITS;
        let rank = PREFIX_RANK[(index >> shift) as usize];
        (rank != u8::MAX).then(|| ((rank as u64) << shift) | (index & ((1 << shift) - 1)))
    }

    /// The index stored in a slot (inverse of [`Layout::slot`]).
    pub fn index_of_slot(&self, slot: u64) -> u64 {
        let shift = self.total_bits - PREFIX_BITS;
        let rank = (slot >> shift) as u8;
        let p = PREFIX_RANK.iter().position(|&r| r == rank).expect("slot in range") as u64;
        (p << shift) | (slot & ((1 << shift) - 1))
    }

    /// Splits an index into (black-king code, piece squares, white-king square).
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
        (extract(index, &self.bk_bits) as u8, (index & 63) as Square)
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
}

/// Places the low bits of `value` at the set bits of `mask`, in order (software `pdep`).
#[inline]
fn deposit_mask(mut value: u64, mut mask: u64) -> u64 {
    let mut out = 0;
    while mask != 0 {
        let bit = mask & mask.wrapping_neg();
        if value & 1 != 0 {
            out |= bit;
        }
        value >>= 1;
        mask &= mask - 1;
    }
    out
}

/// Gathers the bits of `x` at the set bits of `mask` into the low bits (software `pext`).
#[inline]
fn extract_mask(x: u64, mut mask: u64) -> u64 {
    let mut out = 0;
    let mut i = 0;
    while mask != 0 {
        let bit = mask & mask.wrapping_neg();
        if x & bit != 0 {
            out |= 1 << i;
        }
        i += 1;
        mask &= mask - 1;
    }
    out
}

/// How one side's passes cut a run into chunks. A chunk fixes the other side's high bits
/// that lie at or above `block_bits`, so every move of the mover stays inside its chunk and
/// every storage block of `2^block_bits` positions lies inside one chunk of each side.
/// The chunk-local index is the global index with the fixed bits taken out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkScheme {
    pub mover: Color,
    /// Global positions of the fixed bits, most significant first.
    pub fixed_bits: Vec<u32>,
    fixed_mask: u64,
    /// log2 of the positions of a storage block.
    pub block_bits: u32,
    total_bits: u32,
}

/// A storage block of a chunk: `2^block_bits` positions contiguous locally and in storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Block number in storage order (`slot >> block_bits`).
    pub id: usize,
    /// First chunk-local word.
    pub local_word: usize,
    /// First storage word.
    pub slot_word: usize,
    /// Words in the block.
    pub words: usize,
}

impl ChunkScheme {
    /// The scheme for passes where `mover` moves, with storage blocks of `2^block_bits`
    /// positions (`6 <= block_bits <= total_bits - 7`).
    pub fn new(layout: &Layout, mover: Color, block_bits: u32) -> ChunkScheme {
        ChunkScheme::with_fixed_limit(layout, mover, block_bits, usize::MAX)
    }

    /// Like [`ChunkScheme::new`], but fixing at most the top `limit` bits (fewer, larger
    /// chunks; any limit gives the same tables).
    pub fn with_fixed_limit(layout: &Layout, mover: Color, block_bits: u32, limit: usize) -> ChunkScheme {
        assert!(block_bits >= 6 && block_bits <= layout.total_bits - PREFIX_BITS, "block bits out of range");
        let mut fixed_bits = Vec::new();
        if mover != Color::Black {
            fixed_bits.extend_from_slice(&layout.bk_bits);
        }
        for p in layout.pieces.iter().filter(|p| p.color != mover) {
            fixed_bits.extend_from_slice(&p.h_bits);
        }
        fixed_bits.retain(|&b| b >= block_bits);
        fixed_bits.sort_unstable_by(|a, b| b.cmp(a));
        fixed_bits.truncate(limit);
        let fixed_mask = fixed_bits.iter().fold(0, |m, &b| m | (1u64 << b));
        ChunkScheme { mover, fixed_bits, fixed_mask, block_bits, total_bits: layout.total_bits }
    }

    /// Number of chunk keys (some may be holes).
    pub fn n_keys(&self) -> usize {
        1 << self.fixed_bits.len()
    }

    /// Bits of a chunk-local index.
    pub fn local_bits(&self) -> u32 {
        self.total_bits - self.fixed_bits.len() as u32
    }

    /// Words of a chunk-local buffer (holes included).
    pub fn local_words(&self) -> usize {
        1 << (self.local_bits() - 6)
    }

    /// The fixed bits of chunk `key`, in place.
    #[inline]
    pub fn key_bits(&self, key: usize) -> u64 {
        deposit(key as u64, &self.fixed_bits)
    }

    /// Mask of the fixed bits.
    pub fn fixed_mask(&self) -> u64 {
        self.fixed_mask
    }

    fn free_mask(&self) -> u64 {
        !self.fixed_mask & ((1u64 << self.total_bits) - 1)
    }

    /// Chunk-local index of a global index (or of a contribution to one).
    #[inline]
    pub fn to_local(&self, global: u64) -> u64 {
        extract_mask(global, self.free_mask())
    }

    /// Global index of a chunk-local index.
    #[inline]
    pub fn global_index(&self, key: usize, local: u64) -> u64 {
        self.key_bits(key) | deposit_mask(local, self.free_mask())
    }

    /// The chunk holding a storage block.
    pub fn chunk_of_block(&self, layout: &Layout, block: usize) -> usize {
        let global = layout.index_of_slot((block as u64) << self.block_bits);
        extract(global, &self.fixed_bits) as usize
    }

    /// The stored blocks of a chunk in local (and storage) order; empty for a chunk made
    /// only of holes.
    pub fn blocks(&self, layout: &Layout, key: usize) -> Vec<Block> {
        let n = 1usize << (self.local_bits() - self.block_bits);
        let words = 1usize << (self.block_bits - 6);
        (0..n)
            .filter_map(|b| {
                let local = (b as u64) << self.block_bits;
                let slot = layout.slot(self.global_index(key, local))?;
                Some(Block {
                    id: (slot >> self.block_bits) as usize,
                    local_word: b * words,
                    slot_word: (slot >> 6) as usize,
                    words,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::square::{triangle_code, TRIANGLE};

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

    #[test]
    fn chunks_partition_the_storage() {
        for sig in ["KQvK", "KQvKR", "KRRvK", "KQRvKR"] {
            let l = Layout::new(&Material::parse(sig).unwrap());
            for (mover, bb) in [
                (Color::White, 9),
                (Color::Black, 9),
                (Color::White, 12.min(l.total_bits - 7)),
                (Color::Black, l.total_bits - 7),
            ] {
                let cs = ChunkScheme::new(&l, mover, bb);
                let mut seen = vec![false; l.n_words()];
                for key in 0..cs.n_keys() {
                    for b in cs.blocks(&l, key) {
                        for w in 0..b.words {
                            assert!(!seen[b.slot_word + w]);
                            assert_eq!(cs.chunk_of_block(&l, b.id), key);
                            seen[b.slot_word + w] = true;
                        }
                    }
                }
                assert!(seen.iter().all(|&s| s), "{sig} {mover:?}");
            }
        }
    }
}
