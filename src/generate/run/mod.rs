//! One white-wins run, out of core: the run's manifest ([`resume`]), then level by level (a
//! pawnless run is one level) the check of an interrupted level's files (and the decision to
//! repair or restart), the passes until the chains are complete, the edge, and with pawns
//! the level's final bitbases for the levels below and the files its values are decoded
//! from, kept until the compaction ([`kept`]); finally the table is compacted straight from
//! every level's streams and published ([`finish`]).
//!
//! Owns: a run's manifest and the order of its stages. May not import: `job`, `cluster`,
//! `cli`.

mod finish;
mod kept;
mod resume;

use super::captures::LoadedCaptures;
use super::edge::{exact_100_wins, EdgeSet};
use super::level::{levels_above, LevelContext, RunContext};
use super::merge::{write_finals, Merged, StreamPlanes};
use super::options::{GenOptions, JobHooks, NoHooks};
use super::pass::run_pass;
use super::plan::{show_size, Budget, Plan};
use super::repair::check_and_repair;
use crate::chess::Material;
use crate::index::{Layout, Level};
use crate::progress::Progress;
use crate::solve::{
    chains_complete, last_step_where, last_step_within, still_steps, Pass, Promotions, WorkTable, LAST_STEP, MAX_STEP,
};
use crate::work::bits::save_sums;
use crate::work::manifest::{self, new_per_pass, LevelDone, PassDone, RunManifest};
use crate::work::publish::Durability;
use crate::work::reaper::Reaper;
use crate::work::{link_or_copy, RunFolder};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What a run measured.
#[derive(Debug, Default, Clone)]
pub struct RunReport {
    /// The passes of every level.
    pub passes: Vec<PassDone>,
    /// The last step that added positions under the 50-move rule (at most 100).
    pub last_step: u8,
    /// The longest cursed wins (the last steps beyond 100 that added positions), wtm and
    /// btm; 0 if none.
    pub longest_cursed: [u16; 2],
    pub levels: usize,
    pub block_bits: u32,
    pub white_chunks: usize,
    pub black_chunks: usize,
    pub merge_secs: f64,
    pub merge_bytes_read: u64,
    pub merge_bytes_written: u64,
    /// Seconds spent writing the compact table.
    pub compact_secs: f64,
    pub path: PathBuf,
}

impl RunReport {
    /// Bytes of all delta streams of the run.
    pub fn stream_bytes(&self) -> u64 {
        self.passes.iter().map(|p| p.stream_bytes).sum()
    }

    /// Seconds spent in the passes that `pick` selects.
    pub fn secs(&self, pick: impl Fn(Pass) -> bool) -> f64 {
        self.passes.iter().filter(|p| pick(p.pass)).map(|p| p.secs).sum()
    }
}

/// Context of a budget error: what the sub-endgames' bitbases took out of `--mem`.
pub fn sub_endgames_note(budget: &Budget, subs: u64) -> String {
    format!("--mem {}, of which the sub-endgames' bitbases take {}", show_size(budget.mem), show_size(subs))
}

/// How a solved run's table is written.
struct TableSettings {
    out_dir: PathBuf,
    zstd_level: i32,
    threads: usize,
    hooks: Option<Arc<dyn JobHooks>>,
}

/// Where a solved level's values go.
#[derive(Clone, Copy)]
enum Assembly<'a> {
    /// Kept in the level's folder, with its final bitbases, until every level is solved
    /// (runs with pawns: the levels below read the bitbases).
    Kept,
    /// Straight into the compact table, published at once (a pawnless run's only level).
    Compact(&'a TableSettings),
}

/// A solved run's table: its levels' values kept in the work folder, to be compacted and
/// published ([`Solved::finish`], which may go on while the next run is solved), or
/// (pawnless) published already, with the seconds its compaction took.
enum SolvedTable {
    Kept,
    Published(PathBuf, f64),
}

/// A run whose levels are solved.
pub struct Solved {
    table: SolvedTable,
    manifest: RunManifest,
    layout: Layout,
    folder: RunFolder,
    settings: TableSettings,
    report: RunReport,
}

impl Solved {
    /// Bytes the compact table will take in the output folder, estimated.
    pub fn final_bytes(&self) -> u64 {
        super::plan::run_needs(&self.layout).final_bytes
    }

    /// Compacts the levels' values (resuming an interrupted compaction), publishes the table
    /// and removes the run's work folder.
    pub fn finish(self, progress: &dyn Progress) -> anyhow::Result<RunReport> {
        let t = Instant::now();
        let Solved { table, manifest, layout, folder, settings, report } = self;
        let (path, compact_secs) = match table {
            SolvedTable::Published(path, secs) => (path, secs),
            SolvedTable::Kept => {
                let path = finish::compact_kept_levels(&manifest, &layout, &folder, &settings, progress)?;
                (path, t.elapsed().as_secs_f64())
            }
        };
        let work_dir = folder.path();
        std::fs::remove_dir_all(work_dir).with_context(|| format!("removing {}", work_dir.display()))?;
        Ok(RunReport { path, compact_secs, ..report })
    }
}

