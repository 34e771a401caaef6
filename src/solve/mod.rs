//! Solving one chunk of one pass: Koistinen's one-bit tables computed 64 positions per word.
//!
//! This layer is pure computation over chunk-local buffers: it knows which tables a pass
//! reads and writes ([`PassSpec`]), how the init tables and the move kernels fill a chunk
//! ([`compute_chunk`]), how a step's table and its new positions come from the kernel's words
//! ([`combine`]), and when the chains are complete. Reading, writing and resuming are the
//! business of the layers above.

pub mod captures;
pub mod frame;
mod init;
mod kernels;
mod pass;
pub mod sparse;

pub use captures::{BitWords, Bitbase, Captures};
pub use frame::Frame;
pub use init::PushTargets;
pub use pass::{
    chains_complete, combine, compute_chunk, edge_chunk, last_step_where, last_step_within, obsolete_after, Eventual,
    Pass, PassSpec, WorkTable, EVENTUAL_CAPTURE_STEP, LAST_STEP, MAX_STEP,
};
