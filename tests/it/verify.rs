//! The independent verifier: it accepts freshly built tables, finds a single changed distance
//! or class (the table rewritten with valid checksums, so that only the contents are wrong),
//! and fails cleanly on damaged blocks, truncated and missing files.

use crate::fixtures::small_tables;
use crate::util::{self, all_codes, find_stored_distance, material as m, tbstream};
use std::path::{Path, PathBuf};
use tbstream::file::compact::{CompactTable, Part};
use tbstream::file::table_path;
use tbstream::Color;
use tbstream::Layout;
use tbstream::Role;
use tbstream::TRIANGLE;
use tbstream::{verify_run, verify_run_with, verify_signature, VerifyMethod};
use tbstream::{Piece, Position, Tablebase};

const SIGNATURES: [&str; 5] = ["KQvK", "KRvK", "KQvKR", "KRvKN", "KBBvK"];

/// The tables of `SIGNATURES` and their closure, among the shared 3- and 4-men tables.
fn tables() -> &'static Path {
    small_tables()
}

/// A private copy of the tables of `SIGNATURES` and their closure (no others), to damage.
fn copy_tables() -> tempfile::TempDir {
    let names: Vec<String> = SIGNATURES.iter().flat_map(|s| m(s).closure()).map(|r| format!("{r}.tbs")).collect();
    util::copy_tables(tables(), |name| names.iter().any(|n| n == name))
}

/// Flips bit `b` of the byte at `offset` in the file.
fn flip_bit(path: &Path, offset: u64, b: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[offset as usize] ^= 1 << b;
    std::fs::write(path, bytes).unwrap();
}

/// The position of a slot, if legal.
fn position_of_slot(layout: &Layout, slot: u64, stm: Color) -> Option<Position> {
    let (code, pieces, wk) = layout.decode(layout.index_of_slot(slot));
    let mut men = vec![
        (wk, Piece { color: Color::White, role: Role::King }),
        (TRIANGLE[code as usize], Piece { color: Color::Black, role: Role::King }),
    ];
    men.extend(layout.pieces.iter().zip(&pieces).map(|(p, &s)| (s, Piece { color: p.color, role: p.role })));
    Position::from_men(&men, stm).ok()
}

/// The first legal slot of `stm` whose value code (as `util::all_codes` gives it)
/// satisfies `want`, with its FEN and code.
fn find_slot(path: &Path, stm: Color, want: impl Fn(u8) -> bool) -> (u64, String, u8) {
    let material = CompactTable::open(path).unwrap().header.material.clone();
    let layout = Layout::new(&material);
    let codes = all_codes(path, stm);
    (0..layout.n_slots)
        .find_map(|slot| {
            let code = codes[slot as usize];
            if !want(code) {
                return None;
            }
            position_of_slot(&layout, slot, stm).map(|p| (slot, p.fen(), code))
        })
        .expect("a matching slot")
}

#[test]
fn accepts_freshly_built_tables() {
    let dir = tables();
    for sig in SIGNATURES {
        let mut calls = 0u64;
        let mut last = (0, 0);
        let reports = verify_signature(dir, &m(sig), 2, None, |_, d, t| {
            calls += 1;
            assert!(d <= t);
            last = (d, t);
        })
        .unwrap_or_else(|e| panic!("{sig}: {e:#}"));
        assert!(calls > 0 && last.0 == last.1, "{sig}: progress ends at the total");
        let expected_runs = m(sig).runs_of_signature();
        assert_eq!(reports.iter().map(|r| r.material.clone()).collect::<Vec<_>>(), expected_runs);
        for r in &reports {
            let name = &r.material;
            for (side, s) in [("wtm", &r.wtm), ("btm", &r.btm)] {
                assert_eq!(s.slots(), r.n_slots, "{name} {side}: every slot checked");
                assert_eq!(s.derived + s.by_symmetry, s.won + s.not_won, "{name} {side}");
                assert!(s.illegal > 0 && s.won > 0 && s.derived > 0 && s.by_symmetry > 0, "{name} {side}: {s:?}");
            }
            assert!(r.btm.mates > 0 && r.btm.not_won > 0, "{name}: {:?}", r.btm);
            assert_eq!(r.last_step, r.wtm.longest.max(r.btm.longest).unwrap());
            eprintln!("{name}: {:.1}s wtm {:?} btm {:?}", r.secs, r.wtm, r.btm);
        }
    }
    // Landmarks: the longest wins of KQvK and KRvK (mate in 10 and in 16 moves).
    let longest = |run: &str| verify_run(dir, &m(run), 2, |_, _| {}).unwrap().wtm.longest;
    assert_eq!(longest("KQvK"), Some(19));
    assert_eq!(longest("KRvK"), Some(31));
}

