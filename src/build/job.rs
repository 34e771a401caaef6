//! The job: every run a set of signatures needs (their closure under captures), smallest
//! first, skipping finished ones and resuming an interrupted job from its work folder.

use super::disk::{check_disk, check_writable, disk_needs, DiskNeed};
use super::plan::{run_needs, show_size, Budget, Plan, RunNeeds};
use super::run::{solve_run, sub_endgames_note, RunReport};
use crate::chess::{Color, Material};
use crate::index::Layout;
use crate::progress::Progress;
use crate::solve::{Bitbase, Captures, Pass, SubRun};
use crate::table::format::{table_path, TableFile};
use crate::work::lock::Lock;
use crate::work::manifest::{self, JobManifest, MANIFEST_FORMAT};
use crate::work::publish::remove_stale;
use anyhow::Context;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Options of a `gen` job.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Folder of the final tables.
    pub out: PathBuf,
    /// Folder of intermediate files (default: `<out>/.work`).
    pub work: Option<PathBuf>,
    pub budget: Budget,
}

impl GenOptions {
    /// Options with the defaults of the command line: 1 GiB, 512 KiB blocks.
    pub fn new(out: &Path, threads: usize) -> GenOptions {
        GenOptions {
            out: out.to_path_buf(),
            work: None,
            budget: Budget { mem: 1 << 30, threads, block_bytes: 512 << 10 },
        }
    }

    /// The work folder.
    pub fn work_dir(&self) -> PathBuf {
        self.work.clone().unwrap_or_else(|| self.out.join(".work"))
    }
}

/// What happened to one run.
pub enum RunOutcome {
    Built(RunReport),
    Existing(PathBuf),
}

/// Loads the final bitbases of a finished run, checking its checksums.
pub fn load_bitbase(dir: &Path, m: &Material) -> anyhow::Result<Bitbase> {
    let path = table_path(dir, m);
    let file = TableFile::open_run(&path, m).with_context(|| format!("sub-endgame {m} is needed"))?;
    Ok(Bitbase { layout: Layout::new(m), wtm: file.bitbase_words(Color::White), btm: file.bitbase_words(Color::Black) })
}

/// Every run `signatures` need, smallest first.
pub fn runs_of(signatures: &[Material]) -> Vec<Material> {
    let mut runs: Vec<Material> = signatures.iter().flat_map(|s| s.closure()).collect();
    runs.sort_by_key(|m| (m.men(), m.to_string()));
    runs.dedup();
    runs
}

/// Whether a finished, undamaged table of a run is in `dir`.
pub fn is_built(dir: &Path, m: &Material) -> bool {
    TableFile::open_run(&table_path(dir, m), m).is_ok()
}

