//! The 100-ply edge: the positions that a step finds one ply later than their true distance
//! (`E_k`, `docs/CURSED.md` part 2), followed from the btm positions whose only moves are
//! losing zeroing moves (`E_2`, the `forced-zeroing` table) up to step 101, whose wtm
//! positions in `E_101` are wins of exactly 100 plies.
//!
//! - odd `k`: `E_k = new_k & W(E_(k-1))` (a white quiet move into a btm position that needs
//!   one ply less than its step);
//! - even `k`: `E_k = new_k & B(!L_(k-1))`, `L_(k-1) = new_(k-1) & !E_(k-1)` (every black quiet
//!   move avoids the wtm positions that need their whole step).
//!
//! A position of `E_k` has a quiet move into `E_(k-1)`, and quiet moves stay inside the
//! mover's chunk: only chunks holding some position of `E_(k-1)` are computed. The sets are
//! small (a fraction of a percent of the positions, shrinking step by step), so they are held
//! in memory, each block's positions gap-coded as the delta streams are, and recomputed whole
//! on resume.

use super::level::LevelContext;
use super::plan::Chunk;
use crate::index::Block;
use crate::pipeline::{self, Order};
use crate::solve::sparse::{self, Word};
use crate::solve::{edge_chunk, Frame, Pass, WorkTable, LAST_STEP};
use crate::work::deltalog::{BlockEntry, PassLog, PassStreams};
use crate::work::gap::{decode, GapEncoder};
use crate::work::manifest::PassDone;
use crate::work::StorageError;
use anyhow::Context;
use std::path::Path;

/// The step whose wtm positions of `E_k` are wins of exactly 100 plies.
pub const EDGE_STEP: u16 = LAST_STEP + 1;

/// A small set of positions of one side to move, in memory: each storage block's positions
/// gap-coded (block-relative, as in the delta streams).
pub struct EdgeSet {
    blocks: Vec<Vec<u8>>,
    count: u64,
}

impl EdgeSet {
    /// The empty set of a level of `n_blocks` storage blocks.
    pub fn new(n_blocks: usize) -> EdgeSet {
        EdgeSet { blocks: vec![Vec::new(); n_blocks], count: 0 }
    }

    fn holds_any(&self, blocks: &[Block]) -> bool {
        blocks.iter().any(|b| !self.blocks[b.id].is_empty())
    }

    /// Adds a block's positions (`words`, the block's own words; the block must be empty).
    fn set_block(&mut self, id: usize, words: impl Iterator<Item = Word>) {
        let mut enc = GapEncoder::new();
        for (w, bits) in words {
            enc.push_word(w, bits);
        }
        self.count += enc.count();
        self.blocks[id] = enc.finish();
    }

    /// Adds a chunk's positions: `words` are chunk-local, in increasing order.
    fn set_chunk(&mut self, blocks: &[Block], words: &[Word]) {
        for b in blocks {
            let from = words.partition_point(|&(w, _)| w < b.local_word);
            let to = words.partition_point(|&(w, _)| w < b.local_word + b.words);
            if from < to {
                self.set_block(b.id, words[from..to].iter().map(|&(w, bits)| (w - b.local_word, bits)));
            }
        }
    }

    /// Decodes `block`'s positions, calling `f(word, bit)` (block-relative word).
    fn each(&self, id: usize, mut f: impl FnMut(usize, u64)) {
        for pos in decode(&self.blocks[id]) {
            let pos = pos.expect("edge sets are encoded here");
            f((pos / 64) as usize, 1 << (pos % 64));
        }
    }

    /// A chunk's positions as chunk-local words in increasing order.
    fn chunk_words(&self, blocks: &[Block]) -> Vec<Word> {
        let mut order: Vec<&Block> = blocks.iter().collect();
        order.sort_by_key(|b| b.local_word);
        let mut out: Vec<Word> = Vec::new();
        for b in order {
            self.each(b.id, |w, bit| sparse::push_bits(&mut out, b.local_word + w, bit));
        }
        out
    }

    /// Writes the set as a pass log of one record (`docs/WORKFILES.md`, `exact-100.log`):
    /// every block's stream, none with a table checksum. Flushed, not synced, as pass logs
    /// are.
    pub fn save(&self, log: &Path) -> Result<(), StorageError> {
        let blocks = (0..self.blocks.len()).map(|id| BlockEntry { id: id as u32, stream_len: 0, sums: Vec::new() });
        let mut out = PassLog::open(log, 0, 0)?;
        out.append_chunk(0, self.count, blocks.collect(), &self.blocks)?;
        out.flush()
    }

