//! One white-wins run, out of core: the init passes, the alternating white/black passes
//! over chunks streamed from the work folder, and resumption after a kill.
//!
//! Every pass reads whole tables of earlier passes and writes new ones (`t(k)` never
//! overwrites `t(k-2)`), so a chunk can be recomputed at any time with the same result. A
//! chunk is finished when its record (block checksums and gap-encoded new positions) is in
//! the pass's log and its blocks still match; a pass is finished when the run manifest says
//! so. After pass k the table `t(k-2)` is deleted.

pub mod captures;
pub mod frame;
pub mod init;
pub mod kernels;

use crate::delta::GapEncoder;
use crate::deltalog::{self, BlockEntry, DeltaLog};
use crate::index::{Block, Layout};
use crate::job::{self, PassDone, RunManifest, MANIFEST_FORMAT};
use crate::material::{Color, Material};
use crate::plan::{Budget, Chunks, Plan};
use crate::progress::Progress;
use crate::store::{load_sums, save_sums, BitFile};
use anyhow::Context;
use captures::Captures;
use frame::Frame;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The last step of the chains: `t100` (btm).
pub const LAST_STEP: i32 = 100;

/// Everything a run's passes share.
pub struct RunContext<'a> {
    pub layout: Layout,
    pub plan: Plan,
    pub caps: &'a Captures,
    pub work: PathBuf,
    pub budget: Budget,
    pub io_bytes: usize,
    pub progress: &'a Progress,
}

/// Name of the table written by pass `k` (`-1`: illegal wtm positions, the start of the odd
/// chain).
pub fn table_name(k: i32) -> String {
    if k < 0 {
        "illegal-wtm".to_string()
    } else {
        format!("t{k:03}")
    }
}

/// Path of a work table.
pub fn bits_path(work: &Path, name: &str) -> PathBuf {
    work.join(format!("{name}.bits"))
}

/// Path of a work table's block checksums.
pub fn sums_path(work: &Path, name: &str) -> PathBuf {
    work.join(format!("{name}.sums"))
}

/// Path of a pass's log.
pub fn log_path(work: &Path, k: i32) -> PathBuf {
    if k < 0 {
        work.join("pass-init.log")
    } else {
        work.join(format!("pass-{k:03}.log"))
    }
}

/// The tables a pass reads and writes. Workers compute a chunk from `inputs` (prefetched by
/// the reader), then read the chunk's blocks of `combine` (the previous table of the chain,
/// and `c` or `d`), combine and gap-encode; the writer thread only writes.
pub struct PassSpec {
    pub id: i32,
    pub mover: Color,
    pub inputs: Vec<String>,
    pub combine: Vec<String>,
    pub outputs: Vec<String>,
}

impl PassSpec {
    pub fn of(k: i32) -> PassSpec {
        let t = table_name;
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (mover, inputs, combine, outputs) = match k {
            -1 => (Color::White, vec![], vec![], names(&["illegal-wtm", "c", "illegal-btm"])),
            0 => (Color::Black, vec![t(-1)], vec![], vec!["d".into(), t(0)]),
            1 => (Color::White, vec![t(0)], vec![t(-1), "c".into()], vec![t(1)]),
            k if k % 2 == 1 => (Color::White, vec![t(k - 1)], vec![t(k - 2)], vec![t(k)]),
            k => (Color::Black, vec![t(k - 1)], vec![t(k - 2), "d".into()], vec![t(k)]),
        };
        PassSpec { id: k, mover, inputs, combine, outputs }
    }
}

/// Computes one chunk of pass `k` from its chunk-local inputs: the init tables, or the
/// words that the side to move reaches (white: OR over moves; black: AND over moves).
pub fn compute_chunk(
    ctx: &RunContext,
    k: i32,
    frame: &Frame,
    words: usize,
    mut inputs: Vec<Vec<u64>>,
) -> Vec<Vec<u64>> {
    match k {
        -1 => {
            let mut illegal = vec![!0u64; words];
            let mut c = vec![0u64; words];
            init::init_white(frame, ctx.caps, &mut illegal, &mut c);
            let mut illegal_btm = vec![!0u64; words];
            init::illegal_btm(frame, &mut illegal_btm);
            vec![illegal, c, illegal_btm]
        }
        0 => {
            let illegal_wtm = inputs.pop().expect("input");
            let mut d = vec![!0u64; words];
            kernels::black_moves(frame, &illegal_wtm, &mut d);
            drop(illegal_wtm);
            let mut t0 = vec![0u64; words];
            init::init_black(frame, ctx.caps, &mut d, &mut t0);
            vec![d, t0]
        }
        k if k % 2 == 1 => {
            let mut out = vec![0u64; words];
            kernels::white_moves(frame, &inputs[0], &mut out);
            vec![out]
        }
        _ => {
            let mut out = vec![!0u64; words];
            kernels::black_moves(frame, &inputs[0], &mut out);
            vec![out]
        }
    }
}

