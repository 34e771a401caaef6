//! The merge: the delta streams of all steps, read block by block in storage order, become
//! the 6-bit values; with the last tables of both chains they form the final table file,
//! written sequentially.

use super::edge::{EdgeSet, EDGE_STEP};
use super::level::LevelContext;
use super::plan::Budget;
use crate::chess::Color;
use crate::index::Level;
use crate::pipeline::{self, Order};
use crate::solve::{Pass, WorkTable, LAST_STEP};
use crate::table::uncompressed::{PartialTable, Section};
use crate::table::values::{step_code, CODE_EXACT_100, CODE_ILLEGAL};
use crate::work::deltalog::PassStreams;
use crate::work::gap::decode;
use crate::work::manifest::PassDone;
use anyhow::Context;
use byteorder::{ByteOrder, LittleEndian};
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
    let steps: Vec<Pass> = passes.iter().map(|p| p.pass).filter(|p| p.step().is_some()).collect();
    // Under the 50-move rule: the chains' last tables up to step 100.
    let last_of =
        |parity: u16| steps.iter().filter_map(|p| p.step()).filter(|&k| k % 2 == parity && k <= LAST_STEP).max();
    let last_odd = last_of(1).context("no odd step")?;
    let last_even = last_of(0).context("no even step")?;
    let mut merged = Merged { range_sums: [0; 4], bytes_read: 0, bytes_written: 0 };
    ctx.progress.start(format!("{} merge", ctx.name()), 2 * n_groups as u64, "chunks");

    // The final bitbases: t99 and t100 are the last tables of the chains.
    for (section, table) in [(Section::WtmBitbase, last_odd), (Section::BtmBitbase, last_even)] {
        let (file, sums) = ctx.open_finished(WorkTable::Chain(table))?;
        let mut w = RangeWriter::new(partial, section, &ctx.level);
        for g in 0..n_groups {
            let first = g * group;
            let n = group.min(n_blocks - first);
            let mut words = file.read_range(first, n, block_words, &sums)?;
            merged.bytes_read += words.len() as u64 * 8;
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
        let parity = if stm == Color::White { 1 } else { 0 };
        let index: Vec<StepIndex> = steps
            .iter()
            .filter(|p| p.step().is_some_and(|k| k % 2 == parity))
            .map(|&p| index_step(ctx, p, n_blocks))
            .collect::<anyhow::Result<_>>()?;
        let (illegal, illegal_sums) = ctx.open_finished(WorkTable::illegal(stm))?;
        let section = Section::values(stm);
        let mut w = RangeWriter::new(partial, section, &ctx.level);
        pipeline::run(
            n_groups,
            budget.threads,
            Order::Sequence { window: budget.threads + 1 },
            Ok,
            |_, g| {
                let first = g * group;
                let n = group.min(n_blocks - first);
                let illegal = illegal.read_range(first, n, block_words, &illegal_sums)?;
                let edge = edge.filter(|_| stm == Color::White).map(|e| e.read_range(first, n, block_words));
                values_of_group(&index, &illegal, edge.as_deref(), first, n, block_words)
            },
            |_, (bytes, r)| {
                merged.bytes_read += r;
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

/// The value planes of blocks `first..first + n` of one side to move, as the bytes of the
/// final table's section, and the bytes read: every step's new positions OR its code into
/// the six planes (a position is new in at most one step of a chain), illegal positions
/// get code 63; step 101's positions in `edge` get [`CODE_EXACT_100`].
fn values_of_group(
    index: &[StepIndex],
    illegal: &[u64],
    edge: Option<&[u64]>,
    first: usize,
    n: usize,
    block_words: usize,
) -> anyhow::Result<(Vec<u8>, u64)> {
    let mut planes = vec![0u64; 6 * n * block_words];
    let mut fresh = vec![0u64; block_words];
    let mut bytes_read = illegal.len() as u64 * 8;
    for step in index {
        for b in 0..n {
            let stream = step.streams.block(first + b)?;
            if stream.is_empty() {
                continue;
            }
            bytes_read += stream.len() as u64;
            fresh.fill(0);
            for pos in decode(&stream) {
                let pos = pos.with_context(|| format!("{} block {}", step.streams.path.display(), first + b))?;
                *fresh.get_mut((pos / 64) as usize).context("stream position outside its block")? |= 1 << (pos % 64);
            }
            for (w, &f) in fresh.iter().enumerate() {
                if f != 0 {
                    let word = b * block_words + w;
                    let exact = match edge {
                        Some(e) if step.edge => f & e[word],
                        _ => 0,
                    };
                    or_code(&mut planes[6 * word..6 * word + 6], step.code, f & !exact);
                    if exact != 0 {
                        or_code(&mut planes[6 * word..6 * word + 6], CODE_EXACT_100, exact);
                    }
                }
            }
        }
    }
    for (word, &ill) in illegal.iter().enumerate() {
        or_code(&mut planes[6 * word..6 * word + 6], CODE_ILLEGAL, ill);
    }
    let mut bytes = vec![0u8; planes.len() * 8];
    LittleEndian::write_u64_into(&planes, &mut bytes);
    Ok((bytes, bytes_read))
}

/// ORs a 6-bit `code` into the six planes of one word at the positions of `mask`.
#[inline]
fn or_code(planes: &mut [u64], code: u8, mask: u64) {
    for (j, plane) in planes.iter_mut().enumerate() {
        if (code >> j) & 1 != 0 {
            *plane |= mask;
        }
    }
}
