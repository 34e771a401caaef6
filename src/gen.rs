//! Building tables: the closure of sub-endgames, smallest first, skipping finished ones,
//! resuming an interrupted job from its work folder.

use crate::format::{table_path, TableFile};
use crate::index::Layout;
use crate::job::{self, JobManifest, MANIFEST_FORMAT};
use crate::material::{Color, Material};
use crate::plan::{run_needs, show_size, Budget, Plan};
use crate::progress::Progress;
use crate::solve::captures::{Bitbase, Captures, SubRun};
use crate::solve::{solve_run, RunReport};
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

/// Free bytes on the file system holding `path` (or its nearest existing parent).
pub fn free_space(path: &Path) -> Option<u64> {
    let existing = path.ancestors().find(|p| p.exists())?;
    let c = std::ffi::CString::new(existing.as_os_str().as_encoded_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a properly sized out-parameter.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    (rc == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// Refuses to start a job whose disk needs exceed the free space.
fn check_disk(runs: &[&Material], opts: &GenOptions) -> anyhow::Result<()> {
    let finals: u64 = runs.iter().map(|m| run_needs(&Layout::new(m)).final_bytes).sum();
    let work_peak = runs.iter().map(|m| run_needs(&Layout::new(m)).work_peak).max().unwrap_or(0);
    let work = opts.work_dir();
    let (free_out, free_work) = (free_space(&opts.out), free_space(&work));
    let same_fs = {
        use std::os::unix::fs::MetadataExt;
        let dev = |p: &Path| p.ancestors().find(|a| a.exists()).and_then(|a| a.metadata().ok()).map(|m| m.dev());
        dev(&opts.out) == dev(&work)
    };
    let checks: Vec<(u64, Option<u64>, &Path)> = if same_fs {
        vec![(finals + work_peak, free_out, &opts.out)]
    } else {
        vec![(finals, free_out, &opts.out), (work_peak, free_work, &work)]
    };
    for (need, free, place) in checks {
        if let Some(free) = free {
            anyhow::ensure!(
                need <= free,
                "not enough disk space in {}: the job needs about {} but {} are free (see `tbstream plan`)",
                place.display(),
                show_size(need),
                show_size(free)
            );
        }
    }
    Ok(())
}

/// Builds every run that `signatures` need and `opts.out` lacks, smallest first. An
/// interrupted job in the work folder is resumed; a work folder of another job is refused.
pub fn generate(
    signatures: &[Material],
    opts: &GenOptions,
    progress: &Progress,
) -> anyhow::Result<Vec<(Material, RunOutcome)>> {
    std::fs::create_dir_all(&opts.out).with_context(|| format!("creating {}", opts.out.display()))?;
    let work = opts.work_dir();
    let mut names: Vec<String> = signatures.iter().map(|m| m.to_string()).collect();
    names.sort();
    names.dedup();
    let job_path = work.join("job.json");
    let this_job = JobManifest { format: MANIFEST_FORMAT, signatures: names, out: opts.out.display().to_string() };
    let existing = job::load::<JobManifest>(&job_path).unwrap_or_else(|e| {
        // Only the job's signatures are lost: each run's own manifest decides what resumes.
        progress.log(&format!("{e:#}; writing it anew"));
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
    let runs = runs_of(signatures);
    let todo: Vec<&Material> = runs.iter().filter(|m| !is_built(&opts.out, m)).collect();
    check_disk(&todo, opts)?;
    if !todo.is_empty() {
        std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
        job::save(&job_path, &this_job)?;
    }
    let mut loaded: HashMap<Material, Arc<Bitbase>> = HashMap::new();
    let mut outcomes = Vec::new();
    for m in runs {
        let path = table_path(&opts.out, &m);
        if path.exists() {
            match TableFile::open_run(&path, &m) {
                Ok(_) => {
                    // A kill between publishing the table and cleaning up leaves this behind.
                    let stale = work.join(m.to_string());
                    if stale.exists() {
                        std::fs::remove_dir_all(&stale).with_context(|| format!("removing {}", stale.display()))?;
                    }
                    progress.log(&format!("{m}: already built ({})", path.display()));
                    outcomes.push((m, RunOutcome::Existing(path)));
                    continue;
                }
                Err(e) => progress.log(&format!("{m}: existing table is damaged, rebuilding: {e:#}")),
            }
        }
        let caps = Captures::new(&m, |sub| {
            if let Some(b) = loaded.get(sub) {
                return Ok(b.clone());
            }
            let b = Arc::new(load_bitbase(&opts.out, sub)?);
            loaded.insert(sub.clone(), b.clone());
            Ok(b)
        })?;
        let caps_bytes = caps_bytes(&caps);
        let report = solve_run(&m, &caps, caps_bytes, &opts.out, &work.join(m.to_string()), &opts.budget, progress)?;
        progress.log(&format!(
            "{m}: built in {:.2}s (init {:.2}s, white passes {:.2}s, black passes {:.2}s, merge {:.2}s), last step {}, \
             {} white / {} black chunks, blocks of {} positions, read {}, written {}, delta streams {} \
             ({:.2} bits/position)",
            report.secs(|_| true) + report.merge_secs,
            report.secs(|k| k <= 0),
            report.secs(|k| k > 0 && k % 2 == 1),
            report.secs(|k| k > 0 && k % 2 == 0),
            report.merge_secs,
            report.last_step,
            report.white_chunks,
            report.black_chunks,
            1u64 << report.block_bits,
            show_size(report.passes.iter().map(|p| p.bytes_read).sum::<u64>() + report.merge_bytes_read),
            show_size(report.passes.iter().map(|p| p.bytes_written).sum::<u64>() + report.merge_bytes_written),
            show_size(report.stream_bytes()),
            report.stream_bytes() as f64 * 8.0 / (2 * Layout::new(&m).n_slots) as f64,
        ));
        outcomes.push((m, RunOutcome::Built(report)));
    }
    if job_path.exists() {
        std::fs::remove_file(&job_path).with_context(|| format!("removing {}", job_path.display()))?;
    }
    std::fs::remove_file(job_path.with_extension("tmp")).ok();
    std::fs::remove_dir(&work).ok();
    Ok(outcomes)
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

/// Context of a budget error: what the sub-endgames' bitbases took out of `--mem`.
pub fn sub_endgames_note(budget: &Budget, subs: u64) -> String {
    format!("--mem {}, of which the sub-endgames' bitbases take {}", show_size(budget.mem), show_size(subs))
}

/// A plan report line per run: chunks, blocks, RAM, disk and I/O.
pub fn describe_plan(signatures: &[Material], opts: &GenOptions) -> anyhow::Result<Vec<String>> {
    let mut lines = Vec::new();
    let mut finals = 0;
    let mut peak = 0;
    for m in runs_of(signatures) {
        let layout = Layout::new(&m);
        let needs = run_needs(&layout);
        // Sub-endgame bitbases held in RAM while the run is computed.
        let subs: u64 = m.capture_runs().iter().filter(|s| !s.white_bare()).map(|s| Layout::new(s).n_slots / 4).sum();
        let built = is_built(&opts.out, &m);
        let budget = Budget { mem: opts.budget.mem.saturating_sub(subs), ..opts.budget };
        let plan = Plan::choose(&layout, &budget).with_context(|| sub_endgames_note(&opts.budget, subs));
        finals += needs.final_bytes;
        peak = peak.max(needs.work_peak);
        lines.push(match plan {
            Ok(p) => format!(
                "{m}: {}{} positions/side, {} white + {} black chunks, blocks of {}, RAM ~{}, work peak {}, final {}, \
                 I/O ~{} per step (up to 101 steps)",
                if built { "[built] " } else { "" },
                layout.n_slots,
                p.white.list.len(),
                p.black.list.len(),
                show_size(1u64 << (p.block_bits - 3)),
                show_size(p.estimated_mem(&budget, subs)),
                show_size(needs.work_peak),
                show_size(needs.final_bytes),
                show_size(needs.pass_io),
            ),
            Err(e) => format!("{m}: {e:#}"),
        });
    }
    lines.push(format!(
        "total: final tables {}, work folder peak {}, free: out {} / work {}",
        show_size(finals),
        show_size(peak),
        free_space(&opts.out).map_or("?".into(), show_size),
        free_space(&opts.work_dir()).map_or("?".into(), show_size),
    ));
    Ok(lines)
}
