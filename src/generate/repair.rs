//! Resuming safely: before an interrupted run continues, every finished table and log in
//! its work folder is checked against its checksums; damaged table blocks are rebuilt from
//! the logs' streams (or by recomputing their init chunk), never trusted.

use super::level::LevelContext;
use super::pass::PassFinals;
use crate::index::Block;
use crate::solve::{chains_complete, compute_chunk, ChunkTables, Conversions, Frame, Pass, WorkTable};
use crate::work::bits::{block_sum, load_sums, save_sums, BitFile};
use crate::work::deltalog::PassStreams;
use crate::work::gap::set_positions;
use crate::work::manifest::{new_per_pass, PassDone};
use crate::work::StorageError;
use anyhow::Context;

/// The streams of one finished pass.
struct FinishedPass {
    pass: Pass,
    streams: PassStreams,
}

/// Whether a work table is no longer needed once the passes up to `last` are finished.
fn is_obsolete(ctx: &LevelContext, table: WorkTable, last: Pass) -> bool {
    let mut pass = Pass::InitWhite;
    loop {
        if ctx.obsolete_after(pass).contains(&table) {
            return true;
        }
        if pass >= last {
            return false;
        }
        pass = pass.next();
    }
}

/// Checks the finished passes' logs and tables of an interrupted level and rebuilds damaged
/// blocks. Returns the number of blocks rebuilt; an error means the level must restart.
pub fn check_and_repair(ctx: &LevelContext, passes: &[PassDone]) -> anyhow::Result<usize> {
    let n_blocks = ctx.n_blocks();
    let mut streams = Vec::new();
    let mut repaired = 0;
    let Some(last) = passes.last().map(|p| p.pass) else { return Ok(0) };
    // A step under way in place owns its source table: the step's resume checks it.
    let owned = ctx
        .in_place_source(last.next())
        .filter(|&src| !ctx.folder.bits(src).exists() && ctx.folder.bits(ctx.spec(last.next()).outputs[0]).exists());
    // Once the chains are complete, tables no later stage reads may already be deleted.
    let complete = chains_complete(&new_per_pass(passes), ctx.is_eventual());
    for done in passes {
        let ps = PassStreams::open(&ctx.folder.log(done.pass), n_blocks)?;
        let sums = ps.sums.clone();
        streams.push(FinishedPass { pass: done.pass, streams: ps });
        for (o, &table) in ctx.spec(done.pass).outputs.iter().enumerate() {
            if is_obsolete(ctx, table, last) || (complete && !ctx.read_after_chains(table)) {
                continue; // deleted (or about to be): nothing later reads it
            }
            let bits = ctx.folder.bits(table);
            if !bits.exists() && owned != Some(table) {
                // Opened below as a table of zeros: every block fails its checksum and is rebuilt.
                ctx.progress.log(&format!("{}: {} is missing; rebuilding it", ctx.layout.material, bits.display()));
            }
            let sums_file = ctx.folder.sums(table);
            if load_sums(&sums_file, n_blocks).ok().as_ref() != Some(&sums[o]) {
                ctx.progress.log(&format!(
                    "{}: rebuilding damaged {} from the pass log",
                    ctx.layout.material,
                    sums_file.display()
                ));
                save_sums(&sums_file, &sums[o])?;
            }
            if owned == Some(table) {
                continue;
            }
            let file = ctx.open_table(table)?;
            for block in 0..n_blocks {
                if check_block(ctx, &file, block, &sums[o], || rebuild_block(ctx, table, block, &streams))? {
                    repaired += 1;
                }
            }
        }
    }
    Ok(repaired)
}

/// Checks block `block` of `file` against `sums`; a damaged one is reported, rebuilt with
/// `rebuild` (which must give its checksum) and written back. Whether it was rebuilt.
pub fn check_block(
    ctx: &LevelContext,
    file: &BitFile,
    block: usize,
    sums: &[u64],
    rebuild: impl FnOnce() -> anyhow::Result<Vec<u64>>,
) -> anyhow::Result<bool> {
    let block_words = ctx.block_words();
    match file.read_range(block, 1, block_words, sums) {
        Ok(_) => return Ok(false),
        Err(e @ StorageError::ChecksumMismatch { .. }) => ctx.log(&format!("{e}; rebuilding the block")),
        Err(e) => return Err(e.into()),
    }
    let words = rebuild()?;
    anyhow::ensure!(
        block_sum(&words) == sums[block],
        "rebuilt block {block} of {} does not match its checksum",
        file.path.display()
    );
    file.put_blocks(&[Block { id: block, local_word: 0, slot_word: block * block_words, words: block_words }], &words)?;
    file.sync()?;
    Ok(true)
}

