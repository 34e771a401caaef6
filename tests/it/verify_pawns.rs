//! The verifier on tables with pawns: it accepts every freshly built 4-men pawn table (both
//! runs of each signature), finds a single changed distance or class (the table rewritten with
//! valid checksums, so that only the contents are wrong), a changed level record or slice key,
//! and names a missing sub-table.

use crate::fixtures::{krpvkr, pawn_tables, PAWN_TABLES};
use crate::util::{self, all_codes, find_stored_distance, material as m, tbstream};
use std::path::Path;
use tbstream::file::compact::CompactTable;
use tbstream::file::table_path;
use tbstream::{verify_run, verify_run_with, verify_signature, Color, Layout, VerifyMethod, VerifyReport};
use tbstream::{Piece, Position, Role, Tablebase};

/// The signatures checked, with the reference's counts for their runs (docs: `pawns.md` §8,
/// from Syzygy's statistics): per run, wtm positions won for white and btm positions lost
/// for black; `None` where the reference does not give our count directly.
const SIGNATURES: [&str; 11] =
    ["KPvK", "KPvKP", "KQvKP", "KRvKP", "KBvKP", "KNvKP", "KPPvK", "KQPvK", "KRPvK", "KBPvK", "KNPvK"];

const REFERENCE: [(&str, u64, u64); 16] = [
    ("KPvK", 62_480, 48_802),
    ("KPvKP", 1_606_514, 868_985),
    ("KQvKP", 3_349_631, 3_993_795),
    ("KPvKQ", 385_976, 20),
    ("KRvKP", 3_703_102, 3_292_745),
    ("KPvKR", 816_810, 6_727),
    ("KBvKP", 104, 28),
    ("KPvKB", 1_174_317, 232_968),
    ("KNvKP", 208, 35),
    ("KPvKN", 1_622_140, 608_446),
    ("KBPvK", 4_141_811, 4_264_809),
    ("KRPvK", 3_938_586, 4_998_798),
    ("KNPvK", 4_405_320, 4_176_900),
    ("KQPvK", 3_273_697, 4_978_796),
    ("KRPvKR", 158_650_355, 62_586_644),
    ("KRvKRP", 49_187_154, 972_793),
];

/// The tables of `SIGNATURES` and their closure: the shared pawn tables.
fn tables() -> &'static Path {
    // The shared folder is built from these signatures (in another order).
    assert!(SIGNATURES.len() == 11 && SIGNATURES.iter().all(|s| PAWN_TABLES[..11].contains(s)));
    pawn_tables()
}

/// A private copy of the tables, to damage.
fn copy_tables() -> tempfile::TempDir {
    util::copy_tables(tables(), |_| true)
}

/// The position of a slot of a table with pawns, if legal.
fn position_of_slot(layout: &Layout, slot: u64, stm: Color) -> Option<Position> {
    let slices = layout.slices.as_ref().unwrap();
    let pawns = slices.pawns((slot >> layout.total_bits) as u32);
    let (bk, pieces, wk) = layout.decode(slot & ((1 << layout.total_bits) - 1));
    let piece = |color, role| Piece { color, role };
    let mut men = vec![(wk, piece(Color::White, Role::King)), (bk, piece(Color::Black, Role::King))];
    men.extend(layout.pieces.iter().zip(&pieces).map(|(p, &s)| (s, piece(p.color, p.role))));
    for color in [Color::White, Color::Black] {
        men.extend(pawns.of(color).iter().map(|&s| (s, piece(color, Role::Pawn))));
    }
    let mut seen = 0u64;
    for &(s, _) in &men {
        if seen & (1 << s) != 0 {
            return None;
        }
        seen |= 1 << s;
    }
    Position::from_men(&men, stm).ok()
}

/// The first legal slot of `stm` from `from` on whose value code satisfies `want`, with its
/// FEN and code.
fn find_slot(path: &Path, stm: Color, from: u64, want: impl Fn(u8) -> bool) -> (u64, String, u8) {
    let layout = Layout::new(&CompactTable::open(path).unwrap().header.material);
    let codes = all_codes(path, stm);
    (from..layout.n_slots)
        .find_map(|slot| {
            let code = codes[slot as usize];
            if !want(code) {
                return None;
            }
            position_of_slot(&layout, slot, stm).map(|p| (slot, p.fen(), code))
        })
        .expect("a matching slot")
}