/// The two derivations, a word of 64 positions at a time and position by position on
/// expanded tables, find the same counts on every run (like men included: KBBvK); the word
/// check finds them too in its smallest chunks, black's codes in a temporary file.
#[test]
fn word_and_position_verifiers_agree() {
    let dir = tables();
    for sig in SIGNATURES {
        for run in m(sig).runs_of_signature() {
            let by = |method, budget| {
                verify_run_with(dir, &run, 2, method, budget, |_, _| {}).unwrap_or_else(|e| panic!("{run}: {e:#}"))
            };
            let (words, positions) = (by(VerifyMethod::Words, None), by(VerifyMethod::Positions, None));
            let chunked = by(VerifyMethod::Words, Some(0));
            for other in [&positions, &chunked] {
                assert_eq!(words.wtm, other.wtm, "{run} wtm");
                assert_eq!(words.btm, other.btm, "{run} btm");
                assert_eq!(words.sub_runs, other.sub_runs, "{run}");
            }
        }
    }
}

/// The word checks compiled for AVX2 (chosen at run time where the processor has it) and
/// for the baseline processor find the same counts; a changed distance is caught by both.
/// Other tests may run meanwhile with either build of the checks: both must agree.
#[test]
fn baseline_and_wide_word_checks_agree() {
    let dir = tables();
    let check = |baseline: bool, dir: &Path, run: &tbstream::Material| {
        tbstream::verify_force_baseline_lanes(baseline);
        let report = verify_run_with(dir, run, 2, VerifyMethod::Words, Some(0), |_, _| {});
        tbstream::verify_force_baseline_lanes(false);
        report
    };
    for run in ["KQvKR", "KRvKQ", "KBNvK", "KRvKN"] {
        let run = m(run);
        let (base, wide) = (check(true, dir, &run).unwrap(), check(false, dir, &run).unwrap());
        assert_eq!(base.wtm, wide.wtm, "{run} wtm");
        assert_eq!(base.btm, wide.btm, "{run} btm");
    }
    let copy = copy_tables();
    let path = table_path(copy.path(), &m("KQvKR"));
    let (slot, fen, code) = find_stored_distance(&path, 0);
    util::set_dtz(&path, slot, code ^ 1);
    for baseline in [true, false] {
        let err = format!("{:#}", check(baseline, copy.path(), &m("KQvKR")).unwrap_err());
        assert!(err.contains(" - - 0 1"), "baseline {baseline}, slot {slot} ({fen}): {err}");
    }
}

/// The word check of the smallest chunks of a run (black's codes in a temporary file,
/// `Some(0)`) and of one chunk (`None`).
const BUDGETS: [Option<u64>; 2] = [None, Some(0)];

