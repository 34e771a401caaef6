//! The reading and computing side of a pass: what its chunks read (opened once by each
//! process that computes chunks of the pass), the reader's part of a chunk (its input
//! blocks, checked, or the previous step's new positions in it) and the worker's part (the
//! chunk computed, combined with the previous table of its chain, its new positions
//! gap-coded per block).

use super::pushes::{ChunkPushes, PassFinals};
use crate::chess::Color;
use crate::generate::level::LevelContext;
use crate::generate::options::StepMode;
use crate::generate::plan::{Chunk, Chunks};
use crate::index::Block;
use crate::solve::sparse::{self, Word};
use crate::solve::{
    combine_words, compute_chunk, ChunkTables, Conversions, Extra, Frame, Pass, PassSpec, WorkTable,
    EVENTUAL_CAPTURE_STEP,
};
use crate::work::bits::BitFile;
use crate::work::deltalog::{self, PassStreams};
use crate::work::gap::{self, GapEncoder};
use anyhow::Context;

thread_local! {
    /// A worker's words of `t(k-1)` for black's sparse chunks, kept for the pass's chunks.
    static PREVIOUS_WORDS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What a step does with one chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChunkWork {
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
/// Measured on KQRvKQR (`docs/BENCHMARKS.md`, "Sparse steps"): a white step with 1 new
/// position in 2,700 took 1.1 s sparse against 3-4 s for dense white steps. Black's limit
/// moved when the dense kernels got twice as fast ("Kernels a block at a time"): dense black
/// steps take 3.8-4.4 s; sparse ones whose chunks held 1 new position per 6,000 to 19,000
/// (on average) took 4.0-6.1 s, with 1 per 30,000 and fewer 3.3 s and less.
const SPARSE_DENSITY: [u64; 2] = [128, 16384];

/// What the reader hands a worker for one chunk.
#[derive(Default)]
pub struct ChunkInput {
    /// The chunk's words of the tables the pass reads whole (for an unchanged chunk, the
    /// previous table of the chain).
    tables: ChunkTables,
    pushes: ChunkPushes,
    /// For a sparse chunk: the previous step's new positions in it, in word order.
    new_prev: Vec<Word>,
    /// How the chunk is computed (a sparse chunk with too many new positions turns dense).
    work: ChunkWork,
    /// Bytes of work tables read for it so far.
    bytes_read: u64,
}

/// What a worker hands the writer for one chunk: the output tables (chunk-local words), the
/// gap-encoded new positions of each block, how many there are, and how it was computed.
#[derive(Debug)]
pub struct ChunkOutput {
    pub tables: ChunkTables,
    pub streams: Vec<Vec<u8>>,
    pub new_count: u64,
    pub work: ChunkWork,
    /// Bytes of work tables read for the chunk (its blocks of the tables read whole and of
    /// those combined with: a sparse chunk reads only the blocks it needs).
    pub bytes_read: u64,
}

/// A finished work table open for reading, with its block checksums.
pub struct SourceTable {
    /// The table the blocks hold (for a step updating `t(k-2)` in place, the file is already
    /// `t(k)`'s, and the blocks no chunk has committed yet hold `t(k-2)`).
    pub name: WorkTable,
    pub file: BitFile,
    pub sums: Vec<u64>,
}

impl SourceTable {
    fn open(ctx: &LevelContext, name: WorkTable) -> anyhow::Result<SourceTable> {
        let (file, sums) = ctx.open_finished(name)?;
        Ok(SourceTable { name, file, sums })
    }

    /// Reads `blocks` into `words` (placed at their `local_word`), with the streams of the
    /// step that deferred the table OR-ed in, if it did; the bytes read.
    fn read_with(&self, blocks: &[Block], deferred: Option<&PassStreams>, words: &mut [u64]) -> anyhow::Result<u64> {
        let mut read = self.file.read_blocks(blocks, words, &self.sums)?;
        if let Some(streams) = deferred {
            read += streams.or_into(blocks, words)?;
        }
        Ok(read)
    }
}

/// What a pass's chunks read, opened once by each process that computes chunks of the pass
/// (the coordinating one and, in a distributed job, each worker rank).
pub struct PassSources {
    /// The tables the pass reads whole.
    pub inputs: Vec<SourceTable>,
    /// The tables its output is combined with: the previous table of the chain, then `c` or
    /// `d` if any.
    pub combined: Vec<SourceTable>,
    finals: PassFinals,
    /// How each chunk is computed, and the previous step's streams, for the sparse chunks
    /// and for the dense ones of a pass whose kernel moves from them (`PassSpec::new_of`).
    work: Vec<ChunkWork>,
    new_prev: Option<PassStreams>,
    /// Whether the step updates the previous table of its chain in place.
    pub in_place: bool,
    /// Whether the step defers its table ([`LevelContext::defers`]): it writes no block.
    pub defers: bool,
    /// The streams of step `k-2` when it deferred its table: OR-ed into `t(k-2)`'s blocks
    /// as they are read, and the blocks they touch are written by this step.
    old_streams: Option<PassStreams>,
    /// Whether `t(k-1)`, the table the pass reads whole, was deferred: the previous step's
    /// streams are OR-ed into its blocks.
    input_deferred: bool,
    /// Whether a dense chunk reads the previous table of the chain whole with its input
    /// ([`crate::generate::plan::Plan::prefills`]), for the kernel and then the combine.
    prefill: bool,
}

impl PassSources {
    /// Opens the pass's sources; `in_place_base` holds `t(k-2)`'s checksums for a step that
    /// updates it in place (after [`super::resume::InPlace::start`] has renamed it).
    pub fn open(ctx: &LevelContext, spec: &PassSpec, in_place_base: Option<Vec<u64>>) -> anyhow::Result<Self> {
        let in_place = in_place_base.is_some();
        let inputs = spec.inputs.iter().map(|&t| SourceTable::open(ctx, t)).collect::<anyhow::Result<Vec<_>>>()?;
        let mut base = in_place_base;
        let combined = spec
            .combine
            .iter()
            .enumerate()
            .map(|(i, &t)| match base.take().filter(|_| i == 0) {
                // The previous table is the output's file until each chunk is committed.
                Some(sums) => Ok(SourceTable { name: t, file: ctx.open_table(spec.outputs[0])?, sums }),
                None => SourceTable::open(ctx, t),
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let finals = PassFinals::open(ctx, spec.pass)?;
        let deferred = |k: u16| ctx.defers(Pass::Step(k));
        let (old_deferred, input_deferred) = match spec.pass {
            Pass::Step(k) if k >= 2 => (deferred(k - 2), !spec.inputs.is_empty() && deferred(k - 1)),
            _ => (false, false),
        };
        let old_streams = match (old_deferred, spec.pass) {
            (true, Pass::Step(k)) => Some(PassStreams::open(&ctx.folder.log(Pass::Step(k - 2)), ctx.n_blocks())?),
            _ => None,
        };
        let (work, new_prev) =
            chunk_work(ctx, spec, ctx.plan.chunks_of(spec.pass), input_deferred, old_streams.as_ref())?;
        let defers = ctx.defers(spec.pass);
        // Black steps that combine with `t(k-2)` alone (not steps 2 and 102, where `d` comes in).
        let prefill = spec.pass.mover() == Color::Black
            && !spec.pass.is_init()
            && combined.len() == 1
            && ctx.plan.prefills(spec.pass, &ctx.budget);
        Ok(PassSources {
            inputs,
            combined,
            finals,
            work,
            new_prev,
            in_place,
            defers,
            old_streams,
            input_deferred,
            prefill,
        })
    }

    /// Step `k-2`'s streams when it deferred its table.
    pub fn old_streams(&self) -> Option<&PassStreams> {
        self.old_streams.as_ref()
    }

    /// Whether the step writes block `block` of its output in place, given whether the block
    /// gained new positions: not when it defers; else where it gained some, or where step
    /// `k-2` deferred new positions.
    pub fn writes_block(&self, block: usize, gained: bool) -> bool {
        !self.defers && (gained || self.old_streams.as_ref().is_some_and(|s| s.has(block)))
    }

    /// The reader's part of a chunk: the words it needs, by how it is computed.
    pub fn read(&self, ctx: &LevelContext, spec: &PassSpec, chunk: usize) -> anyhow::Result<ChunkInput> {
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
            // (Not a chunk with positions step `k-2` deferred: `chunk_work` computes those.)
            ChunkWork::Unchanged => input.tables = read_tables(ch, &self.combined[..1], words, &mut input.bytes_read)?,
            // The worker reads what it needs, once it knows which blocks.
            ChunkWork::Sparse { .. } => {}
            ChunkWork::Dense => {
                input.tables = read_tables(ch, &self.inputs, words, &mut input.bytes_read)?;
                if self.input_deferred {
                    let streams = self.new_prev.as_ref().expect("streams of the last step");
                    let previous = input.tables.words_mut(self.inputs[0].name);
                    input.bytes_read += streams.or_into(&ch.blocks, previous)?;
                }
                if let Some(Pass::Step(prev)) = spec.new_of {
                    let streams = self.new_prev.as_ref().expect("streams of the last step");
                    let mut new = vec![0u64; words];
                    input.bytes_read += streams.or_into(&ch.blocks, &mut new)?;
                    input.tables.insert(WorkTable::Chain(prev), new);
                }
                if self.prefill {
                    let old = &self.combined[0];
                    let mut words_old = vec![0u64; words];
                    input.bytes_read += old.read_with(&ch.blocks, self.old_streams.as_ref(), &mut words_old)?;
                    input.tables.insert(old.name, words_old);
                }
                input.pushes = self.finals.read(ctx, spec.pass, ch, words)?;
            }
        }
        Ok(input)
    }

    /// The worker's part of a chunk: its output tables and the streams of its new positions.
    pub fn compute(
        &self,
        ctx: &LevelContext,
        spec: &PassSpec,
        chunk: usize,
        mut input: ChunkInput,
    ) -> anyhow::Result<ChunkOutput> {
        let chunks = ctx.plan.chunks_of(spec.pass);
        let (ch, words) = (&chunks.list[chunk], chunks.buffer_words);
        let io_words = (ctx.io_bytes / 8).max(1);
        let frame = || Frame::new(&ctx.layout, &chunks.scheme, ch.key, ch.slice);
        // Sparse chunks: the only words the kernel may have set (black's candidates, the
        // words white's moves reached).
        let mut reached_words: Option<Vec<u64>> = None;
        let out = match input.work {
            ChunkWork::Unchanged => {
                let streams = vec![Vec::new(); ch.blocks.len()];
                let tables = match self.in_place {
                    true => ChunkTables::new(),
                    false => [(spec.outputs[0], input.tables.take(self.combined[0].name))].into_iter().collect(),
                };
                let bytes_read = input.bytes_read;
                return Ok(ChunkOutput { tables, streams, new_count: 0, work: input.work, bytes_read });
            }
            ChunkWork::Sparse { .. } => {
                let frame = frame();
                let mut reached = vec![0u64; words];
                match spec.pass.mover() {
                    Color::White => {
                        let mut marked = vec![0u64; words.div_ceil(64)];
                        sparse::white_reached_marked(&frame, &input.new_prev, &mut reached, &mut marked);
                        reached_words = Some(marked);
                    }
                    Color::Black => {
                        // Black's moves are evaluated in `t(k-1)`: only the blocks they reach
                        // are read, in storage order.
                        let candidates = sparse::black_candidates(&frame, &input.new_prev, words);
                        let need = sparse::black_reads(&frame, &candidates, words);
                        let blocks: Vec<Block> = ch
                            .blocks
                            .iter()
                            .filter(|b| sparse::any_marked(&need, b.local_word, b.words))
                            .copied()
                            .collect();
                        let previous = &self.inputs[0];
                        // The evaluation reads only words of the blocks read here, each
                        // overwritten whole: the worker's buffer is reused without clearing.
                        input.bytes_read += PREVIOUS_WORDS.with_borrow_mut(|words_prev| -> anyhow::Result<u64> {
                            words_prev.resize(words, 0);
                            let mut read = previous.file.read_blocks(&blocks, words_prev, &previous.sums)?;
                            if self.input_deferred {
                                let streams = self.new_prev.as_ref().expect("streams of the last step");
                                read += streams.or_into(&blocks, words_prev)?;
                            }
                            sparse::black_reached(&frame, words_prev, &candidates, &mut reached);
                            Ok(read)
                        })?;
                        reached_words = Some(candidates);
                    }
                }
                [(spec.outputs[0], reached)].into_iter().collect()
            }
            ChunkWork::Dense => {
                let (rule, eventual) = (input.pushes.rule.targets(), input.pushes.eventual.targets());
                let pushes = input.pushes.rule.targets();
                let eventual = ctx.eventual_with(rule, eventual);
                let conversions = Conversions { caps: ctx.caps, pushes: &pushes, eventual: eventual.as_ref() };
                compute_chunk(spec.pass, &frame(), &conversions, words, input.tables)
            }
        };
        // A sparse step updating its table in place reads and rewrites only the blocks its
        // words reached; the others gain nothing.
        let only_reached = reached_words.as_deref().filter(|_| self.in_place);
        let old = OldTable { sources: &self.combined, deferred: self.old_streams.as_ref() };
        let mut done = finish_chunk(spec.pass, &ch.blocks, &old, out, io_words, only_reached)?;
        done.work = input.work;
        done.bytes_read += input.bytes_read;
        Ok(done)
    }
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
///
/// `input_deferred`: `t(k-1)` was deferred, so dense chunks need step `k-1`'s streams too.
/// `old_streams`: step `k-2`'s, when it deferred: a chunk whose blocks they touch is not
/// unchanged (its blocks must be written), it is sparse.
fn chunk_work(
    ctx: &LevelContext,
    spec: &PassSpec,
    chunks: &Chunks,
    input_deferred: bool,
    old_streams: Option<&PassStreams>,
) -> anyhow::Result<(Vec<ChunkWork>, Option<PassStreams>)> {
    let new_extra = |k: u16| ctx.is_eventual() && (k == EVENTUAL_CAPTURE_STEP - 1 || k == EVENTUAL_CAPTURE_STEP);
    let k = match spec.pass {
        Pass::Step(k) if k >= 3 && !new_extra(k) => k,
        _ => {
            let previous = spec.pass.number() - 1;
            let streams = match spec.new_of.is_some() || input_deferred {
                true => Some(PassStreams::open(
                    &ctx.folder.log(Pass::from_number(previous).expect("a pass")),
                    ctx.n_blocks(),
                )?),
                false => None,
            };
            return Ok((vec![ChunkWork::Dense; chunks.list.len()], streams));
        }
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
            let old_deferred = old_streams.is_some_and(|s| ch.blocks.iter().any(|b| s.has(b.id)));
            match ctx.steps {
                _ if bytes == 0 && old_deferred => ChunkWork::Sparse { limit: None },
                _ if bytes == 0 => ChunkWork::Unchanged,
                _ if bytes == u64::MAX => ChunkWork::Dense,
                StepMode::Dense => ChunkWork::Dense,
                StepMode::Sparse => ChunkWork::Sparse { limit: None },
                StepMode::Auto => {
                    ChunkWork::Sparse { limit: Some(positions / SPARSE_DENSITY[spec.pass.mover().index()]) }
                }
            }
        })
        .collect();
    let streams =
        match spec.new_of.is_some() || input_deferred || work.iter().any(|w| matches!(w, ChunkWork::Sparse { .. })) {
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

/// The tables a step's output is combined with (the previous table of the chain first), and
/// the streams of step `k-2` when it deferred its table.
struct OldTable<'a> {
    sources: &'a [SourceTable],
    deferred: Option<&'a PassStreams>,
}

/// The reader's part: a chunk's blocks of every table of `sources`, checked; adds the
/// bytes to `bytes_read`.
fn read_tables(ch: &Chunk, sources: &[SourceTable], words: usize, bytes_read: &mut u64) -> anyhow::Result<ChunkTables> {
    sources
        .iter()
        .map(|s| {
            let mut b = vec![0u64; words];
            *bytes_read += s.file.read_blocks(&ch.blocks, &mut b, &s.sums)?;
            Ok((s.name, b))
        })
        .collect()
}

/// Completes a computed chunk: for steps, combines the kernel's words with the previous
/// table of the chain (and `c` or `d`), read in batches of at most `io_words` words so that
/// a worker holds no further chunk buffer; then gap-encodes each block's new positions
/// (`t0` for `InitBlack`, none for `InitWhite`). With `only_reached` (a sparse step updating
/// its table in place: a bitmap of the only words its kernel can have set), the blocks where
/// those words are all zero are neither read nor combined (their stream is empty, their
/// output words left as they are).
fn finish_chunk(
    pass: Pass,
    blocks: &[Block],
    old_table: &OldTable,
    mut out: ChunkTables,
    io_words: usize,
    only_reached: Option<&[u64]>,
) -> anyhow::Result<ChunkOutput> {
    let mut streams = vec![Vec::new(); blocks.len()];
    let mut new_count = 0;
    let mut bytes_read = 0;
    let mut encode = |i: usize, new: &[u64]| {
        let mut enc = GapEncoder::new();
        for (w, &word) in new.iter().enumerate() {
            enc.push_word(w, word);
        }
        new_count += enc.count();
        streams[i] = enc.finish();
    };
    match pass {
        Pass::InitWhite => {}
        Pass::InitBlack => {
            let t0 = out.words(WorkTable::Chain(0));
            blocks.iter().enumerate().for_each(|(i, b)| encode(i, &t0[b.local_word..b.local_word + b.words]))
        }
        Pass::Step(k) => {
            // The previous table of the chain, if the chunk's reader read it whole.
            let previous = old_table.sources[0].name;
            let prefetched = out.get(previous).is_some().then(|| out.take(previous));
            let table = out.words_mut(WorkTable::Chain(k));
            // The blocks to combine, and their places in the chunk's list (their streams').
            let places: Vec<usize> = (0..blocks.len())
                .filter(|&i| {
                    let b = &blocks[i];
                    let reached =
                        |set| sparse::marked_within(set, b.local_word..b.local_word + b.words).any(|w| table[w] != 0);
                    only_reached.is_none_or(reached) || old_table.deferred.is_some_and(|s| s.has(b.id))
                })
                .collect();
            let todo: Vec<Block> = places.iter().map(|&i| blocks[i]).collect();
            let mut place = places.into_iter();
            if let Some(mut old) = prefetched {
                // Read with the chunk's input (deferred streams OR-ed in), and combined alone.
                for b in &todo {
                    let words = b.local_word..b.local_word + b.words;
                    combine_words(&mut table[words.clone()], &mut old[words.clone()], Extra::of(k, &[]));
                    encode(place.next().expect("a place per block"), &old[words]);
                }
                return Ok(ChunkOutput { tables: out, streams, new_count, work: ChunkWork::Dense, bytes_read });
            }
            // Batches bound the worker's buffers only: each block is read by itself.
            let per_batch = todo.first().map_or(1, |b| (io_words / b.words).max(1));
            for batch in todo.chunks(per_batch) {
                let local = rebased(batch);
                let n = batch.iter().map(|b| b.words).sum::<usize>();
                let combined = old_table.sources;
                let mut old = vec![0u64; n];
                bytes_read += combined[0].read_with(&local, old_table.deferred, &mut old)?;
                let mut read = |s: &SourceTable, blocks: &[Block]| -> anyhow::Result<Vec<u64>> {
                    let mut buf = vec![0u64; n];
                    bytes_read += s.file.read_blocks(blocks, &mut buf, &s.sums)?;
                    Ok(buf)
                };
                // `c`, `d` or `d∞` where a step takes them in: read whole (steps 1, 2, 102, 103).
                let extra = combined[1..].iter().map(|s| read(s, &local)).collect::<anyhow::Result<Vec<_>>>()?;
                // The previous table's words are replaced by the new positions.
                for (b, l) in batch.iter().zip(&local) {
                    let reached = &mut table[b.local_word..b.local_word + b.words];
                    let fresh = &mut old[l.local_word..l.local_word + l.words];
                    let mut x: [&[u64]; 2] = [&[], &[]];
                    for (x, e) in x.iter_mut().zip(&extra) {
                        *x = &e[l.local_word..l.local_word + l.words];
                    }
                    combine_words(reached, fresh, Extra::of(k, &x[..extra.len()]));
                    encode(place.next().expect("a place per block"), fresh);
                }
            }
        }
    }
    Ok(ChunkOutput { tables: out, streams, new_count, work: ChunkWork::Dense, bytes_read })
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