    /// Reads a set [`EdgeSet::save`] wrote for `n_blocks` blocks, checking its checksums.
    pub fn load(log: &Path, n_blocks: usize) -> Result<EdgeSet, StorageError> {
        let streams = PassStreams::open(log, n_blocks)?;
        let mut set = EdgeSet::new(n_blocks);
        for id in 0..n_blocks {
            let bytes = streams.block(id)?;
            for pos in decode(&bytes) {
                pos.map_err(|e| StorageError::Damaged { path: log.to_path_buf(), what: format!("block {id}: {e}") })?;
                set.count += 1;
            }
            set.blocks[id] = bytes;
        }
        Ok(set)
    }

    /// Positions in the set.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Blocks `first..first + n` of `block_words` words each, as words.
    pub fn read_range(&self, first: usize, n: usize, block_words: usize) -> Vec<u64> {
        let mut out = vec![0u64; n * block_words];
        for (i, id) in (first..first + n).enumerate() {
            self.each(id, |w, bit| out[i * block_words + w] |= bit);
        }
        out
    }
}

/// `E_101` of a level, if the level has a position there. `None` when step 101 added
/// nothing or no btm position has only losing zeroing moves (then every `E_k` is empty).
///
/// When the job's hooks want the edge sets ([`JobHooks::wants_edge_sets`]), every level's
/// edge is followed up to its last step (or 101), and each `E_k` is handed to them.
///
/// [`JobHooks::wants_edge_sets`]: super::options::JobHooks::wants_edge_sets
pub fn exact_100_wins(ctx: &LevelContext, passes: &[PassDone]) -> anyhow::Result<Option<EdgeSet>> {
    let report = ctx.hooks.wants_edge_sets();
    let step_101 = passes.iter().any(|p| p.pass == Pass::Step(EDGE_STEP) && p.new > 0);
    let last =
        if report { passes.iter().filter_map(|p| p.pass.step()).max().unwrap_or(0).min(EDGE_STEP) } else { EDGE_STEP };
    if !step_101 && !report {
        return Ok(None);
    }
    let mut prev = forced_zeroing(ctx)?;
    let mut k = 2;
    if report {
        report_edge(ctx, k, &prev);
    }
    // One progress unit per step (the phase stops early when a set is empty).
    let name = ctx.name();
    ctx.progress.start(format!("{name} edge"), last.saturating_sub(k) as u64, "steps");
    // Each step's log and streams are opened (and their checksums checked) once: step `k`
    // reads `new_k`, and step `k + 1` reads it again as `new_(k-1)` when `k + 1` is even.
    let mut streams_prev: Option<PassStreams> = None;
    while k < last && prev.count > 0 {
        k += 1;
        ctx.progress.inc();
        let new_k = PassStreams::open(&ctx.folder.log(Pass::Step(k)), ctx.n_blocks()).context("delta log damaged")?;
        let new_prev = if k.is_multiple_of(2) { streams_prev.as_ref() } else { None };
        prev = edge_step(ctx, k, &prev, new_prev, &new_k)?;
        streams_prev = Some(new_k);
        if report {
            report_edge(ctx, k, &prev);
        }
    }
    let count = prev.count;
    ctx.progress.finish(&format!("followed to step {k}, {count} positions there"));
    if !step_101 {
        return Ok(None);
    }
    if k < EDGE_STEP || count == 0 {
        ctx.progress.log(&format!("{name}: no win of exactly 100 plies (the edge ends at step {k})"));
        return Ok(None);
    }
    ctx.progress.log(&format!("{name}: {count} wins of exactly 100 plies with white to move"));
    Ok(Some(prev))
}

/// `E_2`: the `forced-zeroing` table's positions.
fn forced_zeroing(ctx: &LevelContext) -> anyhow::Result<EdgeSet> {
    let (file, sums) = ctx.open_finished(WorkTable::ForcedZeroing)?;
    let words = ctx.block_words();
    let zero = crate::work::bits::block_sum(&vec![0u64; words]);
    let mut set = EdgeSet::new(ctx.n_blocks());
    for (id, _) in sums.iter().enumerate().filter(|(_, &s)| s != zero) {
        let (block, _) = file.read_range(id, 1, words, &sums)?;
        set.set_block(id, block.iter().enumerate().filter(|(_, &b)| b != 0).map(|(w, &b)| (w, b)));
    }
    Ok(set)
}

