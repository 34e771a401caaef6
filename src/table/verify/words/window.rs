//! The chunks the word verifier works through, as the generator's passes do: a black chunk
//! fixes white's high digits, so black's moves (a black-king step mapped back into the
//! triangle included: the symmetries keep every high digit) never leave it; a white chunk
//! fixes the black king and black's high digits. A [`Window`] holds one chunk's codes, a
//! byte per position in the chunk's local order, and finds a word from the men's squares.

use super::lanes::Lanes;
use crate::chess::{Color, Square};
use crate::index::{Block, ChunkKey, ChunkScheme, Layout};
use crate::table::cache::random_access_buffer;
use crate::table::error::TableError;
use memmap2::MmapMut;

/// How one side's checks cut a run, with each man's share of a chunk-local index.
pub(super) struct Chunking {
    pub(super) scheme: ChunkScheme,
    /// Local index bits of piece `k` on each square (the chunk's fixed bits left out).
    piece: Vec<[u64; 64]>,
    /// Local index bits of each black-king code.
    bk: Vec<u64>,
}

impl Chunking {
    /// The chunks of `mover`'s checks, with at most `fixed` fixed bits (fewer, larger
    /// chunks), cut on storage blocks of `2^block_bits` positions.
    pub(super) fn new(layout: &Layout, mover: Color, block_bits: u32, fixed: usize) -> Chunking {
        let scheme = ChunkScheme::with_fixed_limit(layout, mover, block_bits, fixed);
        let piece = (0..layout.pieces.len())
            .map(|k| std::array::from_fn(|sq| scheme.to_local(layout.piece_contrib(k, sq as Square))))
            .collect();
        let bk = (0..layout.bk_codes()).map(|c| scheme.to_local(layout.bk_contrib(c))).collect();
        Chunking { scheme, piece, bk }
    }

    /// The chunk-local word of the men `sq` with the black king on `bk_code` (the chunk's
    /// fixed digits are assumed, not checked: the caller's moves keep them).
    #[inline]
    pub(super) fn word(&self, bk_code: u8, sq: &[Square]) -> usize {
        let local = sq.iter().enumerate().fold(self.bk[bk_code as usize], |a, (k, &s)| a | self.piece[k][s as usize]);
        (local >> 6) as usize
    }

    /// The stored blocks of chunk `key` (with pawns, in slice `slice`), in local order (none
    /// for a chunk of holes).
    pub(super) fn blocks(&self, layout: &Layout, key: ChunkKey, slice: Option<u32>) -> Vec<Block> {
        self.scheme.blocks(layout, key, slice, 0)
    }

    /// Positions of the largest chunk of `scheme` (what a window holds in memory).
    pub(super) fn largest_chunk_of(scheme: &ChunkScheme, layout: &Layout) -> u64 {
        let per_block = 1u64 << scheme.block_bits;
        scheme.keys().map(|k| scheme.blocks(layout, k, None, 0).len() as u64 * per_block).max().unwrap_or(0)
    }

    /// Bytes of a window's buffer: every local word, holes included (pages of holes are
    /// never written, so never resident).
    pub(super) fn window_bytes(&self) -> usize {
        64 * self.scheme.local_words()
    }
}

/// One chunk's codes, a byte per position in the chunk's local order.
pub(super) struct Window<'a> {
    pub(super) chunking: &'a Chunking,
    pub(super) codes: MmapMut,
}

impl<'a> Window<'a> {
    /// An empty window for the chunks of `chunking` (filled chunk by chunk).
    pub(super) fn new(chunking: &'a Chunking) -> Result<Window<'a>, TableError> {
        Ok(Window { chunking, codes: random_access_buffer(chunking.window_bytes(), "the verifier's window")? })
    }

    /// The 64 codes of the local word `w`.
    #[inline]
    pub(super) fn at(&self, w: usize) -> &Lanes {
        self.codes[64 * w..64 * w + 64].try_into().expect("a word")
    }

    /// Asks the memory for local word `w` ahead of its read (a chunk's window is gigabytes
    /// read at random: a word's successors fetched one after the other wait for each miss).
    #[inline(always)]
    pub(super) fn prefetch(&self, w: usize) {
        let at = self.codes[64 * w..64 * w + 64].as_ptr();
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing into the program and never faults.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }

    /// The 64 codes of the men `sq` with the black king on `bk_code`.
    #[inline]
    pub(super) fn lanes(&self, bk_code: u8, sq: &[Square]) -> &Lanes {
        self.at(self.chunking.word(bk_code, sq))
    }
}

/// Quiet moves of a word whose successor words were asked of the memory before any is folded
/// (one man's moves at most: a queen has 27): the lanes they are legal in, the successor's
/// local word and the symmetry code that maps our lanes into it.
pub(super) struct Fetched {
    moves: [(u64, usize, u8); 27],
    n: usize,
}

impl Fetched {
    pub(super) fn new() -> Fetched {
        Fetched { moves: [(0, 0, 0); 27], n: 0 }
    }

    /// Adds a move into local word `w` of `window`, legal in `lanes`, prefetching the word.
    #[inline(always)]
    pub(super) fn push(&mut self, window: &Window, lanes: u64, w: usize, sym: u8) {
        window.prefetch(w);
        self.moves[self.n] = (lanes, w, sym);
        self.n += 1;
    }

    /// The moves added since the last call, emptied.
    #[inline(always)]
    pub(super) fn drain(&mut self) -> &[(u64, usize, u8)] {
        let n = std::mem::take(&mut self.n);
        &self.moves[..n]
    }
}
