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
//! mover's chunk: only chunks holding some position of `E_(k-1)` are computed. The tables
//! `edge-KKK` are sparse files; the sets are recomputed whole on resume (they are small).

use super::pass::LevelContext;
use super::plan::Chunk;
use crate::index::Block;
use crate::pipeline::{self, Order};
use crate::solve::{edge_chunk, Frame, Pass, WorkTable, LAST_STEP};
use crate::work::bits::{block_sum, BitFile};
use crate::work::deltalog::PassStreams;
use crate::work::gap::decode;
use crate::work::manifest::PassDone;
use anyhow::Context;

/// The step whose wtm positions of `E_k` are wins of exactly 100 plies.
pub const EDGE_STEP: u16 = LAST_STEP + 1;

/// `E_101` of a level, if the level has a position there: its table and block checksums.
/// `None` when step 101 added nothing or no btm position has only losing zeroing moves (then
/// every `E_k` is empty).
///
/// Testing knob: with `TBSTREAM_EDGE_DUMP=DIR` every level's edge is followed up to its last
/// step (or 101), and each `E_k` is appended to `DIR/<RUN>.edge` as lines `k slot`.
pub fn exact_100_wins(ctx: &LevelContext, passes: &[PassDone]) -> anyhow::Result<Option<(BitFile, Vec<u64>)>> {
    let dump = std::env::var_os("TBSTREAM_EDGE_DUMP").map(std::path::PathBuf::from);
    let step_101 = passes.iter().any(|p| p.pass == Pass::Step(EDGE_STEP) && p.new > 0);
    let last = if dump.is_some() {
        passes.iter().filter_map(|p| p.pass.step()).max().unwrap_or(0).min(EDGE_STEP)
    } else {
        EDGE_STEP
    };
    if !step_101 && dump.is_none() {
        return Ok(None);
    }
    let zero = block_sum(&vec![0u64; ctx.block_words()]);
    let mut prev = ctx.open_finished(WorkTable::ForcedZeroing)?;
    let mut prev_table = WorkTable::ForcedZeroing;
    let mut count = 0;
    let mut k = 2;
    if let Some(dir) = &dump {
        dump_edge(ctx, dir, k, &prev, zero)?;
    }
    // One progress unit per step (the phase stops early when a set is empty).
    let name = ctx.name();
    ctx.progress.start(format!("{name} edge"), last.saturating_sub(k) as u64, "steps");
    // Each step's log and streams are opened (and their checksums checked) once: step `k`
    // reads `new_k`, and step `k + 1` reads it again as `new_(k-1)` when `k + 1` is even.
    let mut streams_prev: Option<PassStreams> = None;
    while k < last && prev.1.iter().any(|&s| s != zero) {
        k += 1;
        ctx.progress.inc();
        let table = WorkTable::Edge(k);
        remove_edge(ctx, table);
        let new_k = PassStreams::open(&ctx.folder.log(Pass::Step(k)), ctx.n_blocks()).context("delta log damaged")?;
        let new_prev = if k.is_multiple_of(2) { streams_prev.as_ref() } else { None };
        let (file, sums, n) = edge_step(ctx, k, &prev, ctx.open_table(table)?, new_prev, &new_k, zero)?;
        remove_edge(ctx, prev_table);
        (prev, prev_table, count, streams_prev) = ((file, sums), table, n, Some(new_k));
        if let Some(dir) = &dump {
            dump_edge(ctx, dir, k, &prev, zero)?;
        }
    }
    ctx.progress.finish(&format!("followed to step {k}, {count} positions there"));
    if !step_101 {
        remove_edge(ctx, prev_table);
        return Ok(None);
    }
    if k < EDGE_STEP || count == 0 {
        remove_edge(ctx, prev_table);
        ctx.progress.log(&format!("{name}: no win of exactly 100 plies (the edge ends at step {k})"));
        return Ok(None);
    }
    ctx.progress.log(&format!("{name}: {count} wins of exactly 100 plies with white to move"));
    Ok(Some(prev))
}

