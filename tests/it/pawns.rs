//! Tables with pawns: the left-right mirror probes alike, en passant is valued, and bad
//! input is refused.

use crate::fixtures::pawn_tables;
use crate::util::Rng;
use tbstream::{Color, Material, Piece, Position, Role, Tablebase};

/// A random legal position of `sig` (white's men before `v`), side to move random, no
/// en-passant square.
fn random_position(sig: &str, rng: &mut Rng) -> Position {
    let m = Material::parse(sig).unwrap();
    loop {
        let mut men = vec![
            (rng.below(64) as u8, Piece { color: Color::White, role: Role::King }),
            (rng.below(64) as u8, Piece { color: Color::Black, role: Role::King }),
        ];
        for (color, roles) in [(Color::White, &m.white), (Color::Black, &m.black)] {
            for &role in roles.iter() {
                let sq = if role == Role::Pawn { 8 + rng.below(48) } else { rng.below(64) };
                men.push((sq as u8, Piece { color, role }));
            }
        }
        let turn = if rng.below(2) == 0 { Color::White } else { Color::Black };
        if let Ok(p) = Position::from_men(&men, turn) {
            return p;
        }
    }
}

/// A move of the mirrored position: files exchanged.
fn mirror_move(pos: &Position, mv: tbstream::Move) -> tbstream::Move {
    let (from, to) = (mv.from ^ 7, mv.to ^ 7);
    *pos.legal_moves()
        .iter()
        .find(|m| m.from == from && m.to == to && m.promotion == mv.promotion)
        .expect("mirrored move")
}

#[test]
fn mirrored_positions_probe_alike_with_mirrored_best_moves() {
    let tb = Tablebase::open(pawn_tables()).unwrap();
    let mut rng = Rng(0x0005_eed0_fa11_9a55);
    for sig in
        ["KPvK", "KPvKP", "KQvKP", "KRvKP", "KBvKP", "KNvKP", "KPPvK", "KPvKQ", "KPvKR", "KPvKB", "KPvKN", "KvKPP"]
    {
        let mut decisive = 0;
        for _ in 0..500 {
            let pos = random_position(sig, &mut rng);
            let mirror = pos.mirrored();
            let (a, b) = (tb.probe(&pos).unwrap(), tb.probe(&mirror).unwrap());
            assert_eq!(a, b, "{sig}: {} and its mirror {}", pos.fen(), mirror.fen());
            decisive += (a.wdl != 0) as usize;
            if let Some((mv, child)) = tb.best_move(&pos).unwrap() {
                let mmv = mirror_move(&mirror, mv);
                let mchild = tb.probe(&mirror.play(mmv)).unwrap();
                assert_eq!(child, mchild, "{sig}: {} {mv} vs {} {mmv}", pos.fen(), mirror.fen());
                let (_, best) = tb.best_move(&mirror).unwrap().expect("the mirror has moves too");
                assert_eq!(best, child, "{sig}: best moves of {} and its mirror differ in value", pos.fen());
            }
        }
        assert!(decisive > 0 || sig == "KBvKP" || sig == "KPvKB", "{sig}: the sample should hold wins");
    }
}

#[test]
fn en_passant_is_valued_at_the_double_step_and_at_the_root() {
    let tb = Tablebase::open(pawn_tables()).unwrap();
    // A double step next to an enemy pawn: the stored value of the position after it (no
    // e.p. square) and the probe with the e.p. square agree with a one-ply search.
    for fen in ["8/8/8/8/3pP3/8/8/k1K5 b - e3 0 1", "4k3/8/8/3Pp3/8/8/8/4K3 w - e6 0 1"] {
        let pos = Position::from_fen(fen).unwrap();
        assert!(pos.ep.is_some(), "{fen}");
        let got = tb.probe(&pos).unwrap();
        let children: Vec<i8> = pos.legal_moves().iter().map(|&mv| -tb.probe(&pos.play(mv)).unwrap().wdl).collect();
        assert_eq!(got.wdl, *children.iter().max().unwrap(), "{fen}: {got:?}");
    }
    // An impossible en-passant square is an error.
    for fen in
        ["4k3/8/8/3Pp3/8/8/8/4K3 w - d6 0 1", "4k3/8/8/3P4/8/8/8/4K3 w - e6 0 1", "4k3/8/8/3Pp3/8/8/8/4K3 b - e6 0 1"]
    {
        assert!(Position::from_fen(fen).is_err(), "{fen} accepted");
    }
}