/// Hands `E_k` to the job's hooks, as slots in increasing order.
fn report_edge(ctx: &LevelContext, k: u16, edge: &EdgeSet) {
    let block_positions = 64 * ctx.block_words() as u64;
    let mut slots = Vec::new();
    for id in 0..ctx.n_blocks() {
        edge.each(id, |w, bit| {
            slots.push(ctx.level.first_slot + id as u64 * block_positions + 64 * w as u64 + bit.trailing_zeros() as u64)
        });
    }
    ctx.hooks.edge_set(&ctx.layout.material, k, &slots);
}

/// Computes `E_k` from `E_(k-1)` (`prev`), the new positions of step `k` and, for even `k`,
/// those of step `k-1`.
fn edge_step(
    ctx: &LevelContext,
    k: u16,
    prev: &EdgeSet,
    new_prev: Option<&PassStreams>,
    new_k: &PassStreams,
) -> anyhow::Result<EdgeSet> {
    let pass = Pass::Step(k);
    let chunks = ctx.plan.chunks_of(pass);
    let words = chunks.buffer_words;
    anyhow::ensure!(
        new_prev.is_some() == k.is_multiple_of(2),
        "step {k}: the previous step's streams are for even steps"
    );
    let todo: Vec<&Chunk> = chunks.list.iter().filter(|ch| prev.holds_any(&ch.blocks)).collect();
    let mut next = EdgeSet::new(ctx.n_blocks());
    pipeline::run(
        todo.len(),
        ctx.plan.pass_threads(pass, &ctx.budget).max(1),
        Order::Completion,
        |i| Ok::<_, anyhow::Error>(prev.chunk_words(&todo[i].blocks)),
        |i, e_prev| {
            let ch = todo[i];
            let frame = Frame::new(&ctx.layout, &chunks.scheme, ch.key, ch.slice);
            edge_of_chunk(&frame, &ch.blocks, words, &e_prev, new_prev, new_k)
        },
        |i, edge: Vec<Word>| {
            next.set_chunk(&todo[i].blocks, &edge);
            Ok(())
        },
    )?;
    Ok(next)
}

/// The edge phase follows a set's positions one by one when it holds fewer than one word in
/// this many of the chunk, otherwise the kernels sweep the chunk.
const SPARSE_EDGE: usize = 64;

/// `E_k` in one chunk as its nonzero words in increasing order, from `E_(k-1)` there
/// (`e_prev`), step `k`'s streams and, for even `k`, step `k-1`'s. From a few positions: odd
/// `k`, white's quiet predecessors of `E_(k-1)` that are new at step `k`; even `k`, black's
/// that are new at step `k`, each evaluated over all its quiet moves. Only the blocks that
/// hold such a word have their streams decoded (and for even `k` the chunk's `new_(k-1)`
/// where one does).
fn edge_of_chunk(
    frame: &Frame,
    blocks: &[Block],
    words: usize,
    e_prev: &[Word],
    new_prev: Option<&PassStreams>,
    new_k: &PassStreams,
) -> anyhow::Result<Vec<Word>> {
    if e_prev.len() * SPARSE_EDGE >= words {
        let mut dense = vec![0u64; words];
        for &(w, bits) in e_prev {
            dense[w] = bits;
        }
        let prev_words = match new_prev {
            Some(p) => Some(decode_streams(p, blocks, words)?),
            None => None,
        };
        let new_words = decode_streams(new_k, blocks, words)?;
        let edge = edge_chunk(frame, &dense, prev_words.as_deref(), &new_words);
        return Ok(edge.iter().enumerate().filter(|(_, &b)| b != 0).map(|(w, &b)| (w, b)).collect());
    }
    let Some(new_prev) = new_prev else {
        let reached = sparse::white_reached_words(frame, e_prev);
        return new_at(new_k, blocks, &reached);
    };
    let candidates = sparse::black_candidates(frame, e_prev, words);
    let at = new_at(new_k, blocks, &sparse::marked(&candidates).map(|w| (w, !0)).collect::<Vec<_>>())?;
    if at.is_empty() {
        return Ok(at);
    }
    let mut marked = vec![0u64; words.div_ceil(64)];
    for &(w, _) in &at {
        marked[w / 64] |= 1 << (w % 64);
    }
    // Black's quiet moves must all avoid `L_(k-1) = new_(k-1) & !E_(k-1)`, read only in the
    // blocks those moves reach. The evaluation reads no other word: the worker's buffer is
    // reused, only those blocks cleared.
    let need = sparse::black_reads(frame, &marked, words);
    let read: Vec<Block> =
        blocks.iter().filter(|b| sparse::any_marked(&need, b.local_word, b.words)).copied().collect();
    let reached = AVOID_WORDS.with_borrow_mut(|avoid| -> anyhow::Result<Vec<Word>> {
        avoid.resize(words, 0);
        for b in &read {
            avoid[b.local_word..b.local_word + b.words].fill(0);
        }
        new_prev.or_into(&read, avoid)?;
        for &(w, bits) in e_prev {
            avoid[w] &= !bits;
        }
        for b in &read {
            avoid[b.local_word..b.local_word + b.words].iter_mut().for_each(|a| *a = !*a);
        }
        Ok(sparse::black_reached_words(frame, avoid, &marked))
    })?;
    // Both lists are in word order; `reached` has every word of `at` that holds a position.
    let mut reached = reached.into_iter().peekable();
    let mut out = Vec::new();
    for (w, bits) in at {
        while reached.next_if(|&(r, _)| r < w).is_some() {}
        if let Some(&(_, acc)) = reached.peek().filter(|&&(r, _)| r == w) {
            if acc & bits != 0 {
                out.push((w, acc & bits));
            }
        }
    }
    Ok(out)
}

