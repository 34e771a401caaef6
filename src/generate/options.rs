//! What a `gen` job is asked to do, once parsed: folders, budget, compression, how steps are
//! computed; and the seam through which tests reach into a job ([`JobHooks`]).

use super::plan::Budget;
use crate::chess::Material;
use crate::table::compact::DEFAULT_ZSTD_LEVEL;
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
    pub zstd_level: i32,
    /// Dense or sparse steps (the same tables either way).
    pub steps: StepMode,
    /// At most this many fixed bits in a chunk key: fewer, larger chunks (a tuning knob, and
    /// the tests' way to compare chunkings; the tables are the same). `None`: as many as the
    /// index allows. A run keeps the cut it started with.
    pub max_fixed_bits: Option<u32>,
    /// Test hooks (`None` in production).
    pub hooks: Option<Arc<dyn JobHooks>>,
}

impl GenOptions {
    /// Options with the defaults of the command line: 1 GiB, 512 KiB blocks.
    pub fn new(out: &Path, threads: usize) -> GenOptions {
        GenOptions {
            out: out.to_path_buf(),
            work: None,
            budget: Budget { mem: 1 << 30, threads, block_bytes: 512 << 10 },
            zstd_level: DEFAULT_ZSTD_LEVEL,
            steps: StepMode::Auto,
            max_fixed_bits: None,
            hooks: None,
        }
    }

    /// The work folder.
    pub fn work_dir(&self) -> PathBuf {
        self.work.clone().unwrap_or_else(|| self.out.join(".work"))
    }

    /// The job's hooks: the tests', or none.
    pub fn hooks(&self) -> &dyn JobHooks {
        self.hooks.as_deref().unwrap_or(&NoHooks)
    }
}

/// How a step computes its chunks: by the dense kernels over every configuration, or from
/// the previous step's new positions ([`crate::solve::sparse`]); both give the same bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepMode {
    /// Sparse where the previous step's new positions in a chunk are few enough.
    #[default]
    Auto,
    Dense,
    /// Sparse wherever the step allows it (for tests; memory grows with the new positions).
    Sparse,
}

impl std::str::FromStr for StepMode {
    type Err = String;
    fn from_str(s: &str) -> Result<StepMode, String> {
        match s {
            "auto" => Ok(StepMode::Auto),
            "dense" => Ok(StepMode::Dense),
            "sparse" => Ok(StepMode::Sparse),
            _ => Err(format!("unknown step mode {s:?} (auto, dense or sparse)")),
        }
    }
}

/// Where tests reach into a job: the moments a kill or a fault would hit, and the sets the
/// edge phase finds. Every method does nothing by default. A job with hooks solves one run
/// at a time, so that what a hook counts follows one run.
pub trait JobHooks: Send + Sync + std::fmt::Debug {
    /// After each chunk is committed to the work folder (on a worker rank of a distributed
    /// job: after each chunk it computed). An error stops the job there, leaving the work
    /// folder as a kill at that moment would.
    fn after_chunk(&self) -> anyhow::Result<()> {
        Ok(())
    }

    /// After each block of a table's compaction is written; an error stops the job there.
    fn after_compaction_block(&self) -> anyhow::Result<()> {
        Ok(())
    }

    /// Whether the edge sets are wanted: then every level's edge is followed up to its last
    /// step (or 101), even when no win of exactly 100 plies can come of it, and each set is
    /// handed to [`JobHooks::edge_set`].
    fn wants_edge_sets(&self) -> bool {
        false
    }

    /// The edge set `E_k` of a level of `run`, as slots.
    fn edge_set(&self, run: &Material, k: u16, slots: &[u64]) {
        let _ = (run, k, slots);
    }
}

/// The hooks of a production job: none.
#[derive(Debug)]
pub struct NoHooks;

impl JobHooks for NoHooks {}