/// Combines a worker's word with the previous table of the chain (`old`) and `c` (step 1)
/// or `d` (even steps): the pass's table word and its new bits.
#[inline]
fn combine(k: i32, out: u64, old: u64, extra: u64) -> (u64, u64) {
    let reached = match k {
        1 => out | extra,
        k if k % 2 == 1 => out,
        _ => out & extra,
    };
    (old | reached, reached & !old)
}

/// For tests: `TBSTREAM_STOP_AFTER_CHUNKS=n` makes the process stop with an error after
/// writing `n` chunks, leaving the work folder exactly as a kill at that moment would.
fn test_stop_hook() -> anyhow::Result<()> {
    use std::sync::atomic::{AtomicI64, Ordering};
    static LEFT: AtomicI64 = AtomicI64::new(i64::MIN);
    if LEFT.load(Ordering::Relaxed) == i64::MIN {
        let n = std::env::var("TBSTREAM_STOP_AFTER_CHUNKS").ok().and_then(|v| v.parse().ok()).unwrap_or(-1);
        LEFT.store(n, Ordering::Relaxed);
    }
    if LEFT.load(Ordering::Relaxed) >= 0 && LEFT.fetch_sub(1, Ordering::Relaxed) == 1 {
        anyhow::bail!("stopped on purpose (TBSTREAM_STOP_AFTER_CHUNKS)");
    }
    Ok(())
}

/// Result of one pass.
pub struct PassResult {
    pub new: u64,
    /// Block checksums of each output table, indexed by block id.
    pub sums: Vec<Vec<u64>>,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Bytes of the pass's delta streams.
    pub stream_bytes: u64,
}

/// What a worker hands the writer for one chunk: the output tables (chunk-local words), the
/// gap-encoded new positions of each block, and how many there are.
struct ChunkOutput {
    tables: Vec<Vec<u64>>,
    streams: Vec<Vec<u8>>,
    new_count: u64,
}

