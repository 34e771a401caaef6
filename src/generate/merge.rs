//! The merge: the delta streams of all steps, read block by block in storage order, become
//! the 6-bit values ([`StreamPlanes`]), decoded a storage block at a time as the compaction
//! asks for them. A solved level with pawns keeps its streams, its illegal tables and its
//! wins of exactly 100 plies until the run's compaction, and first writes its final
//! bitbases from the chains' last tables ([`write_finals`]): the levels below read them.

use super::edge::{EdgeSet, EDGE_STEP};
use super::level::{LevelContext, LevelFiles};
use super::plan::Budget;
use crate::chess::Color;
use crate::index::Block;
use crate::solve::{captures_lose, Pass, WorkTable, LAST_STEP};
use crate::table::uncompressed::beyond_rule_mask;
use crate::table::values::{step_code, CODE_EXACT_100, CODE_ILLEGAL};
use crate::table::{PlaneSource, TableError};
use crate::work::bits::{save_sums, BitFile};
use crate::work::deltalog::PassStreams;
use crate::work::gap::decode_words;
use crate::work::manifest::PassDone;
use anyhow::Context;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The streams of one step, with the step's value code.
struct StepIndex {
    code: u8,
    streams: PassStreams,
    /// Step 101: its positions in `E_101` get [`CODE_EXACT_100`].
    edge: bool,
}

