//! One pass of a run over all chunks of its side, out of core and resumable: a resume scan
//! of the pass's log, then a reader -> workers -> writer pipeline (inputs prefetched, chunks
//! computed and combined by workers, blocks, streams and records written by the writer),
//! then the final sync.
//!
//! Every pass reads whole tables of earlier passes and writes new ones (`t(k)` never
//! overwrites `t(k-2)`), so a chunk can be recomputed at any time with the same result. A
//! chunk is finished when its record (block checksums and gap-encoded new positions) is in
//! the pass's log and its blocks still match.

use super::plan::{show_size, Budget, Chunk, Chunks, Plan};
use super::repair::{check_block, EarlierStreams};
use crate::chess::{Color, Square};
use crate::index::slices::MAX_PAWNS;
use crate::index::{Block, Layout, Level, Pawns};
use crate::pipeline::{self, Order};
use crate::progress::Progress;
use crate::solve::sparse::{self, Word};
use crate::solve::{
    combine, compute_chunk, obsolete_after, Captures, Eventual, Frame, Pass, PassSpec, PushTargets, WorkTable,
    EVENTUAL_CAPTURE_STEP,
};
use crate::work::bits::{block_sum, load_sums, BitFile};
use crate::work::deltalog::{self, BlockEntry, ChunkRecord, DeltaLog, PassStreams, StreamWriter};
use crate::work::gap::{self, GapEncoder};
use crate::work::{LevelFolder, RunFolder};
use anyhow::Context;
use std::time::Instant;

/// Everything the passes of one level of a run share.
pub struct LevelContext<'a> {
    pub layout: Layout,
    pub level: Level,
    /// The solved levels whose final bitbases this level's pawn pushes read (one and two
    /// levels up), with their folders.
    pub above: Vec<(Level, LevelFolder)>,
    pub plan: Plan,
    pub caps: &'a Captures,
    pub folder: LevelFolder,
    /// The budget for chunk buffers (the sub-endgames' bitbases already taken out).
    pub budget: Budget,
    /// Largest single read or write.
    pub io_bytes: usize,
    pub progress: &'a dyn Progress,
    /// Set when the level's conversions reach cursed positions (an eventual level, see
    /// [`PassSpec`]).
    pub eventual: Option<EventualSources<'a>>,
    /// How steps choose between the dense kernels and the sparse ones.
    pub steps: StepMode,
}

/// How a step computes its chunks: by the dense kernels over every configuration, or from
/// the previous step's new positions ([`crate::solve::sparse`]); both give the same bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepMode {
    /// Sparse where the previous step's new positions in a chunk are few enough.
    #[default]
    Auto,
    Dense,
    /// Sparse wherever the step allows it (for tests; memory grows with the new positions).
    Sparse,
}

impl std::str::FromStr for StepMode {
    type Err = String;
    fn from_str(s: &str) -> Result<StepMode, String> {
        match s {
            "auto" => Ok(StepMode::Auto),
            "dense" => Ok(StepMode::Dense),
            "sparse" => Ok(StepMode::Sparse),
            _ => Err(format!("unknown step mode {s:?} (auto, dense or sparse)")),
        }
    }
}

/// What a step does with one chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum ChunkWork {
    /// Its input gained nothing: the previous table of the chain, as it is.
    Unchanged,
    /// From the previous step's new positions in the chunk, if there are at most `limit`
    /// (`None`: however many); dense otherwise. The reader counts them.
    Sparse { limit: Option<u64> },
    /// The dense kernels over the whole chunk.
    #[default]
    Dense,
}

/// Auto mode takes a chunk sparse when the previous step found at most `1 /
/// SPARSE_DENSITY[mover]` of its positions (which also keeps the reader's list of them, 16
/// bytes per word, within a chunk buffer). White's sparse step only marks the predecessors
/// of each new position (about 40 writes); black's evaluates every move of each of those
/// (about 40 x 40 random reads), so it pays only when the new positions are much sparser.
/// Measured on KQRvKQR (`docs/BENCHMARKS.md`, "Sparse steps"): a black step with 1 new
/// position in 1,900 took 11.3 s sparse against 7.0 s dense, a white one with 1 in 2,700
/// took 1.1 s against 3-4 s for dense white steps. (The count comes from decoding the streams: their length says
/// little, a sparse stream spends a byte per 255 positions skipped.)
const SPARSE_DENSITY: [u64; 2] = [128, 4096];

/// Where an eventual level's conversions look up positions won with or without the rule.
pub struct EventualSources<'a> {
    /// The sub-endgames' eventual bitbases (the rule ones for runs without cursed positions).
    pub caps: &'a Captures,
    /// Per level in `above`: whether it has cursed positions (its `final-*-inf` tables are
    /// read instead of its final bitbases).
    pub above_cursed: Vec<bool>,
}

/// The levels a level's pawn pushes lead to (one and two levels up, solved before it).
pub(super) fn levels_above(layout: &Layout, level: &Level) -> Vec<Level> {
    let up = |l: &Level| l.number == level.number + 1 || l.number == level.number + 2;
    layout.levels().into_iter().filter(|l| layout.has_pawns() && up(l)).collect()
}

/// The sub-endgame bitbases a run's captures read: the final ones, and the eventual ones of
/// sub-endgames with cursed positions.
pub struct LoadedCaptures {
    pub rule: Captures,
    pub eventual: Option<Captures>,
    /// RAM they hold (out of the budget).
    pub bytes: u64,
}

impl<'a> LevelContext<'a> {
    /// The context of level `level` of a run whose work folder is `run`: the levels above it
    /// that its pawn pushes read, and (when a sub-endgame or a level above has cursed
    /// positions) where its conversions look up eventual wins; the budget less the
    /// captures' RAM.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        layout: &Layout,
        level: Level,
        plan: Plan,
        run: &RunFolder,
        caps: &'a LoadedCaptures,
        above_cursed: Vec<bool>,
        budget: &Budget,
        steps: StepMode,
        progress: &'a dyn Progress,
    ) -> LevelContext<'a> {
        let above = levels_above(layout, &level).into_iter().map(|l| (l, run.level(l.number))).collect();
        let eventual = (caps.eventual.is_some() || above_cursed.contains(&true))
            .then(|| EventualSources { caps: caps.eventual.as_ref().unwrap_or(&caps.rule), above_cursed });
        LevelContext {
            layout: layout.clone(),
            level,
            above,
            plan,
            caps: &caps.rule,
            folder: run.level(level.number),
            budget: Budget { mem: budget.mem.saturating_sub(caps.bytes), ..*budget },
            io_bytes: budget.block_bytes as usize,
            progress,
            eventual,
            steps,
        }
    }
}

