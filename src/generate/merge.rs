//! The merge: the delta streams of all steps, read block by block in storage order, become
//! the 6-bit values; with the last tables of both chains they form the table being
//! assembled (levels of a run with pawns), written sequentially. A pawnless run skips that
//! table: its compact table is written from [`StreamPlanes`], the values decoded from the
//! streams a storage block at a time as the compaction asks for them.

use super::edge::{EdgeSet, EDGE_STEP};
use super::level::LevelContext;
use super::plan::Budget;
use crate::chess::Color;
use crate::index::{Block, Level};
use crate::pipeline::{self, Order};
use crate::solve::{captures_lose, Pass, WorkTable, LAST_STEP};
use crate::table::uncompressed::{PartialTable, Section, VALUE_WORD_BYTES};
use crate::table::values::{step_code, CODE_EXACT_100, CODE_ILLEGAL};
use crate::table::{PlaneSource, TableError};
use crate::work::bits::BitFile;
use crate::work::deltalog::PassStreams;
use crate::work::gap::decode_words;
use crate::work::manifest::PassDone;
use anyhow::Context;
use byteorder::{ByteOrder, LittleEndian};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use xxhash_rust::xxh3::Xxh3;

/// The streams of one step, with the step's value code.
struct StepIndex {
    code: u8,
    streams: PassStreams,
    /// Step 101: its positions in `E_101` get [`CODE_EXACT_100`].
    edge: bool,
}

fn index_step(ctx: &LevelContext, pass: Pass, n_blocks: usize) -> anyhow::Result<StepIndex> {
    let streams = PassStreams::open(&ctx.folder.log(pass), n_blocks)
        .context("delta log damaged (delete the work folder to recompute the run)")?;
    let k = pass.step().context("an init pass has no values")?;
    Ok(StepIndex { code: step_code(k), streams, edge: k == EDGE_STEP })
}

/// What a side to move's values are made of: its steps' streams (white's odd, black's even)
/// and its illegal positions.
struct SideValues {
    stm: Color,
    index: Vec<StepIndex>,
    illegal: (BitFile, Vec<u64>),
}

impl SideValues {
    fn open(ctx: &LevelContext, passes: &[PassDone], stm: Color) -> anyhow::Result<SideValues> {
        let parity = if stm == Color::White { 1 } else { 0 };
        let index = passes
            .iter()
            .map(|p| p.pass)
            .filter(|p| p.step().is_some_and(|k| k % 2 == parity))
            .map(|p| index_step(ctx, p, ctx.n_blocks()))
            .collect::<anyhow::Result<_>>()?;
        Ok(SideValues { stm, index, illegal: ctx.open_finished(WorkTable::illegal(stm))? })
    }

    /// The value planes of storage blocks `first..first + n`, and the bytes read for them;
    /// `edge` is `E_101` (white's only).
    fn planes(
        &self,
        edge: Option<&EdgeSet>,
        first: usize,
        n: usize,
        block_words: usize,
    ) -> anyhow::Result<(Vec<[u64; 6]>, u64)> {
        let (file, sums) = &self.illegal;
        let (illegal, read) = file.read_range(first, n, block_words, sums)?;
        let edge = edge.filter(|_| self.stm == Color::White).map(|e| e.read_range(first, n, block_words));
        let (planes, streams_read) = values_of_group(&self.index, &illegal, edge.as_deref(), first, n, block_words)?;
        Ok((planes, read + streams_read))
    }
}

/// What the merge of a level wrote.
pub struct Merged {
    /// XXH3 of the level's range in each section of the table.
    pub range_sums: [u64; 4],
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// Writes one section's range of a level, in order, hashing what it writes.
struct RangeWriter<'a> {
    partial: &'a PartialTable,
    at: u64,
    end: u64,
    hasher: Xxh3,
}

