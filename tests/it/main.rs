//! The integration tests, one binary (`cargo test --release --test it`): one module per
//! subject, the helpers they share (`util`) and the tables built once per run and read by
//! every module that needs them (`fixtures`). `tests/format_doc_reader.rs`, the independent
//! reader of `docs/FORMAT.md`, stays a binary of its own, apart from the crate's internals.
//!
//! One module: `cargo test --release --test it MODULE::`. The distributed tests need the
//! feature `mpi` and OpenMPI: `cargo test --release --features mpi --test it distributed::`.

mod cleanup;
mod counting_alloc;
mod fixtures;
mod hooks;
mod rng;
mod util;

mod chess_pawns;
mod cli;
mod compact;
#[cfg(feature = "mpi")]
mod distributed;
mod edge;
mod faults;
mod fuzz;
mod out_of_core;
mod pawns;
mod probe_alloc;
mod probe_api;
mod reference;
mod san;
mod serve;
mod sets;
mod six_men;
mod stats;
mod symmetry;
mod verify;
mod verify_pawns;