impl LevelContext<'_> {
    /// Whether the level is eventual: its init passes also write `c∞` and `d∞`.
    pub fn is_eventual(&self) -> bool {
        self.eventual.is_some()
    }

    /// The pass's tables at this level.
    pub fn spec(&self, pass: Pass) -> PassSpec {
        PassSpec::of(pass, self.is_eventual())
    }

    /// The table a step updates in place ([`InPlace`]): `t(k-2)`, the previous table of its
    /// chain, from step 2 on wherever no later pass reads it (not in steps 101 and 102, which
    /// keep `t99` and `t100` for the merge).
    pub fn in_place_source(&self, pass: Pass) -> Option<WorkTable> {
        let Pass::Step(k) = pass else { return None };
        let previous = WorkTable::chain(k as i32 - 2);
        let spec = self.spec(pass);
        (k >= 2
            && spec.combine.first() == Some(&previous)
            && obsolete_after(pass, self.is_eventual()).contains(&previous))
        .then_some(previous)
    }

    /// An eventual level's conversion sources for a chunk, given the push words read for it
    /// (`rule`, and `eventual` when a level above has cursed positions, else the same words
    /// serve); `None` for a level that is not eventual.
    pub(super) fn eventual_with<'b>(
        &'b self,
        rule: &'b PushBuffers,
        eventual: &'b PushBuffers,
    ) -> Option<Eventual<'b>> {
        self.eventual.as_ref().map(|e| {
            let pushes = if e.above_cursed.contains(&true) { eventual } else { rule };
            Eventual { caps: e.caps, pushes: pushes.targets() }
        })
    }

    /// The run's name in progress lines, with the level for a run with pawns (`KRPvKR/5`).
    pub fn name(&self) -> String {
        if self.layout.has_pawns() {
            format!("{}/{}", self.layout.material, self.level.number)
        } else {
            self.layout.material.to_string()
        }
    }

    /// Storage blocks per table of the level.
    pub fn n_blocks(&self) -> usize {
        (self.level.n_slots >> self.plan.block_bits) as usize
    }

    /// Words per storage block.
    pub fn block_words(&self) -> usize {
        1 << (self.plan.block_bits - 6)
    }

    /// Opens (creating if needed) a work table.
    pub fn open_table(&self, table: WorkTable) -> anyhow::Result<BitFile> {
        Ok(BitFile::open(&self.folder.bits(table), self.level.n_words(), self.io_bytes)?)
    }

    /// Opens a finished work table with its block checksums.
    pub fn open_finished(&self, table: WorkTable) -> anyhow::Result<(BitFile, Vec<u64>)> {
        Ok((self.open_table(table)?, load_sums(&self.folder.sums(table), self.n_blocks())?))
    }
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
    /// Chunks this process computed sparse, and chunks it carried over unchanged.
    pub sparse_chunks: u64,
    pub unchanged_chunks: u64,
}

/// What the reader hands a worker for one chunk.
#[derive(Default)]
pub(super) struct ChunkInput {
    /// The chunk's words of the tables the pass reads whole (for an unchanged chunk, the
    /// previous table of the chain).
    tables: Vec<Vec<u64>>,
    pushes: PushBuffers,
    pushes_eventual: PushBuffers,
    /// For a sparse chunk: the previous step's new positions in it, in word order.
    new_prev: Vec<Word>,
    /// How the chunk is computed (a sparse chunk with too many new positions turns dense).
    work: ChunkWork,
}

/// What a worker hands the writer for one chunk: the output tables (chunk-local words), the
/// gap-encoded new positions of each block, how many there are, and how it was computed.
pub(super) struct ChunkOutput {
    pub tables: Vec<Vec<u64>>,
    pub streams: Vec<Vec<u8>>,
    pub new_count: u64,
    pub work: ChunkWork,
}

/// Where a pass stands: the chunks finished (by an earlier process too), the block
/// checksums of the outputs so far, and the counts.
struct PassState {
    done: Vec<bool>,
    sums: Vec<Vec<u64>>,
    result: PassResult,
    /// Bytes of the log and the stream file that finished chunks cover.
    log_len: u64,
    streams_len: u64,
}