/// A changed wtm distance (the table rewritten with valid checksums) is reported with a FEN
/// and the stored and expected values.
#[test]
fn detects_a_changed_distance() {
    for run in ["KQvKR", "KRvKN"] {
        let copy = copy_tables();
        let path = table_path(copy.path(), &m(run));
        let (slot, fen, code) = find_stored_distance(&path, 0);
        util::set_dtz(&path, slot, code ^ 1);
        assert_eq!(all_codes(&path, Color::White)[slot as usize], code ^ 1);
        for budget in BUDGETS {
            let err = verify_run_with(copy.path(), &m(run), 2, VerifyMethod::Words, budget, |_, _| {});
            let err = format!("{:#}", err.unwrap_err());
            assert!(err.contains("stored code") && err.contains(" - - 0 1"), "{run} slot {slot} ({fen}): {err}");
            // The changed position itself (or a symmetric image of it, which names it too) is
            // the first wrong one, or a btm predecessor whose derived distance it changes.
            assert!(err.contains(&format!("code {}", code ^ 1)) || err.contains("black to move"), "{err}");
        }
    }
}

/// A changed class, wtm or btm (the table rewritten with valid checksums), is reported
/// with the position.
#[test]
fn detects_a_changed_class() {
    for (run, stm, from, to) in
        [("KRvKN", Color::White, 1, 0), ("KQvKR", Color::Black, 62, 0), ("KQvKR", Color::Black, 0, 1)]
    {
        let copy = copy_tables();
        let path = table_path(copy.path(), &m(run));
        let (slot, fen, _) = find_slot(&path, stm, |c| if from == 1 { (1..=50).contains(&c) } else { c == from });
        util::set_slot_class(&path, stm, slot, to);
        for budget in BUDGETS {
            let err = verify_run_with(copy.path(), &m(run), 2, VerifyMethod::Words, budget, |_, _| {});
            let err = format!("{:#}", err.unwrap_err());
            assert!(err.contains(" - - 0 1"), "{run} {stm:?} slot {slot} ({fen}): {err}");
            if stm == Color::Black {
                // Black's classes are checked first, each against its own moves.
                assert!(err.contains(&fen) && err.contains("black to move is stored as"), "{fen}: {err}");
            }
        }
    }
}

/// Version 6: a win by a zeroing move (a capture into a lost sub-position) holds a don't-care
/// distance, so any code there passes every method (a win it stays, by its class); a win in
/// 1 ply by a quiet mate alone must still hold code 1.
#[test]
fn accepts_any_distance_at_a_win_by_a_zeroing_move() {
    let run = m("KQvKR");
    let tb = Tablebase::open(tables()).unwrap();
    let layout = Layout::new(&run);
    let codes = all_codes(&table_path(tables(), &run), Color::White);
    // The first kept legal wtm slot won in 1 ply by a capture (its stored byte not 1), or
    // only by a quiet mate (no zeroing move at all).
    let find = |by_zeroing: bool| {
        (0..layout.n_slots)
            .filter(|&slot| layout.kept_slot(slot, false) == slot)
            .find_map(|slot| {
                let p = position_of_slot(&layout, slot, Color::White)?;
                if tb.probe(&p).unwrap().dtz != 1 {
                    return None;
                }
                let moves = p.legal_moves();
                let wins = |mv: &tbstream::Move| mv.is_zeroing() && tb.probe(&p.play(*mv)).unwrap().wdl == -1;
                let found = match by_zeroing {
                    true => codes[slot as usize] != 1 && moves.iter().any(wins),
                    false => moves.iter().all(|mv| !mv.is_zeroing()),
                };
                found.then(|| (slot, p.fen(), codes[slot as usize]))
            })
            .expect("a win in 1 ply")
    };
    let methods = [(VerifyMethod::Words, None), (VerifyMethod::Words, Some(0)), (VerifyMethod::Positions, None)];
    let (slot, fen, stored) = find(true);
    for code in [0, 5, 52] {
        let copy = copy_tables();
        let path = table_path(copy.path(), &run);
        util::set_dtz(&path, slot, code);
        assert_eq!(stored_dtz(&path, slot), code);
        for (method, budget) in methods {
            let report = verify_run_with(copy.path(), &run, 2, method, budget, |_, _| {});
            report.unwrap_or_else(|e| panic!("{fen} (stored {stored}) as {code}, {method:?} {budget:?}: {e:#}"));
        }
    }
    // Not even 0, a byte that holds no win's code (which `read_codes` gives as 1).
    let (slot, fen, stored) = find(false);
    assert_eq!(stored, 1, "{fen}");
    for code in [0, 2] {
        let copy = copy_tables();
        let path = table_path(copy.path(), &run);
        util::set_dtz(&path, slot, code);
        assert_eq!(stored_dtz(&path, slot), code);
        for (method, budget) in methods {
            let err = verify_run_with(copy.path(), &run, 2, method, budget, |_, _| {}).unwrap_err();
            let err = format!("{err:#}");
            assert!(
                err.contains(&fen) || err.contains("black to move"),
                "{fen} as {code}, {method:?} {budget:?}: {err}"
            );
        }
    }
}