/// The error of the word check of `run`, which must be the same whether the check holds a
/// slice at once or works in its smallest chunks (black's codes in a temporary file).
fn verify_err(dir: &Path, run: &str) -> String {
    let whole = format!("{:#}", verify_run(dir, &m(run), 2, |_, _| {}).unwrap_err());
    let chunked = verify_run_with(dir, &m(run), 2, VerifyMethod::Words, Some(0), |_, _| {}).unwrap_err();
    assert_eq!(whole, format!("{chunked:#}"), "{run}: the same error in the smallest chunks");
    whole
}

/// The word check (a slice at once, and in the smallest chunks with black's codes in a
/// temporary file) and the position check give the same counts on every run of the 4-men
/// pawn tables and KPPvK: two derivations that share no code but the men's moves.
#[test]
fn word_and_position_verifiers_agree_with_pawns() {
    for sig in &SIGNATURES[..7] {
        for run in m(sig).runs_of_signature() {
            let by = |method, budget| {
                verify_run_with(tables(), &run, 2, method, budget, |_, _| {}).unwrap_or_else(|e| panic!("{run}: {e:#}"))
            };
            let words = by(VerifyMethod::Words, None);
            for other in [by(VerifyMethod::Positions, None), by(VerifyMethod::Words, Some(0))] {
                assert_eq!(words.wtm, other.wtm, "{run} wtm");
                assert_eq!(words.btm, other.btm, "{run} btm");
                assert_eq!(words.sub_runs, other.sub_runs, "{run}");
            }
        }
    }
}

/// The 4-men pawn tables and KPPvK (the one table here with mirrored file patterns), checked
/// a word at a time.
#[test]
fn accepts_the_four_men_pawn_tables_and_kppvk() {
    let reports = accepts(&SIGNATURES[..7]);
    // Landmarks: KPvK's longest win and its stalemates (black to move, no move, no check).
    let kpvk = reports.iter().find(|r| r.material == m("KPvK")).expect("KPvK verified");
    assert_eq!(kpvk.last_step, 20);
    assert!(kpvk.btm.stalemates > 0 && kpvk.sub_runs.contains(&m("KQvK")));
}

/// KQPvK, KRPvK, KBPvK and KNPvK (seconds a word at a time).
#[test]
fn accepts_the_five_men_pawn_tables() {
    accepts(&SIGNATURES[7..]);
}

/// `verify_signature` passes every table of `sigs`, checks every slot of both runs, reports
/// progress up to the total and finds the reference's counts; returns every run's report.
fn accepts(sigs: &[&str]) -> Vec<VerifyReport> {
    let dir = tables();
    let mut all = Vec::new();
    for &sig in sigs {
        let mut last = (0, 0);
        let reports = verify_signature(dir, &m(sig), 2, None, |_, d, t| {
            assert!(d <= t);
            last = (d, t);
        })
        .unwrap_or_else(|e| panic!("{sig}: {e:#}"));
        assert!(last.0 == last.1 && last.1 > 0, "{sig}: progress ends at the total");
        assert_eq!(reports.iter().map(|r| r.material.clone()).collect::<Vec<_>>(), m(sig).runs_of_signature());
        for r in &reports {
            let name = r.material.to_string();
            // Both orientations are stored only for file patterns that are their own mirror.
            let mirrored = name == "KPPvK" || name == "KvKPP";
            for (side, s) in [("wtm", &r.wtm), ("btm", &r.btm)] {
                assert_eq!(s.slots(), r.n_slots, "{name} {side}: every slot checked");
                assert_eq!(s.derived + s.by_symmetry, s.won + s.not_won, "{name} {side}");
                assert!(s.illegal > 0 && s.derived > 0, "{name} {side}: {s:?}");
                assert_eq!(s.by_symmetry > 0, mirrored, "{name} {side}: {s:?}");
            }
            assert_eq!(r.last_step, r.wtm.longest.max(r.btm.longest).unwrap_or(0), "{name}");
            if let Some(&(_, won, lost)) = REFERENCE.iter().find(|(run, _, _)| *run == name) {
                assert_eq!((r.wtm.won, r.btm.won), (won, lost), "{name}: the reference's counts");
            }
            eprintln!("{name}: {:.1}s wtm {:?} btm {:?} subs {:?}", r.secs, r.wtm, r.btm, r.sub_runs);
        }
        all.extend(reports);
    }
    all
}

