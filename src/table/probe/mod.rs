//! Probing finished tables: win/draw/loss, distance, a best move and the line for any position.
//!
//! Owns: the engine-facing probes. May import the formats, `men` and `values`, never `verify`
//! or `stats`.
//!
//! A [`Tablebase`] opens a folder of tables once and is shared between threads (it is
//! `Send + Sync`; wrap it in an `Arc` or borrow it from scoped threads). Tables are memory-mapped
//! on first use and checked against their section checksums once per process. After that,
//! [`Tablebase::probe_wdl`] and [`Tablebase::probe`] do no heap allocation and take no lock:
//! the position's men are gathered into a fixed array, its material into a small number that
//! selects an already-open run from a fixed table, and the index is computed in place.
//!
//! `result` says what a probe answers, `tablebase` opens the tables and probes, `run` maps a
//! position to its slot in a run's table, `moves` finds best moves and lines.
//!
//! ```
//! use tbstream::{generate, GenOptions, SilentProgress};
//! use tbstream::{Material, Position, Tablebase, Wdl};
//!
//! // Build KRvK (a fraction of a second) into a scratch folder and open it.
//! let dir = tempfile::tempdir()?;
//! generate(&[Material::parse("KRvK")?], &GenOptions::new(dir.path(), 1), &SilentProgress)?;
//! let tb = Tablebase::open(dir.path())?;
//!
//! let pos = Position::from_fen("8/8/8/8/8/2k5/8/KR6 w - - 0 1")?;
//! assert_eq!(tb.probe_wdl(&pos)?, Wdl::Win);
//! let probe = tb.probe(&pos)?;
//! assert_eq!((probe.wdl, probe.dtz), (1, 27));
//! let (mv, after) = tb.best_move(&pos)?.expect("a winning move");
//! assert_eq!((mv.to_string(), after.dtz), ("b1d1".to_string(), -26));
//! let line = tb.line(&pos, 100)?;
//! assert_eq!(line.len(), 27); // to checkmate
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod moves;
mod result;
mod run;
mod tablebase;

pub use result::{Category, Probe, Wdl};
pub use run::{men_in_layout_order, Run};
pub use tablebase::{Tablebase, LOSER_BATCH};