/// Computes (or resumes) the levels of one white-wins run in its work folder `work_dir`,
/// with the sub-endgames' bitbases in `caps`; [`Solved::finish`] then publishes its table
/// into `opts.out`. The promotions' sub-endgames (as many men as the run: with 6 men, a
/// bitbase file of gigabytes each) are loaded for the levels whose pawns can promote and
/// dropped once no level still to solve can, before the levels' kept files grow.
pub fn solve_run(
    material: &Material,
    mut caps: LoadedCaptures,
    work_dir: &Path,
    opts: &GenOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Solved> {
    let layout = Layout::new(material);
    let folder = RunFolder::new(work_dir);
    let budget = &opts.budget;
    std::fs::create_dir_all(work_dir).with_context(|| format!("creating {}", work_dir.display()))?;
    // The sub-endgames held in RAM come out of the budget.
    let chunk_budget = Budget { mem: budget.mem.saturating_sub(caps.full_bytes), ..*budget };
    let chosen = Plan::choose(&layout, &chunk_budget, opts.max_fixed_bits)
        .with_context(|| sub_endgames_note(budget, caps.full_bytes))?;
    let settings = TableSettings {
        out_dir: opts.out.clone(),
        zstd_level: opts.zstd_level,
        threads: super::alone_threads(budget.threads),
        hooks: opts.hooks.clone(),
    };
    let mut manifest = resume::resume_levels(&layout, &folder, chosen.cut(), progress)?;
    let mut published = None;
    let cut = resume::cut_of(&manifest);
    let mut chosen = Some(chosen);
    let levels = layout.levels();
    let promotes = |l: &Level| layout.slices.as_ref().is_some_and(|s| s.level_promotes(l.number));
    for (i, level) in levels.iter().copied().enumerate() {
        if manifest.levels.iter().any(|l| l.level == level.number) {
            continue;
        }
        let wanted =
            if promotes(&level) || (caps.promotions() == Promotions::Load && levels[i + 1..].iter().any(promotes)) {
                Promotions::Load
            } else {
                Promotions::Skip
            };
        if wanted != caps.promotions() {
            let what = if wanted == Promotions::Load { "loading" } else { "releasing" };
            progress.log(&format!("{material}/{}: {what} the promotions' sub-endgames", level.number));
            // Released, the promotions' bitbases go with the old captures (files of gigabytes
            // with 6 men); the other sub-endgames' are shared.
            caps = caps.with_promotions(material, &opts.out, budget, work_dir, wanted)?;
        }
        let run = RunContext {
            layout: &layout,
            folder: &folder,
            caps: &caps,
            budget,
            steps: opts.steps,
            progress,
            hooks: opts.hooks.as_deref().unwrap_or(&NoHooks),
        };
        let plan = match chosen.take() {
            Some(p) if p.cut() == cut && levels.len() == 1 => p,
            _ => Plan::new(&layout, &level, cut),
        };
        // The levels above were checked when the run resumed.
        let above_cursed: Vec<bool> =
            levels_above(&layout, &level).iter().map(|l| level_is_cursed(&manifest, l)).collect();
        let ctx = LevelContext::new(&run, level, plan, above_cursed);
        let to = if layout.has_pawns() { Assembly::Kept } else { Assembly::Compact(&settings) };
        published = solve_level(&ctx, &folder, &mut manifest, to)?;
    }
    let report = finish::run_report(&manifest, &layout);
    let table = match published {
        Some((path, secs)) => SolvedTable::Published(path, secs),
        None if layout.has_pawns() => SolvedTable::Kept,
        None => anyhow::bail!("{material}: solved without a table"),
    };
    Ok(Solved { table, manifest, layout, folder, settings, report })
}

/// Solves (or resumes) one level: its passes, then (with pawns) its final bitbases and the
/// files its values are decoded from, kept for the compaction, or (pawnless) the compaction
/// of its values into the published table (returned, with the seconds it took); records it
/// in the run's manifest.
fn solve_level(
    ctx: &LevelContext,
    folder: &RunFolder,
    manifest: &mut RunManifest,
    to: Assembly,
) -> anyhow::Result<Option<(PathBuf, f64)>> {
    let material = &ctx.layout.material;
    std::fs::create_dir_all(ctx.folder.path()).with_context(|| format!("creating {}", ctx.folder.path().display()))?;
    if !manifest.passes.is_empty() {
        ctx.log(&format!("resuming after {} finished passes; checking them", manifest.passes.len()));
        match check_and_repair(ctx, &manifest.passes) {
            Ok(0) => {}
            Ok(n) => ctx.log(&format!("rebuilt {n} damaged blocks")),
            Err(e) => {
                ctx.log(&format!("{e:#}; restarting this level"));
                let dir = ctx.folder.path();
                std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
                manifest.passes.clear();
                manifest::save(&folder.manifest(), manifest)?;
            }
        }
    }
    manifest.eventual = ctx.is_eventual();
    let reaper = Reaper::new(&ctx.folder.trash());
    while !chains_complete(&new_per_pass(&manifest.passes), ctx.is_eventual()) {
        anyhow::ensure!(
            manifest.passes.len() < MAX_STEP as usize + 2,
            "{material}: positions are still being won after step {MAX_STEP} (beyond any known endgame)"
        );
        match still_steps(&new_per_pass(&manifest.passes), ctx.is_eventual()) {
            Some(steps) => skip_still_steps(ctx, folder, manifest, steps)?,
            None => run_next_pass(ctx, folder, manifest, &reaper)?,
        }
    }
    // The tables nothing reads from here on are freed while the edge and the compaction run.
    for table in manifest.passes.iter().flat_map(|p| ctx.spec(p.pass).outputs) {
        if !ctx.read_after_chains(table) {
            reaper.discard(&ctx.folder.bits(table))?;
            reaper.discard(&ctx.folder.sums(table))?;
        }
    }
    let t = Instant::now();
    // Wins of exactly 100 plies among step 101's positions (recomputed whole on resume).
    let edge = exact_100_wins(ctx, &manifest.passes)?;
    // The final bitbases and the kept files, or (pawnless) the edge alone: the compaction is
    // timed on its own.
    let (merged, merge_secs, published) = match to {
        Assembly::Kept => {
            let log = ctx.folder.exact_100_log();
            match &edge {
                Some(set) => set.save(&log)?,
                None => EdgeSet::new(ctx.n_blocks()).save(&log)?,
            }
            let merged = if ctx.level.number > 0 {
                let cursed = longest_cursed(&new_per_pass(&manifest.passes)) != [0, 0];
                write_finals(ctx, &manifest.passes, edge.as_ref(), cursed)?
            } else {
                Merged { bytes_read: 0, bytes_written: 0 }
            };
            (merged, t.elapsed().as_secs_f64(), None)
        }
        Assembly::Compact(settings) => {
            let edge_secs = t.elapsed().as_secs_f64();
            let planes =
                StreamPlanes::open(vec![(ctx.files(), &manifest.passes, edge)], ctx.level.n_slots, ctx.budget.threads)?;
            let path = finish::compact_from_streams(
                &planes,
                &[&manifest.passes],
                &ctx.layout,
                folder,
                settings,
                ctx.progress,
            )?;
            let written = std::fs::metadata(&path).with_context(|| format!("reading {}", path.display()))?.len();
            let merged = Merged { bytes_read: planes.bytes_read(), bytes_written: written };
            (merged, edge_secs, Some((path, t.elapsed().as_secs_f64() - edge_secs)))
        }
    };
    manifest.levels.push(LevelDone {
        level: ctx.level.number,
        passes: std::mem::take(&mut manifest.passes),
        merge_secs,
        merge_bytes_read: merged.bytes_read,
        merge_bytes_written: merged.bytes_written,
    });
    // Not synced (the final table is, when published): after a power loss the resume finds
    // a lost level by the checksums of its kept files and solves it again.
    manifest::save_with(&folder.manifest(), manifest, Durability::Atomic)?;
    match to {
        Assembly::Kept => {
            kept::prune(&ctx.folder, &reaper)?;
            reaper.finish();
            let trash = ctx.folder.trash();
            if trash.exists() {
                std::fs::remove_dir_all(&trash).with_context(|| format!("removing {}", trash.display()))?;
            }
        }
        Assembly::Compact(_) => {
            reaper.finish();
            let dir = ctx.folder.path();
            std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
    }
    Ok(published)
}

/// The level of the run a manifest records as solved.
fn solved_level(layout: &Layout, done: &LevelDone) -> anyhow::Result<Level> {
    layout.levels().into_iter().find(|l| l.number == done.level).context("the manifest names a level the run lacks")
}

/// Whether a solved level of the run has cursed positions (some step past 100 added some).
fn level_is_cursed(manifest: &RunManifest, level: &Level) -> bool {
    manifest
        .levels
        .iter()
        .find(|l| l.level == level.number)
        .is_some_and(|l| longest_cursed(&new_per_pass(&l.passes)) != [0, 0])
}

/// Runs the next pass of a level and records it: its tables' block checksums, then the
/// manifest (the pass is finished from then on), then the tables no later pass reads are
/// recycled as the next pass's outputs or deleted in the background.
fn run_next_pass(
    ctx: &LevelContext,
    folder: &RunFolder,
    manifest: &mut RunManifest,
    reaper: &Reaper,
) -> anyhow::Result<()> {
    let pass = Pass::nth(manifest.passes.len());
    let spec = ctx.spec(pass);
    let t = Instant::now();
    let r = run_pass(ctx, &spec)?;
    for (&table, sums) in spec.outputs.iter().zip(&r.sums) {
        save_sums(&ctx.folder.sums(table), sums)?;
    }
    manifest.passes.push(PassDone {
        pass,
        new: r.new,
        secs: t.elapsed().as_secs_f64(),
        bytes_read: r.bytes_read,
        bytes_written: r.bytes_written,
        stream_bytes: r.stream_bytes,
    });
    // Not synced: after a power loss the resume finds lost data by its checksums.
    manifest::save_with(&folder.manifest(), manifest, Durability::Atomic)?;
    // An obsolete table's file becomes the next pass's output (every table has the same
    // size, and the pass writes every block): overwriting cached pages is cheaper than
    // allocating new ones. Its stale blocks are never trusted: a chunk counts only with its
    // record, whose checksums its blocks must match.
    // (A step updated in place takes over its source's file instead.)
    let recycled = match ctx.in_place_source(pass.next()) {
        Some(_) => Vec::new(),
        None => ctx.spec(pass.next()).outputs,
    };
    let mut next_outputs = recycled.into_iter().map(|t| ctx.folder.bits(t));
    for table in ctx.obsolete_after(pass) {
        std::fs::remove_file(ctx.folder.sums(table)).ok();
        let old = ctx.folder.bits(table);
        match next_outputs.next().filter(|next| !next.exists() && old.exists()) {
            Some(next) => std::fs::rename(&old, &next)
                .with_context(|| format!("renaming {} to {}", old.display(), next.display()))?,
            None => reaper.discard(&old)?,
        }
    }
    Ok(())
}

/// Records the steps `steps` of an eventual level as finished without running them
/// ([`still_steps`]). Each would find nothing and log every chunk with empty streams and its
/// table's block checksums, the same bytes as the log of the last step of its chain that
/// ran (the two steps before it found nothing either), so it gets that log and its streams
/// under its own names (hard links: no new file, nothing copied); the chains' last tables
/// become `t099` and `t100` the same way. The manifest then records the steps, and the old
/// names of the tables go. A kill before the manifest is saved leaves new names that the
/// same skip replaces on resume; after it, old names that nothing reads.
fn skip_still_steps(
    ctx: &LevelContext,
    folder: &RunFolder,
    manifest: &mut RunManifest,
    steps: std::ops::RangeInclusive<u16>,
) -> anyhow::Result<()> {
    let ran = steps.start() - 1;
    let last_of_chain = |j: u16| if (j - ran).is_multiple_of(2) { ran } else { ran - 1 };
    for j in steps.clone() {
        let from = Pass::Step(last_of_chain(j));
        link_or_copy(&ctx.folder.log(from), &ctx.folder.log(Pass::Step(j)))?;
        link_or_copy(&ctx.folder.streams(from), &ctx.folder.streams(Pass::Step(j)))?;
    }
    let end = *steps.end();
    let renamed: Vec<(WorkTable, WorkTable)> = [end - 1, end]
        .into_iter()
        .map(|j| (WorkTable::Chain(last_of_chain(j)), WorkTable::Chain(j)))
        .filter(|(from, to)| from != to)
        .collect();
    for &(from, to) in &renamed {
        link_or_copy(&ctx.folder.bits(from), &ctx.folder.bits(to))?;
        link_or_copy(&ctx.folder.sums(from), &ctx.folder.sums(to))?;
    }
    for j in steps.clone() {
        let pass = Pass::Step(j);
        manifest.passes.push(PassDone { pass, new: 0, secs: 0.0, bytes_read: 0, bytes_written: 0, stream_bytes: 0 });
    }
    manifest::save_with(&folder.manifest(), manifest, Durability::Atomic)?;
    for &(from, _) in &renamed {
        for path in [ctx.folder.bits(from), ctx.folder.sums(from)] {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    ctx.progress.log(&format!(
        "{} steps {} to {end}: nothing to find (steps {} and {ran} found nothing), recorded without running",
        ctx.name(),
        steps.start(),
        ran - 1
    ));
    Ok(())
}

/// The last step up to 100 that added positions.
fn rule_last_step(passes: &[(Pass, u64)]) -> u8 {
    last_step_within(passes, LAST_STEP).max(last_step_within(passes, LAST_STEP - 1)) as u8
}

/// The last steps beyond 100 that added positions, odd (wtm) and even (btm); 0 if none.
fn longest_cursed(passes: &[(Pass, u64)]) -> [u16; 2] {
    [1, 0].map(|parity| last_step_where(passes, |k| k > LAST_STEP && k % 2 == parity))
}