/// A changed wtm distance (the table rewritten with valid checksums) is reported with the
/// FEN of the position and its stored and expected values; a win by a conversion (version 6:
/// its distance a don't-care) passes with any code.
#[test]
fn detects_a_changed_distance() {
    // A wtm win decided by a conversion, a promotion: stored 0 instead of its don't-care.
    let copy = copy_tables();
    let path = table_path(copy.path(), &m("KPvK"));
    let tb = Tablebase::open(copy.path()).unwrap();
    let layout = Layout::new(&m("KPvK"));
    let slot = (0..layout.n_slots)
        .find(|&slot| position_of_slot(&layout, slot, Color::White).is_some_and(|p| tb.probe(&p).unwrap().dtz == 1))
        .expect("a win in 1 ply");
    util::set_dtz(&path, slot, 0);
    let cache = tbstream::file::cache::BlockCache::new(1 << 20).unwrap();
    assert_eq!(CompactTable::open(&path).unwrap().dtz_code(slot, &cache).unwrap(), 0);
    for method in [VerifyMethod::Words, VerifyMethod::Positions] {
        verify_run_with(copy.path(), &m("KPvK"), 2, method, None, |_, _| {}).unwrap();
    }
    // Longer wtm wins.
    for (run, from) in [("KPvKP", 1 << 20), ("KQvKP", 0)] {
        let copy = copy_tables();
        let path = table_path(copy.path(), &m(run));
        let (slot, fen, code) = find_stored_distance(&path, from);
        util::set_dtz(&path, slot, code ^ 1);
        assert_eq!(all_codes(&path, Color::White)[slot as usize], code ^ 1);
        let err = verify_err(copy.path(), run);
        assert!(err.contains(" - - 0 1"), "{run} slot {slot} ({fen}): {err}");
        // Black's side is derived first from white's distances: a predecessor may be the
        // first to disagree; else the changed position itself is named.
        if !err.contains("black to move is stored as") {
            assert!(err.contains(&fen) && err.contains(&format!("stored code {}", code ^ 1)), "{fen}: {err}");
            assert!(err.contains(&format!("expected code {code}")), "{err}");
        }
    }
}

/// A changed class of a won (wtm) or lost (btm) position is reported with the position.
#[test]
fn detects_a_changed_class() {
    for (run, stm) in [("KRvKP", Color::White), ("KPvKR", Color::Black), ("KPvKP", Color::Black)] {
        let copy = copy_tables();
        let path = table_path(copy.path(), &m(run));
        let (slot, fen, _) = find_slot(&path, stm, 1 << 19, |c| (1..=50).contains(&c) || c == 62);
        util::set_slot_class(&path, stm, slot, 0);
        let err = verify_err(copy.path(), run);
        assert!(err.contains(" - - 0 1"), "{run} {stm:?} slot {slot} ({fen}): {err}");
        if stm == Color::Black {
            assert!(err.contains(&fen) && err.contains("black to move is stored as not lost"), "{fen}: {err}");
        }
    }
}

/// A mirror image in a symmetric file pattern that disagrees is reported.
#[test]
fn detects_a_mirror_image_that_disagrees() {
    let copy = copy_tables();
    let path = table_path(copy.path(), &m("KPPvK"));
    // The first slice whose file pattern is its own mirror (both orientations stored).
    let layout = Layout::new(&m("KPPvK"));
    let slices = layout.slices.as_ref().unwrap();
    let slice = (0..slices.len() as u32).find(|&s| slices.pawns(s).orientation().is_eq()).unwrap();
    let (slot, fen, code) = find_stored_distance(&path, (slice as u64) << layout.total_bits);
    util::set_dtz(&path, slot, code ^ 1);
    // The word check derives the image like every slot; the position check compares it with
    // its mirror image (or finds a black-to-move position it changes).
    let err = verify_err(copy.path(), "KPPvK");
    assert!(err.contains(&fen) && err.contains(&format!("stored code {}", code ^ 1)), "{fen} code {code}: {err}");
    let by_positions = verify_run_with(copy.path(), &m("KPPvK"), 2, VerifyMethod::Positions, None, |_, _| {});
    let err = format!("{:#}", by_positions.unwrap_err());
    assert!(err.contains("mirror image") || err.contains("black to move"), "{fen} code {code}: {err}");
}

