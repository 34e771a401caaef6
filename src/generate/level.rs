//! What the passes of one level of a run share: the layout and the level, its chunk plan,
//! the sub-endgames' bitbases, its work folder, the budget, and where its conversions look
//! up eventual wins. A pawnless run is one level.

use super::captures::LoadedCaptures;
use super::options::{JobHooks, StepMode};
use super::plan::{Budget, Plan};
use crate::chess::Color;
use crate::index::{Layout, Level};
use crate::progress::Progress;
use crate::solve::{Captures, Eventual, Pass, PassSpec, PushTargets, WorkTable, LAST_STEP};
use crate::work::bits::{load_sums, BitFile};
use crate::work::{LevelFolder, RunFolder};

/// What every level of a run shares.
pub struct RunContext<'a> {
    pub layout: &'a Layout,
    pub folder: &'a RunFolder,
    pub caps: &'a LoadedCaptures,
    /// The job's budget (the sub-endgames' bitbases not yet taken out).
    pub budget: &'a Budget,
    pub steps: StepMode,
    pub progress: &'a dyn Progress,
    pub hooks: &'a dyn JobHooks,
}

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
    /// Bytes of the previous table a worker reads and combines at once (the `--block`
    /// size): its buffers beyond the chunk's.
    pub io_bytes: usize,
    pub progress: &'a dyn Progress,
    /// Set when the level's conversions reach cursed positions (an eventual level, see
    /// [`PassSpec`]).
    pub eventual: Option<EventualSources<'a>>,
    /// How steps choose between the dense kernels and the sparse ones.
    pub steps: StepMode,
    pub hooks: &'a dyn JobHooks,
}

/// Where an eventual level's conversions look up positions won with or without the rule.
pub struct EventualSources<'a> {
    /// The sub-endgames' eventual bitbases (the rule ones for runs without cursed positions).
    pub caps: &'a Captures,
    /// Per level in `above`: whether it has cursed positions (its `final-*-inf` tables are
    /// read instead of its final bitbases).
    pub above_cursed: Vec<bool>,
}

/// The levels a level's pawn pushes lead to (one and two levels up, solved before it).
pub fn levels_above(layout: &Layout, level: &Level) -> Vec<Level> {
    let up = |l: &Level| l.number == level.number + 1 || l.number == level.number + 2;
    layout.levels().into_iter().filter(|l| layout.has_pawns() && up(l)).collect()
}

