//! The writing side of a pass: each computed chunk (this process's and, in a distributed
//! job, the other ranks') committed one at a time: its output blocks, then its streams and
//! record in the pass's log. A chunk counts as finished only once its record is there.

use super::resume::{InPlace, PassState};
use super::sources::{ChunkOutput, ChunkWork, PassSources};
use crate::generate::level::LevelContext;
use crate::generate::plan::Chunk;
use crate::index::Block;
use crate::solve::PassSpec;
use crate::work::bits::{block_sum, BitFile};
use crate::work::deltalog::{BlockEntry, PassLog};

/// What a pass has moved and found so far.
#[derive(Clone, Debug, Default)]
pub struct PassCounts {
    pub new: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Bytes of the pass's delta streams.
    pub stream_bytes: u64,
    /// Chunks this process computed sparse, and chunks it carried over unchanged.
    pub sparse_chunks: u64,
    pub unchanged_chunks: u64,
}

/// The writer's side of a pass.
pub struct Committer<'a> {
    pub ctx: &'a LevelContext<'a>,
    pub spec: &'a PassSpec,
    /// The output tables, in the spec's order.
    pub outputs: Vec<BitFile>,
    pub in_place: Option<InPlace>,
    /// What the pass reads: which blocks a step updating in place writes.
    pub sources: &'a PassSources,
    pub state: PassState,
    pub counts: PassCounts,
    pub log: PassLog,
}

/// Bytes the writer wrote for a chunk: table blocks, record, streams.
struct Written {
    blocks: u64,
    record: u64,
    streams: u64,
}

impl Committer<'_> {
    /// Writes chunk `chunk`'s blocks, streams and record, and counts it.
    pub fn commit(&mut self, chunk: usize, out: ChunkOutput) -> anyhow::Result<()> {
        let ch = &self.ctx.plan.chunks_of(self.spec.pass).list[chunk];
        let written = match &self.in_place {
            Some(_) => self.commit_in_place(chunk, ch, &out)?,
            None => self.commit_new_tables(chunk, ch, &out)?,
        };
        self.ctx.hooks.after_chunk()?;
        let r = &mut self.counts;
        r.new += out.new_count;
        r.bytes_read += out.bytes_read;
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

    /// The commit of a chunk into tables the pass writes whole: its output blocks, then its
    /// streams and record.
    fn commit_new_tables(&mut self, chunk: usize, ch: &Chunk, done: &ChunkOutput) -> anyhow::Result<Written> {
        let mut entries: Vec<BlockEntry> =
            ch.blocks.iter().map(|b| BlockEntry { id: b.id as u32, stream_len: 0, sums: Vec::new() }).collect();
        let mut blocks = 0;
        for ((file, &table), sums) in self.outputs.iter().zip(&self.spec.outputs).zip(&mut self.state.sums) {
            let (block_sums, written) = file.write_blocks(&ch.blocks, done.tables.words(table))?;
            blocks += written;
            for ((b, sum), entry) in ch.blocks.iter().zip(block_sums).zip(entries.iter_mut()) {
                entry.sums.push(sum);
                sums[b.id] = sum;
            }
        }
        let (record, streams) = self.log.append_chunk(chunk as u32, done.new_count, entries, &done.streams)?;
        Ok(Written { blocks, record, streams })
    }

    /// The commit of a chunk of a step updating its table in place ([`InPlace`]): the
    /// chunk's streams and record first, with the checksums its blocks will have, then only
    /// the blocks it writes ([`PassSources::writes_block`]: those that gained positions, or
    /// step `k-2` deferred some to; none when the step defers), the others as they are.
    fn commit_in_place(&mut self, chunk: usize, ch: &Chunk, done: &ChunkOutput) -> anyhow::Result<Written> {
        let base = &self.in_place.as_ref().expect("a step updated in place").base;
        let output = self.spec.outputs[0];
        let writes: Vec<bool> =
            ch.blocks.iter().zip(&done.streams).map(|(b, s)| self.sources.writes_block(b.id, !s.is_empty())).collect();
        let changed: Vec<Block> = ch.blocks.iter().zip(&writes).filter(|(_, &w)| w).map(|(b, _)| *b).collect();
        let sums = &mut self.state.sums[0];
        let entries: Vec<BlockEntry> = ch
            .blocks
            .iter()
            .zip(&writes)
            .map(|(b, &write)| {
                let sum = match write {
                    false => base[b.id],
                    true => block_sum(&done.tables.words(output)[b.local_word..b.local_word + b.words]),
                };
                sums[b.id] = sum;
                BlockEntry { id: b.id as u32, stream_len: 0, sums: vec![sum] }
            })
            .collect();
        let (record, streams) = self.log.append_chunk(chunk as u32, done.new_count, entries, &done.streams)?;
        // (A chunk that writes no block may carry no words: an unchanged one updated in place.)
        let blocks = match changed.is_empty() {
            true => 0,
            false => self.outputs[0].put_blocks(&changed, done.tables.words(output))?,
        };
        Ok(Written { blocks, record, streams })
    }
}