/// Runs (or resumes) one pass over all chunks of its side. In a distributed job the chunks
/// still to do are shared out over the ranks (`cluster`); this process commits every one.
pub fn run_pass(ctx: &LevelContext, spec: &PassSpec) -> anyhow::Result<PassResult> {
    let chunks: &Chunks = ctx.plan.chunks_of(spec.pass);
    let in_place = ctx.in_place_source(spec.pass).map(|source| InPlace::start(ctx, spec, source)).transpose()?;
    let sources = PassSources::open(ctx, spec, in_place.as_ref().map(|ip| ip.base.clone()))?;
    let outputs = spec.outputs.iter().map(|&t| ctx.open_table(t)).collect::<anyhow::Result<Vec<_>>>()?;
    let started = Instant::now();
    let state = resume_scan(ctx, spec, chunks, &outputs, in_place.as_ref())?;
    let log = DeltaLog::open(&ctx.folder.log(spec.pass), state.log_len)?;
    let streams = StreamWriter::open(&ctx.folder.streams(spec.pass), state.streams_len)?;
    let todo: Vec<usize> = (0..chunks.list.len()).filter(|&i| !state.done[i]).collect();
    let threads = ctx.plan.pass_threads(spec.pass, &ctx.budget).max(1);
    ctx.progress.start(format!("{} {}", ctx.name(), spec.pass), chunks.list.len() as u64, "chunks");
    for _ in 0..chunks.list.len() - todo.len() {
        ctx.progress.inc();
    }
    let committer = std::sync::Mutex::new(Committer {
        ctx,
        spec,
        chunks,
        sources: &sources,
        outputs,
        in_place,
        state,
        log,
        streams,
    });
    let commit = |chunk: usize, out: ChunkOutput| -> anyhow::Result<()> {
        committer.lock().unwrap_or_else(|e| e.into_inner()).commit(chunk, out)?;
        #[cfg(feature = "mpi")]
        if let Some(world) = super::cluster::world() {
            super::cluster::chunk_hook(world)?;
        }
        Ok(())
    };
    let (local, remote) = share_out(ctx, spec, &todo)?;
    // Rendezvous channels: a chunk buffer exists only where it is being read, computed or
    // written, which keeps the pass within `pass_slots` buffers.
    let outcome = std::thread::scope(|scope| {
        let collecting = remote.as_ref().map(|r| scope.spawn(|| r.collect(&commit)));
        let local = pipeline::run(
            local.len(),
            threads,
            Order::Completion,
            |i| sources.read(ctx, spec, local[i]),
            |i, input| sources.compute(ctx, spec, local[i], input),
            |i, out| commit(local[i], out),
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
    let Committer { state, mut streams, .. } = committer.into_inner().unwrap_or_else(|e| e.into_inner());
    // Flushed, not synced: a kill loses nothing of what the page cache holds, and after a
    // power loss the resume checks every block, record and stream against its checksum.
    streams.flush()?;
    let r = &state.result;
    let kinds = match (r.sparse_chunks, r.unchanged_chunks) {
        (0, 0) => String::new(),
        (s, u) => format!(", chunks {s} sparse / {u} unchanged / {} dense", todo.len() as u64 - s - u),
    };
    let kinds = match &remote {
        Some(r) => format!("{kinds}, {}", r.line(local.len())),
        None => kinds,
    };
    ctx.progress.finish(&format!(
        "{} new, read {}, written {}, {:.0} MB/s{kinds}",
        r.new,
        show_size(r.bytes_read),
        show_size(r.bytes_written),
        (r.bytes_read + r.bytes_written) as f64 / 1e6 / started.elapsed().as_secs_f64().max(1e-9)
    ));
    Ok(PassResult { sums: state.sums, ..state.result })
}

/// In a distributed job: the chunks of a pass the other ranks compute, which this process
/// collects and commits.
#[cfg(feature = "mpi")]
struct Remote {
    world: &'static super::cluster::World,
    chunks: usize,
    reply_tag: i32,
}

/// Without MPI there is no other rank.
#[cfg(not(feature = "mpi"))]
enum Remote {}

#[cfg(feature = "mpi")]
impl Remote {
    fn collect(&self, commit: &(dyn Fn(usize, ChunkOutput) -> anyhow::Result<()> + Sync)) -> anyhow::Result<()> {
        self.world.collect(self.chunks, self.reply_tag, commit)
    }

    /// The pass line's note on the ranks.
    fn line(&self, local: usize) -> String {
        self.world.chunks_line(local, self.chunks)
    }
}

#[cfg(not(feature = "mpi"))]
impl Remote {
    fn collect(&self, _: &(dyn Fn(usize, ChunkOutput) -> anyhow::Result<()> + Sync)) -> anyhow::Result<()> {
        match *self {}
    }

    fn line(&self, _: usize) -> String {
        match *self {}
    }
}

/// The chunks of `todo` this process computes, and in a distributed job those it gave the
/// other ranks.
fn share_out(ctx: &LevelContext, spec: &PassSpec, todo: &[usize]) -> anyhow::Result<(Vec<usize>, Option<Remote>)> {
    #[cfg(feature = "mpi")]
    if let Some(world) = super::cluster::world() {
        let (local, chunks, reply_tag) = world.share_out(ctx, spec, todo)?;
        return Ok((local, (chunks > 0).then_some(Remote { world, chunks, reply_tag })));
    }
    let _ = (ctx, spec);
    Ok((todo.to_vec(), None))
}

/// What a pass's chunks read, opened once by each process that computes chunks of the pass
/// (the coordinating one and, in a distributed job, each worker rank).
pub(super) struct PassSources {
    /// The tables the pass reads whole, with their block checksums.
    inputs: Vec<(BitFile, Vec<u64>)>,
    /// The tables its outputs are combined with (for an in-place step the first is the
    /// output's own file, checked against the checksums of `t(k-2)`).
    combined: Vec<(BitFile, Vec<u64>)>,
    finals: Vec<Final>,
    finals_eventual: Vec<Final>,
    /// How each chunk is computed, and the previous step's streams for the sparse ones.
    work: Vec<ChunkWork>,
    new_prev: Option<PassStreams>,
    in_place: bool,
}

impl PassSources {
    /// Opens the pass's sources; `in_place_base` holds `t(k-2)`'s checksums for a step that
    /// updates it in place (after [`InPlace::start`] has renamed it).
    pub(super) fn open(ctx: &LevelContext, spec: &PassSpec, in_place_base: Option<Vec<u64>>) -> anyhow::Result<Self> {
        let in_place = in_place_base.is_some();
        let inputs = spec.inputs.iter().map(|&t| ctx.open_finished(t)).collect::<anyhow::Result<Vec<_>>>()?;
        let mut base = in_place_base;
        let combined = spec
            .combine
            .iter()
            .enumerate()
            .map(|(i, &t)| match base.take().filter(|_| i == 0) {
                // The previous table is the output's file until each chunk is committed.
                Some(sums) => Ok((ctx.open_table(spec.outputs[0])?, sums)),
                None => ctx.open_finished(t),
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let finals = open_finals(ctx, spec.pass, false)?;
        let finals_eventual = open_finals(ctx, spec.pass, true)?;
        let (work, new_prev) = chunk_work(ctx, spec.pass, ctx.plan.chunks_of(spec.pass))?;
        Ok(PassSources { inputs, combined, finals, finals_eventual, work, new_prev, in_place })
    }

    /// The reader's part of a chunk: the words it needs, by how it is computed.
    pub(super) fn read(&self, ctx: &LevelContext, spec: &PassSpec, chunk: usize) -> anyhow::Result<ChunkInput> {
        let chunks = ctx.plan.chunks_of(spec.pass);
        let (ch, words) = (&chunks.list[chunk], chunks.buffer_words);
        let mut input = ChunkInput { work: self.work[chunk], ..ChunkInput::default() };
        if let ChunkWork::Sparse { limit } = input.work {
            match read_new_positions(ch, self.new_prev.as_ref().expect("streams of the last step"), limit)? {
                Some(list) => input.new_prev = list,
                None => input.work = ChunkWork::Dense,
            }
        }
        match input.work {
            // Updated in place, it stays as it is.
            ChunkWork::Unchanged if self.in_place => {}
            // Its output is the previous table of the chain, as it is.
            ChunkWork::Unchanged => input.tables = read_inputs(ch, &self.combined[..1], words)?,
            // Black's moves are evaluated in `t(k-1)`; white's need only the new positions.
            ChunkWork::Sparse { .. } if spec.pass.mover() == Color::Black => {
                input.tables = read_inputs(ch, &self.inputs, words)?
            }
            ChunkWork::Sparse { .. } => {}
            ChunkWork::Dense => {
                input.tables = read_inputs(ch, &self.inputs, words)?;
                input.pushes = read_pushes(ctx, spec.pass, ch, &self.finals, words)?;
                input.pushes_eventual = read_pushes(ctx, spec.pass, ch, &self.finals_eventual, words)?;
            }
        }
        Ok(input)
    }

    /// The worker's part of a chunk: its output tables and the streams of its new positions.
    pub(super) fn compute(
        &self,
        ctx: &LevelContext,
        spec: &PassSpec,
        chunk: usize,
        input: ChunkInput,
    ) -> anyhow::Result<ChunkOutput> {
        let chunks = ctx.plan.chunks_of(spec.pass);
        let (ch, words) = (&chunks.list[chunk], chunks.buffer_words);
        let io_words = (ctx.io_bytes / 8).max(1);
        let frame = || Frame::new(&ctx.layout, &chunks.scheme, ch.key, ch.slice);
        let out = match input.work {
            ChunkWork::Unchanged => {
                let streams = vec![Vec::new(); ch.blocks.len()];
                return Ok(ChunkOutput { tables: input.tables, streams, new_count: 0, work: input.work });
            }
            ChunkWork::Sparse { .. } => {
                let frame = frame();
                let mut out = vec![0u64; words];
                match spec.pass.mover() {
                    Color::White => sparse::white_reached(&frame, &input.new_prev, &mut out),
                    Color::Black => {
                        let candidates = sparse::black_candidates(&frame, &input.new_prev, words);
                        sparse::black_reached(&frame, &input.tables[0], &candidates, &mut out);
                    }
                }
                vec![out]
            }
            ChunkWork::Dense => {
                let eventual = ctx.eventual_with(&input.pushes, &input.pushes_eventual);
                let targets = input.pushes.targets();
                compute_chunk(spec.pass, &frame(), ctx.caps, &targets, eventual.as_ref(), words, input.tables)
            }
        };
        let mut done = finish_chunk(spec.pass, &ch.blocks, &self.combined, out, io_words)?;
        done.work = input.work;
        Ok(done)
    }
}

/// The writer's side of a pass: commits computed chunks (this process's and, in a
/// distributed job, the other ranks'), one at a time.
struct Committer<'a> {
    ctx: &'a LevelContext<'a>,
    spec: &'a PassSpec,
    chunks: &'a Chunks,
    sources: &'a PassSources,
    outputs: Vec<BitFile>,
    in_place: Option<InPlace>,
    state: PassState,
    log: DeltaLog,
    streams: StreamWriter,
}

impl Committer<'_> {
    /// Writes chunk `chunk`'s blocks, streams and record, and counts it.
    fn commit(&mut self, chunk: usize, out: ChunkOutput) -> anyhow::Result<()> {
        let ch = &self.chunks.list[chunk];
        let state = &mut self.state;
        let written = match &self.in_place {
            Some(ip) => commit_in_place(
                chunk,
                ch,
                &out,
                &self.outputs[0],
                ip,
                &mut state.sums,
                &mut self.log,
                &mut self.streams,
            )?,
            None => commit_chunk(chunk, ch, &out, &self.outputs, &mut state.sums, &mut self.log, &mut self.streams)?,
        };
        test_stop_hook()?;
        let r = &mut state.result;
        let chunk_bytes = ch.blocks.iter().map(|b| b.words as u64 * 8).sum::<u64>();
        let tables_read = (self.sources.inputs.len() + self.sources.combined.len()) as u64;
        r.new += out.new_count;
        r.bytes_read += chunk_bytes
            * match out.work {
                ChunkWork::Unchanged if self.in_place.is_some() => 0,
                ChunkWork::Unchanged => 1,
                ChunkWork::Sparse { .. } if self.spec.pass.mover() == Color::White => {
                    self.sources.combined.len() as u64
                }
                _ => tables_read,
            };
        r.bytes_written += written.blocks + written.record + written.streams;
        r.stream_bytes += written.streams;
        match out.work {
            ChunkWork::Sparse { .. } => r.sparse_chunks += 1,
            ChunkWork::Unchanged => r.unchanged_chunks += 1,
            ChunkWork::Dense => {}
        }
        self.ctx.progress.inc();
        Ok(())
    }
}

/// The resume scan: the chunks an interrupted process finished, i.e. the log's records whose
/// blocks and streams still match, up to the first that does not (recomputed from there).
fn resume_scan(
    ctx: &LevelContext,
    spec: &PassSpec,
    chunks: &Chunks,
    outputs: &[BitFile],
    in_place: Option<&InPlace>,
) -> anyhow::Result<PassState> {
    let n_blocks = ctx.n_blocks();
    let streams_file = ctx.folder.streams(spec.pass);
    let scan = deltalog::scan(&ctx.folder.log(spec.pass))?;
    let mut state = PassState {
        done: vec![false; chunks.list.len()],
        sums: match in_place {
            Some(ip) => vec![ip.base.clone()],
            None => vec![vec![0u64; n_blocks]; outputs.len()],
        },
        result: PassResult {
            new: 0,
            sums: Vec::new(),
            bytes_read: 0,
            bytes_written: 0,
            stream_bytes: 0,
            sparse_chunks: 0,
            unchanged_chunks: 0,
        },
        log_len: 0,
        streams_len: 0,
    };
    let mut damage = scan.damage.as_ref().map(|d| d.to_string());
    for rec in &scan.records {
        let checked = match in_place {
            Some(ip) => ip.roll_forward(ctx, spec.pass, chunks, &outputs[0], &mut state.sums, rec, &streams_file),
            None => check_record(chunks, outputs, &mut state.sums, rec, &streams_file),
        };
        match checked {
            Ok(()) => {
                state.done[rec.chunk as usize] = true;
                state.result.new += rec.new_count;
                state.result.stream_bytes += rec.streams_len;
                state.log_len = rec.end;
                state.streams_len = rec.streams_offset + rec.streams_len;
            }
            Err(e) => {
                damage = Some(format!("{e:#}"));
                break;
            }
        }
    }
    if let Some(ip) = in_place.filter(|ip| ip.resumed) {
        ip.check_the_rest(ctx, spec.pass, chunks, &outputs[0], &state.done)?;
    }
    let material = &ctx.layout.material;
    let pass = spec.pass.number();
    if let Some(d) = &damage {
        ctx.progress.log(&format!("{material}: pass {pass}: damaged work data, recomputing from there: {d}"));
    }
    let resumed = state.done.iter().filter(|&&d| d).count();
    if resumed > 0 {
        ctx.progress.log(&format!(
            "{material}: pass {pass}: resuming after {resumed} of {} finished chunks",
            chunks.list.len()
        ));
    }
    Ok(state)
}

/// Accepts a record of an interrupted pass if it names a chunk of this plan with its exact
/// blocks, and every output block and its streams still match the record's checksums.
fn check_record(
    chunks: &Chunks,
    outputs: &[BitFile],
    sums: &mut [Vec<u64>],
    rec: &ChunkRecord,
    streams: &std::path::Path,
) -> anyhow::Result<()> {
    let ch = chunk_of_record(chunks, rec, outputs.len())?;
    let mut buf = vec![0u64; chunks.buffer_words];
    for (o, file) in outputs.iter().enumerate() {
        for (b, e) in ch.blocks.iter().zip(&rec.blocks) {
            sums[o][b.id] = e.sums[o];
        }
        file.read_blocks(&ch.blocks, &mut buf, &sums[o])?;
    }
    let file = std::fs::File::open(streams).with_context(|| format!("opening {}", streams.display()))?;
    Ok(deltalog::check_streams(&file, streams, rec)?)
}

/// The chunk a record names, if the record matches it (the same blocks, a checksum for each
/// of `n_outputs` tables).
fn chunk_of_record<'c>(chunks: &'c Chunks, rec: &ChunkRecord, n_outputs: usize) -> anyhow::Result<&'c Chunk> {
    let ch = chunks.list.get(rec.chunk as usize).context("record names an unknown chunk")?;
    anyhow::ensure!(
        ch.blocks.len() == rec.blocks.len()
            && ch.blocks.iter().zip(&rec.blocks).all(|(b, e)| b.id == e.id as usize && e.sums.len() == n_outputs),
        "record of chunk {} does not match the plan",
        rec.chunk
    );
    Ok(ch)
}

/// A step that updates the previous table of its chain in place: `t(k-2)`'s file becomes
/// `t(k)`'s when the step starts, and each chunk's new positions go to the log (streams,
/// then the record with the checksums its blocks will have) before they are OR-ed into its
/// blocks. So a chunk with a record is rolled forward on resume (OR is idempotent) and a
/// chunk without one still holds `t(k-2)`; a damaged block is rebuilt from the logs of the
/// passes before. Only the blocks that gain positions are written: late steps, which find
/// a few positions in a few chunks, no longer copy whole tables.
pub(super) struct InPlace {
    source: WorkTable,
    /// `t(k-2)`'s block checksums: those of every block no record covers.
    base: Vec<u64>,
    /// Whether an earlier process had started the step.
    resumed: bool,
    /// The earlier passes' streams, opened when a first damaged block is rebuilt.
    earlier: std::sync::OnceLock<EarlierStreams>,
}

/// The block checksums of `t(k-2)`, which an in-place step's chunks are read against.
pub(super) fn base_sums(ctx: &LevelContext, source: WorkTable) -> anyhow::Result<Vec<u64>> {
    Ok(load_sums(&ctx.folder.sums(source), ctx.n_blocks())?)
}

impl InPlace {
    /// Takes over `source`'s file as the step's output, or finds it taken over by an
    /// earlier process.
    fn start(ctx: &LevelContext, spec: &PassSpec, source: WorkTable) -> anyhow::Result<InPlace> {
        let (from, to) = (ctx.folder.bits(source), ctx.folder.bits(spec.outputs[0]));
        let base = base_sums(ctx, source)?;
        let resumed = !from.exists();
        if resumed {
            anyhow::ensure!(to.exists(), "{} is missing (step {} updates it in place)", to.display(), spec.pass);
        } else {
            // Not started: whatever bears the step's names is stale (a recycled table).
            for stale in [to.clone(), ctx.folder.log(spec.pass), ctx.folder.streams(spec.pass)] {
                match std::fs::remove_file(&stale) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(e).with_context(|| format!("removing {}", stale.display()))
                    }
                    _ => {}
                }
            }
            std::fs::rename(&from, &to).with_context(|| format!("renaming {} to {}", from.display(), to.display()))?;
        }
        Ok(InPlace { source, base, resumed, earlier: std::sync::OnceLock::new() })
    }

    /// Block `block` of `t(k-2)`, rebuilt from the streams of the passes before `pass`.
    fn rebuilt(&self, ctx: &LevelContext, pass: Pass, block: usize) -> anyhow::Result<Vec<u64>> {
        let earlier = match self.earlier.get() {
            Some(e) => e,
            None => {
                let opened = EarlierStreams::open(ctx, pass)?;
                self.earlier.get_or_init(|| opened)
            }
        };
        earlier.rebuild(ctx, self.source, block)
    }

    /// Resume: OR-s a record's new positions into its chunk's blocks (again) and checks
    /// them against the record; a block that does not match is rebuilt from the logs.
    #[allow(clippy::too_many_arguments)]
    fn roll_forward(
        &self,
        ctx: &LevelContext,
        pass: Pass,
        chunks: &Chunks,
        file: &BitFile,
        sums: &mut [Vec<u64>],
        rec: &ChunkRecord,
        streams_path: &std::path::Path,
    ) -> anyhow::Result<()> {
        let ch = chunk_of_record(chunks, rec, 1)?;
        let streams_file =
            std::fs::File::open(streams_path).with_context(|| format!("opening {}", streams_path.display()))?;
        let streams = deltalog::read_streams(&streams_file, streams_path, rec)?;
        for ((b, e), stream) in ch.blocks.iter().zip(&rec.blocks).zip(&streams) {
            let one = [Block { local_word: 0, ..*b }];
            let mut words = vec![0u64; b.words];
            file.read_blocks_unchecked(&one, &mut words)?;
            gap::set_positions(&mut words, stream)?;
            if block_sum(&words) != e.sums[0] {
                let damage = crate::work::StorageError::ChecksumMismatch {
                    path: file.path.clone(),
                    block: b.id,
                    offset: b.slot_word as u64 * 8,
                };
                ctx.progress.log(&format!("{}: {damage}; rebuilding the block", ctx.layout.material));
                words = self.rebuilt(ctx, pass, b.id)?;
                gap::set_positions(&mut words, stream)?;
                anyhow::ensure!(
                    block_sum(&words) == e.sums[0],
                    "rebuilt block {} of {} does not match its record",
                    b.id,
                    file.path.display()
                );
            }
            if !stream.is_empty() || self.base[b.id] != e.sums[0] {
                file.put_blocks(&one, &words)?;
            }
            sums[0][b.id] = e.sums[0];
        }
        Ok(())
    }

    /// Resume: checks the blocks of the chunks not finished against `t(k-2)`'s checksums,
    /// rebuilding a damaged one from the logs.
    fn check_the_rest(
        &self,
        ctx: &LevelContext,
        pass: Pass,
        chunks: &Chunks,
        file: &BitFile,
        done: &[bool],
    ) -> anyhow::Result<()> {
        for ch in chunks.list.iter().zip(done).filter(|(_, &d)| !d).map(|(ch, _)| ch) {
            for b in &ch.blocks {
                check_block(ctx, file, b.id, &self.base, || self.rebuilt(ctx, pass, b.id))?;
            }
        }
        Ok(())
    }
}