impl<'a> RangeWriter<'a> {
    fn new(partial: &'a PartialTable, section: Section, level: &Level) -> RangeWriter<'a> {
        let (at, len) = partial.range(section, level.first_slot, level.n_slots);
        RangeWriter { partial, at, end: at + len, hasher: Xxh3::new() }
    }

    fn write(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        anyhow::ensure!(self.at + bytes.len() as u64 <= self.end, "merge wrote past its range");
        self.partial.write_at(self.at, bytes)?;
        self.hasher.update(bytes);
        self.at += bytes.len() as u64;
        Ok(())
    }

    fn finish(self) -> anyhow::Result<u64> {
        anyhow::ensure!(self.at == self.end, "merge left its range incomplete");
        Ok(self.hasher.digest())
    }
}

/// Writes a solved level's bitbases and values into its ranges of the table being
/// assembled, from its work folder. `edge` is `E_101` (`docs/CURSED.md`): wtm wins of exactly
/// 100 plies, wins under the rule although step 101 found them.
pub fn write_level(
    ctx: &LevelContext,
    passes: &[PassDone],
    partial: &PartialTable,
    edge: Option<&EdgeSet>,
) -> anyhow::Result<Merged> {
    let bb = ctx.plan.block_bits;
    let n_blocks = ctx.n_blocks();
    let block_words = ctx.block_words();
    // The merge runs on this process alone: in a distributed job it takes the threads of the
    // ranks on its node too, which wait meanwhile.
    let budget = Budget { threads: super::alone_threads(ctx.budget.threads), ..ctx.budget };
    let group = (ctx.plan.merge_group_positions(&budget) >> bb).max(1) as usize;
    let n_groups = n_blocks.div_ceil(group);
    // Under the 50-move rule: the chains' last tables up to step 100.
    let last_of =
        |parity: u16| passes.iter().filter_map(|p| p.pass.step()).filter(|&k| k % 2 == parity && k <= LAST_STEP).max();
    let last_odd = last_of(1).context("no odd step")?;
    let last_even = last_of(0).context("no even step")?;
    let mut merged = Merged { range_sums: [0; 4], bytes_read: 0, bytes_written: 0 };
    ctx.progress.start(format!("{} merge", ctx.name()), 2 * n_groups as u64, "chunks");

    // The final bitbases: t99 and t100 are the last tables of the chains (the even chain's
    // file holds `t100 | !d`: `t100` is its `& d`, with t0's mates, which are not in `d`).
    let (d_file, d_sums) = ctx.open_finished(captures_lose(last_even, ctx.is_eventual()))?;
    let mates = PassStreams::open(&ctx.folder.log(Pass::InitBlack), n_blocks)
        .context("delta log damaged (delete the work folder to recompute the run)")?;
    // A last table whose step deferred it: the step's streams OR-ed in.
    let deferred_streams = |k: u16| -> anyhow::Result<Option<PassStreams>> {
        let pass = Pass::Step(k);
        Ok(ctx.defers(pass).then(|| PassStreams::open(&ctx.folder.log(pass), n_blocks)).transpose()?)
    };
    let deferred = [deferred_streams(last_odd)?, deferred_streams(last_even)?];
    for (section, table) in [(Section::WtmBitbase, last_odd), (Section::BtmBitbase, last_even)] {
        let (file, sums) = ctx.open_finished(WorkTable::Chain(table))?;
        let mut w = RangeWriter::new(partial, section, &ctx.level);
        for g in 0..n_groups {
            let first = g * group;
            let n = group.min(n_blocks - first);
            let (mut words, read) = file.read_range(first, n, block_words, &sums)?;
            merged.bytes_read += read;
            let blocks = Block::run_of(first, n, block_words);
            if let Some(deferred) = &deferred[section as usize] {
                merged.bytes_read += deferred.or_into(&blocks, &mut words)?;
            }
            if section == Section::BtmBitbase {
                let (d, read) = d_file.read_range(first, n, block_words, &d_sums)?;
                merged.bytes_read += read;
                words.iter_mut().zip(&d).for_each(|(w, &d)| *w &= d);
                merged.bytes_read += mates.or_into(&blocks, &mut words)?;
            }
            if let (Section::WtmBitbase, Some(edge)) = (section, edge) {
                for (w, e) in words.iter_mut().zip(edge.read_range(first, n, block_words)) {
                    *w |= e;
                }
            }
            let mut bytes = vec![0u8; words.len() * 8];
            LittleEndian::write_u64_into(&words, &mut bytes);
            w.write(&bytes)?;
            merged.bytes_written += bytes.len() as u64;
        }
        merged.range_sums[section as usize] = w.finish()?;
    }

    // The 6-bit values, side by side to move.
    for stm in [Color::White, Color::Black] {
        let side = SideValues::open(ctx, passes, stm)?;
        let section = Section::values(stm);
        let mut w = RangeWriter::new(partial, section, &ctx.level);
        pipeline::run(
            n_groups,
            budget.threads,
            Order::Sequence { window: budget.threads + 1 },
            Ok,
            |_, g| {
                let first = g * group;
                side.planes(edge, first, group.min(n_blocks - first), block_words)
            },
            |_, (planes, r)| {
                merged.bytes_read += r;
                let mut bytes = vec![0u8; planes.len() * VALUE_WORD_BYTES as usize];
                LittleEndian::write_u64_into(planes.as_flattened(), &mut bytes);
                w.write(&bytes)?;
                merged.bytes_written += bytes.len() as u64;
                ctx.progress.inc();
                Ok(())
            },
        )?;
        merged.range_sums[section as usize] = w.finish()?;
    }
    ctx.progress.finish("written");
    Ok(merged)
}

/// The value planes of blocks `first..first + n` of one side to move, and the bytes of
/// streams read:
/// every step's new positions OR its code into the six planes (a position is new in at most
/// one step of a chain), illegal positions get code 63; step 101's positions in `edge` get
/// [`CODE_EXACT_100`].
fn values_of_group(
    index: &[StepIndex],
    illegal: &[u64],
    edge: Option<&[u64]>,
    first: usize,
    n: usize,
    block_words: usize,
) -> anyhow::Result<(Vec<[u64; 6]>, u64)> {
    let mut planes = vec![[0u64; 6]; n * block_words];
    let mut bytes_read = 0;
    for step in index {
        for b in 0..n {
            let stream = step.streams.block(first + b)?;
            if stream.is_empty() {
                continue;
            }
            bytes_read += stream.len() as u64;
            // A word's new positions are ORed into its planes at once (the cost follows the
            // positions, not the block's size).
            let mut outside = false;
            decode_words(&stream, |w, f| {
                if w as usize >= block_words {
                    outside = true;
                    return;
                }
                let word = b * block_words + w as usize;
                let exact = match edge {
                    Some(e) if step.edge => f & e[word],
                    _ => 0,
                };
                or_code(&mut planes[word], step.code, f & !exact);
                if exact != 0 {
                    or_code(&mut planes[word], CODE_EXACT_100, exact);
                }
            })
            .with_context(|| format!("{} block {}", step.streams.path.display(), first + b))?;
            anyhow::ensure!(
                !outside,
                "{} block {}: position outside its block",
                step.streams.path.display(),
                first + b
            );
        }
    }
    for (word, &ill) in illegal.iter().enumerate() {
        or_code(&mut planes[word], CODE_ILLEGAL, ill);
    }
    Ok((planes, bytes_read))
}

/// A side to move and a storage block.
type BlockKey = (Color, usize);
/// A storage block's value planes, shared by the workers that read it.
type BlockPlanes = Arc<Vec<[u64; 6]>>;

/// A solved pawnless run's value planes read straight from its work folder: every step's
/// delta streams, the illegal positions and the wins of exactly 100 plies, decoded a storage
/// block at a time (the last few kept: the compaction asks for blocks smaller than a storage
/// block, in order, from a few workers at once). Reading it in storage order reads each
/// stream once per class or distance section that needs it.
pub struct StreamPlanes<'a> {
    n_slots: u64,
    block_words: usize,
    /// White's values, black's.
    sides: [SideValues; 2],
    edge: Option<&'a EdgeSet>,
    cache: Mutex<VecDeque<(BlockKey, BlockPlanes)>>,
    cache_len: usize,
    bytes_read: AtomicU64,
}

