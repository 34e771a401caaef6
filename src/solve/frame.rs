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
    /// Per piece, then the black king last: its valid squares (codes) grouped by the high
    /// part of their contribution, for [`Frame::for_each_config`]'s order.
    groups: Vec<Vec<Group>>,
}

/// The valid squares (or black-king codes) of one man that share the high part of their
/// contribution: they differ only in the low part (L digits), so they lie in one block of
/// `2^low_bits` positions.
struct Group {
    high: u64,
    /// `(square or code, contribution)` in increasing contribution.
    members: Vec<(u8, u64)>,
}

impl Group {
    /// The groups of a man's contributions (per square or code), in increasing high part.
    fn of(contribs: &[u64], low_mask: u64) -> Vec<Group> {
        let mut valid: Vec<(u8, u64)> =
            contribs.iter().enumerate().filter(|(_, &c)| c != INVALID).map(|(i, &c)| (i as u8, c)).collect();
        valid.sort_by_key(|&(_, c)| c);
        let mut groups: Vec<Group> = Vec::new();
        for (code, c) in valid {
            match groups.last_mut() {
                Some(g) if g.high == c & !low_mask => g.members.push((code, c)),
                _ => groups.push(Group { high: c & !low_mask, members: vec![(code, c)] }),
            }
        }
        groups
    }
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
        // The low part (L digits and the white king) of a chunk-local index.
        let low_mask = scheme.to_local((1u64 << layout.low_bits) - 1);
        let mut groups: Vec<Vec<Group>> = piece.iter().map(|c| Group::of(c, low_mask)).collect();
        groups.push(Group::of(&bk, low_mask));
        Frame {
            piece,
            bk,
            decoders,
            groups,
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
    ///
    /// The order follows the index: the high parts of every man's contribution (black king
    /// code, H digits) in the outer loops, their low parts (L digits) inside. The kernels'
    /// words for one choice of high parts, and those of its symmetric images (which change L
    /// digits only), then lie in a few blocks of `2^low_bits` positions that stay in cache.
    pub fn for_each_config(&self, skip: Option<usize>, skip_bk: bool, f: &mut dyn FnMut(&Config)) {
        let np = self.n_pieces();
        // The men enumerated, black king first (it is `np` in `groups`).
        let mut men: Vec<usize> = Vec::with_capacity(np + 1);
        if !skip_bk {
            men.push(np);
        }
        men.extend((0..np).filter(|&k| skip != Some(k)));
        let mut chosen: Vec<&Group> = Vec::with_capacity(men.len());
        let mut cfg = Config { bk_code: 0, bk: 64, sq: [64; MAX_PIECES], occ: self.pawns.occupied(), base: 0 };
        self.choose_groups(&men, &mut chosen, &mut cfg, f);
    }

    /// Outer loops: a group (high part) per man, then the men's squares inside them.
    fn choose_groups<'a>(
        &'a self,
        men: &[usize],
        chosen: &mut Vec<&'a Group>,
        cfg: &mut Config,
        f: &mut dyn FnMut(&Config),
    ) {
        if chosen.len() == men.len() {
            return self.choose_squares(men, chosen, 0, cfg, f);
        }
        for g in &self.groups[men[chosen.len()]] {
            chosen.push(g);
            self.choose_groups(men, chosen, cfg, f);
            chosen.pop();
        }
    }

