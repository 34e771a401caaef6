//! Probes positions with the library API: win/draw/loss, distance, best move and line.
//!
//! ```sh
//! cargo run --release -- gen KRvK --out tables
//! cargo run --release --example probe -- tables "8/8/8/8/8/2k5/8/KR6 w - - 0 1" "8/8/8/8/8/8/1Rk5/K7 b - - 0 1"
//! ```

use anyhow::Context;
use std::path::Path;
use tbstream::{Position, Tablebase, Wdl};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().context("usage: probe TABLE_FOLDER FEN...")?;
    // Opened once; a Tablebase can be shared by reference (or in an Arc) between threads.
    let tb = Tablebase::open(Path::new(&dir))?;
    for fen in args {
        let pos = Position::from_fen(&fen).with_context(|| format!("bad FEN {fen:?}"))?;
        // The cheap probe: one bitbase bit per table with a fresh half-move clock.
        let wdl = tb.probe_wdl(&pos)?;
        // Result and stored distance in plies to mate or a zeroing move.
        let probe = tb.probe(&pos)?;
        let best = tb.best_move(&pos)?;
        let line = tb.line(&pos, 100)?;
        let verdict = match wdl {
            Wdl::Win => "win",
            Wdl::Draw => "draw",
            Wdl::Loss => "loss",
        };
        println!("{fen}");
        println!("  wdl   {} ({verdict} for the side to move)", wdl.as_i8());
        println!("  dtz   {}", probe.dtz);
        match best {
            Some((mv, after)) => println!("  best  {mv} (then wdl {}, dtz {})", after.wdl, after.dtz),
            None => println!("  best  - (no legal move)"),
        }
        let moves: Vec<String> = line.iter().map(|m| m.to_string()).collect();
        println!("  line  {}", if moves.is_empty() { "-".to_string() } else { moves.join(" ") });
    }
    Ok(())
}
