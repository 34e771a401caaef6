//! The job: every run a set of signatures needs (their closure under captures and
//! promotions), smallest first, skipping finished ones and resuming an interrupted job from
//! its work folder; two runs side by side, or a run's compaction beside the next run, when
//! the budget and the disk allow.

use super::captures::{is_built, open_existing, Check, Loaded};
use super::disk::{check_disk, check_writable, free_space};
use super::job_plan::{run_memory, runs_of};
use super::job_progress::JobProgress;
use super::options::GenOptions;
use super::plan::{run_needs, show_size};
use super::run::{solve_run, RunReport, Solved};
use crate::chess::Material;
use crate::index::Layout;
use crate::progress::{LogOnly, Progress};
use crate::solve::{Pass, Promotions};
use crate::table::version::table_path;
use crate::table::FormatError;
use crate::work::lock::Lock;
use crate::work::manifest::{self, JobManifest, MANIFEST_FORMAT};
use crate::work::publish::remove_stale;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// What happened to one run.
pub enum RunOutcome {
    Built(RunReport),
    Existing(PathBuf),
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
    // Each existing table is checked once (tables checked here, or built by this job, are
    // not checked again when loaded). Tables of the uncompressed format are never rebuilt
    // silently (they may have taken days): they are converted with `tbstream compact`.
    let runs = runs_of(signatures);
    let mut loaded = Loaded::default();
    for m in &runs {
        match open_existing(&table_path(&opts.out, m), m, Check::Blocks) {
            Ok(_) => {
                loaded.checked.insert(m.clone());
            }
            Err(e @ FormatError::OldFormat { .. }) => return Err(e.into()),
            Err(_) => {}
        }
    }
    let work = opts.work_dir();
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    // One job at a time in a work folder, for the whole job.
    let lock = Lock::acquire(&work.join("job.lock"), &format!("work folder {}", work.display()))?;
    let job_path = work.join("job.json");
    let this_job = claim_work_folder(signatures, opts, progress)?;
    let todo: Vec<&Material> = runs.iter().filter(|m| !loaded.checked.contains(m)).collect();
    check_disk(&todo, opts)?;
    if !todo.is_empty() {
        manifest::save(&job_path, &this_job)?;
    }
    let outcomes = build_runs(&runs, opts, &mut loaded, progress)?;
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

/// Builds the runs in order (each one's sub-endgames come before it). Two runs that do not
/// read each other are solved side by side when both fit the budget and the disk
/// ([`side_by_side`]); otherwise a run's compaction may go on while the next run is solved
/// ([`overlaps`]). One such task at a time goes on beside the current run; a run that reads
/// its table waits for it.
fn build_runs(
    runs: &[Material],
    opts: &GenOptions,
    loaded: &mut Loaded,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<(Material, RunOutcome)>> {
    type Beside<'s> = Option<(usize, std::thread::ScopedJoinHandle<'s, anyhow::Result<RunOutcome>>)>;
    let mut outcomes =
        Finished { list: Vec::new(), job: JobProgress::new(runs, opts.budget.threads), runs, opts, progress };
    let wait = |beside: &mut Beside, outcomes: &mut Finished| -> anyhow::Result<()> {
        if let Some((i, handle)) = beside.take() {
            outcomes.push(i, handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?);
        }
        Ok(())
    };
    let quiet = LogOnly::new(progress);
    let quiet = &quiet;
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let mut beside: Beside = None;
        let mut i = 0;
        while i < runs.len() {
            let m = &runs[i];
            if beside.as_ref().is_some_and(|(p, _)| m.successor_runs().contains(&runs[*p])) {
                wait(&mut beside, &mut outcomes)?;
            }
            let mut next = i + 1;
            match prepare_run(m, opts, loaded, progress)? {
                RunStart::Done(outcome) => outcomes.push(i, outcome),
                RunStart::Ready(ready) => {
                    if let Some(other) = runs.get(i + 1).filter(|o| beside.is_none() && side_by_side(m, o, opts)) {
                        match prepare_run(other, opts, loaded, progress)? {
                            RunStart::Done(outcome) => outcomes.push(i + 1, outcome),
                            RunStart::Ready(other) => {
                                beside = Some((
                                    i + 1,
                                    scope.spawn(move || {
                                        yield_to_the_job();
                                        other.build(opts, quiet)
                                    }),
                                ));
                            }
                        }
                        loaded.checked.insert(runs[i + 1].clone());
                        next = i + 2;
                    }
                    let (solved, lock) = ready.solve(opts, progress)?;
                    match runs.get(next) {
                        Some(after) if overlaps(&solved, m, after, opts) => {
                            wait(&mut beside, &mut outcomes)?;
                            beside = Some((i, scope.spawn(move || finish_run(m, solved, lock, quiet))));
                        }
                        _ => outcomes.push(i, finish_run(m, solved, lock, progress)?),
                    }
                }
            }
            loaded.checked.insert(m.clone());
            i = next;
        }
        wait(&mut beside, &mut outcomes)
    })?;
    let mut outcomes = outcomes.list;
    outcomes.sort_by_key(|(i, _)| *i);
    Ok(outcomes.into_iter().map(|(i, o)| (runs[i].clone(), o)).collect())
}

