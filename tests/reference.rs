//! Every 3- and 4-men pawnless table, and every table with pawns of the reference folder,
//! agrees with the independent reference positions.

mod common;
use common::*;
use tbstream::{Position, Tablebase};

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
    let d = match r.dtz_plyacc {
        Some(p) => vec![round_up(p.abs(), parity)],
        None => vec![round_up(r.dtz.abs(), parity), round_up(r.dtz.abs() + 1, parity)],
    };
    (wdl, d.into_iter().map(|x| x * wdl as i32).collect())
}

/// Probes every reference position of `tables` in `dir`: the number checked, the positions
/// left to the scheme's 100-ply approximation, and the disagreements.
fn check(dir: &std::path::Path, tables: &[&str]) -> (usize, Vec<String>, Vec<String>) {
    let tb = Tablebase::open(dir).unwrap();
    let mut checked = 0;
    let mut approx = Vec::new();
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
            // The scheme's known approximation: a win of exactly 100 plies with the winner
            // to move is reported as a draw.
            if wdl == 1 && got.wdl == 0 && r.dtz_plyacc.unwrap_or(r.dtz).abs() >= 99 {
                approx.push(r.fen.clone());
                continue;
            }
            wrong.push(format!(
                "{table}: {} ref wdl {} dtz {} plyacc {:?} -> ours {:?}",
                r.fen, r.wdl, r.dtz, r.dtz_plyacc, got
            ));
        }
    }
    (checked, approx, wrong)
}

#[test]
fn all_small_tables_agree_with_reference() {
    let (checked, approx, wrong) = check(small_tables(), &SMALL);
    println!("checked {checked} reference positions, {} by the 100-ply approximation: {approx:?}", approx.len());
    assert!(checked > 40_000, "too few reference positions: {checked}");
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn pawn_tables_agree_with_reference() {
    let (checked, approx, wrong) = check(pawn_tables(), &PAWN_TABLES[..11]);
    println!("checked {checked} reference positions with pawns, {} by the 100-ply approximation", approx.len());
    assert!(checked > 12_000, "too few reference positions: {checked}");
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn krpvkr_agrees_with_reference() {
    // KRPvKR and its 29-run closure (with the 5-men pawnless promotion targets): about a
    // minute on 2 cores.
    let dir = tempfile::tempdir().unwrap();
    let sig = tbstream::Material::parse("KRPvKR").unwrap();
    tbstream::generate(&[sig], &tbstream::GenOptions::new(dir.path(), 2), &tbstream::SilentProgress).unwrap();
    let (checked, approx, wrong) = check(dir.path(), &PAWN_TABLES[11..]);
    println!("checked {checked} KRPvKR reference positions, {} by the 100-ply approximation", approx.len());
    assert!(checked >= 10_000, "too few reference positions: {checked}");
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
}