/// A solved level's final bitbase, open for reading.
pub struct Final {
    level: Level,
    file: BitFile,
    sums: Vec<u64>,
}

/// The final bitbases an init pass's pawn pushes read: after white's pushes black is to move,
/// after black's white is.
/// With `eventual`, the positions won with or without the rule, for an eventual level with a
/// cursed level above (none otherwise: the final bitbases serve, see
/// [`LevelContext::eventual_with`]).
pub(super) fn open_finals(ctx: &LevelContext, pass: Pass, eventual: bool) -> anyhow::Result<Vec<Final>> {
    let above_cursed = ctx.eventual.as_ref().map(|e| e.above_cursed.as_slice()).unwrap_or_default();
    if !pass.is_init() || !ctx.layout.has_pawns() || (eventual && !above_cursed.contains(&true)) {
        return Ok(Vec::new());
    }
    let stm = pass.mover().other();
    ctx.above
        .iter()
        .enumerate()
        .map(|(i, (level, folder))| {
            let cursed = eventual && above_cursed.get(i).copied().unwrap_or(false);
            let table = if cursed { WorkTable::FinalEventual(stm) } else { WorkTable::Final(stm) };
            let file = BitFile::open(&folder.bits(table), level.n_words(), ctx.io_bytes)?;
            let sums = load_sums(&folder.sums(table), (level.n_slots >> ctx.plan.block_bits) as usize)?;
            Ok(Final { level: *level, file, sums })
        })
        .collect()
}