/// The runs finished so far (index in the job, outcome), and the job's progress line.
struct Finished<'a> {
    list: Vec<(usize, RunOutcome)>,
    job: JobProgress,
    runs: &'a [Material],
    opts: &'a GenOptions,
    progress: &'a dyn Progress,
}

impl Finished<'_> {
    fn push(&mut self, i: usize, outcome: RunOutcome) {
        let bytes = std::fs::metadata(table_path(&self.opts.out, &self.runs[i])).map_or(0, |m| m.len());
        self.job.finished(i, matches!(outcome, RunOutcome::Built(_)), bytes, self.progress);
        self.list.push((i, outcome));
    }
}

/// What [`prepare_run`] leaves: a table that was there already, or a run ready to solve.
enum RunStart {
    Done(RunOutcome),
    Ready(Box<ReadyRun>),
}

/// A run ready to be solved: its sub-endgames loaded, its table locked against other jobs.
struct ReadyRun {
    material: Material,
    caps: super::captures::LoadedCaptures,
    work: PathBuf,
    lock: Lock,
}

impl ReadyRun {
    /// Solves the run; its compaction is left to the caller.
    fn solve(self, opts: &GenOptions, progress: &dyn Progress) -> anyhow::Result<(Solved, Lock)> {
        let solved = solve_run(&self.material, self.caps, &self.work, opts, progress)?;
        Ok((solved, self.lock))
    }

    /// Solves, compacts and publishes the run.
    fn build(self, opts: &GenOptions, progress: &dyn Progress) -> anyhow::Result<RunOutcome> {
        let m = self.material.clone();
        let (solved, lock) = self.solve(opts, progress)?;
        finish_run(&m, solved, lock, progress)
    }
}

/// Lowers the calling thread's scheduling priority (and so that of the threads it starts),
/// for a run solved beside the job's current one: the two then share the cores by what each
/// leaves idle rather than half and half, so the current run (the first of the two in the
/// job's order, the side whose chains are longer as signatures are written) finishes as soon
/// as it would alone and its compaction starts earlier (docs/BENCHMARKS.md, "The run beside
/// yields"). Linux keeps a priority per thread; elsewhere nothing is changed (the call would
/// lower the whole process).
fn yield_to_the_job() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread (`who` 0), no memory involved. A failure
    // leaves the priority as it was, which only costs speed.
    unsafe {
        let now = libc::getpriority(libc::PRIO_PROCESS, 0);
        libc::setpriority(libc::PRIO_PROCESS, 0, (now + BESIDE_NICENESS).min(19));
    }
}

