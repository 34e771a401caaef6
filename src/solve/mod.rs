//! Solving one chunk of one pass: Koistinen's one-bit tables computed 64 positions per word.
//!
//! This layer is pure computation over chunk-local buffers: it knows which tables a pass
//! reads and writes ([`PassSpec`]), how the init tables and the move kernels fill a chunk
//! ([`compute_chunk`]), how a step's table and its new positions come from the kernel's words
//! ([`combine_words`]), and when the chains are complete. Reading, writing and resuming are
//! the business of the layers above.
//!
//! Owns: the passes and their tables, one chunk computed. May import `chess` and `index`
//! only: no file, no thread, no progress.

pub mod captures;
mod chunk;
pub mod frame;
mod init;
mod kernels;
mod pass;
pub mod sparse;

pub use captures::{BitWords, Bitbase, Captures, Promotions};
pub use chunk::{combine_words, compute_chunk, edge_chunk, ChunkTables, Conversions, Eventual, Extra};
pub use frame::Frame;
pub use init::PushTargets;
pub use kernels::KernelBench;
pub use pass::{
    captures_lose, chains_complete, last_step_where, last_step_within, obsolete_after, still_steps, Pass, PassSpec,
    WorkTable, EVENTUAL_CAPTURE_STEP, LAST_STEP, MAX_STEP,
};
