//! Building tables: the closure of sub-endgames, smallest first, skipping finished ones.

use crate::format::{table_path, TableFile};
use crate::index::Layout;
use crate::material::{Color, Material};
use crate::progress::Progress;
use crate::solve::captures::{Bitbase, Captures};
use crate::solve::{solve_run, RunReport};
use anyhow::Context;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Options of a `gen` job.
pub struct GenOptions {
    /// Folder of the final tables.
    pub out: PathBuf,
    /// Worker threads.
    pub threads: usize,
}

/// What happened to one run.
pub enum RunOutcome {
    Built(RunReport),
    Existing(PathBuf),
}

/// Loads the final bitbases of a finished run, checking its checksums.
pub fn load_bitbase(dir: &Path, m: &Material) -> anyhow::Result<Bitbase> {
    let path = table_path(dir, m);
    let file = TableFile::open(&path).with_context(|| format!("sub-endgame {m} is needed"))?;
    file.verify()?;
    Ok(Bitbase { layout: Layout::new(m), wtm: file.bitbase_words(Color::White), btm: file.bitbase_words(Color::Black) })
}

/// Builds every run that `signatures` need and `opts.out` lacks, smallest first.
pub fn generate(
    signatures: &[Material],
    opts: &GenOptions,
    progress: &Progress,
) -> anyhow::Result<Vec<(Material, RunOutcome)>> {
    std::fs::create_dir_all(&opts.out).with_context(|| format!("creating {}", opts.out.display()))?;
    let mut runs: Vec<Material> = signatures.iter().flat_map(|s| s.closure()).collect();
    runs.sort_by_key(|m| (m.men(), m.to_string()));
    runs.dedup();
    let mut loaded: HashMap<Material, Arc<Bitbase>> = HashMap::new();
    let mut outcomes = Vec::new();
    for m in runs {
        let path = table_path(&opts.out, &m);
        if path.exists() {
            match TableFile::open(&path).and_then(|f| Ok(f.verify()?)) {
                Ok(()) => {
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
        let work = opts.out.join(".work").join(m.to_string());
        let report = solve_run(&m, &caps, &opts.out, &work, opts.threads, progress)?;
        progress.log(&format!(
            "{m}: built in {:.2}s (init {:.2}s, white passes {:.2}s, black passes {:.2}s, merge {:.2}s), last step {}",
            report.init_secs + report.white_secs + report.black_secs + report.merge_secs,
            report.init_secs,
            report.white_secs,
            report.black_secs,
            report.merge_secs,
            report.last_step
        ));
        outcomes.push((m, RunOutcome::Built(report)));
    }
    std::fs::remove_dir(opts.out.join(".work")).ok();
    Ok(outcomes)
}
