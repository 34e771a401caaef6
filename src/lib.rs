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
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod attacks;
pub mod delta;
pub mod deltalog;
pub mod format;
pub mod gen;
pub mod index;
pub mod job;
pub mod material;
pub mod merge;
pub mod plan;
pub mod plot;
pub mod position;
pub mod probe;
pub mod progress;
pub mod repair;
pub mod solve;
pub mod square;
pub mod stats;
pub mod status;
pub mod store;
pub mod verify;

pub use material::{Color, Material};
pub use position::{Move, Position};
pub use probe::{Probe, Tablebase, Wdl};
