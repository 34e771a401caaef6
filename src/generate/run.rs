//! One white-wins run, out of core: the run's manifest, then level by level (a pawnless run
//! is one level) the check of an interrupted level's files (and the decision to repair or
//! restart), the passes until the chains are complete, and the merge of the level's values
//! into the table being assembled; finally the table is published.

use super::edge::exact_100_wins;
use super::merge::write_level;
use super::pass::{levels_above, run_pass, LevelContext, LoadedCaptures, StepMode};
use super::plan::{show_size, Budget, Plan};
use super::repair::check_and_repair;
use crate::chess::Color;
use crate::chess::Material;
use crate::index::Block;
use crate::index::{Layout, Level};
use crate::progress::Progress;
use crate::solve::WorkTable;
use crate::solve::{chains_complete, last_step_where, last_step_within, obsolete_after, Pass, LAST_STEP, MAX_STEP};
use crate::table::compact::CompactTable;
use crate::table::convert::uncompressed_to_compact;
use crate::table::uncompressed::{
    beyond_rule_mask, slice_section, LevelRecord, PartialTable, Section, TableFile, VALUE_WORD_BYTES,
};
use crate::table::version::table_path;
use crate::table::TableError;
use crate::work::bits::save_sums;
use crate::work::bits::{load_sums, BitFile};
use crate::work::manifest::{self, LevelDone, PassDone, RunManifest, MANIFEST_FORMAT};
use crate::work::publish::Durability;
use crate::work::{LevelFolder, RunFolder};
use anyhow::Context;
use byteorder::{ByteOrder, LittleEndian};
use std::path::{Path, PathBuf};
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

/// How a run's table is written.
struct TableSettings {
    /// The zstd level of its blocks.
    level: i32,
    threads: usize,
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

/// The new positions of each finished pass, as the chain logic wants them.
pub fn new_per_pass(passes: &[PassDone]) -> Vec<(Pass, u64)> {
    passes.iter().map(|p| (p.pass, p.new)).collect()
}

/// Context of a budget error: what the sub-endgames' bitbases took out of `--mem`.
pub fn sub_endgames_note(budget: &Budget, subs: u64) -> String {
    format!("--mem {}, of which the sub-endgames' bitbases take {}", show_size(budget.mem), show_size(subs))
}

/// A run whose levels are solved: its table assembled in the work folder, to be compacted
/// and published ([`Solved::finish`]), which may go on while the next run is solved.
pub struct Solved {
    partial: PartialTable,
    manifest: RunManifest,
    layout: Layout,
    folder: RunFolder,
    out_dir: PathBuf,
    work_dir: PathBuf,
    settings: TableSettings,
    report: RunReport,
}

impl Solved {
    /// Bytes the compact table will take in the output folder, estimated.
    pub fn final_bytes(&self) -> u64 {
        super::plan::run_needs(&self.layout).final_bytes
    }

