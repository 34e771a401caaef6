//! `tbstream plan`: what a job would do before it runs: per run its chunk plan and RAM,
//! disk and I/O, and time on a given machine; for the job, the final bytes, the work
//! folder's peak and the free space it needs.

use super::captures::{held_bytes, is_built};
use super::disk::{disk_needs, DiskNeed};
use super::estimate::{estimate_run, Machine, TimeEstimate};
use super::options::GenOptions;
use super::plan::{run_needs, Budget, Plan, RunNeeds};
use super::run::sub_endgames_note;
use crate::chess::Material;
use crate::index::Layout;
use anyhow::Context;

/// Every run `signatures` need, smallest first.
pub fn runs_of(signatures: &[Material]) -> Vec<Material> {
    let mut runs: Vec<Material> = signatures.iter().flat_map(|s| s.closure()).collect();
    runs.sort_by_key(Material::order_key);
    runs.dedup();
    runs
}

/// The plan of one run of a job, before it runs.
pub struct RunPlan {
    pub material: Material,
    /// Its table is already in the output folder.
    pub built: bool,
    pub n_slots: u64,
    pub needs: RunNeeds,
    /// The chunk plan and its estimated RAM, or why the budget does not fit.
    pub plan: Result<(Plan, u64), String>,
    /// With pawns: slices and levels.
    pub slices: Option<(usize, usize)>,
    /// White and black chunks over all levels.
    pub chunks: (usize, usize),
    /// Its estimated time on the machine planned for.
    pub time: TimeEstimate,
}

/// The plan of a whole job.
pub struct JobPlan {
    pub runs: Vec<RunPlan>,
    /// Bytes of all final tables, and the largest work-folder peak of one run.
    pub final_bytes: u64,
    pub work_peak: u64,
    /// What the runs still to build need on each file system (the figures `gen` checks).
    pub disk: Vec<DiskNeed>,
    /// The machine the times are estimated for.
    pub machine: Machine,
}

/// A run's chunk plan within the job's budget and its estimated peak RAM, with the
/// sub-endgame bitbases it holds.
pub fn run_memory(m: &Material, layout: &Layout, opts: &GenOptions) -> anyhow::Result<(Plan, u64)> {
    let budget = &opts.budget;
    let subs = held_bytes(m, budget.mem);
    let chunk_budget = Budget { mem: budget.mem.saturating_sub(subs), ..*budget };
    let plan =
        Plan::choose(layout, &chunk_budget, opts.max_fixed_bits).with_context(|| sub_endgames_note(budget, subs))?;
    let mem = plan.estimated_mem(&chunk_budget, subs);
    Ok((plan, mem))
}

/// Chunks, blocks, RAM, disk, I/O and time of every run a job needs on `machine`, and the
/// free space.
pub fn plan_job(signatures: &[Material], opts: &GenOptions, machine: &Machine) -> anyhow::Result<JobPlan> {
    let mut runs = Vec::new();
    for m in runs_of(signatures) {
        let layout = Layout::new(&m);
        let needs = run_needs(&layout);
        let plan = run_memory(&m, &layout, opts).map_err(|e| format!("{e:#}"));
        let slices = layout.slices.as_ref().map(|s| (s.len(), s.levels.len()));
        let chunks = match &plan {
            Ok((p, _)) if layout.has_pawns() => layout.levels().iter().fold((0, 0), |(w, b), level| {
                let lp = Plan::new(&layout, level, p.cut());
                (w + lp.white.list.len(), b + lp.black.list.len())
            }),
            Ok((p, _)) => (p.white.list.len(), p.black.list.len()),
            Err(_) => (0, 0),
        };
        let built = is_built(&opts.out, &m);
        let time = estimate_run(&layout, machine);
        runs.push(RunPlan { built, n_slots: layout.n_slots, needs, plan, slices, chunks, time, material: m });
    }
    let todo: Vec<&Material> = runs.iter().filter(|r| !r.built).map(|r| &r.material).collect();
    Ok(JobPlan {
        final_bytes: runs.iter().map(|r| r.needs.final_bytes).sum(),
        work_peak: runs.iter().map(|r| r.needs.work_peak).max().unwrap_or(0),
        disk: disk_needs(&todo, opts),
        runs,
        machine: *machine,
    })
}