impl<'a> StreamPlanes<'a> {
    /// Opens the streams of the level's `passes` (the run's only level) and its illegal
    /// tables; `edge` is `E_101` as for [`write_level`].
    pub fn open(ctx: &LevelContext, passes: &[PassDone], edge: Option<&'a EdgeSet>) -> anyhow::Result<Self> {
        Ok(StreamPlanes {
            n_slots: ctx.level.n_slots,
            block_words: ctx.block_words(),
            sides: [SideValues::open(ctx, passes, Color::White)?, SideValues::open(ctx, passes, Color::Black)?],
            edge,
            cache: Mutex::new(VecDeque::new()),
            cache_len: 2 * ctx.budget.threads + 2,
            bytes_read: AtomicU64::new(0),
        })
    }

    /// Bytes of streams and illegal tables read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    /// The planes of storage block `b` of a side to move.
    fn block(&self, stm: Color, b: usize) -> anyhow::Result<BlockPlanes> {
        let key = (stm, b);
        if let Some((_, planes)) = self.cache.lock().expect("cache lock").iter().find(|(k, _)| *k == key) {
            return Ok(planes.clone());
        }
        let (planes, read) = self.sides[stm.index()].planes(self.edge, b, 1, self.block_words)?;
        self.bytes_read.fetch_add(read, Ordering::Relaxed);
        let planes = Arc::new(planes);
        let mut cache = self.cache.lock().expect("cache lock");
        if cache.len() >= self.cache_len {
            cache.pop_front();
        }
        cache.push_back((key, planes.clone()));
        Ok(planes)
    }
}

impl PlaneSource for StreamPlanes<'_> {
    fn n_slots(&self) -> u64 {
        self.n_slots
    }

    fn read_planes(&self, stm: Color, first: usize, n: usize, out: &mut Vec<[u64; 6]>) -> Result<(), TableError> {
        out.clear();
        let bw = self.block_words;
        let (mut w, end) = (first, first + n);
        while w < end {
            let b = w / bw;
            let planes = self.block(stm, b).map_err(|e| TableError::Wrong(format!("{e:#}")))?;
            let (lo, hi) = (w - b * bw, (end - b * bw).min(bw));
            out.extend_from_slice(&planes[lo..hi]);
            w = b * bw + hi;
        }
        Ok(())
    }
}

/// ORs a 6-bit `code` into the six planes of one word at the positions of `mask`.
#[inline]
fn or_code(planes: &mut [u64; 6], code: u8, mask: u64) {
    for (j, plane) in planes.iter_mut().enumerate() {
        if (code >> j) & 1 != 0 {
            *plane |= mask;
        }
    }
}