    /// Inner loops: man `men[i]`'s square inside its chosen group, skipping occupied ones.
    fn choose_squares(&self, men: &[usize], chosen: &[&Group], i: usize, cfg: &mut Config, f: &mut dyn FnMut(&Config)) {
        if i == men.len() {
            return f(cfg);
        }
        let (occ, base) = (cfg.occ, cfg.base);
        let man = men[i];
        let is_bk = man == self.n_pieces();
        for &(code, c) in &chosen[i].members {
            let sq = if is_bk { self.bk_square[code as usize] } else { code };
            if occ & (1 << sq) != 0 {
                continue;
            }
            if is_bk {
                cfg.bk_code = code;
                cfg.bk = sq;
            } else {
                cfg.sq[man] = sq;
            }
            cfg.occ = occ | (1 << sq);
            cfg.base = base + c;
            self.choose_squares(men, chosen, i + 1, cfg, f);
        }
        cfg.occ = occ;
        cfg.base = base;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Material;

    type Seen = (u64, u64, u8, [Square; MAX_PIECES]);

    /// Every configuration by a plain product over the men's squares, in no useful order.
    fn by_product(frame: &Frame, skip: Option<usize>, skip_bk: bool) -> Vec<Seen> {
        let mut men: Vec<Option<usize>> = if skip_bk { vec![] } else { vec![None] };
        men.extend((0..frame.n_pieces()).filter(|&k| skip != Some(k)).map(Some));
        let mut stack = vec![Config { bk_code: 0, bk: 64, sq: [64; MAX_PIECES], occ: frame.pawns.occupied(), base: 0 }];
        for man in men {
            let mut next = Vec::new();
            for cfg in &stack {
                let n = if man.is_none() { frame.bk.len() } else { 64 };
                for i in 0..n {
                    let (contrib, sq) = match man {
                        None => (frame.bk[i], frame.bk_square[i]),
                        Some(k) => (frame.piece[k][i], i as Square),
                    };
                    if contrib == INVALID || cfg.occ & (1 << sq) != 0 {
                        continue;
                    }
                    let mut c = cfg.clone();
                    match man {
                        None => (c.bk_code, c.bk) = (i as u8, sq),
                        Some(k) => c.sq[k] = sq,
                    }
                    c.occ |= 1 << sq;
                    c.base += contrib;
                    next.push(c);
                }
            }
            stack = next;
        }
        let mut all: Vec<Seen> = stack.iter().map(|c| (c.base, c.occ, c.bk_code, c.sq)).collect();
        all.sort_unstable();
        all
    }

    #[test]
    fn configurations_are_each_visited_once_a_block_of_low_parts_at_a_time() {
        for sig in ["KQvKR", "KRBvK", "KRvKNN", "KRPvKR", "KPvKP"] {
            let layout = Layout::new(&Material::parse(sig).unwrap());
            for mover in [Color::White, Color::Black] {
                let scheme = ChunkScheme::new(&layout, mover, 9);
                let slice = layout.slices.as_ref().map(|s| s.len() as u32 / 2);
                let key = scheme.keys().nth(scheme.n_keys() / 3).unwrap();
                let frame = Frame::new(&layout, &scheme, ChunkKey(key.0), slice);
                let low_mask = scheme.to_local((1u64 << layout.low_bits) - 1);
                let skips = (0..frame.n_pieces()).map(|k| (Some(k), false)).chain([(None, false), (None, true)]);
                for (skip, skip_bk) in skips {
                    let mut seen = Vec::new();
                    frame.for_each_config(skip, skip_bk, &mut |c| seen.push((c.base, c.occ, c.bk_code, c.sq)));
                    // One block of low parts is done before the next: no high part comes back.
                    let mut highs: Vec<u64> = seen.iter().map(|s| s.0 & !low_mask).collect();
                    highs.dedup();
                    let runs = highs.len();
                    highs.sort_unstable();
                    highs.dedup();
                    assert_eq!(runs, highs.len(), "{sig} {mover:?} {skip:?} {skip_bk}");
                    seen.sort_unstable();
                    assert_eq!(seen, by_product(&frame, skip, skip_bk), "{sig} {mover:?} {skip:?} {skip_bk}");
                    if skip.is_none() && !skip_bk {
                        for &(base, occ, bk_code, sq) in &seen {
                            let c = frame.config_at((base >> 6) as usize).expect("a stored configuration");
                            assert_eq!((c.base, c.occ, c.bk_code, c.sq), (base, occ, bk_code, sq));
                        }
                    }
                }
            }
        }
    }
}