/// How much lower the priority of a run beside the current one is (in `nice` steps).
#[cfg(target_os = "linux")]
const BESIDE_NICENESS: i32 = 10;

/// Whether `other` may be solved beside `m`: neither reads the other's table, their
/// estimated RAM together fits the budget (so each keeps the plan it would have alone), and
/// the disk holds both work peaks and final tables. (A run's passes leave the cores partly
/// idle, which the other fills: docs/BENCHMARKS.md, "Runs side by side".) Never with test
/// hooks, which count the chunks and blocks of one run at a time.
fn side_by_side(m: &Material, other: &Material, opts: &GenOptions) -> bool {
    if opts.hooks.is_some() || m.successor_runs().contains(other) || other.successor_runs().contains(m) {
        return false;
    }
    let ram = |r: &Material| run_memory(r, &Layout::new(r), opts).ok().map(|(_, mem)| mem);
    let (Some(a), Some(b)) = (ram(m), ram(other)) else { return false };
    let need: u64 = [m, other]
        .iter()
        .map(|r| {
            let needs = run_needs(&Layout::new(r));
            needs.work_peak + needs.final_bytes
        })
        .sum();
    let fits = |dir: &Path| free_space(dir).is_some_and(|free| free >= need + need / 4);
    a + b <= opts.budget.mem && fits(&opts.work_dir()) && fits(&opts.out)
}

/// Whether `solved`'s compaction may run while `next` is solved: `next` does not read its
/// table, and the disk holds `next`'s work peak with the compact table still to be written.
/// (The two share the cores, which a run's passes leave partly idle: docs/BENCHMARKS.md,
/// "Compaction beside the next run".)
fn overlaps(solved: &Solved, m: &Material, next: &Material, opts: &GenOptions) -> bool {
    let need = run_needs(&Layout::new(next)).work_peak + solved.final_bytes();
    let fits = |dir: &Path| free_space(dir).is_some_and(|free| free >= need + need / 4);
    !next.successor_runs().contains(m) && fits(&opts.work_dir()) && fits(&opts.out)
}

/// Compacts and publishes a solved run's table, then lets go of its lock.
fn finish_run(m: &Material, solved: Solved, lock: Lock, progress: &dyn Progress) -> anyhow::Result<RunOutcome> {
    let report = solved.finish(progress)?;
    drop(lock);
    progress.log(&built_line(m, &report));
    Ok(RunOutcome::Built(report))
}

/// Prepares one run unless its table is already in the output folder: locks its table and
/// loads the sub-endgames' bitbases its captures need (kept in `loaded` for the next runs).
fn prepare_run(
    m: &Material,
    opts: &GenOptions,
    loaded: &mut Loaded,
    progress: &dyn Progress,
) -> anyhow::Result<RunStart> {
    let path = table_path(&opts.out, m);
    let run_work = opts.work_dir().join(m.to_string());
    if path.exists() {
        let check = if loaded.checked.contains(m) { Check::HeaderOnly } else { Check::Blocks };
        match open_existing(&path, m, check) {
            Err(FormatError::OldFormat { path, version }) => {
                // Never rebuilt silently: a user's old tables may have taken days.
                return Err(FormatError::OldFormat { path, version }.into());
            }
            Ok(_) => {
                // A kill between publishing the table and cleaning up leaves this behind.
                if run_work.exists() {
                    std::fs::remove_dir_all(&run_work).with_context(|| format!("removing {}", run_work.display()))?;
                }
                progress.log(&format!("{m}: already built ({})", path.display()));
                return Ok(RunStart::Done(RunOutcome::Existing(path)));
            }
            Err(e) => {
                progress.log(&format!("{m}: existing table is damaged, rebuilding: {:#}", anyhow::Error::from(e)))
            }
        }
    }
    // One builder at a time for a table (another job with another work folder may build
    // the same run into this output folder); it may have finished it meanwhile.
    let lock_path = opts.out.join(format!(".{m}.tbs.lock"));
    let lock = Lock::acquire(&lock_path, &format!("table {}", path.display()))?;
    if is_built(&opts.out, m) {
        progress.log(&format!("{m}: already built ({})", path.display()));
        return Ok(RunStart::Done(RunOutcome::Existing(path)));
    }
    // The promotions' sub-endgames are loaded by the levels that promote (`solve_run`).
    let caps = loaded.captures_of(m, &opts.out, &opts.budget, &run_work, Promotions::Skip)?;
    Ok(RunStart::Ready(Box::new(ReadyRun { material: m.clone(), caps, work: run_work, lock })))
}