/// The distance byte stored for a (kept) wtm slot.
fn stored_dtz(path: &Path, slot: u64) -> u8 {
    let cache = tbstream::file::cache::BlockCache::new(1 << 20).unwrap();
    CompactTable::open(path).unwrap().dtz_code(slot, &cache).unwrap()
}

/// Damaged blocks, truncated files and missing sub-tables give errors, not panics.
#[test]
fn rejects_damaged_truncated_and_missing_files() {
    let copy = copy_tables();
    let dir = copy.path();
    let err_of = |run: &str| format!("{:#}", verify_run(dir, &m(run), 2, |_, _| {}).unwrap_err());
    // One bit flipped in the last block of the btm classes, checksums left alone.
    let path = table_path(dir, &m("KNvKR"));
    let table = CompactTable::open(&path).unwrap();
    let e = table.header.parts[Part::BtmWdl as usize];
    let n = table.n_blocks(Part::BtmWdl) as u64;
    drop(table);
    let at = e.offset + e.length - 2;
    // The block holding that byte, from the index (docs/FORMAT.md: entries of block ends).
    let bytes = std::fs::read(&path).unwrap();
    let end = |i: u64| u64::from_le_bytes(bytes[(e.offset + 16 * i) as usize..][..8].try_into().unwrap());
    let block = (0..n).find(|&i| e.offset + 16 * n + end(i) > at).unwrap();
    flip_bit(&path, at, 3);
    let err = err_of("KNvKR");
    assert!(err.contains(&format!("block {block}:")) && err.contains("BtmWdl") && err.contains("checksum"), "{err}");
    // A truncated table, and a run whose captures lead into it.
    let kqvk: PathBuf = table_path(dir, &m("KQvK"));
    let len = std::fs::metadata(&kqvk).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&kqvk).unwrap().set_len(len - 100).unwrap();
    let err = err_of("KQvK");
    assert!(err.contains("truncated"), "{err}");
    let err = err_of("KQvKR");
    assert!(err.contains("KQvK.tbs") && err.contains("truncated"), "{err}");
    // Cut inside the header.
    std::fs::OpenOptions::new().write(true).open(&kqvk).unwrap().set_len(100).unwrap();
    assert!(verify_run(dir, &m("KQvK"), 2, |_, _| {}).is_err());
    // A missing sub-table, a missing table.
    std::fs::remove_file(table_path(dir, &m("KRvK"))).unwrap();
    let err = err_of("KRvKQ");
    assert!(err.contains("KRvK"), "{err}");
    assert!(verify_run(dir, &m("KRvK"), 2, |_, _| {}).is_err());
    // A bare white king has no table.
    assert!(verify_run(dir, &m("KvKQ"), 2, |_, _| {}).is_err());
}

