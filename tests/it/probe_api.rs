//! The library probe API: the fast paths agree with the plain-board algorithm of
//! `docs/FORMAT.md`, the bitbases agree with the values, lines end where they should, and a
//! `Tablebase` is shared between threads.

use crate::fixtures;
use crate::util::{all_codes, Rng};
use std::path::Path;
use tbstream::file::code_to_distance;
use tbstream::men_in_layout_order;
use tbstream::Piece;
use tbstream::Role;
use tbstream::{Category, Color, Material, Position, Probe, Tablebase, Wdl};

/// KQvKR and its sub-endgames (KQvK, KRvK, KRvKQ).
fn tables() -> &'static Path {
    fixtures::kqvkr()
}

/// Random legal positions of KQvKR, KRvKQ, KQvK, KvKR, KvK (and mirrored), with fresh clocks.
fn random_positions(seed: u64, n: usize) -> Vec<Position> {
    let mut rng = Rng(seed);
    let sets: [&[(Color, Role)]; 5] = [
        &[(Color::White, Role::Queen), (Color::Black, Role::Rook)],
        &[(Color::Black, Role::Queen), (Color::White, Role::Rook)],
        &[(Color::White, Role::Queen)],
        &[(Color::Black, Role::Rook)],
        &[],
    ];
    let mut out = Vec::new();
    while out.len() < n {
        let set = sets[rng.below(5) as usize];
        let mut men = vec![
            (0u8, Piece { color: Color::White, role: Role::King }),
            (0u8, Piece { color: Color::Black, role: Role::King }),
        ];
        men.extend(set.iter().map(|&(color, role)| (0u8, Piece { color, role })));
        for m in men.iter_mut() {
            m.0 = rng.below(64) as u8;
        }
        let turn = if rng.below(2) == 0 { Color::White } else { Color::Black };
        if let Ok(pos) = Position::from_men(&men, turn) {
            out.push(pos);
        }
    }
    out
}

/// The probing summary of `docs/FORMAT.md` on the plain board (legal move list, material,
/// layout order), as `probe` did before its fast path.
fn plain_probe(tb: &Tablebase, pos: &Position) -> Probe {
    let p = if pos.turn == Color::Black { pos.flipped() } else { pos.clone() };
    if p.legal_moves().is_empty() {
        return Probe { wdl: if p.in_check(Color::White) { -1 } else { 0 }, dtz: 0 };
    }
    let m = p.material();
    let g50 = 100 - p.halfmove.min(101) as i32;
    // Wins and losses are stored as classes; white-to-move distances as codes, black's
    // follow from them: two plies more than the longest white distance after a quiet move.
    let slot_of = |run: &tbstream::Run, q: &Position| {
        let (bk, pieces, wk) = men_in_layout_order(&run.layout, q);
        let (idx, _) = run.layout.canonical_index(bk, &pieces, wk);
        run.layout.slot(idx).unwrap()
    };
    // A wtm win's distance: its code, or 1 ply where a format 6 table leaves a win by a
    // zeroing move out (a zeroing move after which the loser, with a fresh clock, is lost).
    let wtm_distance = |run: &tbstream::Run, q: &Position| {
        let code = run.dtz_code(slot_of(run, q)).unwrap();
        let by_zeroing = || {
            let zeroing = q.legal_moves().into_iter().filter(|mv| mv.is_zeroing());
            zeroing.map(|mv| q.play(mv)).any(|child| plain_probe(tb, &child).wdl == -1)
        };
        if code != 1 && run.file.header.zeroing_dont_cares && by_zeroing() {
            return Some(1);
        }
        code_to_distance(Color::White, code)
    };
    let distance = |m: &Material, q: &Position| {
        let run = tb.run(m).unwrap();
        let slot = slot_of(&run, q);
        if run.class(q.turn, slot).unwrap().bits() != 1 {
            return None;
        }
        if q.turn == Color::White {
            return wtm_distance(&run, q);
        }
        let quiet = q.legal_moves().into_iter().filter(|mv| !mv.is_zeroing());
        let after = quiet.map(|mv| wtm_distance(&run, &q.play(mv)));
        Some(after.map(|d| d.unwrap() + 1).fold(2, u8::max))
    };
    if !m.white_bare() {
        if let Some(v) = distance(&m, &p).filter(|&v| v as i32 <= g50) {
            return Probe { wdl: 1, dtz: v as i32 };
        }
    }
    if !m.black.is_empty() {
        if let Some(v) = distance(&m.swapped(), &p.flipped()).filter(|&v| v as i32 <= g50) {
            return Probe { wdl: -1, dtz: -(v as i32) };
        }
    }
    Probe { wdl: 0, dtz: 0 }
}

