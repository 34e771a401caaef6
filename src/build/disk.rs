//! Free disk space, and the check that a job fits before it starts.

use super::plan::{run_needs, show_size};
use super::GenOptions;
use crate::chess::Material;
use crate::index::Layout;
use std::path::Path;

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
pub fn check_disk(runs: &[&Material], opts: &GenOptions) -> anyhow::Result<()> {
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