/// Completes a computed chunk: for steps, combines the kernel's words with the previous
/// table of the chain (and `c` or `d`), read in batches of at most `io_words` words so that
/// a worker holds no further chunk buffer; then gap-encodes each block's new positions
/// (`t0` for pass 0, none for pass -1).
fn finish_chunk(
    k: i32,
    blocks: &[Block],
    combined: &[(BitFile, Vec<u64>)],
    mut out: Vec<Vec<u64>>,
    io_words: usize,
) -> anyhow::Result<ChunkOutput> {
    let mut streams = Vec::with_capacity(blocks.len());
    let mut new_count = 0;
    let mut encode = |new: &[u64]| {
        let mut enc = GapEncoder::new();
        for (w, &word) in new.iter().enumerate() {
            enc.push_word(w, word);
        }
        new_count += enc.count();
        streams.push(enc.finish());
    };
    match k {
        -1 => blocks.iter().for_each(|_| encode(&[])),
        0 => blocks.iter().for_each(|b| encode(&out[1][b.local_word..b.local_word + b.words])),
        _ => {
            for batch in io_batches(blocks, io_words) {
                let local = rebased(batch);
                let n = batch.iter().map(|b| b.words).sum();
                let mut with = combined
                    .iter()
                    .map(|(file, sums)| {
                        let mut buf = vec![0u64; n];
                        file.read_blocks(&local, &mut buf, sums).map(|_| buf)
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?;
                // The previous table's words are replaced by the new positions.
                let (old, extra) = with.split_at_mut(1);
                let (old, extra) = (&mut old[0], extra.first());
                for (b, l) in batch.iter().zip(&local) {
                    for w in 0..b.words {
                        let (t, o) = (b.local_word + w, l.local_word + w);
                        let (table, fresh) = combine(k, out[0][t], old[o], extra.map_or(0, |x| x[o]));
                        out[0][t] = table;
                        old[o] = fresh;
                    }
                    encode(&old[l.local_word..l.local_word + l.words]);
                }
            }
        }
    }
    Ok(ChunkOutput { tables: out, streams, new_count })
}

/// Splits a chunk's blocks into runs that are contiguous in storage, of at most `max_words`.
fn io_batches(blocks: &[Block], max_words: usize) -> Vec<&[Block]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut words = 0;
    for (i, b) in blocks.iter().enumerate() {
        let contiguous = i > start && blocks[i - 1].slot_word + blocks[i - 1].words == b.slot_word;
        if i > start && (!contiguous || words + b.words > max_words) {
            out.push(&blocks[start..i]);
            start = i;
            words = 0;
        }
        words += b.words;
    }
    if start < blocks.len() {
        out.push(&blocks[start..]);
    }
    out
}

/// The same blocks placed one after the other from local word 0.
fn rebased(blocks: &[Block]) -> Vec<Block> {
    let mut at = 0;
    blocks
        .iter()
        .map(|b| {
            let r = Block { local_word: at, ..*b };
            at += b.words;
            r
        })
        .collect()
}

/// Runs (or resumes) one pass over all chunks of its side.
pub fn run_pass(ctx: &RunContext, spec: &PassSpec) -> anyhow::Result<PassResult> {
    let chunks: &Chunks = ctx.plan.chunks_of(spec.id);
    let n_blocks = (ctx.layout.n_slots >> ctx.plan.block_bits) as usize;
    let words = chunks.buffer_words;
    let open_checked = |name: &String| -> anyhow::Result<(BitFile, Vec<u64>)> {
        let file = BitFile::open(&bits_path(&ctx.work, name), ctx.layout.n_words(), ctx.io_bytes)?;
        let sums = load_sums(&sums_path(&ctx.work, name), n_blocks)?;
        Ok((file, sums))
    };
    let inputs = spec.inputs.iter().map(open_checked).collect::<anyhow::Result<Vec<_>>>()?;
    let combined = spec.combine.iter().map(open_checked).collect::<anyhow::Result<Vec<_>>>()?;
    let outputs = spec
        .outputs
        .iter()
        .map(|name| BitFile::open(&bits_path(&ctx.work, name), ctx.layout.n_words(), ctx.io_bytes))
        .collect::<anyhow::Result<Vec<_>>>()?;

    // Chunks finished before an interruption: records whose blocks and streams still match.
    let log_file = log_path(&ctx.work, spec.id);
    let streams_file = deltalog::streams_path(&log_file);
    let scan = deltalog::scan(&log_file)?;
    let mut sums = vec![vec![0u64; n_blocks]; outputs.len()];
    let mut done = vec![false; chunks.list.len()];
    let started = Instant::now();
    let mut result = PassResult { new: 0, sums: Vec::new(), bytes_read: 0, bytes_written: 0, stream_bytes: 0 };
    let (mut valid_len, mut streams_len) = (0, 0);
    let mut damage = scan.damage.clone();
    for rec in &scan.records {
        match check_record(chunks, &outputs, &mut sums, rec, words, &streams_file) {
            Ok(()) => {
                done[rec.chunk as usize] = true;
                result.new += rec.new_count;
                result.stream_bytes += rec.streams_len;
                valid_len = rec.end;
                streams_len = rec.streams_offset + rec.streams_len;
            }
            Err(e) => {
                damage = Some(format!("{e:#}"));
                break;
            }
        }
    }
    if let Some(d) = &damage {
        ctx.progress
            .log(&format!("{}: pass {}: damaged work data, recomputing from there: {d}", ctx.layout.material, spec.id));
    }
    let resumed = done.iter().filter(|&&d| d).count();
    if resumed > 0 {
        ctx.progress.log(&format!(
            "{}: pass {}: resuming after {resumed} of {} finished chunks",
            ctx.layout.material,
            spec.id,
            chunks.list.len()
        ));
    }
    let mut log = DeltaLog::open(&log_file, valid_len)?;
    let mut streams = deltalog::StreamWriter::open(&streams_file, streams_len)?;
    let todo: Vec<usize> = (0..chunks.list.len()).filter(|&i| !done[i]).collect();
    let threads = ctx.plan.pass_threads(spec.id, &ctx.budget).max(1);

    let label = match spec.id {
        -1 => format!("{} init white", ctx.layout.material),
        0 => format!("{} init black", ctx.layout.material),
        k => format!("{} step {k:>3} {}", ctx.layout.material, if k % 2 == 1 { "white" } else { "black" }),
    };
    ctx.progress.start(label, chunks.list.len() as u64);
    for _ in 0..resumed {
        ctx.progress.inc();
    }
    // Rendezvous channels: a chunk buffer exists only where it is being read, computed or
    // written, which keeps the pass within `pass_slots` buffers.
    let io_words = (ctx.io_bytes / 8).max(1);
    let (job_tx, job_rx) = crossbeam::channel::bounded::<(usize, anyhow::Result<Vec<Vec<u64>>>)>(0);
    let (res_tx, res_rx) = crossbeam::channel::bounded::<(usize, ChunkOutput)>(0);
    let outcome = crossbeam::scope(|s| -> anyhow::Result<()> {
        // Owned here: an early error return drops the receivers, which unblocks the threads.
        let res_rx = res_rx;
        // Prefetching reader: the next chunk's inputs are read while workers compute.
        s.spawn(|_| {
            for &i in &todo {
                let ch = &chunks.list[i];
                let bufs = inputs
                    .iter()
                    .map(|(file, sums)| {
                        let mut b = vec![0u64; words];
                        file.read_blocks(&ch.blocks, &mut b, sums).map(|_| b)
                    })
                    .collect::<anyhow::Result<Vec<_>>>();
                let failed = bufs.is_err();
                if job_tx.send((i, bufs)).is_err() || failed {
                    break;
                }
            }
            drop(job_tx);
        });
        let (err_tx, err_rx) = crossbeam::channel::bounded::<anyhow::Error>(1);
        let job_rx = job_rx;
        for _ in 0..threads {
            let (job_rx, res_tx, err_tx, combined) = (job_rx.clone(), res_tx.clone(), err_tx.clone(), &combined);
            s.spawn(move |_| {
                for (i, bufs) in job_rx.iter() {
                    let bufs = match bufs {
                        Ok(b) => b,
                        Err(e) => {
                            err_tx.try_send(e).ok();
                            break;
                        }
                    };
                    let frame = Frame::new(&ctx.layout, &chunks.scheme, chunks.list[i].key);
                    let out = compute_chunk(ctx, spec.id, &frame, words, bufs);
                    match finish_chunk(spec.id, &chunks.list[i].blocks, combined, out, io_words) {
                        Ok(done) => {
                            if res_tx.send((i, done)).is_err() {
                                break;
                            }
                        }
                        Err(e) => {
                            err_tx.try_send(e).ok();
                            break;
                        }
                    }
                }
            });
        }
        drop((job_rx, res_tx, err_tx));
        // Write-behind on this thread: the output blocks, the streams, then the chunk's record.
        for (i, done) in res_rx.iter() {
            let ch = &chunks.list[i];
            let mut entries: Vec<BlockEntry> =
                ch.blocks.iter().map(|b| BlockEntry { id: b.id as u32, stream_len: 0, sums: Vec::new() }).collect();
            let first_stream = streams.pos();
            let mut hasher = xxhash_rust::xxh3::Xxh3::new();
            for (o, file) in outputs.iter().enumerate() {
                let block_sums = file.write_blocks(&ch.blocks, &done.tables[o])?;
                for ((b, sum), entry) in ch.blocks.iter().zip(block_sums).zip(entries.iter_mut()) {
                    entry.sums.push(sum);
                    sums[o][b.id] = sum;
                }
            }
            for (bytes, entry) in done.streams.iter().zip(entries.iter_mut()) {
                hasher.update(bytes);
                streams.write(bytes)?;
                entry.stream_len = bytes.len() as u32;
            }
            let new_count = done.new_count;
            streams.flush()?;
            let streams_len = streams.pos() - first_stream;
            let record = deltalog::encode(i as u32, new_count, &entries, (first_stream, streams_len, hasher.digest()));
            log.append(&record)?;
            test_stop_hook()?;
            result.new += new_count;
            let chunk_bytes = ch.blocks.iter().map(|b| b.words as u64 * 8).sum::<u64>();
            result.bytes_read += chunk_bytes * (inputs.len() + combined.len()) as u64;
            result.bytes_written += chunk_bytes * outputs.len() as u64 + record.len() as u64 + streams_len;
            result.stream_bytes += streams_len;
            ctx.progress.inc();
        }
        if let Ok(e) = err_rx.try_recv() {
            return Err(e);
        }
        Ok(())
    });
    let outcome = outcome.map_err(|_| anyhow::anyhow!("a worker thread panicked"))?;
    if let Err(e) = outcome {
        ctx.progress.finish("failed");
        return Err(e);
    }
    for file in &outputs {
        file.sync()?;
    }
    streams.sync()?;
    log.sync()?;
    let io = result.bytes_read + result.bytes_written;
    ctx.progress.finish(&format!(
        "{} new, read {}, written {}, {:.0} MB/s",
        result.new,
        crate::plan::show_size(result.bytes_read),
        crate::plan::show_size(result.bytes_written),
        io as f64 / 1e6 / started.elapsed().as_secs_f64().max(1e-9)
    ));
    result.sums = sums;
    Ok(result)
}

/// Accepts a record of an interrupted pass if it names a chunk of this plan with its exact
/// blocks, and every output block and its streams still match the record's checksums.
fn check_record(
    chunks: &Chunks,
    outputs: &[BitFile],
    sums: &mut [Vec<u64>],
    rec: &deltalog::ChunkRecord,
    words: usize,
    streams: &Path,
) -> anyhow::Result<()> {
    let ch = chunks.list.get(rec.chunk as usize).context("record names an unknown chunk")?;
    anyhow::ensure!(
        ch.blocks.len() == rec.blocks.len()
            && ch.blocks.iter().zip(&rec.blocks).all(|(b, e)| b.id == e.id as usize && e.sums.len() == outputs.len()),
        "record of chunk {} does not match the plan",
        rec.chunk
    );
    let mut buf = vec![0u64; words];
    for (o, file) in outputs.iter().enumerate() {
        for (b, e) in ch.blocks.iter().zip(&rec.blocks) {
            sums[o][b.id] = e.sums[o];
        }
        file.read_blocks(&ch.blocks, &mut buf, &sums[o])?;
    }
    let file = std::fs::File::open(streams).with_context(|| format!("opening {}", streams.display()))?;
    deltalog::check_streams(&file, streams, rec)
}

/// What a run measured.
#[derive(Debug, Default, Clone)]
pub struct RunReport {
    pub passes: Vec<PassDone>,
    pub last_step: u8,
    pub block_bits: u32,
    pub white_chunks: usize,
    pub black_chunks: usize,
    pub merge_secs: f64,
    pub merge_bytes_read: u64,
    pub merge_bytes_written: u64,
    pub path: PathBuf,
}

impl RunReport {
    /// Bytes of all delta streams of the run.
    pub fn stream_bytes(&self) -> u64 {
        self.passes.iter().map(|p| p.stream_bytes).sum()
    }

    /// Seconds spent in passes of a kind: `Some(-1|0)` init, odd steps, even steps.
    pub fn secs(&self, pick: impl Fn(i32) -> bool) -> f64 {
        self.passes.iter().filter(|p| pick(p.pass)).map(|p| p.secs).sum()
    }
}

/// The tables that no pass after pass `k` reads, deleted once it is finished: `c` after
/// step 1, `t(k-2)` after step `k` (`t(k)` contains it).
pub fn obsolete_after(k: i32) -> Vec<String> {
    match k {
        1 => vec!["c".to_string()],
        k if k >= 2 => vec![table_name(k - 2)],
        _ => Vec::new(),
    }
}

/// Whether a work table is no longer needed once passes up to `last` are finished.
pub fn is_obsolete(name: &str, last: i32) -> bool {
    (-1..=last).any(|k| obsolete_after(k).iter().any(|n| n == name))
}

/// Whether the chains are complete: step 100 done, or one odd and one even step in a row
/// added nothing (every later table is equal).
pub fn chains_complete(passes: &[PassDone]) -> bool {
    let steps: Vec<&PassDone> = passes.iter().filter(|p| p.pass >= 1).collect();
    steps.last().is_some_and(|p| p.pass >= LAST_STEP)
        || (steps.len() >= 2 && steps[steps.len() - 2..].iter().all(|p| p.new == 0))
}

/// The last step that added positions.
pub fn last_step(passes: &[PassDone]) -> u8 {
    passes.iter().filter(|p| p.pass >= 0 && p.new > 0).map(|p| p.pass as u8).max().unwrap_or(0)
}

/// Computes (or resumes) one white-wins run and writes its table into `out_dir`.
pub fn solve_run(
    material: &Material,
    caps: &Captures,
    caps_bytes: u64,
    out_dir: &Path,
    work_dir: &Path,
    budget: &Budget,
    progress: &Progress,
) -> anyhow::Result<RunReport> {
    let layout = Layout::new(material);
    std::fs::create_dir_all(work_dir).with_context(|| format!("creating {}", work_dir.display()))?;
    let manifest_path = work_dir.join("run.json");
    // The sub-endgames held in RAM come out of the budget.
    let chunk_budget = Budget { mem: budget.mem.saturating_sub(caps_bytes), ..*budget };
    let chosen =
        Plan::choose(&layout, &chunk_budget).with_context(|| crate::gen::sub_endgames_note(budget, caps_bytes))?;
    let chosen_bits = chosen.block_bits;
    let fresh = |progress: &Progress, block_bits: u32| -> anyhow::Result<RunManifest> {
        let m = RunManifest { format: MANIFEST_FORMAT, run: material.to_string(), block_bits, passes: Vec::new() };
        job::save(&manifest_path, &m)?;
        progress.log(&format!("{material}: starting in {}", work_dir.display()));
        Ok(m)
    };
    let restart = |why: String, block_bits: u32| -> anyhow::Result<RunManifest> {
        progress.log(&format!("{material}: {why}; restarting this run"));
        std::fs::remove_dir_all(work_dir).with_context(|| format!("removing {}", work_dir.display()))?;
        std::fs::create_dir_all(work_dir).with_context(|| format!("creating {}", work_dir.display()))?;
        fresh(progress, block_bits)
    };
    let mut manifest: RunManifest = match job::load::<RunManifest>(&manifest_path) {
        Ok(Some(m)) if m.run == material.to_string() => {
            if m.block_bits != chosen_bits {
                progress.log(&format!(
                    "{material}: keeping the interrupted run's blocks of {} positions",
                    1u64 << m.block_bits
                ));
            }
            m
        }
        Ok(Some(m)) => restart(format!("{} belongs to run {}", manifest_path.display(), m.run), chosen_bits)?,
        Ok(None) => fresh(progress, chosen_bits)?,
        Err(e) => restart(format!("{e:#}"), chosen_bits)?,
    };
    let plan = if manifest.block_bits == chosen.block_bits { chosen } else { Plan::new(&layout, manifest.block_bits) };
    let ctx = RunContext {
        layout,
        plan,
        caps,
        work: work_dir.to_path_buf(),
        budget: chunk_budget,
        io_bytes: budget.block_bytes as usize,
        progress,
    };
    if !manifest.passes.is_empty() {
        progress.log(&format!("{material}: resuming after {} finished passes; checking them", manifest.passes.len()));
        match crate::repair::check_and_repair(&ctx, &manifest) {
            Ok(0) => {}
            Ok(n) => progress.log(&format!("{material}: rebuilt {n} damaged blocks")),
            Err(e) => {
                manifest = restart(format!("{e:#}"), ctx.plan.block_bits)?;
            }
        }
    }
    while !chains_complete(&manifest.passes) {
        let k = manifest.passes.len() as i32 - 1;
        let spec = PassSpec::of(k);
        let t = Instant::now();
        let r = run_pass(&ctx, &spec)?;
        for (name, sums) in spec.outputs.iter().zip(&r.sums) {
            save_sums(&sums_path(&ctx.work, name), sums)?;
        }
        manifest.passes.push(PassDone {
            pass: k,
            new: r.new,
            secs: t.elapsed().as_secs_f64(),
            bytes_read: r.bytes_read,
            bytes_written: r.bytes_written,
            stream_bytes: r.stream_bytes,
        });
        job::save(&manifest_path, &manifest)?;
        for name in obsolete_after(k) {
            std::fs::remove_file(bits_path(&ctx.work, &name)).ok();
            std::fs::remove_file(sums_path(&ctx.work, &name)).ok();
        }
    }
    let t = Instant::now();
    let (path, read, written) = crate::merge::write_table(&ctx, &manifest, out_dir)?;
    let report = RunReport {
        last_step: last_step(&manifest.passes),
        passes: manifest.passes,
        block_bits: ctx.plan.block_bits,
        white_chunks: ctx.plan.white.list.len(),
        black_chunks: ctx.plan.black.list.len(),
        merge_secs: t.elapsed().as_secs_f64(),
        merge_bytes_read: read,
        merge_bytes_written: written,
        path,
    };
    std::fs::remove_dir_all(work_dir).with_context(|| format!("removing {}", work_dir.display()))?;
    Ok(report)
}