#[test]
fn fast_probes_agree_with_the_plain_board_algorithm_at_every_clock() {
    let tb = Tablebase::open(tables()).unwrap();
    let mut seen = [0usize; 3];
    let mut no_moves = 0;
    for mut pos in random_positions(0x51de_c0de, 6000) {
        no_moves += pos.legal_moves().is_empty() as usize;
        for clock in [0, 1, 2, 30, 69, 70, 98, 99, 100, 101, 150] {
            pos.halfmove = clock;
            let want = plain_probe(&tb, &pos);
            let got = tb.probe(&pos).unwrap();
            assert_eq!(got, want, "{}", pos.fen());
            assert_eq!(tb.probe_wdl(&pos).unwrap(), got.outcome(), "{}", pos.fen());
            assert_eq!(tb.probe_wdl(&pos).unwrap().as_i8(), got.wdl);
            seen[(got.wdl + 1) as usize] += 1;
        }
    }
    assert!(seen.iter().all(|&n| n > 1000), "wins, draws and losses expected: {seen:?}");
    assert!(no_moves > 0, "the sample should hold mates or stalemates");
}

/// Every stored slot: the bitbases the generator loads from a table (`t99`: class 1 and every
/// illegal position; `t100`: class 1, illegal positions clear) agree with its classes, and
/// illegal positions are exactly those the plain board refuses.
#[test]
fn loaded_bitbases_agree_with_classes_everywhere() {
    for run in ["KQvK", "KRvK", "KQvKR", "KRvKQ"] {
        let m = Material::parse(run).unwrap();
        let bitbase = tbstream::load_bitbase(tables(), &m).unwrap();
        let layout = tbstream::Layout::new(&m);
        for stm in [Color::White, Color::Black] {
            let codes = all_codes(&tbstream::file::table_path(tables(), &m), stm);
            let words = if stm == Color::White { &bitbase.wtm } else { &bitbase.btm };
            for slot in 0..layout.n_slots {
                let bit = (words.get((slot / 64) as usize) >> (slot % 64)) & 1 == 1;
                let code = codes[slot as usize];
                let (bk, pieces, wk) = layout.decode(layout.index_of_slot(slot));
                let mut men = vec![
                    (wk, Piece { color: Color::White, role: Role::King }),
                    (tbstream::TRIANGLE[bk as usize], Piece { color: Color::Black, role: Role::King }),
                ];
                men.extend(
                    layout.pieces.iter().zip(&pieces).map(|(p, &s)| (s, Piece { color: p.color, role: p.role })),
                );
                let legal = Position::from_men(&men, stm).is_ok();
                assert_eq!(code != 63, legal, "{run} {stm:?} slot {slot}: code {code}");
                let expect = match code {
                    63 => stm == Color::White,
                    62 => true,
                    c => code_to_distance(stm, c).is_some(),
                };
                assert_eq!(bit, expect, "{run} {stm:?} slot {slot} code {code}");
            }
        }
    }
}