/// The words of the slices a chunk's pawn pushes lead to, over the chunk.
#[derive(Default)]
pub(super) struct PushBuffers {
    single: [Option<Vec<u64>>; MAX_PAWNS],
    double: [Option<Vec<u64>>; MAX_PAWNS],
}

impl PushBuffers {
    pub(super) fn targets(&self) -> PushTargets<'_> {
        PushTargets {
            single: std::array::from_fn(|i| self.single[i].as_deref()),
            double: std::array::from_fn(|i| self.double[i].as_deref()),
        }
    }
}

/// The reader's part for pawn pushes: for each pawn of the mover (init passes), the words of
/// the same chunk in the slices its push and double step lead to, from the final bitbases of
/// the levels above. A push onto another pawn, or a promotion, has none.
pub(super) fn read_pushes(
    ctx: &LevelContext,
    pass: Pass,
    ch: &Chunk,
    finals: &[Final],
    words: usize,
) -> anyhow::Result<PushBuffers> {
    let mut out = PushBuffers::default();
    let (Some(slices), Some(slice)) = (&ctx.layout.slices, ch.slice) else { return Ok(out) };
    if finals.is_empty() {
        return Ok(out);
    }
    let mover = pass.mover();
    let pawns = slices.pawns(slice);
    let step: i8 = if mover == Color::White { 8 } else { -8 };
    let scheme = &ctx.plan.chunks_of(pass).scheme;
    let read = |target: Pawns| -> anyhow::Result<Option<Vec<u64>>> {
        let Some(s) = slices.find(&target) else { return Ok(None) };
        let f =
            finals.iter().find(|f| f.level.number == target.level()).context("a push leads to a level not solved")?;
        let blocks = scheme.blocks(&ctx.layout, ch.key, Some(s), f.level.first_slot);
        let mut buf = vec![0u64; words];
        f.file.read_blocks(&blocks, &mut buf, &f.sums)?;
        Ok(Some(buf))
    };
    for (i, &p) in pawns.of(mover).iter().enumerate() {
        let one = (p as i8 + step) as Square;
        if !(8..56).contains(&one) || pawns.occupied() & (1 << one) != 0 {
            continue;
        }
        out.single[i] = read(moved(&pawns, p, one))?;
        let start = if mover == Color::White { (8..16).contains(&p) } else { (48..56).contains(&p) };
        let two = (p as i8 + 2 * step) as Square;
        if start && pawns.occupied() & (1 << two) == 0 {
            out.double[i] = read(moved(&pawns, p, two))?;
        }
    }
    Ok(out)
}