thread_local! {
    /// A worker's words of `!L_(k-1)` for the even steps' sparse chunks, kept over a step.
    static AVOID_WORDS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `list` (chunk-local words in increasing order) AND the new positions of `streams`, decoding
/// only the streams of the blocks that `list` touches.
fn new_at(streams: &PassStreams, blocks: &[Block], list: &[Word]) -> anyhow::Result<Vec<Word>> {
    let mut out = Vec::new();
    let mut in_block = Vec::new();
    for b in blocks {
        let from = list.partition_point(|&(w, _)| w < b.local_word);
        let to = list.partition_point(|&(w, _)| w < b.local_word + b.words);
        if from == to {
            continue;
        }
        in_block.clear();
        decode_block(streams, b, |w, bit| sparse::push_bits(&mut in_block, w, bit))?;
        let mut j = 0;
        for &(w, bits) in &list[from..to] {
            while j < in_block.len() && in_block[j].0 < w {
                j += 1;
            }
            if j < in_block.len() && in_block[j].0 == w && in_block[j].1 & bits != 0 {
                out.push((w, in_block[j].1 & bits));
            }
        }
    }
    Ok(out)
}

/// Calls `f(local word, bit)` for each new position of a block in `streams`, in order.
fn decode_block(streams: &PassStreams, b: &Block, mut f: impl FnMut(usize, u64)) -> anyhow::Result<()> {
    let bytes = streams.block(b.id)?;
    for pos in decode(&bytes) {
        let pos = pos.with_context(|| format!("{} block {}", streams.path.display(), b.id))?;
        anyhow::ensure!((pos / 64) < b.words as u64, "stream position outside its block");
        f(b.local_word + (pos / 64) as usize, 1 << (pos % 64));
    }
    Ok(())
}

/// The new positions of a pass over a chunk's blocks, as chunk-local words.
fn decode_streams(streams: &PassStreams, blocks: &[Block], words: usize) -> anyhow::Result<Vec<u64>> {
    let mut out = vec![0u64; words];
    streams.or_into(blocks, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk's words go into their blocks and come back, in chunk order and as a range of
    /// storage blocks, whatever the order of the chunk's blocks in storage.
    #[test]
    fn edge_sets_keep_their_positions() {
        // Three blocks of 4 words: chunk-local 0..4 is block 2, 4..8 block 0, 8..12 absent.
        let blocks = vec![
            Block { id: 2, local_word: 0, slot_word: 8, words: 4 },
            Block { id: 0, local_word: 4, slot_word: 0, words: 4 },
        ];
        let words: Vec<Word> = vec![(0, 1), (3, 1 << 63 | 5), (4, 0x80), (7, !0)];
        let mut set = EdgeSet::new(3);
        assert!(!set.holds_any(&blocks));
        set.set_chunk(&blocks, &words);
        assert_eq!(set.count, 1 + 3 + 1 + 64);
        assert!(set.holds_any(&blocks) && !set.holds_any(&[Block { id: 1, local_word: 0, slot_word: 4, words: 4 }]));
        assert_eq!(set.chunk_words(&blocks), words);
        assert_eq!(set.read_range(0, 3, 4), vec![0x80, 0, 0, !0, 0, 0, 0, 0, 1, 0, 0, 1 << 63 | 5]);
    }
}