#[test]
fn lines_follow_best_moves_to_mate_or_capture() {
    let tb = Tablebase::open(tables()).unwrap();
    let (mut mates, mut captures) = (0, 0);
    for pos in random_positions(0x11fe_5eed, 600) {
        let here = tb.probe(&pos).unwrap();
        let line = tb.line(&pos, 200).unwrap();
        if here.wdl == 0 {
            assert!(line.is_empty(), "a draw has no line: {}", pos.fen());
            continue;
        }
        if line.is_empty() {
            assert_eq!(here, Probe { wdl: -1, dtz: 0 }, "only a mated side has an empty decisive line");
            assert!(pos.legal_moves().is_empty());
            continue;
        }
        assert_eq!(Some(line[0]), tb.best_move(&pos).unwrap().map(|(m, _)| m), "{}", pos.fen());
        // The stored distance counts the plies, rounded up to the chain's parity: a line
        // that ends with the loser's forced capture is one ply shorter.
        let winner_moves_last = (line.len() % 2 == 1) == (here.wdl == 1);
        let plies = if winner_moves_last { here.dtz.abs() } else { here.dtz.abs() - 1 };
        assert_eq!(line.len() as i32, plies, "{}: the line takes |dtz| plies", pos.fen());
        let mut p = pos.clone();
        let mut expect = here;
        for (i, &mv) in line.iter().enumerate() {
            assert!(p.legal_moves().contains(&mv), "{}: {mv} is legal", p.fen());
            assert_eq!(tb.best_move(&p).unwrap().map(|(m, _)| m), Some(mv), "{}", p.fen());
            assert_eq!(mv.capture, i + 1 == line.len() && mv.capture, "only the last move may capture");
            p = p.play(mv);
            if !mv.capture {
                let child = tb.probe(&p).unwrap();
                assert_eq!((child.wdl, child.dtz.abs()), (-expect.wdl, expect.dtz.abs() - 1), "{}", p.fen());
                expect = child;
            }
        }
        if line.last().unwrap().capture {
            captures += 1;
        } else {
            assert!(p.legal_moves().is_empty() && p.in_check(p.turn), "{}: the line ends in mate", p.fen());
            mates += 1;
        }
    }
    assert!(mates > 20 && captures > 20, "mates {mates}, captures {captures}");
    // A cap on the plies shortens the line.
    let pos = Position::from_fen("8/8/8/8/8/2k5/1R6/K7 w - - 0 1").unwrap();
    assert_eq!(tb.line(&pos, 5).unwrap().len(), 5);
    assert_eq!(tb.line(&pos, 0).unwrap(), vec![]);
}

#[test]
fn a_tablebase_is_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Tablebase>();
    let tb = Tablebase::open(tables()).unwrap();
    let positions = random_positions(0x7472_6561_6473, 4000);
    let serial: Vec<(Wdl, Probe)> = {
        let fresh = Tablebase::open(tables()).unwrap();
        positions.iter().map(|p| (fresh.probe_wdl(p).unwrap(), fresh.probe(p).unwrap())).collect()
    };
    // Four threads open the runs concurrently and probe the same positions.
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let (tb, positions) = (&tb, &positions);
                s.spawn(move || {
                    let order = positions.iter().enumerate().cycle().skip(t * 1000).take(positions.len());
                    order.map(|(i, p)| (i, tb.probe_wdl(p).unwrap(), tb.probe(p).unwrap())).collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            for (i, w, p) in h.join().unwrap() {
                assert_eq!((w, p), serial[i]);
            }
        }
    });
}

#[test]
fn missing_tables_are_errors_but_mates_and_bare_kings_need_none() {
    let empty = tempfile::tempdir().unwrap();
    let tb = Tablebase::open(empty.path()).unwrap();
    let err = tb.probe_wdl(&Position::from_fen("8/8/8/8/8/2k5/8/KQ6 w - - 0 1").unwrap()).unwrap_err();
    assert!(format!("{err:#}").contains("KQvK"), "{err:#}");
    let err = tb.probe(&Position::from_fen("8/8/8/8/8/2k5/8/KQ6 b - - 0 1").unwrap()).unwrap_err();
    assert!(format!("{err:#}").contains("KQvK"), "{err:#}");
    let mated = Position::from_fen("k7/1Q6/1K6/8/8/8/8/8 b - - 0 1").unwrap();
    assert_eq!(tb.probe(&mated).unwrap(), Probe { wdl: -1, dtz: 0 });
    assert_eq!(tb.probe_wdl(&mated).unwrap(), Wdl::Loss);
    let stalemate = Position::from_fen("k7/8/1QK5/8/8/8/8/8 b - - 0 1").unwrap();
    assert_eq!(tb.probe(&stalemate).unwrap(), Probe { wdl: 0, dtz: 0 });
    assert_eq!(tb.probe_wdl(&stalemate).unwrap(), Wdl::Draw);
    assert_eq!(tb.category(&mated).unwrap(), Some(Category::Loss));
    assert_eq!(tb.category(&stalemate).unwrap(), Some(Category::Draw));
    let bare = Position::from_fen("8/8/8/8/8/2k5/8/K7 w - - 0 1").unwrap();
    assert_eq!(tb.probe_wdl(&bare).unwrap(), Wdl::Draw);
    assert_eq!(tb.line(&bare, 100).unwrap(), vec![]);
    // Mated even at a clock past 100 (the mate is on the board).
    let mut late = mated.clone();
    late.halfmove = 120;
    assert_eq!(tb.probe_wdl(&late).unwrap(), Wdl::Loss);
}

