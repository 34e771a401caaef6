//! Resuming a pass: the chunks an interrupted process finished (the log's records whose
//! blocks and streams still match), and the steps that update the previous table of their
//! chain in place ([`InPlace`]), rolled forward on resume and repaired from the logs.

use super::sources::PassSources;
use crate::generate::level::LevelContext;
use crate::generate::plan::{Chunk, Chunks};
use crate::generate::repair::{check_block, EarlierStreams};
use crate::index::Block;
use crate::solve::{Pass, PassSpec, WorkTable};
use crate::work::bits::{block_sum, BitFile};
use crate::work::deltalog::{self, ChunkRecord};
use crate::work::gap;
use anyhow::Context;
use std::path::Path;

/// Where a pass stands: the chunks finished (by an earlier process too), the block
/// checksums of its outputs so far, and what the finished chunks found.
pub struct PassState {
    pub done: Vec<bool>,
    /// Per output table (in the spec's order), the checksum of each block.
    pub sums: Vec<Vec<u64>>,
    /// New positions and stream bytes of the finished chunks.
    pub new: u64,
    pub stream_bytes: u64,
    /// Bytes of the log and the stream file that finished chunks cover.
    pub log_len: u64,
    pub streams_len: u64,
}

/// The resume scan: the chunks an interrupted process finished, i.e. the log's records whose
/// blocks and streams still match, up to the first that does not (recomputed from there).
pub fn resume_scan(
    ctx: &LevelContext,
    spec: &PassSpec,
    outputs: &[BitFile],
    in_place: Option<&InPlace>,
    sources: &PassSources,
) -> anyhow::Result<PassState> {
    let chunks = ctx.plan.chunks_of(spec.pass);
    let streams_file = ctx.folder.streams(spec.pass);
    let scan = deltalog::scan(&ctx.folder.log(spec.pass))?;
    let mut state = PassState {
        done: vec![false; chunks.list.len()],
        sums: match in_place {
            Some(ip) => vec![ip.base.clone()],
            None => vec![vec![0u64; ctx.n_blocks()]; outputs.len()],
        },
        new: 0,
        stream_bytes: 0,
        log_len: 0,
        streams_len: 0,
    };
    let mut damage = scan.damage.as_ref().map(|d| d.to_string());
    for rec in &scan.records {
        let checked = match in_place {
            Some(ip) => ip.roll_forward(ctx, spec.pass, sources, &outputs[0], &mut state.sums[0], rec, &streams_file),
            None => check_record(chunks, outputs, &mut state.sums, rec, &streams_file),
        };
        match checked {
            Ok(()) => {
                state.done[rec.chunk as usize] = true;
                state.new += rec.new_count;
                state.stream_bytes += rec.streams_len;
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
        ip.check_the_rest(ctx, spec.pass, &outputs[0], &state.done)?;
    }
    let pass = spec.pass.number();
    if let Some(d) = &damage {
        ctx.log(&format!("pass {pass}: damaged work data, recomputing from there: {d}"));
    }
    let resumed = state.done.iter().filter(|&&d| d).count();
    if resumed > 0 {
        ctx.log(&format!("pass {pass}: resuming after {resumed} of {} finished chunks", chunks.list.len()));
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
    streams: &Path,
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
pub struct InPlace {
    source: WorkTable,
    /// `t(k-2)`'s block checksums: those of every block no record covers.
    pub base: Vec<u64>,
    /// Whether an earlier process had started the step.
    resumed: bool,
    /// The earlier passes' streams, opened when a first damaged block is rebuilt.
    earlier: std::sync::OnceLock<EarlierStreams>,
}

impl InPlace {
    /// Takes over `source`'s file as the step's output, or finds it taken over by an
    /// earlier process.
    pub fn start(ctx: &LevelContext, spec: &PassSpec, source: WorkTable) -> anyhow::Result<InPlace> {
        let (from, to) = (ctx.folder.bits(source), ctx.folder.bits(spec.outputs[0]));
        let base = ctx.sums(source)?;
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

    /// Resume: OR-s a record's new positions into its chunk's blocks (again; with those step
    /// `k-2` deferred; not when this step defers, whose records keep the blocks as they are)
    /// and checks them against the record; a block that does not match is rebuilt from the
    /// logs. `sums` are the output's block checksums.
    #[allow(clippy::too_many_arguments)]
    fn roll_forward(
        &self,
        ctx: &LevelContext,
        pass: Pass,
        sources: &PassSources,
        file: &BitFile,
        sums: &mut [u64],
        rec: &ChunkRecord,
        streams_path: &Path,
    ) -> anyhow::Result<()> {
        let ch = chunk_of_record(ctx.plan.chunks_of(pass), rec, 1)?;
        let streams_file =
            std::fs::File::open(streams_path).with_context(|| format!("opening {}", streams_path.display()))?;
        let streams = deltalog::read_streams(&streams_file, streams_path, rec)?;
        // The positions a block gains: step `k-2`'s if it deferred them and this step's, none
        // if this step defers its own.
        let gained = |words: &mut [u64], b: &Block, stream: &[u8]| -> anyhow::Result<()> {
            if !sources.defers {
                if let Some(deferred) = sources.old_streams() {
                    deferred.or_into(&[Block { local_word: 0, ..*b }], words)?;
                }
                gap::set_positions(words, stream)?;
            }
            Ok(())
        };
        for ((b, e), stream) in ch.blocks.iter().zip(&rec.blocks).zip(&streams) {
            let one = [Block { local_word: 0, ..*b }];
            let mut words = vec![0u64; b.words];
            file.read_blocks_unchecked(&one, &mut words)?;
            gained(&mut words, b, stream)?;
            if block_sum(&words) != e.sums[0] {
                let damage = crate::work::StorageError::ChecksumMismatch {
                    path: file.path.clone(),
                    block: b.id,
                    offset: b.slot_word as u64 * 8,
                };
                ctx.log(&format!("{damage}; rebuilding the block"));
                words = self.rebuilt(ctx, pass, b.id)?;
                gained(&mut words, b, stream)?;
                anyhow::ensure!(
                    block_sum(&words) == e.sums[0],
                    "rebuilt block {} of {} does not match its record",
                    b.id,
                    file.path.display()
                );
            }
            if sources.writes_block(b.id, !stream.is_empty()) || self.base[b.id] != e.sums[0] {
                file.put_blocks(&one, &words)?;
            }
            sums[b.id] = e.sums[0];
        }
        Ok(())
    }

    /// Resume: checks the blocks of the chunks not finished against `t(k-2)`'s checksums,
    /// rebuilding a damaged one from the logs.
    fn check_the_rest(&self, ctx: &LevelContext, pass: Pass, file: &BitFile, done: &[bool]) -> anyhow::Result<()> {
        let chunks = ctx.plan.chunks_of(pass);
        for ch in chunks.list.iter().zip(done).filter(|(_, &d)| !d).map(|(ch, _)| ch) {
            for b in &ch.blocks {
                check_block(ctx, file, b.id, &self.base, || self.rebuilt(ctx, pass, b.id))?;
            }
        }
        Ok(())
    }
}
