//! `tbstream status`: what a job in a work folder has done and how far its current pass is.

use crate::deltalog;
use crate::index::Layout;
use crate::job::{self, JobManifest, RunManifest};
use crate::material::Material;
use crate::plan::{show_size, Plan};
use crate::solve::{chains_complete, log_path, PassSpec};
use anyhow::Context;
use std::path::Path;

fn folder_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|it| it.filter_map(|e| e.ok()?.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum())
        .unwrap_or(0)
}

fn folder_name(dir: &Path) -> String {
    dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// Lines describing the job in `work`.
pub fn describe(work: &Path) -> anyhow::Result<Vec<String>> {
    let job: JobManifest = job::load(&work.join("job.json"))?
        .with_context(|| format!("no job in {} (no job.json: nothing running or interrupted)", work.display()))?;
    let mut lines = vec![format!("job: {} -> {} (work folder {})", job.signatures.join(" "), job.out, work.display())];
    let mut entries: Vec<_> = std::fs::read_dir(work)?.filter_map(|e| e.ok()).filter(|e| e.path().is_dir()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let dir = e.path();
        let run = match job::load::<RunManifest>(&dir.join("run.json")) {
            Ok(Some(run)) => run,
            Ok(None) => continue,
            Err(e) => {
                lines.push(format!("{}: {e:#} (the next `gen` restarts this run)", folder_name(&dir)));
                continue;
            }
        };
        let material = Material::parse(&run.run)?;
        let layout = Layout::new(&material);
        let plan = Plan::new(&layout, run.block_bits);
        let k = run.passes.len() as i32 - 1;
        // Starts from +0.0: an empty sum of floats is -0.0.
        let spent = run.passes.iter().fold(0.0, |a, p| a + p.secs);
        let bytes = folder_bytes(&dir);
        if chains_complete(&run.passes) {
            lines.push(format!("{}: all steps done, merging ({} in work files)", run.run, show_size(bytes)));
            continue;
        }
        let spec = PassSpec::of(k);
        let chunks = if spec.id < 0 || spec.id % 2 == 1 { plan.white.list.len() } else { plan.black.list.len() };
        let done = deltalog::scan(&log_path(&dir, k)).map(|s| s.records.len()).unwrap_or(0);
        let same_kind: Vec<f64> =
            run.passes.iter().filter(|p| p.pass >= 1 && (p.pass - k) % 2 == 0).map(|p| p.secs).collect();
        let eta = if same_kind.is_empty() {
            "unknown".to_string()
        } else {
            let per_pass = same_kind.iter().sum::<f64>() / same_kind.len() as f64;
            format!("{:.1}s", per_pass * (chunks - done.min(chunks)) as f64 / chunks as f64)
        };
        let name = match k {
            -1 => "init (white chunks)".to_string(),
            0 => "init (black chunks, t0)".to_string(),
            k => format!("step {k} ({})", if k % 2 == 1 { "white" } else { "black" }),
        };
        lines.push(format!(
            "{}: {name}, chunk {done}/{chunks}, {} passes done in {spent:.1}s, {} written in work files, \
             ETA of this pass {eta}",
            run.run,
            run.passes.len(),
            show_size(bytes)
        ));
    }
    Ok(lines)
}