/// Appends `E_k` to the dump file of the run as lines `k slot`.
fn dump_edge(
    ctx: &LevelContext,
    dir: &std::path::Path,
    k: u16,
    edge: &(BitFile, Vec<u64>),
    zero: u64,
) -> anyhow::Result<()> {
    use std::io::Write;
    let path = dir.join(format!("{}.edge", ctx.layout.material));
    let mut out = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
    let words = ctx.block_words();
    for (b, _) in edge.1.iter().enumerate().filter(|(_, &s)| s != zero) {
        for (w, &bits) in edge.0.read_range(b, 1, words, &edge.1)?.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let slot = ctx.level.first_slot + ((b * words + w) * 64) as u64 + bits.trailing_zeros() as u64;
                writeln!(out, "{k} {slot}")?;
                bits &= bits - 1;
            }
        }
    }
    Ok(())
}

/// Deletes an `edge-KKK` table (never the `forced-zeroing` table, which a resume checks).
fn remove_edge(ctx: &LevelContext, table: WorkTable) {
    if let WorkTable::Edge(_) = table {
        std::fs::remove_file(ctx.folder.bits(table)).ok();
    }
}

/// Computes `E_k` into `out` from `E_(k-1)` (`prev`), the new positions of step `k` and, for
/// even `k`, those of step `k-1`: returns the table, its block checksums and its size.
fn edge_step(
    ctx: &LevelContext,
    k: u16,
    prev: &(BitFile, Vec<u64>),
    out: BitFile,
    new_prev: Option<&PassStreams>,
    new_k: &PassStreams,
    zero: u64,
) -> anyhow::Result<(BitFile, Vec<u64>, u64)> {
    let pass = Pass::Step(k);
    let chunks = ctx.plan.chunks_of(pass);
    let words = chunks.buffer_words;
    let n_blocks = ctx.n_blocks();
    anyhow::ensure!(
        new_prev.is_some() == k.is_multiple_of(2),
        "step {k}: the previous step's streams are for even steps"
    );
    let todo: Vec<&Chunk> = chunks.list.iter().filter(|ch| ch.blocks.iter().any(|b| prev.1[b.id] != zero)).collect();
    let mut sums = vec![zero; n_blocks];
    let mut count = 0u64;
    // Workers as in the step pass (a few more buffers each: the sets are decoded per chunk).
    pipeline::run(
        todo.len(),
        ctx.plan.pass_threads(pass, &ctx.budget).max(1),
        Order::Completion,
        |i| -> anyhow::Result<Vec<u64>> {
            let mut e_prev = vec![0u64; words];
            prev.0.read_blocks(&todo[i].blocks, &mut e_prev, &prev.1)?;
            Ok(e_prev)
        },
        |i, e_prev| {
            let ch = todo[i];
            let frame = Frame::new(&ctx.layout, &chunks.scheme, ch.key, ch.slice);
            let prev_words = match new_prev {
                Some(p) => Some(decode_streams(p, &ch.blocks, words)?),
                None => None,
            };
            let new_words = decode_streams(new_k, &ch.blocks, words)?;
            Ok(edge_chunk(&frame, &e_prev, prev_words.as_deref(), &new_words))
        },
        |i, edge: Vec<u64>| {
            let ch = todo[i];
            count += edge.iter().map(|w| w.count_ones() as u64).sum::<u64>();
            for (b, sum) in ch.blocks.iter().zip(out.write_blocks(&ch.blocks, &edge)?) {
                sums[b.id] = sum;
            }
            Ok(())
        },
    )?;
    Ok((out, sums, count))
}

/// The new positions of a pass over a chunk's blocks, as chunk-local words.
fn decode_streams(streams: &PassStreams, blocks: &[Block], words: usize) -> anyhow::Result<Vec<u64>> {
    let mut out = vec![0u64; words];
    for b in blocks {
        let bytes = streams.block(b.id)?;
        for pos in decode(&bytes) {
            let pos = pos.with_context(|| format!("{} block {}", streams.path.display(), b.id))?;
            anyhow::ensure!((pos / 64) < b.words as u64, "stream position outside its block");
            out[b.local_word + (pos / 64) as usize] |= 1 << (pos % 64);
        }
    }
    Ok(out)
}