/// The pawns with the one on `from` moved to `to`.
fn moved(pawns: &Pawns, from: Square, to: Square) -> Pawns {
    let mut sq = pawns.sq;
    for s in &mut sq[..pawns.n] {
        if *s == from {
            *s = to;
        }
    }
    Pawns::new(&sq[..pawns.n_white], &sq[pawns.n_white..pawns.n])
}

/// What step `k` does with each chunk, and the previous step's streams when some chunk is
/// sparse.
///
/// From step 3 on, the new positions of step `k` are predecessors of those of step `k-1`
/// ([`crate::solve::sparse`]). A chunk whose blocks gained nothing in step `k-1` has nothing
/// to find: `t(k-1)` equals `t(k-3)` there, so the mover reaches what it reached in step
/// `k-2`, all of it in `t(k-2)` already (the mover's moves stay inside its chunk). Not step
/// 2: `t0` holds only the mates, not what black reached from `t(-1)` (the positions whose
/// only moves are losing captures or pawn moves). Nor steps 102 and 103 of an eventual
/// level, where `d∞` and `c∞` come in.
fn chunk_work(
    ctx: &LevelContext,
    pass: Pass,
    chunks: &Chunks,
) -> anyhow::Result<(Vec<ChunkWork>, Option<PassStreams>)> {
    let new_extra = |k: u16| ctx.is_eventual() && (k == EVENTUAL_CAPTURE_STEP - 1 || k == EVENTUAL_CAPTURE_STEP);
    let k = match pass {
        Pass::Step(k) if k >= 3 && !new_extra(k) => k,
        _ => return Ok((vec![ChunkWork::Dense; chunks.list.len()], None)),
    };
    // The previous step's records say which blocks gained new positions (a block no record
    // covers counts as changed).
    let log = ctx.folder.log(Pass::Step(k - 1));
    let scan = deltalog::scan(&log)?;
    if let Some(damage) = scan.damage {
        return Err(damage)
            .context("delta log of the previous step damaged (delete the work folder to recompute the run)");
    }
    let mut stream_len = vec![u64::MAX; ctx.n_blocks()];
    for e in scan.records.iter().flat_map(|r| &r.blocks) {
        if let Some(len) = stream_len.get_mut(e.id as usize) {
            *len = e.stream_len as u64;
        }
    }
    let work: Vec<ChunkWork> = chunks
        .list
        .iter()
        .map(|ch| {
            let bytes = ch.blocks.iter().fold(0u64, |sum, b| sum.saturating_add(stream_len[b.id]));
            let positions = ch.blocks.iter().map(|b| b.words as u64 * 64).sum::<u64>();
            match ctx.steps {
                _ if bytes == 0 => ChunkWork::Unchanged,
                _ if bytes == u64::MAX => ChunkWork::Dense,
                StepMode::Dense => ChunkWork::Dense,
                StepMode::Sparse => ChunkWork::Sparse { limit: None },
                StepMode::Auto => ChunkWork::Sparse { limit: Some(positions / SPARSE_DENSITY[pass.mover().index()]) },
            }
        })
        .collect();
    let streams = match work.iter().any(|w| matches!(w, ChunkWork::Sparse { .. })) {
        // The log read once: its records say what each chunk needs and index the streams.
        true => Some(PassStreams::from_scan(&log, scan, ctx.n_blocks())?),
        false => None,
    };
    Ok((work, streams))
}