/// Positions with pawns whose tables are not built: every entry point reports the missing
/// table (of the material or its colour swap, whichever it opens first) instead of
/// panicking, beside pawnless tables too.
#[test]
fn positions_with_pawns_report_a_missing_table() {
    let empty = tempfile::tempdir().unwrap();
    for dir in [empty.path(), tables()] {
        let tb = Tablebase::open(dir).unwrap();
        for (fen, run) in [
            ("8/8/8/8/8/3k4/1P6/K7 w - - 0 1", "KPvK"),
            ("4k3/8/8/8/3pPp2/8/8/4K3 b - e3 0 1", "KPvKPP"),
            ("8/8/8/8/8/2k5/7P/KQ6 w - - 0 1", "KQPvK"),
            ("8/8/8/8/8/2k5/7p/KQ6 b - - 0 1", "KQvKP"),
        ] {
            let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            let errors = [
                tb.probe(&pos).err(),
                tb.probe_wdl(&pos).err(),
                tb.best_move(&pos).err(),
                tb.line(&pos, 10).err(),
                tb.run(&pos.material()).err(),
            ];
            for e in errors {
                let e = format!("{:#}", e.unwrap_or_else(|| panic!("{fen} was answered")));
                let swapped = tbstream::Material::parse(run).unwrap().swapped().to_string();
                assert!(e.contains("missing table") && (e.contains(run) || e.contains(&swapped)), "{fen}: {e}");
            }
        }
    }
}

/// Format 7 drops the slots whose identical men are out of order (by H digit): readers in
/// slot order give each the values of the slot with the men sorted, their dropped
/// transposed twins included, the loaded bitbases agree, and a probe from the position's
/// men reads the same class.
#[test]
fn identical_men_out_of_order_read_as_their_kept_slot() {
    let dir = crate::fixtures::small_tables();
    let tb = Tablebase::open(dir).unwrap();
    for run in ["KBBvK", "KNNvK", "KRRvK", "KQQvK"] {
        let m = Material::parse(run).unwrap();
        let path = tbstream::file::table_path(dir, &m);
        let file = tbstream::file::compact::CompactTable::open(&path).unwrap();
        assert!(file.header.identical_dropped, "{run}");
        let layout = tbstream::Layout::new(&m);
        let bitbase = tbstream::load_bitbase(dir, &m).unwrap();
        let probe_run = tb.run(&m).unwrap();
        for stm in [Color::White, Color::Black] {
            let codes = all_codes(&path, stm);
            let words = if stm == Color::White { &bitbase.wtm } else { &bitbase.btm };
            let mut dropped = 0;
            for word in 0..layout.n_slots / 64 {
                let Some(kept) = layout.identical_partner(word) else {
                    continue;
                };
                dropped += 1;
                for lane in 0..64 {
                    let (slot, kept_slot) = ((word * 64 + lane) as usize, (kept * 64 + lane) as usize);
                    assert_eq!(codes[slot], codes[kept_slot], "{run} {stm:?} slot {slot} (kept {kept_slot})");
                    let bit = |w: u64, l: u64| (words.get(w as usize) >> l) & 1;
                    assert_eq!(bit(word, lane), bit(kept, lane), "{run} {stm:?} bitbase slot {slot}");
                    if codes[slot] != 63 && lane % 7 == 0 {
                        let class = probe_run.class(stm, slot as u64).unwrap().bits();
                        assert_eq!(class, probe_run.class(stm, kept_slot as u64).unwrap().bits(), "{run} slot {slot}");
                    }
                }
            }
            assert!(dropped > 0, "{run}: some words are out of order");
        }
    }
}
