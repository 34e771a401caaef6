//! The merge: the delta streams of all steps, read block by block in storage order, become
//! the 6-bit values; with the last tables of both chains they form the final table file,
//! written sequentially.

use super::pass::RunContext;
use super::run::new_per_pass;
use crate::chess::Color;
use crate::pipeline::{self, Order};
use crate::solve::{last_step, Pass, WorkTable};
use crate::table::format::{step_code, Section, TableWriter, CODE_ILLEGAL};
use crate::work::deltalog::PassStreams;
use crate::work::gap::decode;
use crate::work::manifest::RunManifest;
use anyhow::Context;
use byteorder::{ByteOrder, LittleEndian};
use std::path::{Path, PathBuf};

/// The streams of one step, with the step's value code.
struct StepIndex {
    code: u8,
    streams: PassStreams,
}

fn index_step(ctx: &RunContext, pass: Pass, n_blocks: usize) -> anyhow::Result<StepIndex> {
    let streams = PassStreams::open(&ctx.folder.log(pass), n_blocks)
        .context("delta log damaged (delete the work folder to recompute the run)")?;
    Ok(StepIndex { code: step_code(pass.step().context("an init pass has no values")?), streams })
}

/// Writes the run's final table from the work folder; returns its path and the bytes read
/// and written.
pub fn write_table(ctx: &RunContext, manifest: &RunManifest, out_dir: &Path) -> anyhow::Result<(PathBuf, u64, u64)> {
    let layout = &ctx.layout;
    let bb = ctx.plan.block_bits;
    let n_blocks = (layout.n_slots >> bb) as usize;
    let block_words = 1usize << (bb - 6);
    let group = (ctx.plan.merge_group_positions(&ctx.budget) >> bb).max(1) as usize;
    let n_groups = n_blocks.div_ceil(group);
    let steps: Vec<Pass> = manifest.passes.iter().map(|p| p.pass).filter(|p| p.step().is_some()).collect();
    let last_of = |parity: u8| steps.iter().filter_map(|p| p.step()).filter(|k| k % 2 == parity).max();
    let last_odd = last_of(1).context("no odd step")?;
    let last_even = last_of(0).context("no even step")?;
    let mut read = 0u64;
    let mut w = TableWriter::create(out_dir, &layout.material, layout.n_slots)?;
    ctx.progress.start(format!("{} merge", layout.material), 2 * n_groups as u64, "chunks");

    // The final bitbases: t99 and t100 are the last tables of the chains.
    for (section, table) in [(Section::WtmBitbase, last_odd), (Section::BtmBitbase, last_even)] {
        let (file, sums) = ctx.open_finished(WorkTable::Chain(table))?;
        w.begin(section)?;
        for g in 0..n_groups {
            let first = g * group;
            let n = group.min(n_blocks - first);
            let words = file.read_range(first, n, block_words, &sums)?;
            read += words.len() as u64 * 8;
            let mut bytes = vec![0u8; words.len() * 8];
            LittleEndian::write_u64_into(&words, &mut bytes);
            w.write(&bytes)?;
        }
        w.end(section)?;
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
        w.begin(section)?;
        pipeline::run(
            n_groups,
            ctx.budget.threads,
            Order::Sequence { window: ctx.budget.threads + 1 },
            Ok,
            |_, g| {
                let first = g * group;
                let n = group.min(n_blocks - first);
                let illegal = illegal.read_range(first, n, block_words, &illegal_sums)?;
                values_of_group(&index, &illegal, first, n, block_words)
            },
            |_, (bytes, r)| {
                read += r;
                w.write(&bytes)?;
                ctx.progress.inc();
                Ok(())
            },
        )?;
        w.end(section)?;
    }
    let written = w.written();
    let path = w.finish(last_step(&new_per_pass(&manifest.passes)))?;
    ctx.progress.finish("written");
    Ok((path, read, written))
}

/// The value planes of blocks `first..first + n` of one side to move, as the bytes of the
/// final table's section, and the bytes read: every step's new positions OR its code into
/// the six planes (a position is new in at most one step of a chain), illegal positions
/// get code 63.
fn values_of_group(
    index: &[StepIndex],
    illegal: &[u64],
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
                    or_code(&mut planes[6 * word..6 * word + 6], step.code, f);
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