/// The reader's part for a sparse chunk: the previous step's new positions in its blocks, as
/// chunk-local words in increasing order; `None` if there are more than `limit`.
fn read_new_positions(ch: &Chunk, streams: &PassStreams, limit: Option<u64>) -> anyhow::Result<Option<Vec<Word>>> {
    let mut out: Vec<Word> = Vec::new();
    let mut count = 0u64;
    for b in &ch.blocks {
        let bytes = streams.block(b.id)?;
        for pos in gap::decode(&bytes) {
            let pos = pos.with_context(|| format!("{}: block {}", streams.path.display(), b.id))?;
            anyhow::ensure!(
                pos < b.words as u64 * 64,
                "{}: block {}: position out of range",
                streams.path.display(),
                b.id
            );
            count += 1;
            if limit.is_some_and(|l| count > l) {
                return Ok(None);
            }
            let (w, bit) = (b.local_word + (pos / 64) as usize, 1u64 << (pos % 64));
            match out.last_mut() {
                Some((last, bits)) if *last == w => *bits |= bit,
                _ => out.push((w, bit)),
            }
        }
    }
    Ok(Some(out))
}

/// The reader's part: a chunk's blocks of every input table, checked.
fn read_inputs(ch: &Chunk, inputs: &[(BitFile, Vec<u64>)], words: usize) -> anyhow::Result<Vec<Vec<u64>>> {
    inputs
        .iter()
        .map(|(file, sums)| {
            let mut b = vec![0u64; words];
            file.read_blocks(&ch.blocks, &mut b, sums)?;
            Ok(b)
        })
        .collect()
}

