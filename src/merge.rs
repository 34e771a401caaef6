//! The merge: the delta streams of all steps, read block by block in storage order, become
//! the 6-bit values; with the last tables of both chains they form the final table file,
//! written sequentially.

use crate::delta::decode;
use crate::deltalog;
use crate::format::{step_code, Section, TableWriter, CODE_ILLEGAL};
use crate::job::RunManifest;
use crate::material::Color;
use crate::solve::{bits_path, last_step, log_path, sums_path, table_name, RunContext};
use crate::store::{load_sums, BitFile};
use anyhow::Context;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where each block's stream lies in one step's log.
struct StepIndex {
    step: i32,
    path: PathBuf,
    file: File,
    /// Per block id: (offset, length); length 0 = no new positions.
    entries: Vec<(u64, u32)>,
}

fn index_step(work: &Path, step: i32, n_blocks: usize) -> anyhow::Result<StepIndex> {
    let path = log_path(work, step);
    let scan = deltalog::scan(&path)?;
    if let Some(d) = scan.damage {
        anyhow::bail!("delta log damaged: {d} (delete the work folder to recompute the run)");
    }
    let streams = deltalog::streams_path(&path);
    let file = File::open(&streams).with_context(|| format!("opening {}", streams.display()))?;
    let mut entries = vec![(0u64, 0u32); n_blocks];
    let mut seen = 0usize;
    for rec in &scan.records {
        deltalog::check_streams(&file, &streams, rec)?;
        let mut off = rec.streams_offset;
        for e in &rec.blocks {
            entries[e.id as usize] = (off, e.stream_len);
            off += e.stream_len as u64;
            seen += 1;
        }
    }
    anyhow::ensure!(seen == n_blocks, "{}: covers {seen} of {n_blocks} blocks", path.display());
    Ok(StepIndex { step, path: streams, file, entries })
}

