//! Six men with pawns: the named positions of the published statistics of KRBPvKR (its
//! longest win, exactly 100 plies; its longest cursed win, 121 plies; black's longest win),
//! probed with best moves and lines. The tables take about two hours to build on 2 cores, so
//! the test reads a folder built beforehand (`tbstream gen KRBPvKR --mem 2GiB --out DIR`),
//! named by `TBSTREAM_6MEN`; it is ignored by default and fails when that folder is missing:
//!
//! `TBSTREAM_6MEN=DIR cargo test --release --test it six_men:: -- --ignored`

use crate::util::tbstream;
use cozy_chess::{Board, Move};
use serde_json::Value;
use std::path::PathBuf;

/// The folder with KRBPvKR's closure.
fn tables() -> PathBuf {
    let dir = std::env::var_os("TBSTREAM_6MEN")
        .map(PathBuf::from)
        .expect("TBSTREAM_6MEN must name a folder with KRBPvKR's closure (tbstream gen KRBPvKR --out DIR)");
    for table in ["KRBPvKR.tbs", "KRvKRBP.tbs"] {
        assert!(dir.join(table).is_file(), "{} has no {table}", dir.display());
    }
    dir
}

/// `probe --json --line FEN`: the one answer.
fn probe(fen: &str) -> Value {
    let dir = tables();
    let (code, out, err) = tbstream(&["probe", "--json", "--line", "--tables", dir.to_str().unwrap(), fen]);
    assert_eq!(code, Some(0), "probe {fen}: {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "one answer for {fen}: {out}");
    serde_json::from_str(lines[0]).unwrap()
}

/// Asserts the category and DTZ of `fen` (side to move's view) and that its line of best
/// moves starts with the best move and is as long as the distance (to the zeroing move or
/// mate), or one ply shorter when it ends with the loser's own zeroing move (a forced
/// capture: counted like the published distance, the win's ply parity kept).
fn assert_named(fen: &str, category: &str, dtz: i64) {
    let a = probe(fen);
    assert_eq!(a["category"], category, "{fen}: {a}");
    assert_eq!(a["dtz"], dtz, "{fen}: {a}");
    let line = a["line"].as_array().unwrap_or_else(|| panic!("{fen}: no line in {a}"));
    let plies = line.len() as i64;
    // The side to move loses (dtz < 0) and makes the odd plies.
    let losers_last = dtz < 0 && plies % 2 == 1;
    assert!(plies == dtz.abs() || (losers_last && plies + 1 == dtz.abs()), "{fen}: the line {a}");
    assert_eq!(line[0], a["move"], "{fen}: the line starts with the best move: {a}");
}

#[test]
#[ignore = "needs TBSTREAM_6MEN: a folder with KRBPvKR's closure (about two hours to build)"]
fn krbpvkr_longest_win_is_exactly_100_plies() {
    // Published: "Longest win for white: 100 ply; 8/P7/2k5/8/3r4/2R5/8/K3B3 b - -". A win of
    // exactly 100 plies is still a win under the 50-move rule.
    assert_named("8/P7/2k5/8/3r4/2R5/8/K3B3 b - - 0 1", "loss", -100);
    // The same position with the colours swapped: KRvKRBP's table.
    assert_named("k3b3/8/2r5/3R4/8/2K5/p7/8 w - - 0 1", "loss", -100);
}

/// The FEN after the UCI move `uci` (played by an independent library).
fn after(fen: &str, uci: &str) -> String {
    let mut board: Board = fen.parse().unwrap();
    let mv: Move = uci.parse().unwrap();
    assert!(board.is_legal(mv), "{uci} is not legal in {fen}");
    board.play_unchecked(mv);
    board.to_string()
}

/// Asserts that `fen` is a blessed loss for the side to move (a cursed win for the other):
/// no distance is stored for it (`docs/CURSED.md`), and after its best move the other side
/// still has a cursed win, not a win under the rule.
fn assert_blessed_loss(fen: &str) {
    let a = probe(fen);
    assert_eq!(a["category"], "blessed-loss", "{fen}: {a}");
    let mv = a["move"].as_str().unwrap_or_else(|| panic!("{fen}: no best move in {a}"));
    let child = probe(&after(fen, mv));
    assert_eq!(child["category"], "cursed-win", "{fen} after {mv}: {child}");
}

#[test]
#[ignore = "needs TBSTREAM_6MEN: a folder with KRBPvKR's closure (about two hours to build)"]
fn krbpvkr_longest_cursed_win_is_a_blessed_loss() {
    // Published: "Longest cursed win for white: 121 ply; 8/8/8/1P6/8/K6B/6R1/2r4k b - -":
    // a win the 50-move rule turns into a draw.
    assert_blessed_loss("8/8/8/1P6/8/K6B/6R1/2r4k b - - 0 1");
    assert_blessed_loss("2R4K/6r1/k6b/8/1p6/8/8/8 w - - 0 1");
}

#[test]
#[ignore = "needs TBSTREAM_6MEN: a folder with KRBPvKR's closure (about two hours to build)"]
fn krbpvkr_longest_win_for_black_is_10_plies() {
    // Published: "Longest win for black: 10 ply; 8/8/8/8/4k3/2P5/8/B1R1K2r w - -".
    assert_named("8/8/8/8/4k3/2P5/8/B1R1K2r w - - 0 1", "loss", -10);
}
