//! Generating tables: the job over every run a set of signatures needs, smallest first; each
//! run's passes over chunks streamed from the work folder; resuming and repairing after a
//! kill; the merge into the final table; the distributed job.
//!
//! Owns: everything that makes a table, from the job down to one pass. May import every
//! layer below it (`chess`, `index`, `solve`, `work`, `table`, `pipeline`, `progress`); may
//! not import `cli`. Inside, `job` drives `run`, which drives `pass`; nothing below imports
//! what drives it.
//!
//! - [`options`]: what a job is asked to do, and the tests' hooks into it;
//! - [`plan`]: chunks and blocks for a RAM budget, disk and I/O estimates;
//! - [`estimate`]: a run's time from rates measured per position;
//! - [`captures`]: the sub-endgames' bitbases a run's conversions read;
//! - [`level`]: what the passes of one level share;
//! - [`pass`]: one pass over all chunks of its side (resume scan, pipeline, commit);
//! - [`repair`]: the checks of an interrupted run's files, and block rebuilds;
//! - [`edge`]: the positions whose step is one ply more than their distance, up to the
//!   wins of exactly 100 plies;
//! - [`merge`]: the delta streams into 6-bit values and the final table;
//! - [`run`]: one run from its manifest to its published table;
//! - [`job`]: the closure of sub-endgames, the job's manifest, runs side by side;
//! - [`job_plan`]: what `tbstream plan` shows;
//! - `job_progress`: the job's line after each run (runs done, bytes, ETA);
//! - [`set`]: sets of signatures (every table of a size, a list file) and their checksums;
//! - [`disk`]: the disk a job needs, against what is free;
//! - [`status`]: what a job in a work folder has done;
//! - [`convert_folder`]: the conversion of a folder of uncompressed tables;
//! - `cluster` (feature `mpi`): one job's chunks computed by several processes.

mod captures;
#[cfg(feature = "mpi")]
pub mod cluster;
pub mod convert_folder;
mod disk;
mod edge;
pub mod estimate;
pub mod job;
pub mod job_plan;
mod job_progress;
mod level;
mod merge;
pub mod options;
mod pass;
pub mod plan;
mod repair;
pub mod run;
pub mod set;
pub mod status;

pub use captures::{is_built, load_bitbase};
pub use convert_folder::{convert_folder, Conversion};
pub use disk::DiskNeed;
pub use estimate::{available_ram, project_pawnless, Machine, Projection, TimeEstimate};
#[cfg(feature = "mpi")]
pub use job::generate_on_ranks;
pub use job::{generate, RunOutcome};
pub use job_plan::{plan_job, runs_of, JobPlan, RunPlan};
pub use options::{GenOptions, JobHooks, NoHooks, StepMode};
pub use plan::{show_duration, show_size, Budget};
pub use run::RunReport;
pub use set::{set_from_list, set_of_size, write_checksums, Checksums, CHECKSUMS};

/// Threads for a stage that this process runs alone (merge, compaction): `threads`, times
/// the ranks of a distributed job that share this node (they wait meanwhile).
pub(crate) fn alone_threads(threads: usize) -> usize {
    #[cfg(feature = "mpi")]
    if let Some(world) = cluster::world() {
        return threads * world.node_ranks;
    }
    threads
}
