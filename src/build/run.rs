//! One white-wins run, out of core: the run's manifest, the check of an interrupted run's
//! files (and the decision to repair or restart), the passes until the chains are complete,
//! and the merge into the final table.

use super::merge::write_table;
use super::pass::{run_pass, RunContext};
use super::plan::{show_size, Budget, Plan};
use super::repair::check_and_repair;
use crate::chess::Material;
use crate::index::Layout;
use crate::progress::Progress;
use crate::solve::{chains_complete, last_step, obsolete_after, Captures, Pass, PassSpec};
use crate::work::bits::save_sums;
use crate::work::manifest::{self, PassDone, RunManifest, MANIFEST_FORMAT};
use crate::work::RunFolder;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::Instant;

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

/// Computes (or resumes) one white-wins run and writes its table into `out_dir`.
/// `caps_bytes` is the RAM the sub-endgames' bitbases in `caps` hold (out of the budget).
pub fn solve_run(
    material: &Material,
    caps: &Captures,
    caps_bytes: u64,
    out_dir: &Path,
    work_dir: &Path,
    budget: &Budget,
    progress: &dyn Progress,
) -> anyhow::Result<RunReport> {
    let layout = Layout::new(material);
    let folder = RunFolder::new(work_dir);
    std::fs::create_dir_all(work_dir).with_context(|| format!("creating {}", work_dir.display()))?;
    // The sub-endgames held in RAM come out of the budget.
    let chunk_budget = Budget { mem: budget.mem.saturating_sub(caps_bytes), ..*budget };
    let chosen = Plan::choose(&layout, &chunk_budget).with_context(|| sub_endgames_note(budget, caps_bytes))?;
    let mut manifest = open_manifest(material, &folder, chosen.block_bits, progress)?;
    let plan = if manifest.block_bits == chosen.block_bits { chosen } else { Plan::new(&layout, manifest.block_bits) };
    let ctx = RunContext {
        layout,
        plan,
        caps,
        folder,
        budget: chunk_budget,
        io_bytes: budget.block_bytes as usize,
        progress,
    };
    if !manifest.passes.is_empty() {
        progress.log(&format!("{material}: resuming after {} finished passes; checking them", manifest.passes.len()));
        match check_and_repair(&ctx, &manifest) {
            Ok(0) => {}
            Ok(n) => progress.log(&format!("{material}: rebuilt {n} damaged blocks")),
            Err(e) => manifest = restart(material, &ctx.folder, format!("{e:#}"), ctx.plan.block_bits, progress)?,
        }
    }
    while !chains_complete(&new_per_pass(&manifest.passes)) {
        run_next_pass(&ctx, &mut manifest)?;
    }
    let t = Instant::now();
    let (path, read, written) = write_table(&ctx, &manifest, out_dir)?;
    let report = RunReport {
        last_step: last_step(&new_per_pass(&manifest.passes)),
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

/// Runs the next pass of a run and records it: its tables' block checksums, then the
/// manifest (the pass is finished from then on), then the tables no later pass reads are
/// deleted.
fn run_next_pass(ctx: &RunContext, manifest: &mut RunManifest) -> anyhow::Result<()> {
    let pass = Pass::nth(manifest.passes.len());
    let spec = PassSpec::of(pass);
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
    manifest::save(&ctx.folder.manifest(), manifest)?;
    for table in obsolete_after(pass) {
        std::fs::remove_file(ctx.folder.bits(table)).ok();
        std::fs::remove_file(ctx.folder.sums(table)).ok();
    }
    Ok(())
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
    let m = RunManifest { format: MANIFEST_FORMAT, run: material.to_string(), block_bits, passes: Vec::new() };
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