/// Completes a computed chunk: for steps, combines the kernel's words with the previous
/// table of the chain (and `c` or `d`), read in batches of at most `io_words` words so that
/// a worker holds no further chunk buffer; then gap-encodes each block's new positions
/// (`t0` for `InitBlack`, none for `InitWhite`).
fn finish_chunk(
    pass: Pass,
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
    match pass {
        Pass::InitWhite => blocks.iter().for_each(|_| encode(&[])),
        Pass::InitBlack => blocks.iter().for_each(|b| encode(&out[1][b.local_word..b.local_word + b.words])),
        Pass::Step(k) => {
            for batch in io_batches(blocks, io_words) {
                let local = rebased(batch);
                let n = batch.iter().map(|b| b.words).sum();
                let mut with = combined
                    .iter()
                    .map(|(file, sums)| {
                        let mut buf = vec![0u64; n];
                        file.read_blocks(&local, &mut buf, sums).map(|_| buf)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                // The previous table's words are replaced by the new positions.
                let (old, extra) = with.split_at_mut(1);
                let (old, extra) = (&mut old[0], extra.first());
                for (b, l) in batch.iter().zip(&local) {
                    let table = &mut out[0][b.local_word..b.local_word + b.words];
                    let fresh = &mut old[l.local_word..l.local_word + l.words];
                    match extra {
                        Some(x) => combine_words(k, table, fresh, &x[l.local_word..l.local_word + l.words]),
                        None => combine_words(k, table, fresh, &[]),
                    }
                    encode(fresh);
                }
            }
        }
    }
    Ok(ChunkOutput { tables: out, streams, new_count, work: ChunkWork::Dense })
}

/// [`combine`] over a block: `table` holds the pass's reached words and becomes the new
/// table, `old` holds the previous table and becomes the new positions; `extra` is empty
/// or as long as the others. Monomorphised per parity so that the loop vectorises.
fn combine_words(k: u16, table: &mut [u64], old: &mut [u64], extra: &[u64]) {
    #[inline(always)]
    fn each(table: &mut [u64], old: &mut [u64], extra: &[u64], f: impl Fn(u64, u64, u64) -> (u64, u64)) {
        if extra.is_empty() {
            for (t, o) in table.iter_mut().zip(old.iter_mut()) {
                (*t, *o) = f(*t, *o, 0);
            }
        } else {
            for ((t, o), &x) in table.iter_mut().zip(old.iter_mut()).zip(extra) {
                (*t, *o) = f(*t, *o, x);
            }
        }
    }
    match k {
        1 => each(table, old, extra, |t, o, x| combine(1, t, o, x)),
        k if k % 2 == 1 => each(table, old, extra, |t, o, x| combine(3, t, o, x)),
        _ => each(table, old, extra, |t, o, x| combine(2, t, o, x)),
    }
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

/// Bytes the writer wrote for a chunk: table blocks, record, streams.
struct Written {
    blocks: u64,
    record: u64,
    streams: u64,
}

/// The writer's part, the commit of a chunk: its output blocks, then its streams, then its
/// record in the log (a chunk counts as finished only once its record is there).
fn commit_chunk(
    list_index: usize,
    ch: &Chunk,
    done: &ChunkOutput,
    outputs: &[BitFile],
    sums: &mut [Vec<u64>],
    log: &mut DeltaLog,
    streams: &mut StreamWriter,
) -> anyhow::Result<Written> {
    let mut entries: Vec<BlockEntry> =
        ch.blocks.iter().map(|b| BlockEntry { id: b.id as u32, stream_len: 0, sums: Vec::new() }).collect();
    for (o, file) in outputs.iter().enumerate() {
        let block_sums = file.write_blocks(&ch.blocks, &done.tables[o])?;
        for ((b, sum), entry) in ch.blocks.iter().zip(block_sums).zip(entries.iter_mut()) {
            entry.sums.push(sum);
            sums[o][b.id] = sum;
        }
    }
    let (record, streams) = log_chunk(list_index, done, entries, log, streams)?;
    let blocks = ch.blocks.iter().map(|b| b.words as u64 * 8).sum::<u64>() * outputs.len() as u64;
    Ok(Written { blocks, record, streams })
}

/// The writer's part for a step updating its table in place ([`InPlace`]): the chunk's
/// streams and record first, with the checksums its blocks will have, then only the blocks
/// that gained positions (the others hold them already).
#[allow(clippy::too_many_arguments)]
fn commit_in_place(
    list_index: usize,
    ch: &Chunk,
    done: &ChunkOutput,
    file: &BitFile,
    ip: &InPlace,
    sums: &mut [Vec<u64>],
    log: &mut DeltaLog,
    streams: &mut StreamWriter,
) -> anyhow::Result<Written> {
    let changed: Vec<Block> =
        ch.blocks.iter().zip(&done.streams).filter(|(_, s)| !s.is_empty()).map(|(b, _)| *b).collect();
    let entries: Vec<BlockEntry> = ch
        .blocks
        .iter()
        .zip(&done.streams)
        .map(|(b, s)| {
            let sum = match s.is_empty() {
                true => ip.base[b.id],
                false => block_sum(&done.tables[0][b.local_word..b.local_word + b.words]),
            };
            sums[0][b.id] = sum;
            BlockEntry { id: b.id as u32, stream_len: 0, sums: vec![sum] }
        })
        .collect();
    let (record, streams) = log_chunk(list_index, done, entries, log, streams)?;
    if !changed.is_empty() {
        file.put_blocks(&changed, &done.tables[0])?;
    }
    Ok(Written { blocks: changed.iter().map(|b| b.words as u64 * 8).sum(), record, streams })
}

/// Writes a chunk's streams, then its record (with `entries`' checksums) to the log;
/// returns the bytes of each.
fn log_chunk(
    list_index: usize,
    done: &ChunkOutput,
    mut entries: Vec<BlockEntry>,
    log: &mut DeltaLog,
    streams: &mut StreamWriter,
) -> anyhow::Result<(u64, u64)> {
    let first_stream = streams.pos();
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for (bytes, entry) in done.streams.iter().zip(entries.iter_mut()) {
        hasher.update(bytes);
        streams.write(bytes)?;
        entry.stream_len = bytes.len() as u32;
    }
    streams.flush()?;
    let streams_len = streams.pos() - first_stream;
    let record =
        deltalog::encode(list_index as u32, done.new_count, &entries, (first_stream, streams_len, hasher.digest()));
    log.append(&record)?;
    Ok((record.len() as u64, streams_len))
}

/// For tests: `TBSTREAM_STOP_AFTER_CHUNKS=n` makes the process stop with an error after
/// writing `n` chunks, leaving the work folder exactly as a kill at that moment would.
/// A job with it set solves one run at a time (`generate::job::side_by_side`).
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