/// The log line of a built run: time per stage, chunks, blocks, bytes moved, streams.
fn built_line(m: &Material, report: &RunReport) -> String {
    let is_white_step = |p: Pass| matches!(p, Pass::Step(k) if k % 2 == 1);
    let is_black_step = |p: Pass| matches!(p, Pass::Step(k) if k % 2 == 0);
    format!(
        "{m}: built in {:.2}s (init {:.2}s, white passes {:.2}s, black passes {:.2}s, merge {:.2}s, compact {:.2}s), last step {}{}, \
         {} white / {} black chunks, blocks of {} positions, read {}, written {}, delta streams {} \
         ({:.2} bits/position)",
        report.secs(|_| true) + report.merge_secs + report.compact_secs,
        report.secs(Pass::is_init),
        report.secs(is_white_step),
        report.secs(is_black_step),
        report.merge_secs,
        report.compact_secs,
        report.last_step,
        match report.longest_cursed {
            [0, 0] => String::new(),
            [w, b] => format!(" (beyond the 50-move rule: step {w} wtm, {b} btm)"),
        },
        report.white_chunks,
        report.black_chunks,
        1u64 << report.block_bits,
        show_size(report.passes.iter().map(|p| p.bytes_read).sum::<u64>() + report.merge_bytes_read),
        show_size(report.passes.iter().map(|p| p.bytes_written).sum::<u64>() + report.merge_bytes_written),
        show_size(report.stream_bytes()),
        report.stream_bytes() as f64 * 8.0 / (2 * Layout::new(m).n_slots) as f64,
    )
}

/// A job in a process that may be one rank of a distributed job (after
/// [`cluster::init`](super::cluster::init)): rank 0 runs [`generate`] and releases the other
/// ranks when it is done, the others compute the chunks it shares out; with one rank, or
/// none, it is [`generate`]. An error on a rank of a distributed job is printed with the
/// rank and ends every rank with exit code 2 (MPI has no other way to stop the others;
/// what was written is kept, and the same command resumes); without ranks it is returned.
#[cfg(feature = "mpi")]
pub fn generate_on_ranks(signatures: &[Material], opts: &GenOptions, progress: &dyn Progress) -> anyhow::Result<()> {
    use super::cluster;
    let Some(world) = cluster::world() else { return generate(signatures, opts, progress).map(drop) };
    let done = match world.rank {
        0 => {
            progress.log(&format!("distributed job: {} ranks (rank 0 coordinates and computes)", world.size));
            generate(signatures, opts, progress).map(|_| world.release_workers())
        }
        _ => cluster::serve(world, opts),
    };
    if let Err(e) = done {
        eprintln!("error (rank {} of {}): {e:#}", world.rank, world.size);
        world.abort()
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run beside yields: its thread, and the threads it starts, run at a lower priority
    /// than the job's, which keeps its own.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_run_beside_runs_at_a_lower_priority() {
        // SAFETY: reads of the calling thread's priority.
        let priority = || unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let job = priority();
        let (beside, started) = std::thread::spawn(move || {
            yield_to_the_job();
            (priority(), std::thread::spawn(priority).join().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(beside, (job + BESIDE_NICENESS).min(19));
        assert_eq!(started, beside);
        assert_eq!(priority(), job);
    }
}