    /// Compacts the assembled table (resuming an interrupted compaction), publishes it and
    /// removes the run's work folder.
    pub fn finish(self, progress: &dyn Progress) -> anyhow::Result<RunReport> {
        let t = Instant::now();
        let Solved { partial, manifest, layout, folder, out_dir, work_dir, settings, report } = self;
        let path = finish_table(partial, &manifest, &layout, &out_dir, &folder, &settings, progress)?;
        let compact_secs = t.elapsed().as_secs_f64();
        std::fs::remove_dir_all(&work_dir).with_context(|| format!("removing {}", work_dir.display()))?;
        Ok(RunReport { path, compact_secs, ..report })
    }
}

/// Computes (or resumes) the levels of one white-wins run with the sub-endgames' bitbases in
/// `caps`; [`Solved::finish`] then publishes its table into `out_dir`.
#[allow(clippy::too_many_arguments)]
pub fn solve_run(
    material: &Material,
    caps: &LoadedCaptures,
    out_dir: &Path,
    work_dir: &Path,
    budget: &Budget,
    level: i32,
    steps: StepMode,
    progress: &dyn Progress,
) -> anyhow::Result<Solved> {
    let layout = Layout::new(material);
    let folder = RunFolder::new(work_dir);
    std::fs::create_dir_all(work_dir).with_context(|| format!("creating {}", work_dir.display()))?;
    // The sub-endgames held in RAM come out of the budget.
    let chunk_budget = Budget { mem: budget.mem.saturating_sub(caps.bytes), ..*budget };
    let chosen = Plan::choose(&layout, &chunk_budget).with_context(|| sub_endgames_note(budget, caps.bytes))?;
    let (mut manifest, partial) = resume_levels(&layout, &folder, chosen.block_bits, progress)?;
    let mut chosen = Some(chosen);
    let levels = layout.levels();
    for level in levels.iter().copied() {
        if manifest.levels.iter().any(|l| l.level == level.number) {
            continue;
        }
        let plan = match chosen.take() {
            Some(p) if p.block_bits == manifest.block_bits && levels.len() == 1 => p,
            _ => Plan::new(&layout, &level, manifest.block_bits),
        };
        let above = levels_above(&layout, &level);
        let above_cursed: Vec<bool> = above.iter().map(|l| level_is_cursed(&manifest, l)).collect();
        for (l, &cursed) in above.iter().zip(&above_cursed) {
            let f = folder.level(l.number);
            ensure_finals(&partial, l, &f, cursed, manifest.block_bits, budget.block_bytes as usize, progress)?;
        }
        let ctx = LevelContext::new(&layout, level, plan, &folder, caps, above_cursed, budget, steps, progress);
        solve_level(&ctx, &folder, &mut manifest, &partial)?;
        // Levels more than one above are read no more.
        for l in levels.iter().filter(|l| l.number > level.number + 1) {
            let dir = folder.level(l.number);
            if dir.path().exists() {
                std::fs::remove_dir_all(dir.path()).with_context(|| format!("removing {}", dir.path().display()))?;
            }
        }
    }
    let report = run_report(&manifest, &layout, &folder)?;
    Ok(Solved {
        partial,
        manifest,
        layout,
        folder,
        out_dir: out_dir.to_path_buf(),
        work_dir: work_dir.to_path_buf(),
        settings: TableSettings { level, threads: super::alone_threads(budget.threads) },
        report,
    })
}

/// Opens the run's manifest and table being assembled, and checks the solved levels: from
/// the first damaged one, it and the levels solved after it are solved again.
fn resume_levels(
    layout: &Layout,
    folder: &RunFolder,
    block_bits: u32,
    progress: &dyn Progress,
) -> anyhow::Result<(RunManifest, PartialTable)> {
    let material = &layout.material;
    let mut manifest = open_manifest(material, folder, block_bits, progress)?;
    let mut partial = PartialTable::open(&folder.partial_table(), layout)?;
    if !manifest.levels.is_empty() {
        match check_levels(&partial, layout, &manifest) {
            Ok(None) => {}
            Ok(Some((first_bad, why))) => {
                // Levels are recorded before their ranges are synced: after a power loss
                // the lost ones (and those solved after them, which read them) are redone.
                progress.log(&format!("{material}: {why}; solving it and the levels after it again"));
                manifest.levels.truncate(first_bad);
                manifest.passes.clear();
                remove_unsolved_levels(layout, folder, &manifest)?;
                manifest::save_with(&folder.manifest(), &manifest, Durability::Atomic)?;
            }
            Err(e) => {
                manifest = restart(material, folder, format!("{e:#}"), manifest.block_bits, progress)?;
                partial = PartialTable::open(&folder.partial_table(), layout)?;
            }
        }
    }
    Ok((manifest, partial))
}

/// Writes the header of the run's table as assembled (checksums, last steps, flags; the
/// slice section with pawns), then converts it into the compact format (resuming an
/// interrupted conversion) and publishes that in `out_dir`.
fn finish_table(
    partial: PartialTable,
    manifest: &RunManifest,
    layout: &Layout,
    out_dir: &Path,
    folder: &RunFolder,
    settings: &TableSettings,
    progress: &dyn Progress,
) -> anyhow::Result<PathBuf> {
    let material = &layout.material;
    let passes: Vec<(Pass, u64)> = manifest.levels.iter().flat_map(|l| new_per_pass(&l.passes)).collect();
    // One level covers every section whole: its range checksums are the sections'.
    let sums = if manifest.levels.len() == 1 { Some(manifest.levels[0].range_sums) } else { None };
    let slices = layout.has_pawns().then(|| {
        let records: Vec<LevelRecord> = manifest
            .levels
            .iter()
            .map(|l| LevelRecord { last_step: rule_last_step(&new_per_pass(&l.passes)), range_sums: l.range_sums })
            .collect();
        slice_section(layout, &records)
    });
    // Conversions into cursed positions are followed (`c∞`, `d∞`); what the sub-endgames
    // could not tell, this table cannot either.
    // Wins of exactly 100 plies are told apart from cursed wins (`exact_100_wins`); a black
    // capture into a sub-endgame's win of exactly 100 plies is a rule loss only if the
    // sub-endgame tells them apart too.
    let assembled = partial.finish(
        rule_last_step(&passes),
        longest_cursed(&passes),
        sub_flags(material, out_dir)?,
        sums,
        slices.as_deref(),
    )?;
    let src = TableFile::open_run_unchecked(&assembled, material)?;
    let mut show = super::compact::block_progress(progress, material, "compaction");
    let path = uncompressed_to_compact(
        &src,
        &folder.compact_table(),
        &table_path(out_dir, material),
        settings.level,
        settings.threads,
        &mut |done, total| {
            show(done, total);
            compaction_stop_hook()
        },
    )?;
    progress.finish("written");
    Ok(path)
}

/// For tests: `TBSTREAM_STOP_AFTER_BLOCKS=n` stops the process with an error after `n`
/// blocks of a compaction, leaving the work folder exactly as a kill at that moment would.
/// A job with it set solves one run at a time (`generate::job::side_by_side`).
fn compaction_stop_hook() -> Result<(), TableError> {
    use std::sync::atomic::{AtomicI64, Ordering};
    static LEFT: AtomicI64 = AtomicI64::new(i64::MIN);
    if LEFT.load(Ordering::Relaxed) == i64::MIN {
        let n = std::env::var("TBSTREAM_STOP_AFTER_BLOCKS").ok().and_then(|v| v.parse().ok()).unwrap_or(-1);
        LEFT.store(n, Ordering::Relaxed);
    }
    if LEFT.load(Ordering::Relaxed) >= 0 && LEFT.fetch_sub(1, Ordering::Relaxed) == 1 {
        return Err(TableError::Wrong("stopped on purpose (TBSTREAM_STOP_AFTER_BLOCKS)".to_string()));
    }
    Ok(())
}

/// Solves (or resumes) one level: its passes, then the merge of its values into the table
/// being assembled; records it in the run's manifest.
fn solve_level(
    ctx: &LevelContext,
    folder: &RunFolder,
    manifest: &mut RunManifest,
    partial: &PartialTable,
) -> anyhow::Result<()> {
    let material = &ctx.layout.material;
    std::fs::create_dir_all(ctx.folder.path()).with_context(|| format!("creating {}", ctx.folder.path().display()))?;
    if !manifest.passes.is_empty() {
        progress_log(ctx, &format!("resuming after {} finished passes; checking them", manifest.passes.len()));
        match check_and_repair(ctx, &manifest.passes) {
            Ok(0) => {}
            Ok(n) => progress_log(ctx, &format!("rebuilt {n} damaged blocks")),
            Err(e) => {
                ctx.progress.log(&format!("{material}: {e:#}; restarting this level"));
                let dir = ctx.folder.path();
                std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
                manifest.passes.clear();
                manifest::save(&folder.manifest(), manifest)?;
            }
        }
    }
    manifest.eventual = ctx.is_eventual();
    while !chains_complete(&new_per_pass(&manifest.passes), ctx.is_eventual()) {
        anyhow::ensure!(
            manifest.passes.len() < MAX_STEP as usize + 2,
            "{material}: positions are still being won after step {MAX_STEP} (beyond any known endgame)"
        );
        run_next_pass(ctx, folder, manifest)?;
    }
    let t = Instant::now();
    // Wins of exactly 100 plies among step 101's positions (recomputed whole on resume).
    let edge = exact_100_wins(ctx, &manifest.passes)?;
    let merged = write_level(ctx, &manifest.passes, partial, edge.as_ref())?;
    manifest.levels.push(LevelDone {
        level: ctx.level.number,
        passes: std::mem::take(&mut manifest.passes),
        merge_secs: t.elapsed().as_secs_f64(),
        merge_bytes_read: merged.bytes_read,
        merge_bytes_written: merged.bytes_written,
        range_sums: merged.range_sums,
    });
    // Not synced (the final table is, when published): after a power loss the resume finds
    // a lost level by its range checksums and solves it again.
    manifest::save_with(&folder.manifest(), manifest, Durability::Atomic)?;
    let dir = ctx.folder.path();
    std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    // The levels below read this level's final bitbases.
    if ctx.layout.has_pawns() && ctx.level.number > 0 {
        let cursed = level_is_cursed(manifest, &ctx.level);
        extract_finals(partial, &ctx.level, &ctx.folder, cursed, ctx.plan.block_bits, ctx.io_bytes)?;
    }
    Ok(())
}

/// Makes sure a solved level's final bitbases are in its folder and intact, extracting
/// them again from the table being assembled (whose ranges were checked) if not. They are
/// exactly the level's ranges of the table's bitbase sections.
fn ensure_finals(
    partial: &PartialTable,
    level: &Level,
    folder: &LevelFolder,
    cursed: bool,
    block_bits: u32,
    io_bytes: usize,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let n_blocks = (level.n_slots >> block_bits) as usize;
    let block_words = 1usize << (block_bits - 6);
    let intact = |table: WorkTable| -> anyhow::Result<()> {
        anyhow::ensure!(folder.bits(table).exists(), "{} is missing", folder.bits(table).display());
        let sums = load_sums(&folder.sums(table), n_blocks)?;
        let file = BitFile::open(&folder.bits(table), level.n_words(), io_bytes)?;
        let step = (1 << 20) / (block_words * 8).max(1);
        for first in (0..n_blocks).step_by(step.max(1)) {
            file.read_range(first, step.min(n_blocks - first), block_words, &sums)?;
        }
        Ok(())
    };
    if final_tables(cursed).into_iter().try_for_each(intact).is_ok() {
        return Ok(());
    }
    if folder.path().exists() {
        progress.log(&format!(
            "{}: extracting the final bitbases of level {} again",
            partial.path().display(),
            level.number
        ));
    }
    extract_finals(partial, level, folder, cursed, block_bits, io_bytes)
}

/// The final tables a solved level keeps for the levels below: its final bitbases, and with
/// cursed positions its eventual ones.
fn final_tables(cursed: bool) -> Vec<WorkTable> {
    let eventual = [WorkTable::FinalEventual(Color::White), WorkTable::FinalEventual(Color::Black)];
    let finals = [WorkTable::Final(Color::White), WorkTable::Final(Color::Black)];
    finals.into_iter().chain(eventual.into_iter().filter(|_| cursed)).collect()
}

/// Whether a solved level of the run has cursed positions (some step past 100 added some).
fn level_is_cursed(manifest: &RunManifest, level: &Level) -> bool {
    manifest
        .levels
        .iter()
        .find(|l| l.level == level.number)
        .is_some_and(|l| longest_cursed(&new_per_pass(&l.passes)) != [0, 0])
}

/// Writes a solved level's final bitbases (`final-wtm`, `final-btm`) into its folder from
/// the table being assembled; with `cursed`, also the positions won with or without the rule
/// (`final-wtm-inf`, `final-btm-inf`: the bitbase and the cursed codes of the values).
fn extract_finals(
    partial: &PartialTable,
    level: &Level,
    folder: &LevelFolder,
    cursed: bool,
    block_bits: u32,
    io_bytes: usize,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(folder.path()).with_context(|| format!("creating {}", folder.path().display()))?;
    let block_words = 1usize << (block_bits - 6);
    let n_blocks = (level.n_slots >> block_bits) as usize;
    for table in final_tables(cursed) {
        let (stm, eventual) = match table {
            WorkTable::Final(stm) => (stm, false),
            WorkTable::FinalEventual(stm) => (stm, true),
            _ => unreachable!("final tables only"),
        };
        let file = BitFile::open(&folder.bits(table), level.n_words(), io_bytes)?;
        let (offset, _) = partial.range(Section::bitbase(stm), level.first_slot, level.n_slots);
        let (values_offset, _) = partial.range(Section::values(stm), level.first_slot, level.n_slots);
        let mut sums = Vec::with_capacity(n_blocks);
        let group = ((1 << 20) / (block_words * 8)).max(1);
        for first in (0..n_blocks).step_by(group) {
            let n = group.min(n_blocks - first);
            let mut bytes = vec![0u8; n * block_words * 8];
            partial.read_at(offset + (first * block_words * 8) as u64, &mut bytes)?;
            let mut words = vec![0u64; n * block_words];
            LittleEndian::read_u64_into(&bytes, &mut words);
            if eventual {
                let per_word = VALUE_WORD_BYTES as usize;
                let mut values = vec![0u8; n * block_words * per_word];
                partial.read_at(values_offset + (first * block_words * per_word) as u64, &mut values)?;
                for (w, planes) in words.iter_mut().zip(values.chunks_exact(per_word)) {
                    let planes = std::array::from_fn(|j| LittleEndian::read_u64(&planes[8 * j..8 * j + 8]));
                    *w |= beyond_rule_mask(stm, &planes);
                }
            }
            sums.extend(file.write_blocks(&Block::run_of(first, n, block_words), &words)?);
        }
        // Not synced: on resume `ensure_finals` checks them block by block.
        save_sums(&folder.sums(table), &sums)?;
    }
    Ok(())
}

/// A log line about the level (the run's name, and the level's when there are several).
fn progress_log(ctx: &LevelContext, msg: &str) {
    ctx.progress.log(&format!("{}: {msg}", ctx.layout.material));
}

/// Runs the next pass of a level and records it: its tables' block checksums, then the
/// manifest (the pass is finished from then on), then the tables no later pass reads are
/// deleted.
fn run_next_pass(ctx: &LevelContext, folder: &RunFolder, manifest: &mut RunManifest) -> anyhow::Result<()> {
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
    let mut next_outputs = ctx.spec(pass.next()).outputs.into_iter().map(|t| ctx.folder.bits(t));
    for table in obsolete_after(pass, ctx.is_eventual()) {
        std::fs::remove_file(ctx.folder.sums(table)).ok();
        let old = ctx.folder.bits(table);
        match next_outputs.next().filter(|next| !next.exists() && old.exists()) {
            Some(next) => std::fs::rename(&old, &next)
                .with_context(|| format!("renaming {} to {}", old.display(), next.display()))?,
            None => drop(std::fs::remove_file(old)),
        }
    }
    Ok(())
}

/// Checks that the solved levels' ranges of the table being assembled are intact: the
/// position in the manifest of the first damaged level, with what is wrong, if any.
fn check_levels(
    partial: &PartialTable,
    layout: &Layout,
    manifest: &RunManifest,
) -> anyhow::Result<Option<(usize, String)>> {
    let levels = layout.levels();
    for (n, done) in manifest.levels.iter().enumerate() {
        let level: &Level =
            levels.iter().find(|l| l.number == done.level).context("the manifest names a level the run lacks")?;
        for (i, s) in Section::ALL.into_iter().enumerate() {
            let (offset, len) = partial.range(s, level.first_slot, level.n_slots);
            if partial.checksum(offset, len)? != done.range_sums[i] {
                let why = format!("{}: level {} is damaged in section {s:?}", partial.path().display(), level.number);
                return Ok(Some((n, why)));
            }
        }
    }
    Ok(None)
}

/// Removes the folders of the levels the manifest does not hold as solved (their passes
/// are started again).
fn remove_unsolved_levels(layout: &Layout, folder: &RunFolder, manifest: &RunManifest) -> anyhow::Result<()> {
    for level in layout.levels() {
        let dir = folder.level(level.number);
        if !manifest.levels.iter().any(|l| l.level == level.number) && dir.path().exists() {
            std::fs::remove_dir_all(dir.path()).with_context(|| format!("removing {}", dir.path().display()))?;
        }
    }
    Ok(())
}

/// Whether every sub-endgame of the run marks all its cursed positions, and whether every
/// one's edge is exact (the header flags; the tables were checked when loaded).
fn sub_flags(material: &Material, out_dir: &Path) -> anyhow::Result<(bool, bool)> {
    let (mut five_valued, mut edge_exact) = (true, true);
    for sub in material.successor_runs().iter().filter(|s| !s.white_bare()) {
        let meta = CompactTable::open_run(&table_path(out_dir, sub), sub)?.header.meta;
        five_valued &= meta.five_valued;
        edge_exact &= meta.edge_exact;
    }
    Ok((five_valued, edge_exact))
}

/// The last step up to 100 that added positions.
fn rule_last_step(passes: &[(Pass, u64)]) -> u8 {
    last_step_within(passes, LAST_STEP).max(last_step_within(passes, LAST_STEP - 1)) as u8
}

/// The last steps beyond 100 that added positions, odd (wtm) and even (btm); 0 if none.
fn longest_cursed(passes: &[(Pass, u64)]) -> [u16; 2] {
    [1, 0].map(|parity| last_step_where(passes, |k| k > LAST_STEP && k % 2 == parity))
}

/// The report of a run whose levels are all solved.
fn run_report(manifest: &RunManifest, layout: &Layout, folder: &RunFolder) -> anyhow::Result<RunReport> {
    let _ = folder;
    // Chunks summed over the levels.
    let (mut white_chunks, mut black_chunks) = (0, 0);
    for level in layout.levels() {
        let plan = Plan::new(layout, &level, manifest.block_bits);
        white_chunks += plan.white.list.len();
        black_chunks += plan.black.list.len();
    }
    let levels = &manifest.levels;
    let all: Vec<(Pass, u64)> = levels.iter().flat_map(|l| new_per_pass(&l.passes)).collect();
    Ok(RunReport {
        passes: levels.iter().flat_map(|l| l.passes.iter().cloned()).collect(),
        last_step: rule_last_step(&all),
        longest_cursed: longest_cursed(&all),
        levels: levels.len(),
        block_bits: manifest.block_bits,
        white_chunks,
        black_chunks,
        merge_secs: levels.iter().map(|l| l.merge_secs).sum(),
        merge_bytes_read: levels.iter().map(|l| l.merge_bytes_read).sum(),
        merge_bytes_written: levels.iter().map(|l| l.merge_bytes_written).sum(),
        compact_secs: 0.0,
        path: PathBuf::new(),
    })
}

/// The run's manifest: the interrupted run's (which keeps its block size), or a fresh one.
/// A manifest of another run, or a damaged one, restarts the run.
fn open_manifest(
    material: &Material,
    folder: &RunFolder,
    block_bits: u32,
    progress: &dyn Progress,
) -> anyhow::Result<RunManifest> {
    let path = folder.manifest();
    match manifest::load::<RunManifest>(&path) {
        Ok(Some(m)) if m.run == material.to_string() => {
            if m.block_bits != block_bits {
                progress.log(&format!(
                    "{material}: keeping the interrupted run's blocks of {} positions",
                    1u64 << m.block_bits
                ));
            }
            Ok(m)
        }
        Ok(Some(m)) => {
            restart(material, folder, format!("{} belongs to run {}", path.display(), m.run), block_bits, progress)
        }
        Ok(None) => fresh(material, folder, block_bits, progress),
        Err(e) => restart(material, folder, format!("{:#}", anyhow::Error::from(e)), block_bits, progress),
    }
}

/// Starts a run in an empty folder.
fn fresh(
    material: &Material,
    folder: &RunFolder,
    block_bits: u32,
    progress: &dyn Progress,
) -> anyhow::Result<RunManifest> {
    let m = RunManifest {
        format: MANIFEST_FORMAT,
        run: material.to_string(),
        block_bits,
        levels: Vec::new(),
        passes: Vec::new(),
        eventual: false,
    };
    manifest::save(&folder.manifest(), &m)?;
    progress.log(&format!("{material}: starting in {}", folder.path().display()));
    Ok(m)
}

/// Empties the run's folder and starts the run again.
fn restart(
    material: &Material,
    folder: &RunFolder,
    why: String,
    block_bits: u32,
    progress: &dyn Progress,
) -> anyhow::Result<RunManifest> {
    progress.log(&format!("{material}: {why}; restarting this run"));
    let dir = folder.path();
    std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    fresh(material, folder, block_bits, progress)
}
