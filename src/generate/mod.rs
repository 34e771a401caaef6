//! Building tables: the job over every run a set of signatures needs, smallest first; each
//! run's passes over chunks streamed from the work folder; resuming and repairing after a
//! kill; and the merge into the final table.
//!
//! - [`plan`]: chunks and blocks for a RAM budget, disk and I/O estimates;
//! - [`estimate`]: a run's time from rates measured per position;
//! - [`pass`]: one pass over all chunks of its side (resume scan, pipeline, commit);
//! - [`run`]: one run from its manifest to its published table;
//! - [`repair`]: the checks of an interrupted run's files, and block rebuilds;
//! - [`edge`]: the positions whose step is one ply more than their distance, up to the
//!   wins of exactly 100 plies;
//! - [`merge`]: the delta streams into 6-bit values and the final table;
//! - [`job`]: the closure of sub-endgames, the job's manifest, the disk check;
//! - [`status`]: what a job in a work folder has done;
//! - [`compact`]: the conversion of a folder of uncompressed tables;
//! - `cluster` (feature `mpi`): one job's chunks computed by several processes.

#[cfg(feature = "mpi")]
pub mod cluster;
pub mod compact;
mod disk;
mod edge;
pub mod estimate;
pub mod job;
mod merge;
pub mod pass;
pub mod plan;
mod repair;
pub mod run;
pub mod status;

pub use compact::{compact_folder, Compacted};
pub use disk::DiskNeed;
pub use estimate::{available_ram, project_pawnless, Machine, Projection, TimeEstimate};
pub use job::{generate, is_built, load_bitbase, plan_job, runs_of, GenOptions, JobPlan, RunOutcome, RunPlan};
pub use pass::StepMode;
pub use plan::{show_size, Budget};
pub use run::RunReport;

/// Threads for a stage that this process runs alone (merge, compaction): `threads`, times
/// the ranks of a distributed job that share this node (they wait meanwhile).
pub(crate) fn alone_threads(threads: usize) -> usize {
    #[cfg(feature = "mpi")]
    if let Some(world) = cluster::world() {
        return threads * world.node_ranks;
    }
    threads
}