/// `tbstream verify`: exit 0 with a summary on good tables; exit 2 naming the position (FEN)
/// on a changed value, and naming the file on a truncated one.
#[test]
fn verify_command_passes_good_tables_and_names_the_wrong_position() {
    let verify =
        |dir: &Path, sig: &str| tbstream(&["verify", "--tables", dir.to_str().unwrap(), sig, "--threads", "2"]);
    let (code, stdout, stderr) = verify(tables(), "KRvKN");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("KRvKN: ok") && stdout.contains("KNvKR: ok"), "{stdout}");

    let copy = copy_tables();
    let path = table_path(copy.path(), &m("KQvKR"));
    let (slot, fen, code) = find_stored_distance(&path, 0);
    util::set_dtz(&path, slot, code ^ 1);
    let (code, _, stderr) = verify(copy.path(), "KQvKR");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("error: ") && stderr.contains(&fen), "{fen}: {stderr}");

    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len / 2).unwrap();
    let (code, _, stderr) = verify(copy.path(), "KQvKR");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("KQvKR.tbs") && stderr.contains("truncated"), "{stderr}");
    let (code, _, stderr) = verify(copy.path(), "KQXvK");
    assert_eq!(code, Some(2), "{stderr}");

    // A RAM budget below the smallest check (KQvKR: about 5 MiB, its sub-endgame's codes,
    // the smallest chunks and the blocks in flight) is refused before anything is read;
    // above it, it passes.
    let with_mem = |mem: &str| {
        let (code, _, stderr) =
            tbstream(&["verify", "--tables", tables().to_str().unwrap(), "KQvKR", "--threads", "2", "--mem", mem]);
        (code, stderr)
    };
    let (code, stderr) = with_mem("2MiB");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("verifying KQvKR needs at least") && stderr.contains("--sample"), "{stderr}");
    let (code, stderr) = with_mem("8MiB");
    assert_eq!(code, Some(0), "{stderr}");
}

/// `verify --sample` reads the compact tables where they stand: it passes good tables, finds
/// a block of changed distances and a block of changed black classes (rewritten with valid
/// checksums), and a flipped byte anywhere in the file (every block's checksum is checked
/// first), each with exit code 2; the same seed draws the same positions.
#[test]
fn sampled_verification_passes_good_tables_and_finds_damage() {
    use tbstream::file::compact::WDL_BLOCK_BITS;
    let sample = |dir: &Path, sig: &str, seed: &str| {
        tbstream(&["verify", "--tables", dir.to_str().unwrap(), sig, "--sample", "4000", "--seed", seed])
    };
    for sig in ["KQvKR", "KRvKN"] {
        let (code, stdout, stderr) = sample(tables(), sig, "7");
        assert_eq!(code, Some(0), "{stderr}");
        assert!(stdout.contains(&format!("{sig}: ok, sampled 4000 positions")), "{stdout}");
        let counts =
            |out: &str| out.lines().map(|l| l.split(" checked in").next().unwrap().to_string()).collect::<Vec<_>>();
        assert_eq!(counts(&stdout), counts(&sample(tables(), sig, "7").1), "the same seed, the same positions");
    }
    // Every wtm win of one distance block one code further (even codes never occur).
    let copy = copy_tables();
    let path = table_path(copy.path(), &m("KQvKR"));
    util::lengthen_middle_distance_block(&path);
    let (code, _, stderr) = sample(copy.path(), "KQvKR", "7");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("KQvKR wtm slot") && stderr.contains(" w - - 0 1"), "{stderr}");
    // One block of black's classes: every loss made a draw.
    let copy = copy_tables();
    let path = table_path(copy.path(), &m("KQvKR"));
    util::rewrite_compact(
        &path,
        |part, i, bytes| {
            if part == Part::BtmWdl && i == 3 {
                for s in 0..1u64 << WDL_BLOCK_BITS {
                    util::set_class(bytes, s, 0);
                }
            }
        },
        None,
    );
    let (code, _, stderr) = sample(copy.path(), "KQvKR", "7");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("KQvKR btm slot") && stderr.contains("stored not lost, but its moves make it lost"),
        "{stderr}"
    );
    // A flipped byte near the end of the file (the last blocks).
    let copy = copy_tables();
    let path = table_path(copy.path(), &m("KRvKN"));
    let len = std::fs::metadata(&path).unwrap().len();
    flip_bit(&path, len - 2000, 3);
    let (code, _, stderr) = sample(copy.path(), "KRvKN", "7");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("KRvKN.tbs") && stderr.contains("block"), "{stderr}");
}