/// The streams of every pass before a step, opened once: a step that updates its source
/// in place rebuilds damaged blocks of it from them.
pub struct EarlierStreams(Vec<FinishedPass>);

impl EarlierStreams {
    pub fn open(ctx: &LevelContext, before: Pass) -> anyhow::Result<EarlierStreams> {
        let mut streams = Vec::new();
        let mut p = Pass::InitWhite;
        while p < before {
            streams.push(FinishedPass { pass: p, streams: PassStreams::open(&ctx.folder.log(p), ctx.n_blocks())? });
            p = p.next();
        }
        Ok(EarlierStreams(streams))
    }

    /// Block `block` of chain table `table`, rebuilt.
    pub fn rebuild(&self, ctx: &LevelContext, table: WorkTable, block: usize) -> anyhow::Result<Vec<u64>> {
        rebuild_block(ctx, table, block, &self.0)
    }
}

/// Rebuilds one block of a finished table as its file holds it: chain tables from the
/// streams of their passes (without a deferring step's own), init tables by recomputing the
/// chunk that holds the block.
fn rebuild_block(
    ctx: &LevelContext,
    table: WorkTable,
    block: usize,
    streams: &[FinishedPass],
) -> anyhow::Result<Vec<u64>> {
    if let WorkTable::Chain(k) = table {
        let mut words = vec![0u64; ctx.block_words()];
        if k % 2 == 1 {
            // The odd chain starts from the illegal positions.
            words = rebuild_or_read(ctx, WorkTable::IllegalWtm, block, streams)?;
        } else if k >= 2 {
            // The even chain holds the positions a capture saves from step 2 on (`!d∞` past
            // step 100 of an eventual level).
            let d = crate::solve::captures_lose(k, ctx.is_eventual());
            words = rebuild_or_read(ctx, d, block, streams)?.iter().map(|&d| !d).collect();
        }
        // A step that deferred its table left its positions in its streams only.
        let last = if ctx.defers(Pass::Step(k)) { k - 2 } else { k };
        let same_chain = |p: Pass| p.step().is_some_and(|s| s <= last && s % 2 == k % 2);
        for ps in streams.iter().filter(|ps| same_chain(ps.pass)) {
            let bytes = ps.streams.block(block)?;
            set_positions(&mut words, &bytes)
                .with_context(|| format!("{} (pass {})", ps.streams.path.display(), ps.pass.number()))?;
        }
        return Ok(words);
    }
    // An init table: the init pass that writes it recomputes the chunk that holds the block.
    let pass = [Pass::InitWhite, Pass::InitBlack]
        .into_iter()
        .find(|&p| ctx.spec(p).outputs.contains(&table))
        .with_context(|| format!("unknown work table {table}"))?;
    let chunks = ctx.plan.chunks_of(pass);
    let ch =
        chunks.list.iter().find(|c| c.blocks.iter().any(|b| b.id == block)).context("block outside every chunk")?;
    let inputs = ctx
        .spec(pass)
        .inputs
        .iter()
        .map(|&input| {
            let mut buf = vec![0u64; chunks.buffer_words];
            for b in &ch.blocks {
                buf[b.local_word..b.local_word + b.words].copy_from_slice(&rebuild_or_read(ctx, input, b.id, streams)?);
            }
            Ok((input, buf))
        })
        .collect::<anyhow::Result<ChunkTables>>()?;
    let frame = Frame::new(&ctx.layout, &chunks.scheme, ch.key, ch.slice);
    let pushes = PassFinals::open(ctx, pass)?.read(ctx, pass, ch, chunks.buffer_words)?;
    let (rule, eventual) = (pushes.rule.targets(), pushes.eventual.targets());
    let eventual = ctx.eventual_with(rule, eventual);
    let rule = pushes.rule.targets();
    let conversions = Conversions { caps: ctx.caps, pushes: &rule, eventual: eventual.as_ref() };
    let out = compute_chunk(pass, &frame, &conversions, chunks.buffer_words, inputs);
    let b = ch.blocks.iter().find(|b| b.id == block).context("block of its chunk")?;
    Ok(out.words(table)[b.local_word..b.local_word + b.words].to_vec())
}

/// A block of a table: read if intact, rebuilt otherwise.
fn rebuild_or_read(
    ctx: &LevelContext,
    table: WorkTable,
    block: usize,
    streams: &[FinishedPass],
) -> anyhow::Result<Vec<u64>> {
    let read = || -> anyhow::Result<Vec<u64>> {
        let (file, sums) = ctx.open_finished(table)?;
        Ok(file.read_range(block, 1, ctx.block_words(), &sums)?.0)
    };
    match read() {
        Ok(w) => Ok(w),
        Err(_) => rebuild_block(ctx, table, block, streams),
    }
}
