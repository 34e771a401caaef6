//! Pawn pushes in the init passes of a run with pawns: a push or a double step moves a pawn
//! into another slice of a higher level, solved before, whose final bitbases the pass reads
//! for the words of the same chunk there.

use crate::chess::{Color, Square};
use crate::generate::level::{LevelContext, LevelFiles};
use crate::generate::plan::Chunk;
use crate::index::slices::MAX_PAWNS;
use crate::index::{Level, Pawns};
use crate::solve::{Pass, PushTargets, WorkTable};
use crate::work::bits::BitFile;
use anyhow::Context;

/// A solved level's final bitbase, open for reading.
pub struct Final {
    level: Level,
    file: BitFile,
    sums: Vec<u64>,
}

/// Which final bitbases of the levels above a pass reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finals {
    /// The positions won under the 50-move rule.
    Rule,
    /// The positions won with or without the rule, for an eventual level with a cursed
    /// level above (none otherwise: the rule ones serve, see
    /// [`LevelContext::eventual_with`]).
    Eventual,
}

/// The final bitbases an init pass's pawn pushes read: after white's pushes black is to move,
/// after black's white is.
fn open_finals(ctx: &LevelContext, pass: Pass, which: Finals) -> anyhow::Result<Vec<Final>> {
    let eventual = which == Finals::Eventual;
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
            let (file, sums) = LevelFiles { folder, level, block_bits: ctx.plan.block_bits }.open_finished(table)?;
            Ok(Final { level: *level, file, sums })
        })
        .collect()
}

/// The words of the slices a chunk's pawn pushes lead to, over the chunk.
#[derive(Default)]
pub struct PushBuffers {
    single: [Option<Vec<u64>>; MAX_PAWNS],
    double: [Option<Vec<u64>>; MAX_PAWNS],
}

impl PushBuffers {
    pub fn targets(&self) -> PushTargets<'_> {
        PushTargets {
            single: std::array::from_fn(|i| self.single[i].as_deref()),
            double: std::array::from_fn(|i| self.double[i].as_deref()),
        }
    }
}

/// The reader's part for pawn pushes: for each pawn of the mover (init passes), the words of
/// the same chunk in the slices its push and double step lead to, from the final bitbases of
/// the levels above. A push onto another pawn, or a promotion, has none.
fn read_pushes(
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

/// A chunk's pawn-push words, for the rule and (on an eventual level) the eventual
/// conversions.
#[derive(Default)]
pub struct ChunkPushes {
    pub rule: PushBuffers,
    pub eventual: PushBuffers,
}

/// The final bitbases of both kinds a pass's pushes read, opened once.
pub struct PassFinals {
    rule: Vec<Final>,
    eventual: Vec<Final>,
}

impl PassFinals {
    pub fn open(ctx: &LevelContext, pass: Pass) -> anyhow::Result<PassFinals> {
        Ok(PassFinals {
            rule: open_finals(ctx, pass, Finals::Rule)?,
            eventual: open_finals(ctx, pass, Finals::Eventual)?,
        })
    }

    /// A chunk's push words of both kinds.
    pub fn read(&self, ctx: &LevelContext, pass: Pass, ch: &Chunk, words: usize) -> anyhow::Result<ChunkPushes> {
        Ok(ChunkPushes {
            rule: read_pushes(ctx, pass, ch, &self.rule, words)?,
            eventual: read_pushes(ctx, pass, ch, &self.eventual, words)?,
        })
    }
}