impl<'a> LevelContext<'a> {
    /// The context of level `level` of a run, with its chunk plan: the levels above it that
    /// its pawn pushes read, and (when a sub-endgame or a level above has cursed positions,
    /// `above_cursed` telling which of the levels above do) where its conversions look up
    /// eventual wins; the budget less the captures' RAM.
    pub fn new(run: &RunContext<'a>, level: Level, plan: Plan, above_cursed: Vec<bool>) -> LevelContext<'a> {
        let caps = run.caps;
        let above = levels_above(run.layout, &level).into_iter().map(|l| (l, run.folder.level(l.number))).collect();
        let eventual = (caps.eventual.is_some() || above_cursed.contains(&true))
            .then(|| EventualSources { caps: caps.eventual.as_ref().unwrap_or(&caps.rule), above_cursed });
        LevelContext {
            layout: run.layout.clone(),
            level,
            above,
            plan,
            caps: &caps.rule,
            folder: run.folder.level(level.number),
            budget: Budget { mem: run.budget.mem.saturating_sub(caps.full_bytes), ..*run.budget },
            io_bytes: run.budget.block_bytes as usize,
            progress: run.progress,
            eventual,
            steps: run.steps,
            hooks: run.hooks,
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

    /// The tables that no pass after `pass` reads ([`crate::solve::obsolete_after`]: `t99`
    /// and `t100` stay for a merge of the chains' last tables).
    pub fn obsolete_after(&self, pass: Pass) -> Vec<WorkTable> {
        let merged = self.read_after_chains(WorkTable::chain(LAST_STEP as i32));
        crate::solve::obsolete_after(pass, self.is_eventual(), merged)
    }

    /// The table a step updates in place: `t(k-2)`, the previous table of its chain, wherever
    /// no later pass reads it; not in a black step that takes `d` or `d∞` in (step 2, and 102
    /// of an eventual level), which sets their complement in blocks without new positions
    /// too, and so writes its table whole.
    pub fn in_place_source(&self, pass: Pass) -> Option<WorkTable> {
        let Pass::Step(k) = pass else { return None };
        let previous = WorkTable::chain(k as i32 - 2);
        let spec = self.spec(pass);
        let takes_d = pass.mover() == Color::Black && spec.combine.len() > 1;
        (!takes_d && spec.combine.first() == Some(&previous) && self.obsolete_after(pass).contains(&previous))
            .then_some(previous)
    }

    /// Whether a step *defers* its table: a step updated in place whose new positions go to
    /// its streams only, its file left holding `t(k-2)` (readers OR the step's streams in),
    /// and the next step of the chain, which never defers, writes the blocks either step
    /// changed. Every other step of a chain from step 4 on (`k % 4` 0 or 1), so that about
    /// half the table writes of the steps go.
    pub fn defers(&self, pass: Pass) -> bool {
        matches!(pass, Pass::Step(k) if k % 4 < 2) && self.in_place_source(pass).is_some()
    }

    /// Whether `table` is read once the level's chains are complete. A pawnless run's edge
    /// and compaction read its delta streams, its illegal positions, `forced-zeroing` and
    /// `c` (the wins by a zeroing move, left out of the distance section) only, so its other
    /// tables go as soon as the last step is recorded; a level with pawns merges from its
    /// chain tables and `d` too.
    pub fn read_after_chains(&self, table: WorkTable) -> bool {
        self.layout.has_pawns()
            || matches!(
                table,
                WorkTable::IllegalWtm | WorkTable::IllegalBtm | WorkTable::ForcedZeroing | WorkTable::WinningCapture
            )
    }

    /// An eventual level's conversion sources for a chunk, given the push targets read for
    /// it (`rule`, and `eventual` when a level above has cursed positions, else the same
    /// words serve); `None` for a level that is not eventual.
    pub fn eventual_with<'b>(&'b self, rule: PushTargets<'b>, eventual: PushTargets<'b>) -> Option<Eventual<'b>> {
        self.eventual.as_ref().map(|e| {
            let pushes = if e.above_cursed.contains(&true) { eventual } else { rule };
            Eventual { caps: e.caps, pushes }
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

    /// A log line about the level's run.
    pub fn log(&self, msg: &str) {
        self.progress.log(&format!("{}: {msg}", self.layout.material));
    }

    /// The level's folder and storage blocks.
    pub fn files(&self) -> LevelFiles<'_> {
        LevelFiles { folder: &self.folder, level: &self.level, block_bits: self.plan.block_bits }
    }

    /// Storage blocks per table of the level.
    pub fn n_blocks(&self) -> usize {
        self.files().n_blocks()
    }

    /// Words per storage block.
    pub fn block_words(&self) -> usize {
        self.files().block_words()
    }

    /// Opens (creating if needed) a work table.
    pub fn open_table(&self, table: WorkTable) -> anyhow::Result<BitFile> {
        self.files().open_table(table)
    }

    /// A finished work table's block checksums.
    pub fn sums(&self, table: WorkTable) -> anyhow::Result<Vec<u64>> {
        self.files().sums(table)
    }

    /// Opens a finished work table with its block checksums.
    pub fn open_finished(&self, table: WorkTable) -> anyhow::Result<(BitFile, Vec<u64>)> {
        self.files().open_finished(table)
    }
}

/// A level's folder and how its tables are cut into storage blocks: what opening its work
/// tables takes, for the level being solved and for solved ones.
#[derive(Clone, Copy)]
pub struct LevelFiles<'a> {
    pub folder: &'a LevelFolder,
    pub level: &'a Level,
    pub block_bits: u32,
}

impl LevelFiles<'_> {
    /// Storage blocks per table of the level.
    pub fn n_blocks(&self) -> usize {
        (self.level.n_slots >> self.block_bits) as usize
    }

    /// Words per storage block.
    pub fn block_words(&self) -> usize {
        1 << (self.block_bits - 6)
    }

    /// Opens (creating if needed) a work table.
    pub fn open_table(&self, table: WorkTable) -> anyhow::Result<BitFile> {
        Ok(BitFile::open(&self.folder.bits(table), self.level.n_words(), self.block_words())?)
    }

    /// A finished work table's block checksums.
    pub fn sums(&self, table: WorkTable) -> anyhow::Result<Vec<u64>> {
        Ok(load_sums(&self.folder.sums(table), self.n_blocks())?)
    }

    /// Opens a finished work table with its block checksums.
    pub fn open_finished(&self, table: WorkTable) -> anyhow::Result<(BitFile, Vec<u64>)> {
        Ok((self.open_table(table)?, self.sums(table)?))
    }
}