fn index_step(files: &LevelFiles<'_>, pass: Pass) -> anyhow::Result<StepIndex> {
    let streams = PassStreams::open(&files.folder.log(pass), files.n_blocks())
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
    /// The values of the steps `pick` selects among the side's (all of them for the
    /// table's values).
    fn open(
        files: &LevelFiles<'_>,
        passes: &[PassDone],
        stm: Color,
        pick: impl Fn(u16) -> bool,
    ) -> anyhow::Result<Self> {
        let parity = if stm == Color::White { 1 } else { 0 };
        let index = passes
            .iter()
            .map(|p| p.pass)
            .filter(|p| p.step().is_some_and(|k| k % 2 == parity && pick(k)))
            .map(|p| index_step(files, p))
            .collect::<anyhow::Result<_>>()?;
        Ok(SideValues { stm, index, illegal: files.open_finished(WorkTable::illegal(stm))? })
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

/// What writing a level's final bitbases read and wrote.
pub struct Merged {
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// Writes a solved level's final bitbases into its folder for the levels below, whose pawn
/// pushes lead into it: `final-wtm` (the odd chain's last table up to step 99, with step
/// 101's wins of exactly 100 plies in `edge`), `final-btm` (`t100 & d`, with the mates);
/// with cursed positions (`cursed`) also `final-wtm-inf` and `final-btm-inf`, the same OR
/// the positions won only without the rule (value code 52, or 51 with white to move).
pub fn write_finals(
    ctx: &LevelContext,
    passes: &[PassDone],
    edge: Option<&EdgeSet>,
    cursed: bool,
) -> anyhow::Result<Merged> {
    let files = ctx.files();
    let bb = ctx.plan.block_bits;
    let n_blocks = ctx.n_blocks();
    let block_words = ctx.block_words();
    let budget = Budget { threads: super::alone_threads(ctx.budget.threads), ..ctx.budget };
    let group = (ctx.plan.merge_group_positions(&budget) >> bb).max(1) as usize;
    let n_groups = n_blocks.div_ceil(group);
    // Under the 50-move rule: the chains' last tables up to step 100.
    let last_of =
        |parity: u16| passes.iter().filter_map(|p| p.pass.step()).filter(|&k| k % 2 == parity && k <= LAST_STEP).max();
    let last_odd = last_of(1).context("no odd step")?;
    let last_even = last_of(0).context("no even step")?;
    let mut merged = Merged { bytes_read: 0, bytes_written: 0 };
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
    for (stm, table) in [(Color::White, last_odd), (Color::Black, last_even)] {
        let (file, sums) = ctx.open_finished(WorkTable::Chain(table))?;
        // Only the steps past the rule's have the codes the eventual bitbases add.
        let cursed_values = cursed.then(|| SideValues::open(&files, passes, stm, |k| k > LAST_STEP)).transpose()?;
        let out = ctx.open_table(WorkTable::Final(stm))?;
        let out_eventual = cursed.then(|| ctx.open_table(WorkTable::FinalEventual(stm))).transpose()?;
        let (mut out_sums, mut eventual_sums) = (Vec::with_capacity(n_blocks), Vec::with_capacity(n_blocks));
        for g in 0..n_groups {
            let first = g * group;
            let n = group.min(n_blocks - first);
            let (mut words, read) = file.read_range(first, n, block_words, &sums)?;
            merged.bytes_read += read;
            let blocks = Block::run_of(first, n, block_words);
            if let Some(deferred) = &deferred[stm.index()] {
                merged.bytes_read += deferred.or_into(&blocks, &mut words)?;
            }
            if stm == Color::Black {
                let (d, read) = d_file.read_range(first, n, block_words, &d_sums)?;
                merged.bytes_read += read;
                words.iter_mut().zip(&d).for_each(|(w, &d)| *w &= d);
                merged.bytes_read += mates.or_into(&blocks, &mut words)?;
            }
            if let (Color::White, Some(edge)) = (stm, edge) {
                for (w, e) in words.iter_mut().zip(edge.read_range(first, n, block_words)) {
                    *w |= e;
                }
            }
            let (block_sums, written) = out.write_blocks(&blocks, &words)?;
            out_sums.extend(block_sums);
            merged.bytes_written += written;
            if let (Some(values), Some(out)) = (&cursed_values, &out_eventual) {
                let (planes, read) = values.planes(edge, first, n, block_words)?;
                merged.bytes_read += read;
                words.iter_mut().zip(&planes).for_each(|(w, planes)| *w |= beyond_rule_mask(stm, planes));
                let (block_sums, written) = out.write_blocks(&blocks, &words)?;
                eventual_sums.extend(block_sums);
                merged.bytes_written += written;
            }
            ctx.progress.inc();
        }
        // Not synced: a resume checks them block by block.
        save_sums(&ctx.folder.sums(WorkTable::Final(stm)), &out_sums)?;
        if cursed {
            save_sums(&ctx.folder.sums(WorkTable::FinalEventual(stm)), &eventual_sums)?;
        }
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

/// A side to move and a storage block of the run.
type BlockKey = (Color, usize);
/// A storage block's value planes, shared by the workers that read it.
type BlockPlanes = Arc<Vec<[u64; 6]>>;

/// The last few blocks read, by key: the compaction asks for blocks in order from a few
/// workers at once, so a block is read once while they need it.
struct Recent<K, V> {
    entries: Mutex<VecDeque<(K, Arc<V>)>>,
    len: usize,
}

impl<K: Copy + PartialEq, V> Recent<K, V> {
    fn new(len: usize) -> Recent<K, V> {
        Recent { entries: Mutex::new(VecDeque::new()), len }
    }

    /// The block of `key`, read by `read` unless one of the last ones.
    fn get_or_read(&self, key: K, read: impl FnOnce() -> anyhow::Result<V>) -> anyhow::Result<Arc<V>> {
        if let Some((_, v)) = self.entries.lock().expect("cache lock").iter().find(|(k, _)| *k == key) {
            return Ok(v.clone());
        }
        let v = Arc::new(read()?);
        let mut entries = self.entries.lock().expect("cache lock");
        if entries.len() >= self.len {
            entries.pop_front();
        }
        entries.push_back((key, v.clone()));
        Ok(v)
    }
}

/// The values of one solved level: both sides' streams and illegal tables, and `E_101`.
struct LevelValues {
    /// The level's first storage block in the run's slot order, and its blocks.
    first_block: usize,
    n_blocks: usize,
    /// White's values, black's.
    sides: [SideValues; 2],
    edge: Option<EdgeSet>,
    /// `c`, white's wins by a zeroing move (kept since format 6; a work folder of an older
    /// build may have deleted it after step 1).
    zeroing: Option<(BitFile, Vec<u64>)>,
}

impl LevelValues {
    fn open(files: &LevelFiles<'_>, passes: &[PassDone], edge: Option<EdgeSet>) -> anyhow::Result<LevelValues> {
        let side = |stm| SideValues::open(files, passes, stm, |_| true);
        anyhow::ensure!(
            files.level.first_slot.trailing_zeros() >= files.block_bits,
            "level {} does not start on a storage block",
            files.level.number
        );
        let zeroing = files
            .folder
            .sums(WorkTable::WinningCapture)
            .exists()
            .then(|| files.open_finished(WorkTable::WinningCapture))
            .transpose()?;
        Ok(LevelValues {
            first_block: (files.level.first_slot >> files.block_bits) as usize,
            n_blocks: files.n_blocks(),
            sides: [side(Color::White)?, side(Color::Black)?],
            edge,
            zeroing,
        })
    }
}

/// A solved run's value planes read straight from its work folder: each level's delta
/// streams, illegal positions and wins of exactly 100 plies, decoded a storage block at a
/// time (the last few kept: the compaction asks for blocks smaller than a storage block, in
/// order, from a few workers at once). Reading it in storage order reads each stream once
/// per class or distance section that needs it.
pub struct StreamPlanes {
    n_slots: u64,
    block_words: usize,
    /// In slot order.
    levels: Vec<LevelValues>,
    cache: Recent<BlockKey, Vec<[u64; 6]>>,
    /// The last storage blocks of `c` read, by block.
    zeroing_cache: Recent<usize, Vec<u64>>,
    bytes_read: AtomicU64,
}

impl StreamPlanes {
    /// Opens the values of a run's levels: each level's files, its `passes` and its `E_101`
    /// (as [`write_finals`] takes it); `threads` read at once.
    pub fn open(
        levels: Vec<(LevelFiles<'_>, &[PassDone], Option<EdgeSet>)>,
        n_slots: u64,
        threads: usize,
    ) -> anyhow::Result<StreamPlanes> {
        let block_words = levels.first().context("a run without levels")?.0.block_words();
        let mut opened =
            levels.into_iter().map(|(f, p, e)| LevelValues::open(&f, p, e)).collect::<anyhow::Result<Vec<_>>>()?;
        opened.sort_by_key(|l| l.first_block);
        Ok(StreamPlanes {
            n_slots,
            block_words,
            levels: opened,
            cache: Recent::new(2 * threads + 2),
            zeroing_cache: Recent::new(2 * threads + 2),
            bytes_read: AtomicU64::new(0),
        })
    }

    /// Bytes of streams and illegal tables read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    /// The level of the run's storage block `b`.
    fn level_of(&self, b: usize) -> anyhow::Result<&LevelValues> {
        let at = self.levels.partition_point(|l| l.first_block <= b);
        let level = at.checked_sub(1).map(|i| &self.levels[i]).filter(|l| b < l.first_block + l.n_blocks);
        level.with_context(|| format!("storage block {b} is in no solved level"))
    }

    /// `c` of the run's storage block `b` (its level must have kept it).
    fn zeroing_block(&self, b: usize) -> anyhow::Result<Arc<Vec<u64>>> {
        self.zeroing_cache.get_or_read(b, || {
            let level = self.level_of(b)?;
            let (file, sums) = level.zeroing.as_ref().context("a level without `c`")?;
            let (words, read) = file.read_range(b - level.first_block, 1, self.block_words, sums)?;
            self.bytes_read.fetch_add(read, Ordering::Relaxed);
            Ok(words)
        })
    }

    /// The planes of the run's storage block `b` of a side to move.
    fn block(&self, stm: Color, b: usize) -> anyhow::Result<BlockPlanes> {
        self.cache.get_or_read((stm, b), || {
            let level = self.level_of(b)?;
            let side = &level.sides[stm.index()];
            let (planes, read) = side.planes(level.edge.as_ref(), b - level.first_block, 1, self.block_words)?;
            self.bytes_read.fetch_add(read, Ordering::Relaxed);
            Ok(planes)
        })
    }
}

impl PlaneSource for StreamPlanes {
    fn n_slots(&self) -> u64 {
        self.n_slots
    }

    fn read_planes(&self, stm: Color, first: usize, n: usize, out: &mut Vec<[u64; 6]>) -> Result<(), TableError> {
        words_of_blocks(first, n, self.block_words, |b| self.block(stm, b), out)
    }

    /// From `c`, when every level kept it.
    fn zeroing_wins(&self, first: usize, n: usize, out: &mut Vec<u64>) -> Result<bool, TableError> {
        out.clear();
        if self.levels.iter().any(|l| l.zeroing.is_none()) {
            return Ok(false);
        }
        words_of_blocks(first, n, self.block_words, |b| self.zeroing_block(b), out)?;
        Ok(true)
    }
}

/// Words `first..first + n` of storage blocks of `block_words` words each (`block(b)`), into
/// `out` (cleared first).
fn words_of_blocks<T: Copy>(
    first: usize,
    n: usize,
    block_words: usize,
    block: impl Fn(usize) -> anyhow::Result<Arc<Vec<T>>>,
    out: &mut Vec<T>,
) -> Result<(), TableError> {
    out.clear();
    let (mut w, end) = (first, first + n);
    while w < end {
        let b = w / block_words;
        let words = block(b).map_err(|e| TableError::Wrong(format!("{e:#}")))?;
        let (lo, hi) = (w - b * block_words, (end - b * block_words).min(block_words));
        out.extend_from_slice(&words[lo..hi]);
        w = b * block_words + hi;
    }
    Ok(())
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
