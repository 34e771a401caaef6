//! Chunks: how one side's passes cut a run's index so that every move of the mover stays
//! inside its chunk, and the storage blocks each chunk holds.

use super::{deposit, Layout, PREFIX_BITS};
use crate::chess::Color;

/// Places the low bits of `value` at the set bits of `mask`, in order (software `pdep`).
#[inline]
pub(crate) fn deposit_mask(mut value: u64, mut mask: u64) -> u64 {
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
pub(crate) fn extract_mask(x: u64, mut mask: u64) -> u64 {
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

/// A chunk of one side's passes: the value of its scheme's fixed bits, read as a number.
/// (Not to be confused with a chunk's place in a plan's list, which logs record.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkKey(pub usize);

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

impl Block {
    /// Blocks `first..first + n` of `block_words` words each, laid out one after another
    /// from local word 0 (a run of whole blocks read or written in storage order).
    pub fn run_of(first: usize, n: usize, block_words: usize) -> Vec<Block> {
        (0..n)
            .map(|i| Block {
                id: first + i,
                local_word: i * block_words,
                slot_word: (first + i) * block_words,
                words: block_words,
            })
            .collect()
    }
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
        assert!(block_bits >= 6 && block_bits <= Self::max_block_bits(layout), "block bits out of range");
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

    /// The largest storage blocks a scheme of `layout` may be cut on: blocks lie inside a
    /// slice (with pawns), or leave out whole hole prefixes of the black-king code (without).
    pub fn max_block_bits(layout: &Layout) -> u32 {
        if layout.has_pawns() {
            layout.total_bits
        } else {
            layout.total_bits - PREFIX_BITS
        }
    }

    /// Number of chunk keys (some may be holes).
    pub fn n_keys(&self) -> usize {
        1 << self.fixed_bits.len()
    }

    /// Every chunk key, holes included.
    pub fn keys(&self) -> impl Iterator<Item = ChunkKey> {
        (0..self.n_keys()).map(ChunkKey)
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
    pub fn key_bits(&self, key: ChunkKey) -> u64 {
        deposit(key.0 as u64, &self.fixed_bits)
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
    pub fn global_index(&self, key: ChunkKey, local: u64) -> u64 {
        self.key_bits(key) | deposit_mask(local, self.free_mask())
    }

    /// The stored blocks of a chunk in local (and storage) order; empty for a chunk made
    /// only of holes. With pawns the chunk lies in slice `slice`. Block ids and storage words
    /// count from slot `first_slot` (the first slot of the chunk's level).
    pub fn blocks(&self, layout: &Layout, key: ChunkKey, slice: Option<u32>, first_slot: u64) -> Vec<Block> {
        let n = 1usize << (self.local_bits() - self.block_bits);
        let words = 1usize << (self.block_bits - 6);
        let base = slice.map_or(0, |s| (s as u64) << self.total_bits);
        (0..n)
            .filter_map(|b| {
                let local = (b as u64) << self.block_bits;
                let slot = layout.slot(self.global_index(key, local))? + base - first_slot;
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
    use crate::chess::Material;

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
                for key in cs.keys() {
                    for b in cs.blocks(&l, key, None, 0) {
                        for w in 0..b.words {
                            assert!(!seen[b.slot_word + w]);
                            seen[b.slot_word + w] = true;
                        }
                    }
                }
                assert!(seen.iter().all(|&s| s), "{sig} {mover:?}");
            }
        }
    }
}
