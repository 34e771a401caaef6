//! tbstream: a chess endgame tablebase generator after Urban Koistinen's scheme.
//!
//! Tables are one-bit chains `t0 ... t100` (white wins with g50 half-moves left), computed
//! 64 positions per word by bit-parallel passes over chunks, then merged into a 6-bit
//! distance per position plus the final bitbases `t99`/`t100`.
//!
//! ```no_run
//! use tbstream::{Position, Tablebase};
//! let tb = Tablebase::open(std::path::Path::new("tables"))?;
//! let pos = Position::from_fen("8/8/8/8/8/2k5/8/KQ6 w - - 0 1")?;
//! let probe = tb.probe(&pos)?;
//! println!("wdl {} dtz {}", probe.wdl, probe.dtz);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The crate is cut in layers that depend only downward (`docs/ARCHITECTURE.md`):
//! `chess` (squares, men, attacks, material, positions) -> `index` (Koistinen's layout,
//! chunks) -> `solve` (one pass over one chunk) -> `work` (the work folder's files) ->
//! `table` (the final format, probing, verifying, statistics) -> `generate` (plans, passes,
//! resume, merge, the job); `pipeline` and `progress` serve the layers above `solve`.
//! The modules are private; this page re-exports what users and tools need.

mod chess;
mod generate;
mod index;
mod pipeline;
mod progress;
mod solve;
mod table;
#[cfg(test)]
mod test_rng;
mod work;

/// The board field of a FEN from the letters on the squares (a1 first), for tools and tests
/// that place men on a board of letters.
pub use chess::position::board_field;
pub use chess::square::TRIANGLE;
pub use chess::{Color, FenError, Material, MaterialError, Move, Piece, Position, Role, Square, Symmetry, MAX_MEN};
/// One job over several processes (`mpirun`), built with the `mpi` feature.
#[cfg(feature = "mpi")]
pub use generate::cluster;
/// A `gen` job on every rank of a distributed job (`mpi` feature).
#[cfg(feature = "mpi")]
pub use generate::generate_on_ranks;
pub use generate::status::{job_status, JobStatus, RunStatus};
pub use generate::{
    available_ram, convert_folder, generate, is_built, load_bitbase, plan_job, project_pawnless, runs_of,
    show_duration, show_size, Budget, Conversion, DiskNeed, GenOptions, JobHooks, JobPlan, Machine, NoHooks,
    Projection, RunOutcome, RunPlan, RunReport, StepMode, TimeEstimate,
};
pub use generate::{set_from_list, set_of_size, write_checksums, Checksums, CHECKSUMS};
pub use index::Layout;
pub use pipeline::WorkerPanicked;
pub use progress::{Progress, SilentProgress};
/// One chunk's move kernels, for the criterion benchmarks only (not a stable API).
#[doc(hidden)]
pub use solve::KernelBench;
pub use solve::Pass;
pub use table::probe::{men_in_layout_order, Category, Probe, Run, Tablebase, Wdl, LOSER_BATCH};
/// The statistics the leading generator publishes, and their comparison with ours.
pub use table::published;
pub use table::stats::{longest_win, signature_stats, Longest, RunSummary, SignatureStats, ToMove};
pub use table::values::MAX_DISTANCE;
#[doc(hidden)]
pub use table::verify::force_baseline_lanes as verify_force_baseline_lanes;
pub use table::verify::sample::{sample_run, SampleReport};
pub use table::verify::{
    memory_needed as verify_memory, verify_run, verify_run_with, verify_signature, Method as VerifyMethod, SideReport,
    VerifyReport,
};
pub use table::TableError;
pub use work::StorageError;

/// The final table file (`docs/FORMAT.md`), for tools that read it directly.
pub mod file {
    /// The orders a table may store its positions in, apart from the generator's.
    pub use crate::index::{Man, StoredOrder};
    /// The cache of decoded blocks that compact tables are read through.
    pub use crate::table::cache;
    /// The compact format (version 7; versions 3 to 6 still read) that final tables are published
    /// in (Part I).
    pub use crate::table::compact;
    /// The uncompressed format (versions 1 and 2, Part II): old tables, and `verify`'s expansions.
    pub use crate::table::uncompressed::{Header, Section, SectionEntry, TableFile, VALUE_WORD_BYTES};
    /// What a table says of a position: value codes, classes, distances.
    pub use crate::table::values::{
        code_to_distance, step_code, Class, CODE_CURSED, CODE_EDGE, CODE_EXACT_100, CODE_ILLEGAL, CODE_LOST_UNMEASURED,
        CODE_NONE,
    };
    pub use crate::table::version::{
        table_path, EXTENSION, HEADER_LEN, MAGIC, VERSION_COMPACT, VERSION_UNCOMPRESSED, VERSION_UNCOMPRESSED_PAWNS,
    };
    pub use crate::table::FormatError;

    /// The position a storage slot of `layout`'s run holds, with `stm` to move; `None` if it
    /// is illegal (a compact table's values there are fills). For tools that read a table
    /// slot by slot.
    pub fn position_of_slot(layout: &crate::index::Layout, slot: u64, stm: crate::Color) -> Option<crate::Position> {
        crate::table::men::Men::of_slot(layout, slot).position(stm)
    }
}