/// Builds every run that `signatures` need and `opts.out` lacks, smallest first. An
/// interrupted job in the work folder is resumed; a work folder of another job is refused.
pub fn generate(
    signatures: &[Material],
    opts: &GenOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<(Material, RunOutcome)>> {
    std::fs::create_dir_all(&opts.out).with_context(|| format!("creating {}", opts.out.display()))?;
    check_writable(&opts.out, "output folder")?;
    let work = opts.work_dir();
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    // One job at a time in a work folder, for the whole job.
    let lock = Lock::acquire(&work.join("job.lock"), &format!("work folder {}", work.display()))?;
    let job_path = work.join("job.json");
    let this_job = claim_work_folder(signatures, opts, progress)?;
    let runs = runs_of(signatures);
    let todo: Vec<&Material> = runs.iter().filter(|m| !is_built(&opts.out, m)).collect();
    check_disk(&todo, opts)?;
    if !todo.is_empty() {
        manifest::save(&job_path, &this_job)?;
    }
    let mut loaded: HashMap<Material, Arc<Bitbase>> = HashMap::new();
    let mut outcomes = Vec::new();
    for m in runs {
        let outcome = build_run(&m, opts, &mut loaded, progress)?;
        outcomes.push((m, outcome));
    }
    if job_path.exists() {
        std::fs::remove_file(&job_path).with_context(|| format!("removing {}", job_path.display()))?;
    }
    remove_stale(&job_path)?;
    drop(lock);
    std::fs::remove_dir(&work).ok();
    Ok(outcomes)
}

/// The job's manifest for the work folder; refuses a folder that holds another job.
fn claim_work_folder(
    signatures: &[Material],
    opts: &GenOptions,
    progress: &dyn Progress,
) -> anyhow::Result<JobManifest> {
    let work = opts.work_dir();
    let mut names: Vec<String> = signatures.iter().map(|m| m.to_string()).collect();
    names.sort();
    names.dedup();
    let this_job = JobManifest { format: MANIFEST_FORMAT, signatures: names, out: opts.out.display().to_string() };
    let existing = manifest::load::<JobManifest>(&work.join("job.json")).unwrap_or_else(|e| {
        // Only the job's signatures are lost: each run's own manifest decides what resumes.
        progress.log(&format!("{:#}; writing it anew", anyhow::Error::from(e)));
        None
    });
    if let Some(existing) = existing {
        anyhow::ensure!(
            existing.signatures == this_job.signatures,
            "work folder {} holds an interrupted job for {} (this job: {}): finish it with the same \
             command, use another --work folder, or delete it",
            work.display(),
            existing.signatures.join(" "),
            this_job.signatures.join(" ")
        );
    }
    Ok(this_job)
}

/// Builds one run unless its table is already in the output folder, loading the
/// sub-endgames' bitbases its captures need (kept in `loaded` for the next runs).
fn build_run(
    m: &Material,
    opts: &GenOptions,
    loaded: &mut HashMap<Material, Arc<Bitbase>>,
    progress: &dyn Progress,
) -> anyhow::Result<RunOutcome> {
    let path = table_path(&opts.out, m);
    let run_work = opts.work_dir().join(m.to_string());
    if path.exists() {
        match TableFile::open_run(&path, m) {
            Ok(_) => {
                // A kill between publishing the table and cleaning up leaves this behind.
                if run_work.exists() {
                    std::fs::remove_dir_all(&run_work).with_context(|| format!("removing {}", run_work.display()))?;
                }
                progress.log(&format!("{m}: already built ({})", path.display()));
                return Ok(RunOutcome::Existing(path));
            }
            Err(e) => {
                progress.log(&format!("{m}: existing table is damaged, rebuilding: {:#}", anyhow::Error::from(e)))
            }
        }
    }
    // One builder at a time for a table (another job with another work folder may build
    // the same run into this output folder); it may have finished it meanwhile.
    let lock_path = opts.out.join(format!(".{m}.tbs.lock"));
    let _lock = Lock::acquire(&lock_path, &format!("table {}", path.display()))?;
    if TableFile::open_run(&path, m).is_ok() {
        progress.log(&format!("{m}: already built ({})", path.display()));
        return Ok(RunOutcome::Existing(path));
    }
    let caps = Captures::new(m, |sub| -> anyhow::Result<Arc<Bitbase>> {
        if let Some(b) = loaded.get(sub) {
            return Ok(b.clone());
        }
        let b = Arc::new(load_bitbase(&opts.out, sub)?);
        loaded.insert(sub.clone(), b.clone());
        Ok(b)
    })?;
    let report = solve_run(m, &caps, caps_bytes(&caps), &opts.out, &run_work, &opts.budget, progress)?;
    progress.log(&built_line(m, &report));
    Ok(RunOutcome::Built(report))
}

/// The log line of a built run: time per stage, chunks, blocks, bytes moved, streams.
fn built_line(m: &Material, report: &RunReport) -> String {
    let is_white_step = |p: Pass| matches!(p, Pass::Step(k) if k % 2 == 1);
    let is_black_step = |p: Pass| matches!(p, Pass::Step(k) if k % 2 == 0);
    format!(
        "{m}: built in {:.2}s (init {:.2}s, white passes {:.2}s, black passes {:.2}s, merge {:.2}s), last step {}, \
         {} white / {} black chunks, blocks of {} positions, read {}, written {}, delta streams {} \
         ({:.2} bits/position)",
        report.secs(|_| true) + report.merge_secs,
        report.secs(Pass::is_init),
        report.secs(is_white_step),
        report.secs(is_black_step),
        report.merge_secs,
        report.last_step,
        report.white_chunks,
        report.black_chunks,
        1u64 << report.block_bits,
        show_size(report.passes.iter().map(|p| p.bytes_read).sum::<u64>() + report.merge_bytes_read),
        show_size(report.passes.iter().map(|p| p.bytes_written).sum::<u64>() + report.merge_bytes_written),
        show_size(report.stream_bytes()),
        report.stream_bytes() as f64 * 8.0 / (2 * Layout::new(m).n_slots) as f64,
    )
}

/// RAM held by the loaded sub-endgame bitbases of a run.
fn caps_bytes(caps: &Captures) -> u64 {
    let mut seen = std::collections::HashSet::new();
    caps.by_piece
        .iter()
        .filter_map(|s| match s {
            SubRun::Table(t) if seen.insert(Arc::as_ptr(t)) => Some((t.wtm.len() + t.btm.len()) as u64 * 8),
            _ => None,
        })
        .sum()
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
}

/// The plan of a whole job.
pub struct JobPlan {
    pub runs: Vec<RunPlan>,
    /// Bytes of all final tables, and the largest work-folder peak of one run.
    pub final_bytes: u64,
    pub work_peak: u64,
    /// What the runs still to build need on each file system (the figures `gen` checks).
    pub disk: Vec<DiskNeed>,
}

/// Chunks, blocks, RAM, disk and I/O of every run a job needs, and the free space.
pub fn plan_job(signatures: &[Material], opts: &GenOptions) -> JobPlan {
    let mut runs = Vec::new();
    for m in runs_of(signatures) {
        let layout = Layout::new(&m);
        let needs = run_needs(&layout);
        // Sub-endgame bitbases held in RAM while the run is computed.
        let subs: u64 = m.capture_runs().iter().filter(|s| !s.white_bare()).map(|s| Layout::new(s).n_slots / 4).sum();
        let budget = Budget { mem: opts.budget.mem.saturating_sub(subs), ..opts.budget };
        let plan = Plan::choose(&layout, &budget)
            .with_context(|| sub_endgames_note(&opts.budget, subs))
            .map(|p| {
                let mem = p.estimated_mem(&budget, subs);
                (p, mem)
            })
            .map_err(|e| format!("{e:#}"));
        runs.push(RunPlan { built: is_built(&opts.out, &m), n_slots: layout.n_slots, needs, plan, material: m });
    }
    let todo: Vec<&Material> = runs.iter().filter(|r| !r.built).map(|r| &r.material).collect();
    JobPlan {
        final_bytes: runs.iter().map(|r| r.needs.final_bytes).sum(),
        work_peak: runs.iter().map(|r| r.needs.work_peak).max().unwrap_or(0),
        disk: disk_needs(&todo, opts),
        runs,
    }
}
