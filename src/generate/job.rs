//! The job: every run a set of signatures needs (their closure under captures), smallest
//! first, skipping finished ones and resuming an interrupted job from its work folder.

use super::disk::{check_disk, check_writable, disk_needs, free_space, DiskNeed};
use super::estimate::{estimate_run, Machine, TimeEstimate};
use super::pass::{LoadedCaptures, StepMode};
use super::plan::{run_needs, show_size, Budget, Plan, RunNeeds};
use super::run::{solve_run, sub_endgames_note, RunReport, Solved};
use crate::chess::{Color, Material};
use crate::index::Layout;
use crate::progress::{LogOnly, Progress};
use crate::solve::{BitWords, Bitbase, Captures, Pass};
use crate::table::compact::{CompactTable, DEFAULT_ZSTD_LEVEL};
use crate::table::version::table_path;
use crate::table::FormatError;
use crate::work::lock::Lock;
use crate::work::manifest::{self, JobManifest, MANIFEST_FORMAT};
use crate::work::publish::remove_stale;
use anyhow::Context;
use std::collections::{HashMap, HashSet};
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
    /// The zstd level of the tables' blocks (1 to 22).
    pub level: i32,
    /// Dense or sparse steps (the same tables either way).
    pub steps: StepMode,
}

impl GenOptions {
    /// Options with the defaults of the command line: 1 GiB, 512 KiB blocks.
    pub fn new(out: &Path, threads: usize) -> GenOptions {
        GenOptions {
            out: out.to_path_buf(),
            work: None,
            budget: Budget { mem: 1 << 30, threads, block_bytes: 512 << 10 },
            level: DEFAULT_ZSTD_LEVEL,
            steps: StepMode::Auto,
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
    let table = open_table(dir, m, false)?;
    let words = |stm| bitbase_words(&table, stm, false, None);
    Ok(Bitbase { layout: Layout::new(m), wtm: words(Color::White)?, btm: words(Color::Black)? })
}

/// Opens a finished run's table, checking every block's checksum unless `checked` (this job
/// checked or built it already).
fn open_table(dir: &Path, m: &Material, checked: bool) -> anyhow::Result<CompactTable> {
    open_existing(&table_path(dir, m), m, checked).with_context(|| format!("sub-endgame {m} is needed"))
}

/// One final bitbase of a table (`eventual`: the positions won with or without the 50-move
/// rule), decoded: in RAM, or (`work` given) in a file of that work folder, deleted when
/// closed, and mapped, so that the kernel holds the pages instead of the budget.
fn bitbase_words(table: &CompactTable, stm: Color, eventual: bool, work: Option<&Path>) -> anyhow::Result<BitWords> {
    use byteorder::{LittleEndian, WriteBytesExt};
    use std::io::Write;
    let m = &table.header.material;
    let Some(work) = work else {
        let mut words = Vec::with_capacity((table.header.n_slots / 64) as usize);
        table.bitbase_words(stm, eventual, &mut |w| {
            words.push(w);
            Ok(())
        })?;
        return Ok(BitWords::Owned(words));
    };
    let mut tmp = tempfile::tempfile_in(work).with_context(|| format!("creating a file in {}", work.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, &mut tmp);
    table
        .bitbase_words(stm, eventual, &mut |w| out.write_u64::<LittleEndian>(w))
        .with_context(|| format!("writing {m}'s bitbase into {}", work.display()))?;
    out.flush().with_context(|| format!("writing {m}'s bitbase into {}", work.display()))?;
    drop(out);
    // SAFETY: the file is private to this process (unnamed) and never written again.
    let map = unsafe { memmap2::Mmap::map(&tmp) }.context("mapping a bitbase")?;
    let words = map.len() / 8;
    Ok(BitWords::Mapped { map: Arc::new(map), offset: 0, words })
}

/// A finished run's bitbases for the conversions into it: its final ones, or (`eventual`)
/// the positions won with or without the 50-move rule; in RAM, or (`in_ram` false) in files
/// of the work folder `work`.
fn open_bitbase(
    dir: &Path,
    m: &Material,
    eventual: bool,
    in_ram: bool,
    work: &Path,
    checked: bool,
) -> anyhow::Result<Bitbase> {
    let table = open_table(dir, m, checked)?;
    let work = (!in_ram).then_some(work);
    let words = |stm| bitbase_words(&table, stm, eventual, work);
    Ok(Bitbase { layout: Layout::new(m), wtm: words(Color::White)?, btm: words(Color::Black)? })
}

/// Opens an existing table of the output folder, checking its blocks unless `checked`.
fn open_existing(path: &Path, m: &Material, checked: bool) -> Result<CompactTable, FormatError> {
    let table = CompactTable::open_run(path, m)?;
    if !checked {
        table.check_sums()?;
    }
    Ok(table)
}

/// Every run `signatures` need, smallest first.
pub fn runs_of(signatures: &[Material]) -> Vec<Material> {
    let mut runs: Vec<Material> = signatures.iter().flat_map(|s| s.closure()).collect();
    runs.sort_by_key(Material::order_key);
    runs.dedup();
    runs
}

/// Whether a finished, undamaged table of a run is in `dir`.
pub fn is_built(dir: &Path, m: &Material) -> bool {
    open_existing(&table_path(dir, m), m, false).is_ok()
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
    let mut checked = HashSet::new();
    for m in &runs {
        match open_existing(&table_path(&opts.out, m), m, false) {
            Ok(_) => {
                checked.insert(m.clone());
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
    let todo: Vec<&Material> = runs.iter().filter(|m| !checked.contains(m)).collect();
    check_disk(&todo, opts)?;
    if !todo.is_empty() {
        manifest::save(&job_path, &this_job)?;
    }
    let outcomes = build_runs(&runs, opts, &mut checked, progress)?;
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
    checked: &mut HashSet<Material>,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<(Material, RunOutcome)>> {
    type Beside<'s> = Option<(usize, std::thread::ScopedJoinHandle<'s, anyhow::Result<RunOutcome>>)>;
    let mut loaded: HashMap<Material, Arc<Bitbase>> = HashMap::new();
    let mut outcomes: Vec<(usize, RunOutcome)> = Vec::new();
    let wait = |beside: &mut Beside, outcomes: &mut Vec<(usize, RunOutcome)>| -> anyhow::Result<()> {
        if let Some((i, handle)) = beside.take() {
            outcomes.push((i, handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?));
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
            match prepare_run(m, opts, &mut loaded, checked, progress)? {
                RunStart::Done(outcome) => outcomes.push((i, outcome)),
                RunStart::Ready(ready) => {
                    if let Some(other) = runs.get(i + 1).filter(|o| beside.is_none() && side_by_side(m, o, opts)) {
                        match prepare_run(other, opts, &mut loaded, checked, progress)? {
                            RunStart::Done(outcome) => outcomes.push((i + 1, outcome)),
                            RunStart::Ready(other) => {
                                beside = Some((i + 1, scope.spawn(move || other.build(opts, quiet))));
                            }
                        }
                        checked.insert(runs[i + 1].clone());
                        next = i + 2;
                    }
                    let (solved, lock) = ready.solve(opts, progress)?;
                    match runs.get(next) {
                        Some(after) if overlaps(&solved, m, after, opts) => {
                            wait(&mut beside, &mut outcomes)?;
                            beside = Some((i, scope.spawn(move || finish_run(m, solved, lock, quiet))));
                        }
                        _ => outcomes.push((i, finish_run(m, solved, lock, progress)?)),
                    }
                }
            }
            checked.insert(m.clone());
            i = next;
        }
        wait(&mut beside, &mut outcomes)
    })?;
    outcomes.sort_by_key(|(i, _)| *i);
    Ok(outcomes.into_iter().map(|(i, o)| (runs[i].clone(), o)).collect())
}

/// What [`prepare_run`] leaves: a table that was there already, or a run ready to solve.
enum RunStart {
    Done(RunOutcome),
    Ready(Box<ReadyRun>),
}

/// A run ready to be solved: its sub-endgames loaded, its table locked against other jobs.
struct ReadyRun {
    material: Material,
    caps: LoadedCaptures,
    work: PathBuf,
    lock: Lock,
}

impl ReadyRun {
    /// Solves the run; its compaction is left to the caller.
    fn solve(self, opts: &GenOptions, progress: &dyn Progress) -> anyhow::Result<(Solved, Lock)> {
        let solved = solve_run(
            &self.material,
            &self.caps,
            &opts.out,
            &self.work,
            &opts.budget,
            opts.level,
            opts.steps,
            progress,
        )?;
        Ok((solved, self.lock))
    }

    /// Solves, compacts and publishes the run.
    fn build(self, opts: &GenOptions, progress: &dyn Progress) -> anyhow::Result<RunOutcome> {
        let m = self.material.clone();
        let (solved, lock) = self.solve(opts, progress)?;
        finish_run(&m, solved, lock, progress)
    }
}

/// Whether `other` may be solved beside `m`: neither reads the other's table, their
/// estimated RAM together fits the budget (so each keeps the plan it would have alone), and
/// the disk holds both work peaks and final tables. (A run's passes leave the cores partly
/// idle, which the other fills: docs/BENCHMARKS.md, "Runs side by side".)
fn side_by_side(m: &Material, other: &Material, opts: &GenOptions) -> bool {
    // The tests' stop hooks count the chunks and blocks of the whole process, one run at a time.
    let hooked =
        ["TBSTREAM_STOP_AFTER_CHUNKS", "TBSTREAM_STOP_AFTER_BLOCKS"].iter().any(|v| std::env::var_os(v).is_some());
    if hooked || m.successor_runs().contains(other) || other.successor_runs().contains(m) {
        return false;
    }
    let ram = |r: &Material| run_memory(r, &Layout::new(r), &opts.budget).ok().map(|(_, mem)| mem);
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
    loaded: &mut HashMap<Material, Arc<Bitbase>>,
    checked: &HashSet<Material>,
    progress: &dyn Progress,
) -> anyhow::Result<RunStart> {
    let path = table_path(&opts.out, m);
    let run_work = opts.work_dir().join(m.to_string());
    if path.exists() {
        match open_existing(&path, m, checked.contains(m)) {
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
    let caps = load_captures(m, opts, loaded, checked, &run_work)?;
    Ok(RunStart::Ready(Box::new(ReadyRun { material: m.clone(), caps, work: run_work, lock })))
}

/// Loads a run's captures, reusing the bitbases in `loaded` (kept there for the next runs)
/// and checking each table's blocks unless `checked` holds it.
pub(super) fn load_captures(
    m: &Material,
    opts: &GenOptions,
    loaded: &mut HashMap<Material, Arc<Bitbase>>,
    checked: &HashSet<Material>,
    run_work: &Path,
) -> anyhow::Result<LoadedCaptures> {
    // Only this run's sub-endgames stay in RAM; when they would take more than half the
    // budget they are mapped from their files instead.
    let needed = m.successor_runs();
    loaded.retain(|sub, _| needed.contains(sub));
    // Sub-endgames with cursed positions also give their eventual bitbases (`c∞`, `d∞`).
    let mut cursed = Vec::new();
    for sub in needed.iter().filter(|s| !s.white_bare()) {
        let table = CompactTable::open_run(&table_path(&opts.out, sub), sub)
            .with_context(|| format!("sub-endgame {sub} is needed"))?;
        if table.header.meta.longest_cursed != [0, 0] {
            cursed.push(sub.clone());
        }
    }
    let needed_bytes: u64 =
        needed.iter().chain(&cursed).filter(|s| !s.white_bare()).map(|s| Layout::new(s).n_slots / 4).sum();
    let in_ram = needed_bytes <= opts.budget.mem / 2;
    let caps = Captures::new(m, |sub| -> anyhow::Result<Arc<Bitbase>> {
        if let Some(b) = loaded.get(sub) {
            return Ok(b.clone());
        }
        std::fs::create_dir_all(run_work).with_context(|| format!("creating {}", run_work.display()))?;
        let b = Arc::new(open_bitbase(&opts.out, sub, false, in_ram, run_work, checked.contains(sub))?);
        loaded.insert(sub.clone(), b.clone());
        Ok(b)
    })?;
    let caps_eventual = if cursed.is_empty() {
        None
    } else {
        std::fs::create_dir_all(run_work).with_context(|| format!("creating {}", run_work.display()))?;
        let mut made: HashMap<Material, Arc<Bitbase>> = HashMap::new();
        Some(Captures::new(m, |sub| -> anyhow::Result<Arc<Bitbase>> {
            if !cursed.contains(sub) {
                return loaded.get(sub).cloned().context("sub-endgame loaded with the captures");
            }
            if let Some(b) = made.get(sub) {
                return Ok(b.clone());
            }
            let b = Arc::new(open_bitbase(&opts.out, sub, true, in_ram, run_work, true)?);
            made.insert(sub.clone(), b.clone());
            Ok(b)
        })?)
    };
    let bytes = caps_bytes(caps_eventual.iter().chain([&caps]));
    Ok(LoadedCaptures { rule: caps, eventual: caps_eventual, bytes })
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

/// RAM held by the loaded sub-endgame bitbases of a run (each table once).
fn caps_bytes<'a>(caps: impl Iterator<Item = &'a Captures>) -> u64 {
    let mut seen = std::collections::HashSet::new();
    caps.flat_map(|c| c.tables())
        .filter(|t| seen.insert(Arc::as_ptr(t)))
        .map(|t| t.wtm.owned_bytes() + t.btm.owned_bytes())
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

/// A run's chunk plan within `budget` and its estimated peak RAM, with the sub-endgame
/// bitbases it holds.
fn run_memory(m: &Material, layout: &Layout, budget: &Budget) -> anyhow::Result<(Plan, u64)> {
    let subs: u64 = m.successor_runs().iter().filter(|s| !s.white_bare()).map(|s| Layout::new(s).n_slots / 4).sum();
    // Over half the budget they are mapped, not held (see `prepare_run`).
    let subs = if subs <= budget.mem / 2 { subs } else { 0 };
    let chunk_budget = Budget { mem: budget.mem.saturating_sub(subs), ..*budget };
    let plan = Plan::choose(layout, &chunk_budget).with_context(|| sub_endgames_note(budget, subs))?;
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
        let plan = run_memory(&m, &layout, &opts.budget).map_err(|e| format!("{e:#}"));
        let slices = layout.slices.as_ref().map(|s| (s.len(), s.levels.len()));
        let chunks = match &plan {
            Ok((p, _)) if layout.has_pawns() => layout.levels().iter().fold((0, 0), |(w, b), level| {
                let lp = Plan::new(&layout, level, p.block_bits);
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
