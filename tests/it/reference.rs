//! Every 3- and 4-men pawnless table, and every table with pawns of the reference folder,
//! agrees with the independent reference positions.

use crate::fixtures::{krpvkr, pawn_tables, small_tables, PAWN_TABLES, SMALL};
use crate::util::{read_reference, RefLine};
use tbstream::{Position, Tablebase, LOSER_BATCH};

/// Rounds `n` up to the given parity (1 = odd, 0 = even).
fn round_up(n: i32, parity: i32) -> i32 {
    if n.rem_euclid(2) == parity {
        n
    } else {
        n + 1
    }
}

/// Our expected (wdl, allowed distances) for a reference line; see the reference README.
fn expected(r: &RefLine) -> (i8, Vec<i32>) {
    let wdl = match r.wdl {
        2 => 1,
        -2 => -1,
        _ => 0,
    };
    if wdl == 0 {
        return (0, vec![0]);
    }
    if r.wdl == -2 && r.dtz == -1 && r.dtz_plyacc.is_none_or(|p| p == -1) {
        // Possibly checkmated (0) or a forced losing capture (2).
        return (-1, vec![0, -2]);
    }
    let parity = if wdl == 1 { 1 } else { 0 };
    let true_plies = match r.dtz_plyacc {
        Some(p) => vec![p.abs()],
        None => vec![r.dtz.abs(), r.dtz.abs() + 1],
    };
    // A win of exactly 100 plies with the winner to move is stored as such (code 53); other
    // distances are rounded up to the side to move's parity.
    let d = true_plies.into_iter().map(|t| if wdl == 1 && t == 100 { 100 } else { round_up(t, parity) });
    (wdl, d.map(|x| x * wdl as i32).collect())
}

/// Probes every reference position of `tables` in `dir`: the number checked, and the
/// disagreements (no approximation is left: wins of exactly 100 plies are wins).
fn check(dir: &std::path::Path, tables: &[&str]) -> (usize, Vec<String>) {
    let tb = Tablebase::open(dir).unwrap();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for table in tables {
        for r in read_reference(table) {
            let pos = Position::from_fen(&r.fen).unwrap();
            let got = tb.probe(&pos).unwrap();
            let (wdl, dists) = expected(&r);
            checked += 1;
            if got.wdl == wdl && dists.contains(&got.dtz) {
                continue;
            }
            wrong.push(format!(
                "{table}: {} ref wdl {} dtz {} plyacc {:?} -> ours {:?}",
                r.fen, r.wdl, r.dtz, r.dtz_plyacc, got
            ));
        }
    }
    (checked, wrong)
}

#[test]
fn all_small_tables_agree_with_reference() {
    let (checked, wrong) = check(small_tables(), &SMALL);
    println!("checked {checked} reference positions");
    assert!(checked > 40_000, "too few reference positions: {checked}");
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn pawn_tables_agree_with_reference() {
    let (checked, wrong) = check(pawn_tables(), &PAWN_TABLES[..11]);
    println!("checked {checked} reference positions with pawns");
    assert!(checked > 12_000, "too few reference positions: {checked}");
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn krpvkr_agrees_with_reference() {
    // KRPvKR and its 29-run closure (with the 5-men pawnless promotion targets): about a
    // minute on 2 cores.
    let (checked, wrong) = check(krpvkr(), &PAWN_TABLES[11..]);
    println!("checked {checked} KRPvKR reference positions");
    assert!(checked >= 10_000, "too few reference positions: {checked}");
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
}

/// Lost positions whose loser has more quiet moves than `Tablebase::loser_distance` reads in
/// one batch (its children are fetched a batch at a time, the batch read when full): their
/// distances agree with the reference, also under a clock that the distance exceeds.
#[test]
fn losers_with_many_quiet_moves_agree_with_reference() {
    let tb = Tablebase::open(small_tables()).unwrap();
    let mut checked = 0;
    for table in ["KQvKQ", "KQvKR", "KRvKR", "KQvKB", "KQvKN"] {
        for r in read_reference(table) {
            let mut pos = Position::from_fen(&r.fen).unwrap();
            let quiet = pos.legal_moves().into_iter().filter(|m| !m.is_zeroing()).count();
            let (wdl, dists) = expected(&r);
            if wdl != -1 || quiet <= LOSER_BATCH || dists.contains(&0) {
                continue;
            }
            let got = tb.probe(&pos).unwrap();
            assert!(got.wdl == -1 && dists.contains(&got.dtz), "{}: {got:?}, reference {dists:?}", r.fen);
            // A clock under which the loss lasts past the 50-move rule: a draw.
            pos.halfmove = (101 + got.dtz).max(0) as u32;
            assert_eq!(tb.probe(&pos).unwrap().wdl, 0, "{} at clock {}", r.fen, pos.halfmove);
            checked += 1;
        }
    }
    println!("checked {checked} losses with more than {LOSER_BATCH} quiet moves");
    assert!(checked >= 20, "too few losses with more than {LOSER_BATCH} quiet moves: {checked}");
}