/// A level record whose last step is wrong, and a wrong slice key, are reported.
#[test]
fn detects_a_wrong_level_record() {
    let run = m("KPvKP");
    let layout = Layout::new(&run);
    let original = {
        let table = CompactTable::open(&table_path(tables(), &run)).unwrap();
        let last: Vec<u8> = table.levels().iter().map(|l| l.last_step).collect();
        tbstream::file::compact::slice_bytes(&layout, &last)
    };
    let level0 = 4 * layout.slices.as_ref().unwrap().len();
    for (at, what) in [(level0 + 8, "last step"), (0, "key")] {
        let copy = copy_tables();
        let path = table_path(copy.path(), &run);
        let mut slices = original.clone();
        slices[at] += 1;
        util::rewrite_compact(&path, |_, _, _| {}, Some(slices));
        let err = verify_err(copy.path(), "KPvKP");
        assert!(err.contains(what), "{what}: {err}");
    }
}

/// Missing sub-tables are named: a promotion's, a capture's, and the run's own.
#[test]
fn names_a_missing_sub_table() {
    let copy = copy_tables();
    let dir = copy.path();
    std::fs::remove_file(table_path(dir, &m("KQvKP"))).unwrap();
    let err = verify_err(dir, "KPvKP");
    assert!(err.contains("KQvKP") && err.contains("sub-endgame"), "{err}");
    std::fs::remove_file(table_path(dir, &m("KRvK"))).unwrap();
    let err = verify_err(dir, "KRPvK");
    assert!(err.contains("KRvK.tbs") && err.contains("sub-endgame KRvK"), "{err}");
    std::fs::remove_file(table_path(dir, &m("KPvK"))).unwrap();
    let err = verify_err(dir, "KPvK");
    assert!(err.contains("KPvK.tbs"), "{err}");
}

/// `tbstream verify` on two pawn signatures (the smallest: the library's check of the others
/// is `accepts_the_four_men_pawn_tables_and_kppvk`): each run ok.
#[test]
fn verify_command_accepts_pawn_tables() {
    let (code, stdout, stderr) =
        tbstream(&["verify", "--tables", tables().to_str().unwrap(), "KPvK", "KPvKP", "--threads", "2"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("KPvK: ok") && stdout.contains("KPvKP: ok"), "{stdout}");
}

/// KRPvKR, 5 men (29 runs, the folder `reference` reads): both runs verified in about 30 s
/// on 2 cores, with the reference's counts.
#[test]
fn verify_accepts_krpvkr() {
    for r in verify_signature(krpvkr(), &m("KRPvKR"), 2, None, |_, _, _| {}).unwrap_or_else(|e| panic!("{e:#}")) {
        let name = r.material.to_string();
        let &(_, won, lost) = REFERENCE.iter().find(|(run, _, _)| *run == name).unwrap();
        assert_eq!((r.wtm.won, r.btm.won), (won, lost), "{name}: the reference's counts");
        eprintln!("{name}: {:.1}s wtm {:?} btm {:?}", r.secs, r.wtm, r.btm);
    }
}

/// `verify --sample` on tables with pawns: every pawn table here passes, and a block of
/// changed distances (rewritten with valid checksums) is found.
#[test]
fn sampled_verification_of_pawn_tables() {
    let sample = |dir: &Path, sigs: &[&str]| {
        tbstream(&[&["verify", "--tables", dir.to_str().unwrap(), "--sample", "5000"], sigs].concat())
    };
    let (code, stdout, stderr) = sample(tables(), &SIGNATURES);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("KRPvK: ok, sampled 5000") && stdout.contains("KPvKP: ok"), "{stdout}");
    let copy = copy_tables();
    let path = table_path(copy.path(), &m("KQvKP"));
    util::lengthen_middle_distance_block(&path);
    let (code, _, stderr) = sample(copy.path(), &["KQvKP"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("KQvKP wtm slot") && stderr.contains(" w - - 0 1"), "{stderr}");
}