#[test]
fn double_steps_agree_with_a_one_ply_search() {
    // For every white pawn on its start rank (and black pawn on its), the stored result of
    // the position before the double step agrees with the best over its moves, each probed
    // after the move (with the e.p. square set when a capture is possible).
    let tb = Tablebase::open(pawn_tables()).unwrap();
    let mut rng = Rng(0x00d0_0b1e_57e9);
    let mut checked = 0;
    while checked < 2_000 {
        let pos = random_position(if rng.below(2) == 0 { "KPvKP" } else { "KPPvK" }, &mut rng);
        let start = if pos.turn == Color::White { 8..16 } else { 48..56 };
        let pawn_on_start =
            pos.pieces().any(|(s, p)| p.role == Role::Pawn && p.color == pos.turn && start.contains(&s));
        if !pawn_on_start || pos.legal_moves().is_empty() {
            continue;
        }
        let here = tb.probe(&pos).unwrap();
        let best = pos.legal_moves().iter().map(|&mv| -tb.probe(&pos.play(mv)).unwrap().wdl).max().unwrap();
        assert_eq!(here.wdl, best, "{}", pos.fen());
        checked += 1;
    }
}

#[test]
#[ignore = "slow tier: scripts/slow-tests.sh"]
fn slow_a_double_step_leaves_no_king_in_check() {
    // 8/8/8/8/1p6/KQ6/2P5/k7 w: the white king is in check from the pawn on b4. c2-c4
    // would leave black only bxc3 e.p., but it does not parry the check, so it is no move;
    // every legal move (Ka4, Kxb4, Qxb4) stalemates black. A double step once counted as a
    // win here, one KQPvKP position (and its mirror) more than the published statistics.
    let dir = crate::util::copy_tables(pawn_tables(), |_| true);
    let sig = Material::parse("KQPvKP").unwrap();
    tbstream::generate(&[sig], &tbstream::GenOptions::new(dir.path(), 2), &tbstream::SilentProgress).unwrap();
    let tb = Tablebase::open(dir.path()).unwrap();
    for fen in ["8/8/8/8/1p6/KQ6/2P5/k7 w - - 0 1", "8/8/8/8/6p1/6QK/5P2/7k w - - 0 1"] {
        let pos = Position::from_fen(fen).unwrap();
        assert_eq!(tb.probe(&pos).unwrap().wdl, 0, "{fen}");
        let best = pos.legal_moves().iter().map(|&mv| -tb.probe(&pos.play(mv)).unwrap().wdl).max().unwrap();
        assert_eq!(best, 0, "{fen}");
        assert!(pos.legal_moves().iter().all(|mv| !mv.pawn), "{fen}: no pawn move is legal");
    }
    assert_published_stats(dir.path(), "KQPvKP");
}

/// `tbstream stats --compare` finds table `sig` of `dir` equal to the published statistics.
fn assert_published_stats(dir: &std::path::Path, sig: &str) {
    let stats = crate::util::reference_dir().join("published-stats.txt");
    let (code, stdout, stderr) =
        crate::util::tbstream(&["stats", "--compare", stats.to_str().unwrap(), "--tables", dir.to_str().unwrap(), sig]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.starts_with(&format!("{sig}: equal")), "{stdout}");
}

/// Format 7 with pawns: KNNvKP (its two knights) and KPvKNN (black's) leave the slots whose
/// knights' H digits are out of order out, inside each slice. Readers in slot order give
/// those slots their sorted slot's values (sampled words), a probe through the slot reads the
/// same class, and the whole tables' statistics, which `stats` counts through those readers,
/// equal the published ones.
#[test]
fn identical_pieces_with_pawns_read_as_their_sorted_slot() {
    let dir = crate::util::copy_tables(pawn_tables(), |_| true);
    let sig = Material::parse("KNNvKP").unwrap();
    tbstream::generate(
        std::slice::from_ref(&sig),
        &tbstream::GenOptions::new(dir.path(), 2),
        &tbstream::SilentProgress,
    )
    .unwrap();
    let tb = Tablebase::open(dir.path()).unwrap();
    for m in [sig.clone(), sig.swapped()] {
        let path = tbstream::file::table_path(dir.path(), &m);
        let file = tbstream::file::compact::CompactTable::open(&path).unwrap();
        assert!(file.header.identical_dropped, "{m}");
        let layout = tbstream::Layout::new(&m);
        let run = tb.run(&m).unwrap();
        let (mut dropped, mut words, mut kept_words) = (0, Vec::new(), Vec::new());
        for word in (0..layout.n_slots / 64).step_by(4099) {
            let Some(kept) = layout.identical_partner(word) else {
                continue;
            };
            dropped += 1;
            assert_eq!((word * 64) >> layout.total_bits, (kept * 64) >> layout.total_bits, "{m}: one slice");
            for stm in [Color::White, Color::Black] {
                file.read_codes(Some(&layout), stm, word as usize, 1, &mut words).unwrap();
                file.read_codes(Some(&layout), stm, kept as usize, 1, &mut kept_words).unwrap();
                assert_eq!(words, kept_words, "{m} {stm:?} word {word} (kept {kept})");
                for lane in (0..64).step_by(5).filter(|&l| words[0][l as usize] != 63) {
                    let class = |w: u64| run.class(stm, w * 64 + lane).unwrap().bits();
                    assert_eq!(class(word), class(kept), "{m} {stm:?} slot {}", word * 64 + lane);
                }
            }
        }
        assert!(dropped > 20, "{m}: {dropped} sampled words out of order");
    }
    assert_published_stats(dir.path(), "KNNvKP");
}
