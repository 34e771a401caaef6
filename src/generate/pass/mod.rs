//! One pass of a run over all chunks of its side, out of core and resumable: a resume scan
//! of the pass's log ([`resume`]), then a reader -> workers -> writer pipeline: inputs read
//! and chunks computed by [`sources`], committed by [`commit`], shared out over the ranks
//! of a distributed job by [`distribute`]; pawn pushes read the levels above ([`pushes`]).
//!
//! Every pass reads whole tables of earlier passes and writes new ones (`t(k)` never
//! overwrites `t(k-2)`, or updates it in place only through the log), so a chunk can be
//! recomputed at any time with the same result. A chunk is finished when its record (block
//! checksums and gap-encoded new positions) is in the pass's log and its blocks still match.
//!
//! Owns: the pass's pipeline and files. May not import: `job`, `run`, `cli`.

mod commit;
mod distribute;
mod pushes;
mod resume;
mod sources;

pub use pushes::PassFinals;
#[cfg(feature = "mpi")]
pub use sources::ChunkWork;
pub use sources::{ChunkOutput, PassSources};

use crate::generate::level::LevelContext;
use crate::generate::plan::show_size;
use crate::pipeline::{self, BusyClock, Order};
use crate::solve::PassSpec;
use crate::work::deltalog::PassLog;
use commit::{Committer, PassCounts};
use resume::{resume_scan, InPlace};
use std::time::Instant;

/// Result of one pass.
pub struct PassResult {
    pub new: u64,
    /// Block checksums of each output table (in the spec's order), indexed by block id.
    pub sums: Vec<Vec<u64>>,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Bytes of the pass's delta streams.
    pub stream_bytes: u64,
}

#[cfg(feature = "mpi")]
/// The sources of a step's chunks on a worker rank of a distributed job, which reads the
/// pass's tables but never writes them: `t(k-2)`'s checksums for a step that updates it in
/// place (rank 0 has renamed its file already).
pub fn worker_sources(ctx: &LevelContext, spec: &PassSpec) -> anyhow::Result<PassSources> {
    let base = ctx.in_place_source(spec.pass).map(|t| ctx.sums(t)).transpose()?;
    PassSources::open(ctx, spec, base)
}

/// Runs (or resumes) one pass over all chunks of its side. In a distributed job the chunks
/// still to do are shared out over the ranks; this process commits every one.
pub fn run_pass(ctx: &LevelContext, spec: &PassSpec) -> anyhow::Result<PassResult> {
    let chunks = ctx.plan.chunks_of(spec.pass);
    let in_place = ctx.in_place_source(spec.pass).map(|source| InPlace::start(ctx, spec, source)).transpose()?;
    let sources = PassSources::open(ctx, spec, in_place.as_ref().map(|ip| ip.base.clone()))?;
    let outputs = spec.outputs.iter().map(|&t| ctx.open_table(t)).collect::<anyhow::Result<Vec<_>>>()?;
    let started = Instant::now();
    let state = resume_scan(ctx, spec, &outputs, in_place.as_ref(), &sources)?;
    let log = PassLog::open(&ctx.folder.log(spec.pass), state.log_len, state.streams_len)?;
    let todo: Vec<usize> = (0..chunks.list.len()).filter(|&i| !state.done[i]).collect();
    let threads = ctx.plan.pass_threads(spec.pass, &ctx.budget).max(1);
    ctx.progress.start(format!("{} {}", ctx.name(), spec.pass), chunks.list.len() as u64, "chunks");
    for _ in 0..chunks.list.len() - todo.len() {
        ctx.progress.inc();
    }
    let counts = PassCounts { new: state.new, stream_bytes: state.stream_bytes, ..PassCounts::default() };
    let sources = &sources;
    let committer = std::sync::Mutex::new(Committer { ctx, spec, outputs, in_place, sources, state, counts, log });
    let commit = |chunk: usize, out: ChunkOutput| -> anyhow::Result<()> {
        committer.lock().unwrap_or_else(|e| e.into_inner()).commit(chunk, out)
    };
    let (local, remote) = distribute::share_out(ctx, spec, &todo)?;
    let (reading, computing, committing) = (BusyClock::default(), BusyClock::default(), BusyClock::default());
    // Rendezvous channels: a chunk buffer exists only where it is being read, computed or
    // written, which keeps the pass within `pass_slots` buffers.
    let outcome = std::thread::scope(|scope| {
        let collecting = remote.as_ref().map(|r| scope.spawn(|| r.collect(&commit)));
        let local = pipeline::run(
            local.len(),
            threads,
            Order::Completion,
            |i| reading.time(|| sources.read(ctx, spec, local[i])),
            |i, input| computing.time(|| sources.compute(ctx, spec, local[i], input)),
            |i, out| committing.time(|| commit(local[i], out)),
        );
        match collecting {
            Some(handle) => local.and(handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))),
            None => local,
        }
    });
    if let Err(e) = outcome {
        ctx.progress.finish("failed");
        return Err(e);
    }
    let Committer { state, counts, mut log, .. } = committer.into_inner().unwrap_or_else(|e| e.into_inner());
    log.flush()?;
    let r = &counts;
    let kinds = match (r.sparse_chunks, r.unchanged_chunks) {
        (0, 0) => String::new(),
        (s, u) => format!(", chunks {s} sparse / {u} unchanged / {} dense", todo.len() as u64 - s - u),
    };
    let kinds = match &remote {
        Some(r) => format!("{kinds}, {}", r.line(local.len())),
        None => kinds,
    };
    // What bounds the pass: its one reader thread, its workers, or its one writer thread
    // (busy shares of the wall time; the workers' per thread).
    let wall = started.elapsed();
    let busy = format!(
        "busy: reader {:.0}%, workers {:.0}%, writer {:.0}%",
        100.0 * reading.share(wall, 1),
        100.0 * computing.share(wall, threads),
        100.0 * committing.share(wall, 1)
    );
    ctx.progress.finish(&format!(
        "{} new, read {}, written {}, {:.0} MB/s, {busy}{kinds}",
        r.new,
        show_size(r.bytes_read),
        show_size(r.bytes_written),
        (r.bytes_read + r.bytes_written) as f64 / 1e6 / wall.as_secs_f64().max(1e-9)
    ));
    Ok(PassResult {
        new: r.new,
        sums: state.sums,
        bytes_read: r.bytes_read,
        bytes_written: r.bytes_written,
        stream_bytes: r.stream_bytes,
    })
}