/// Runs `work(i)` for `i in 0..n` on `threads` workers and hands the results to `consume`
/// in order of `i`, with at most `window` results alive at once.
fn in_order<R: Send>(
    n: usize,
    threads: usize,
    window: usize,
    work: impl Fn(usize) -> anyhow::Result<R> + Sync,
    mut consume: impl FnMut(usize, R) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let next = AtomicUsize::new(0);
    let (tickets_tx, tickets_rx) = crossbeam::channel::bounded::<()>(window);
    for _ in 0..window {
        tickets_tx.send(()).expect("room for tickets");
    }
    let (tx, rx) = crossbeam::channel::bounded::<(usize, anyhow::Result<R>)>(window);
    crossbeam::scope(|s| -> anyhow::Result<()> {
        // Owned here: an early error return drops them, which unblocks the workers.
        let (rx, tickets_tx) = (rx, tickets_tx);
        for _ in 0..threads.max(1) {
            let (tx, tickets_rx, next, work) = (tx.clone(), tickets_rx.clone(), &next, &work);
            s.spawn(move |_| {
                while tickets_rx.recv().is_ok() {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n || tx.send((i, work(i))).is_err() {
                        break;
                    }
                }
            });
        }
        drop((tx, tickets_rx));
        let mut pending = BTreeMap::new();
        let mut expected = 0;
        while expected < n {
            let (i, r) = rx.recv().context("merge workers stopped")?;
            pending.insert(i, r);
            while let Some(r) = pending.remove(&expected) {
                consume(expected, r?)?;
                expected += 1;
                tickets_tx.send(()).ok();
            }
        }
        drop(tickets_tx);
        Ok(())
    })
    .map_err(|_| anyhow::anyhow!("a merge worker panicked"))?
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
    let open = |name: &str| -> anyhow::Result<(BitFile, Vec<u64>)> {
        Ok((
            BitFile::open(&bits_path(&ctx.work, name), layout.n_words(), ctx.io_bytes)?,
            load_sums(&sums_path(&ctx.work, name), n_blocks)?,
        ))
    };
    let steps: Vec<i32> = manifest.passes.iter().map(|p| p.pass).filter(|&p| p >= 0).collect();
    let last_odd = steps.iter().copied().filter(|k| k % 2 == 1).max().context("no odd step")?;
    let last_even = steps.iter().copied().filter(|k| k % 2 == 0).max().context("no even step")?;
    let mut read = 0u64;
    let mut w = TableWriter::create(out_dir, &layout.material, layout.n_slots)?;
    ctx.progress.start(format!("{} merge", layout.material), 2 * n_groups as u64);

    // The final bitbases: t99 and t100 are the last tables of the chains.
    for (section, name) in [(Section::WtmBitbase, table_name(last_odd)), (Section::BtmBitbase, table_name(last_even))] {
        let (file, sums) = open(&name)?;
        w.begin(section)?;
        for g in 0..n_groups {
            let first = g * group;
            let n = group.min(n_blocks - first);
            let words = file.read_range(first, n, block_words, &sums)?;
            read += words.len() as u64 * 8;
            let bytes: Vec<u8> = words.iter().flat_map(|x| x.to_le_bytes()).collect();
            w.write(&bytes)?;
        }
        w.end(section)?;
    }

    // The 6-bit values, side by side to move.
    for stm in [Color::White, Color::Black] {
        let parity = if stm == Color::White { 1 } else { 0 };
        let index: Vec<StepIndex> = steps
            .iter()
            .filter(|&&k| k % 2 == parity)
            .map(|&k| index_step(&ctx.work, k, n_blocks))
            .collect::<anyhow::Result<_>>()?;
        let (illegal, illegal_sums) = open(if stm == Color::White { "illegal-wtm" } else { "illegal-btm" })?;
        let section = Section::values(stm);
        w.begin(section)?;
        in_order(
            n_groups,
            ctx.budget.threads,
            ctx.budget.threads + 1,
            |g| {
                let first = g * group;
                let n = group.min(n_blocks - first);
                let illegal = illegal.read_range(first, n, block_words, &illegal_sums)?;
                let mut planes = vec![0u64; 6 * n * block_words];
                let mut fresh = vec![0u64; block_words];
                let mut bytes_read = illegal.len() as u64 * 8;
                for step in &index {
                    let code = step_code(step.step as u8);
                    for b in 0..n {
                        let (off, len) = step.entries[first + b];
                        if len == 0 {
                            continue;
                        }
                        let stream = deltalog::read_at(&step.file, &step.path, off, len as usize)?;
                        bytes_read += len as u64;
                        fresh.fill(0);
                        for pos in decode(&stream) {
                            let pos = pos.with_context(|| format!("{} block {}", step.path.display(), first + b))?;
                            *fresh.get_mut((pos / 64) as usize).context("stream position outside its block")? |=
                                1 << (pos % 64);
                        }
                        // Every position is new in at most one step of a chain: OR the step's
                        // code into the planes word by word.
                        for (w, &f) in fresh.iter().enumerate() {
                            if f != 0 {
                                let word = b * block_words + w;
                                for (j, plane) in planes[6 * word..6 * word + 6].iter_mut().enumerate() {
                                    if (code >> j) & 1 != 0 {
                                        *plane |= f;
                                    }
                                }
                            }
                        }
                    }
                }
                let mut bytes = Vec::with_capacity(planes.len() * 8);
                for (word, ill) in illegal.iter().enumerate() {
                    for j in 0..6 {
                        let p = planes[6 * word + j] | if (CODE_ILLEGAL >> j) & 1 != 0 { *ill } else { 0 };
                        bytes.extend_from_slice(&p.to_le_bytes());
                    }
                }
                Ok((bytes, bytes_read))
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
    let path = w.finish(last_step(&manifest.passes))?;
    ctx.progress.finish("written");
    Ok((path, read, written))
}
