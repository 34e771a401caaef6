//! A chunk seen from inside: where each man's square puts a position in the chunk-local
//! buffer, and enumeration of the configurations of the men other than the white king.

use crate::chess::{Color, Role, Square, MAX_PIECES};
use crate::index::{extract_mask, ChunkKey, ChunkScheme, Layout, Pawns};

/// Marks a square a man cannot stand on inside this chunk.
pub const INVALID: u64 = u64::MAX;

/// Chunk-local contributions of every man, for one chunk key.
pub struct Frame {
    /// Per piece, per square: chunk-local index contribution, or [`INVALID`].
    pub piece: Vec<[u64; 64]>,
    /// Per black-king code (a triangle code, or with pawns a square): chunk-local
    /// contribution, or [`INVALID`].
    pub bk: Vec<u64>,
    /// The square of each black-king code.
    pub bk_square: Vec<Square>,
    /// The pawns of the chunk's slice (none without pawns): static men of the chunk.
    pub pawns: Pawns,
    pub roles: Vec<Role>,
    /// Number of white pieces (they come first).
    pub n_white: usize,
    /// Per piece, then the black king last: how to read its square back from a local index.
    decoders: Vec<Decoder>,
}

/// Reads one man's square back from a chunk-local index: the local bits its contributions
/// use, and the square of each value of those bits (gathered to the low end).
struct Decoder {
    mask: u64,
    /// Square (or black-king code) per gathered value; `u8::MAX` for none.
    code: [u8; 64],
}

impl Decoder {
    fn new(contribs: &[u64]) -> Decoder {
        let mask = contribs.iter().filter(|&&c| c != INVALID).fold(0, |m, &c| m | c);
        let mut code = [u8::MAX; 64];
        for (i, &c) in contribs.iter().enumerate().filter(|(_, &c)| c != INVALID) {
            code[extract_mask(c, mask) as usize] = i as u8;
        }
        Decoder { mask, code }
    }

    #[inline]
    fn read(&self, local: u64) -> Option<u8> {
        let v = extract_mask(local, self.mask);
        self.code.get(v as usize).copied().filter(|&c| c != u8::MAX)
    }
}

impl Frame {
    /// The frame of chunk `key` (of slice `slice`, with pawns): a man's square is valid when
    /// its fixed index bits match the key's, and its contribution is its global one with the
    /// fixed bits taken out.
    pub fn new(layout: &Layout, scheme: &ChunkScheme, key: ChunkKey, slice: Option<u32>) -> Frame {
        let key_bits = scheme.key_bits(key);
        let local = |global: u64, own_mask: u64| -> u64 {
            if (global ^ key_bits) & scheme.fixed_mask() & own_mask != 0 {
                INVALID
            } else {
                scheme.to_local(global)
            }
        };
        let mask_of = |bits: &[u32]| bits.iter().fold(0u64, |m, &b| m | (1 << b));
        let piece: Vec<[u64; 64]> = (0..layout.pieces.len())
            .map(|k| {
                let own = mask_of(&layout.pieces[k].h_bits);
                std::array::from_fn(|sq| local(layout.piece_contrib(k, sq as Square), own))
            })
            .collect();
        let own = mask_of(&layout.bk_bits);
        let bk: Vec<u64> = (0..layout.bk_codes()).map(|c| local(layout.bk_contrib(c), own)).collect();
        let pawns = match (&layout.slices, slice) {
            (Some(slices), Some(s)) => slices.pawns(s),
            _ => Pawns::none(),
        };
        let mut decoders: Vec<Decoder> = piece.iter().map(|c: &[u64; 64]| Decoder::new(c)).collect();
        decoders.push(Decoder::new(&bk));
        Frame {
            piece,
            bk,
            decoders,
            bk_square: (0..layout.bk_codes()).map(|c| layout.bk_square(c)).collect(),
            pawns,
            roles: layout.pieces.iter().map(|p| p.role).collect(),
            n_white: layout.pieces.iter().filter(|p| p.color == Color::White).count(),
        }
    }

    /// The roles of white's pieces (they come first).
    pub fn white_roles(&self) -> &[Role] {
        &self.roles[..self.n_white]
    }

    /// Number of non-king pieces.
    pub fn n_pieces(&self) -> usize {
        self.roles.len()
    }

    /// Calls `f` for every configuration of the black king and the pieces (except piece
    /// `skip`, if given, and except the black king if `skip_bk`) in which no two of them
    /// share a square. The white king is the word's bit index and is not enumerated.
    pub fn for_each_config(&self, skip: Option<usize>, skip_bk: bool, f: &mut dyn FnMut(&Config)) {
        let pawn_occ = self.pawns.occupied();
        let mut cfg = Config { bk_code: 0, bk: 64, sq: [64; MAX_PIECES], occ: pawn_occ, base: 0 };
        if skip_bk {
            return self.recurse(0, skip, &mut cfg, f);
        }
        for code in 0..self.bk.len() as u8 {
            let sq = self.bk_square[code as usize];
            if self.bk[code as usize] == INVALID || pawn_occ & (1 << sq) != 0 {
                continue;
            }
            cfg.bk_code = code;
            cfg.bk = sq;
            cfg.occ = pawn_occ | 1 << sq;
            cfg.base = self.bk[code as usize];
            self.recurse(0, skip, &mut cfg, f);
        }
    }

    /// The configuration of the men other than the white king at a chunk-local word, or
    /// `None` if the word holds no stored configuration (a hole, or two men on a square).
    pub fn config_at(&self, word: usize) -> Option<Config> {
        let base = (word as u64) << 6;
        let (bk_dec, piece_dec) = self.decoders.split_last().expect("the black king's decoder");
        let bk_code = bk_dec.read(base)?;
        let bk = self.bk_square[bk_code as usize];
        let mut occ = self.pawns.occupied();
        if occ & (1 << bk) != 0 {
            return None;
        }
        occ |= 1 << bk;
        let mut sq = [64; MAX_PIECES];
        for (k, dec) in piece_dec.iter().enumerate() {
            let s = dec.read(base)?;
            if occ & (1 << s) != 0 {
                return None;
            }
            occ |= 1 << s;
            sq[k] = s;
        }
        Some(Config { bk_code, bk, sq, occ, base })
    }

    fn recurse(&self, k: usize, skip: Option<usize>, cfg: &mut Config, f: &mut dyn FnMut(&Config)) {
        if k == self.n_pieces() {
            f(cfg);
            return;
        }
        if skip == Some(k) {
            cfg.sq[k] = 64;
            return self.recurse(k + 1, skip, cfg, f);
        }
        let (occ, base) = (cfg.occ, cfg.base);
        for sq in 0..64u8 {
            let c = self.piece[k][sq as usize];
            if c == INVALID || occ & (1 << sq) != 0 {
                continue;
            }
            cfg.sq[k] = sq;
            cfg.occ = occ | (1 << sq);
            cfg.base = base + c;
            self.recurse(k + 1, skip, cfg, f);
        }
        cfg.occ = occ;
        cfg.base = base;
    }
}

/// One configuration of every man but the white king (and possibly one skipped man).
#[derive(Clone, Debug)]
pub struct Config {
    pub bk_code: u8,
    /// Black king square (64 when skipped).
    pub bk: Square,
    /// Piece squares in layout order (64 when skipped).
    pub sq: [Square; MAX_PIECES],
    /// Squares occupied by the enumerated men and the slice's pawns.
    pub occ: u64,
    /// Chunk-local index of the configuration with the white king on a1.
    pub base: u64,
}
