//! What a job in a work folder has done and how far its current pass is (`tbstream status`).

use super::plan::{Cut, Plan};
use crate::chess::Material;
use crate::index::Layout;
use crate::solve::{chains_complete, Pass};
use crate::work::deltalog;
use crate::work::manifest::{self, new_per_pass, JobManifest, RunManifest};
use crate::work::RunFolder;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// The state of a job's work folder.
pub struct JobStatus {
    pub signatures: Vec<String>,
    pub out: String,
    pub work: PathBuf,
    /// The runs with a folder, by folder name.
    pub runs: Vec<RunStatus>,
}

/// The state of one run's folder.
pub enum RunStatus {
    /// The run's manifest is damaged: the next `gen` restarts the run.
    Damaged { folder: String, error: String },
    /// Every step is done; the merge is running or was interrupted.
    Merging { run: String, bytes: u64 },
    /// Every level is merged; the compact table is being written (`written` bytes of it so
    /// far) or its writing was interrupted.
    Compacting { run: String, bytes: u64, written: u64 },
    /// A pass is running or was interrupted.
    InPass {
        run: String,
        /// With pawns: the level in progress, its position in the solve order and the number
        /// of levels.
        level: Option<(u8, usize, usize)>,
        pass: Pass,
        chunks_done: usize,
        chunks: usize,
        passes_done: usize,
        secs: f64,
        bytes: u64,
        /// Seconds left in this pass, from the passes of the same kind so far.
        eta: Option<f64>,
        /// The last finished pass: its number, new positions, seconds, bytes read and written.
        last: Option<(Pass, u64, f64, u64, u64)>,
        /// In a distributed job: the chunks of this pass each rank was given (rank 0 first).
        ranks: Option<Vec<usize>>,
    },
}

/// How a distributed job shared out the chunks of a run's current pass (`ranks.json` in the
/// run's folder, written by rank 0 when the pass starts).
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct RankShare {
    /// [`manifest::MANIFEST_FORMAT`], as in every manifest.
    pub format: u32,
    /// The pass's number ([`Pass::number`]).
    pub pass: i32,
    /// Chunks given to each rank, rank 0 first.
    pub chunks: Vec<usize>,
}

impl RankShare {
    /// The file in a run's folder.
    pub(crate) fn path(run_folder: &Path) -> PathBuf {
        run_folder.join("ranks.json")
    }
}

/// The number of levels of a run.
fn levels_of(run: &str) -> anyhow::Result<usize> {
    Ok(Layout::new(&Material::parse(run)?).levels().len())
}

/// Bytes of the files in a folder and its subfolders.
fn folder_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |it| {
        it.flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => folder_bytes(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    })
}

fn folder_name(dir: &Path) -> String {
    dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// The state of the job in `work`.
pub fn job_status(work: &Path) -> anyhow::Result<JobStatus> {
    let job: JobManifest = manifest::load(&work.join("job.json"))?
        .with_context(|| format!("no job in {} (no job.json: nothing running or interrupted)", work.display()))?;
    let mut status = JobStatus { signatures: job.signatures, out: job.out, work: work.to_path_buf(), runs: Vec::new() };
    let mut entries: Vec<_> = std::fs::read_dir(work)
        .with_context(|| format!("listing {}", work.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if let Some(run) = run_status(&e.path())? {
            status.runs.push(run);
        }
    }
    Ok(status)
}

/// The state of one run's folder (`None`: no manifest yet).
fn run_status(dir: &Path) -> anyhow::Result<Option<RunStatus>> {
    let folder = RunFolder::new(dir);
    let run = match manifest::load::<RunManifest>(&folder.manifest()) {
        Ok(Some(run)) => run,
        Ok(None) => return Ok(None),
        Err(e) => {
            let error = format!("{:#}", anyhow::Error::from(e));
            return Ok(Some(RunStatus::Damaged { folder: folder_name(dir), error }));
        }
    };
    let bytes = folder_bytes(dir);
    let compact = RunFolder::new(dir).compact_table();
    // The compact table exists once every level is solved (without pawns, once the one
    // level's passes are done: it is written from their streams).
    if compact.exists() {
        let written = std::fs::metadata(&compact).map_or(0, |m| m.len());
        return Ok(Some(RunStatus::Compacting { run: run.run, bytes, written }));
    }
    if run.levels.len() == levels_of(&run.run)? || chains_complete(&new_per_pass(&run.passes), run.eventual) {
        return Ok(Some(RunStatus::Merging { run: run.run, bytes }));
    }
    let layout = Layout::new(&Material::parse(&run.run)?);
    let levels = layout.levels();
    let level = levels.iter().position(|l| !run.levels.iter().any(|d| d.level == l.number)).unwrap_or(0);
    let plan =
        Plan::new(&layout, &levels[level], Cut { block_bits: run.block_bits, max_fixed_bits: run.max_fixed_bits });
    let pass = Pass::nth(run.passes.len());
    let chunks = plan.chunks_of(pass).list.len();
    let log = folder.level(levels[level].number).log(pass);
    let chunks_done = deltalog::scan(&log).map(|s| s.records.len()).unwrap_or(0);
    let same_kind: Vec<f64> =
        run.passes.iter().filter(|p| !p.pass.is_init() && p.pass.mover() == pass.mover()).map(|p| p.secs).collect();
    let eta = (!same_kind.is_empty()).then(|| {
        let per_pass = same_kind.iter().sum::<f64>() / same_kind.len() as f64;
        per_pass * (chunks - chunks_done.min(chunks)) as f64 / chunks as f64
    });
    let level = layout.has_pawns().then(|| (levels[level].number, level + 1, levels.len()));
    Ok(Some(RunStatus::InPass {
        run: run.run,
        level,
        pass,
        chunks_done,
        chunks,
        passes_done: run.passes.len(),
        // Starts from +0.0: an empty sum of floats is -0.0.
        secs: run.passes.iter().fold(0.0, |a, p| a + p.secs),
        bytes,
        eta,
        last: run.passes.last().map(|p| (p.pass, p.new, p.secs, p.bytes_read, p.bytes_written)),
        ranks: manifest::load::<RankShare>(&RankShare::path(dir))
            .ok()
            .flatten()
            .filter(|r| r.pass == pass.number())
            .map(|r| r.chunks),
    }))
}
