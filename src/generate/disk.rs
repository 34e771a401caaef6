//! Disk space: what a job still needs at its peak, against what is free, checked before it
//! starts (and shown by `plan`); and the check that the output folder can be written.

use super::options::GenOptions;
use super::plan::{run_needs, show_size};
use crate::chess::Material;
use crate::index::Layout;
use crate::table::version::table_path;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Free bytes on the file system holding `path` (or its nearest existing parent).
pub fn free_space(path: &Path) -> Option<u64> {
    let existing = path.ancestors().find(|p| p.exists())?;
    let c = std::ffi::CString::new(existing.as_os_str().as_encoded_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a properly sized out-parameter.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    (rc == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// Bytes a file or folder (recursively) occupies on disk: allocated blocks, so that the
/// sparse, partly written work tables count for what they really hold.
pub fn allocated_bytes(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    if !meta.is_dir() {
        return meta.blocks() * 512;
    }
    std::fs::read_dir(path).map_or(0, |entries| entries.flatten().map(|e| allocated_bytes(&e.path())).sum())
}

/// What a job asks of one file system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskNeed {
    /// The folder (output or work) the figures are for; both when they share a file system.
    pub place: PathBuf,
    /// Bytes the job will still add at its peak.
    pub growth: u64,
    /// Bytes the job's unfinished files already take there (work files of interrupted runs,
    /// temporary tables of interrupted merges); they count towards the peak.
    pub held: u64,
    /// Free bytes, if known.
    pub free: Option<u64>,
}

/// Sizes of one run still to build, as they matter for the disk.
struct RunDisk {
    /// Bytes of its final table.
    table: u64,
    /// Peak bytes of its work folder.
    work_peak: u64,
    /// Bytes its work folder holds now.
    work_held: u64,
    /// Bytes of temporary tables an interrupted merge left in the output folder (removed
    /// when the run's table is written again).
    out_held: u64,
}

fn run_disk(m: &Material, opts: &GenOptions) -> RunDisk {
    let needs = run_needs(&Layout::new(m));
    let table = table_path(&opts.out, m);
    let prefix = format!(".{}.", table.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
    let out_held = std::fs::read_dir(&opts.out).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| {
                e.file_name().to_string_lossy().starts_with(&prefix) && e.path().extension().is_some_and(|x| x == "tmp")
            })
            .map(|e| allocated_bytes(&e.path()))
            .sum()
    });
    RunDisk {
        table: needs.final_bytes,
        work_peak: needs.work_peak,
        work_held: allocated_bytes(&opts.work_dir().join(m.to_string())),
        out_held,
    }
}

/// The growth still ahead of a job that builds `todo` in this order, on each file system.
/// Runs are built one after the other: a run's work folder grows to its peak while its table
/// is solved and written there, then the table moves to the output folder (renamed on one file
/// system, copied across two) and the folder goes; tables stay. What a run already holds is
/// subtracted from its peak, and the folders and temporary files of runs built before it are
/// gone by then.
pub fn disk_needs(todo: &[&Material], opts: &GenOptions) -> Vec<DiskNeed> {
    let runs: Vec<RunDisk> = todo.iter().map(|m| run_disk(m, opts)).collect();
    let work = opts.work_dir();
    let (out_held, work_held): (u64, u64) =
        (runs.iter().map(|r| r.out_held).sum(), runs.iter().map(|r| r.work_held).sum());
    // Per run, in build order: the net change of each file system when it is at its peak.
    let (mut tables, mut freed_out, mut freed_work) = (0i128, 0i128, 0i128);
    let (mut peak_same, mut peak_out, mut peak_work) = (0i128, 0i128, 0i128);
    for r in &runs {
        tables += r.table as i128;
        let work_growth = r.work_peak as i128 - r.work_held as i128;
        let out_now = tables - freed_out - r.out_held as i128;
        let work_now = work_growth.max(0) - freed_work;
        peak_same = peak_same.max(out_now + work_now);
        peak_out = peak_out.max(out_now);
        // The table is written in the work folder, then copied out.
        peak_work = peak_work.max(work_now + r.table as i128);
        freed_out += r.out_held as i128;
        freed_work += r.work_held as i128;
    }
    let clamp = |v: i128| v.max(0) as u64;
    if same_file_system(&opts.out, &work) {
        vec![DiskNeed {
            place: opts.out.clone(),
            growth: clamp(peak_same),
            held: out_held + work_held,
            free: free_space(&opts.out),
        }]
    } else {
        vec![
            DiskNeed { place: opts.out.clone(), growth: clamp(peak_out), held: out_held, free: free_space(&opts.out) },
            DiskNeed { place: work.clone(), growth: clamp(peak_work), held: work_held, free: free_space(&work) },
        ]
    }
}

fn same_file_system(a: &Path, b: &Path) -> bool {
    let dev = |p: &Path| p.ancestors().find(|a| a.exists()).and_then(|a| a.metadata().ok()).map(|m| m.dev());
    dev(a) == dev(b)
}

/// Refuses to start (or resume) a job whose remaining growth exceeds the free space.
pub fn check_disk(todo: &[&Material], opts: &GenOptions) -> anyhow::Result<()> {
    for need in disk_needs(todo, opts) {
        if let Some(free) = need.free {
            anyhow::ensure!(
                need.growth <= free,
                "not enough disk space in {}: the job still needs about {} more at its peak (its unfinished files \
                 there take {} already), but {} are free (see `tbstream plan`)",
                need.place.display(),
                show_size(need.growth),
                show_size(need.held),
                show_size(free)
            );
        }
    }
    Ok(())
}

/// Refuses a folder the job cannot write into, before any work is done.
pub fn check_writable(dir: &Path, what: &str) -> anyhow::Result<()> {
    tempfile::Builder::new()
        .prefix(".tbstream-write-test.")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| anyhow::anyhow!("cannot write into the {what} {}: {e}", dir.display()))
}
