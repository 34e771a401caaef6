//! Resuming safely: before an interrupted run continues, every finished table and log in
//! its work folder is checked against its checksums; damaged table blocks are rebuilt from
//! the logs' streams (or by recomputing their init chunk), never trusted.

use crate::delta::decode;
use crate::deltalog;
use crate::job::RunManifest;
use crate::solve::frame::Frame;
use crate::solve::{bits_path, compute_chunk, is_obsolete, log_path, sums_path, PassSpec, RunContext};
use crate::store::{block_sum, load_sums, save_sums, BitFile, Damaged};
use anyhow::Context;
use std::fs::File;

/// Where each block's stream of one finished pass lies.
struct PassStreams {
    file: File,
    path: std::path::PathBuf,
    /// Per block: (offset, length).
    at: Vec<(u64, u32)>,
}

fn pass_streams(ctx: &RunContext, k: i32, n_blocks: usize) -> anyhow::Result<(PassStreams, Vec<Vec<u64>>)> {
    let log = log_path(&ctx.work, k);
    let scan = deltalog::scan(&log)?;
    if let Some(d) = scan.damage {
        anyhow::bail!("{d}");
    }
    let path = deltalog::streams_path(&log);
    let file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let mut at = vec![(0u64, 0u32); n_blocks];
    let outputs = PassSpec::of(k).outputs.len();
    let mut sums = vec![vec![0u64; n_blocks]; outputs];
    let mut covered = 0;
    for rec in &scan.records {
        deltalog::check_streams(&file, &path, rec)?;
        let mut off = rec.streams_offset;
        for e in &rec.blocks {
            at[e.id as usize] = (off, e.stream_len);
            off += e.stream_len as u64;
            for (o, s) in e.sums.iter().enumerate() {
                sums[o][e.id as usize] = *s;
            }
            covered += 1;
        }
    }
    anyhow::ensure!(covered == n_blocks, "{}: the log of a finished pass misses blocks", log.display());
    Ok((PassStreams { file, path, at }, sums))
}

/// Checks the finished passes' logs and tables of an interrupted run and rebuilds damaged
/// blocks. Returns the number of blocks rebuilt; an error means the run must restart.
pub fn check_and_repair(ctx: &RunContext, manifest: &RunManifest) -> anyhow::Result<usize> {
    let n_blocks = (ctx.layout.n_slots >> ctx.plan.block_bits) as usize;
    let block_words = 1usize << (ctx.plan.block_bits - 6);
    let mut streams = Vec::new();
    let mut repaired = 0;
    let last = manifest.passes.last().map_or(-2, |p| p.pass);
    for done in &manifest.passes {
        let k = done.pass;
        let (ps, sums) = pass_streams(ctx, k, n_blocks)?;
        streams.push((k, ps));
        for (o, name) in PassSpec::of(k).outputs.iter().enumerate() {
            let bits = bits_path(&ctx.work, name);
            if is_obsolete(name, last) {
                continue; // deleted (or about to be): no later pass reads it
            }
            if !bits.exists() {
                // Opened below as a table of zeros: every block fails its checksum and is rebuilt.
                ctx.progress.log(&format!("{}: {} is missing; rebuilding it", ctx.layout.material, bits.display()));
            }
            let sums_file = sums_path(&ctx.work, name);
            if load_sums(&sums_file, n_blocks).ok().as_ref() != Some(&sums[o]) {
                ctx.progress.log(&format!(
                    "{}: rebuilding damaged {} from the pass log",
                    ctx.layout.material,
                    sums_file.display()
                ));
                save_sums(&sums_file, &sums[o])?;
            }
            let file = BitFile::open(&bits, ctx.layout.n_words(), ctx.io_bytes)?;
            for block in 0..n_blocks {
                let Err(e) = file.read_range(block, 1, block_words, &sums[o]) else { continue };
                if e.downcast_ref::<Damaged>().is_none() {
                    return Err(e);
                }
                ctx.progress.log(&format!("{}: {e:#}; rebuilding the block", ctx.layout.material));
                let words = rebuild_block(ctx, name, block, &streams)?;
                anyhow::ensure!(
                    block_sum(&words) == sums[o][block],
                    "rebuilt block {block} of {} does not match its checksum",
                    bits.display()
                );
                let b = crate::index::Block {
                    id: block,
                    local_word: 0,
                    slot_word: block * block_words,
                    words: block_words,
                };
                file.write_blocks(&[b], &words)?;
                file.sync()?;
                repaired += 1;
            }
        }
    }
    Ok(repaired)
}

/// Rebuilds one block of a finished table: chain tables from the streams of their passes,
/// init tables by recomputing the chunk that holds the block.
fn rebuild_block(
    ctx: &RunContext,
    name: &str,
    block: usize,
    streams: &[(i32, PassStreams)],
) -> anyhow::Result<Vec<u64>> {
    let block_words = 1usize << (ctx.plan.block_bits - 6);
    if let Some(k) = name.strip_prefix('t').and_then(|n| n.parse::<i32>().ok()) {
        let mut words = vec![0u64; block_words];
        if k % 2 == 1 {
            // The odd chain starts from the illegal positions.
            words = rebuild_or_read(ctx, "illegal-wtm", block, streams)?;
        }
        for (p, ps) in streams.iter().filter(|(p, _)| *p >= 0 && *p <= k && p % 2 == k % 2) {
            let (off, len) = ps.at[block];
            let bytes = deltalog::read_at(&ps.file, &ps.path, off, len as usize)?;
            for pos in decode(&bytes) {
                let pos = pos.with_context(|| format!("{} (pass {p})", ps.path.display()))?;
                *words.get_mut((pos / 64) as usize).context("stream position outside its block")? |= 1 << (pos % 64);
            }
        }
        return Ok(words);
    }
    let k = if name == "d" { 0 } else { -1 };
    let spec = PassSpec::of(k);
    let o = spec.outputs.iter().position(|n| n == name).with_context(|| format!("unknown work table {name}"))?;
    let chunks = ctx.plan.chunks_of(k);
    let key = chunks.scheme.chunk_of_block(&ctx.layout, block);
    let ch = chunks.list.iter().find(|c| c.key == key).context("block outside every chunk")?;
    let inputs = spec
        .inputs
        .iter()
        .map(|input| {
            let mut buf = vec![0u64; chunks.buffer_words];
            for b in &ch.blocks {
                buf[b.local_word..b.local_word + b.words].copy_from_slice(&rebuild_or_read(ctx, input, b.id, streams)?);
            }
            Ok(buf)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let frame = Frame::new(&ctx.layout, &chunks.scheme, key);
    let out = compute_chunk(ctx, k, &frame, chunks.buffer_words, inputs);
    let b = ch.blocks.iter().find(|b| b.id == block).context("block of its chunk")?;
    Ok(out[o][b.local_word..b.local_word + b.words].to_vec())
}

/// A block of a table: read if intact, rebuilt otherwise.
fn rebuild_or_read(
    ctx: &RunContext,
    name: &str,
    block: usize,
    streams: &[(i32, PassStreams)],
) -> anyhow::Result<Vec<u64>> {
    let n_blocks = (ctx.layout.n_slots >> ctx.plan.block_bits) as usize;
    let block_words = 1usize << (ctx.plan.block_bits - 6);
    let file = BitFile::open(&bits_path(&ctx.work, name), ctx.layout.n_words(), ctx.io_bytes)?;
    match load_sums(&sums_path(&ctx.work, name), n_blocks).and_then(|s| file.read_range(block, 1, block_words, &s)) {
        Ok(w) => Ok(w),
        Err(_) => rebuild_block(ctx, name, block, streams),
    }
}
