//! The plain board with pawns: legal moves, en passant and promotions cross-checked with
//! `cozy-chess` by perft and move lists on random positions; FEN round trips and refusals.

use crate::util::Rng;
use cozy_chess::Board;
use tbstream::{Color, FenError, Move, Piece, Position, Role};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn cozy(fen: &str) -> Board {
    Board::from_fen(fen, false).unwrap_or_else(|e| panic!("cozy-chess rejects {fen}: {e:?}"))
}

fn perft(p: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = p.legal_moves();
    if depth == 1 {
        return moves.len() as u64;
    }
    moves.iter().map(|&mv| perft(&p.play(mv), depth - 1)).sum()
}

fn cozy_perft(b: &Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    b.generate_moves(|moves| {
        for mv in moves {
            if depth == 1 {
                nodes += 1;
            } else {
                let mut child = b.clone();
                child.play_unchecked(mv);
                nodes += cozy_perft(&child, depth - 1);
            }
        }
        false
    });
    nodes
}

fn sorted_uci(p: &Position) -> Vec<String> {
    let mut v: Vec<String> = p.legal_moves().iter().map(|m| m.to_string()).collect();
    v.sort();
    v
}

fn cozy_sorted_uci(b: &Board) -> Vec<String> {
    let mut v = Vec::new();
    b.generate_moves(|moves| {
        v.extend(moves.into_iter().map(|m| m.to_string()));
        false
    });
    v.sort();
    v
}

/// Board, side to move and clock fields of a FEN (the e.p. field differs by convention:
/// cozy-chess names it after every double step, we only when the capture is legal).
fn fields(fen: &str) -> (String, String, String) {
    let f: Vec<&str> = fen.split_whitespace().collect();
    (f[0].to_string(), f[1].to_string(), f[4].to_string())
}

/// Compares the move lists of both generators over the whole tree down to `depth`, and the
/// position each move leads to; `line` names the moves from the root for the message.
fn compare_tree(p: &Position, b: &Board, depth: u32, line: &mut Vec<String>) {
    let ours = sorted_uci(p);
    assert_eq!(ours, cozy_sorted_uci(b), "moves of {} after {line:?}", p.fen());
    assert_eq!(p.has_legal_move(), !ours.is_empty(), "{}", p.fen());
    if depth <= 1 {
        return;
    }
    for mv in p.legal_moves() {
        let next = p.play(mv);
        let mut next_b = b.clone();
        next_b.play_unchecked(mv.to_string().parse().unwrap());
        line.push(mv.to_string());
        assert_eq!(fields(&next.fen()), fields(&next_b.to_string()), "after {line:?} from {}", p.fen());
        // Our e.p. square implies cozy-chess's, and reparses to the same position.
        if let Some(ep) = next.ep {
            let cozy_file = next_b.en_passant().map(|f| f as u8);
            assert_eq!(cozy_file, Some(ep % 8), "e.p. square after {line:?} from {}", p.fen());
        }
        assert_eq!(Position::from_fen(&next.fen()).as_ref(), Ok(&next), "after {line:?} from {}", p.fen());
        compare_tree(&next, &next_b, depth - 1, line);
        line.pop();
    }
}

/// A random legal position of 3 to 6 men with at least one pawn. Pawns stand often on their
/// start rank or where they may take or be taken en passant, and the men are often crowded
/// into half of the board, so that double steps, pins and promotions occur. Every other
/// position is set up for en passant: the side to move has a pawn on its start rank and the
/// other side a pawn that may take it after its double step.
fn random_position(rng: &mut Rng) -> Position {
    let roles = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight, Role::Pawn, Role::Pawn, Role::Pawn];
    let piece = |color, role| Piece { color, role };
    loop {
        let turn = if rng.below(2) == 0 { Color::White } else { Color::Black };
        let (file_lo, file_span) = if rng.below(2) == 0 { (rng.below(5), 4) } else { (0, 8) };
        let mut men = vec![(0u8, piece(Color::White, Role::King)), (0u8, piece(Color::Black, Role::King))];
        let extra = 1 + rng.below(4);
        for _ in 0..extra {
            let color = if rng.below(2) == 0 { Color::White } else { Color::Black };
            men.push((0, piece(color, roles[rng.below(roles.len() as u64) as usize])));
        }
        for m in men.iter_mut() {
            let file = file_lo + rng.below(file_span);
            let white = m.1.color == Color::White;
            let rank = match (m.1.role, rng.below(4)) {
                (Role::Pawn, 0) => [6, 1][white as usize],
                (Role::Pawn, 1) => [3, 4][white as usize],
                (Role::Pawn, 2) => [1, 6][white as usize],
                (Role::Pawn, _) => 1 + rng.below(6),
                _ => rng.below(8),
            };
            m.0 = (rank * 8 + file) as u8;
        }
        if rng.below(2) == 0 {
            // A pawn of the side to move on its start rank, an enemy pawn beside its target.
            let file = rng.below(8) as i64;
            let beside = (file + if rng.below(2) == 0 { 1 } else { -1 }).clamp(0, 7) as u64;
            let (start, taker) = if turn == Color::White { (1, 3) } else { (6, 4) };
            men.truncate(2 + rng.below(3) as usize);
            men.push(((start * 8 + file) as u8, piece(turn, Role::Pawn)));
            men.push(((taker * 8 + beside) as u8, piece(turn.other(), Role::Pawn)));
        }
        if let Ok(p) = Position::from_men(&men, turn) {
            // cozy-chess refuses three checkers, which no game reaches.
            if p.has_pawns() && Board::from_fen(&p.fen(), false).is_ok() {
                return p;
            }
        }
    }
}

/// Positions just after a double step: every double step of `p`'s side, played.
fn after_double_steps(p: &Position) -> Vec<Position> {
    p.legal_moves().into_iter().filter(|m| m.pawn && m.from.abs_diff(m.to) == 16).map(|m| p.play(m)).collect()
}

// ---------------------------------------------------------------------------------------
// Perft
// ---------------------------------------------------------------------------------------

/// Perft values computed with cozy-chess (and checked against it again here).
#[test]
fn fixed_perft_values_match_cozy_chess() {
    let cases: [(&str, u32, u64); 6] = [
        // ../shared/docs/pawns.md section 8.
        ("8/6R1/8/8/k5PP/2Kb4/8/8 w - - 0 1", 5, 706_790),
        // Rank pin: e.p. is illegal, so the square is dropped.
        ("8/8/8/8/R2pP2k/8/8/4K3 b - e3 0 1", 4, 10_473),
        // e.p. is the only move.
        ("8/8/8/8/Pp6/1B6/8/k1K5 b - a3 0 1", 4, 222),
        // Promotions of both sides, with and without capture.
        ("1n2k3/P7/8/8/8/8/6p1/4K2R w - - 0 1", 4, 54_269),
        ("4k3/8/8/8/3pP3/8/8/R3K3 b - e3 0 1", 4, 12_612),
        ("8/2p5/3p4/KP6/7k/8/4P3/8 w - - 0 1", 5, 22_316),
    ];
    for (fen, depth, expected) in cases {
        assert_eq!(cozy_perft(&cozy(fen), depth), expected, "cozy-chess perft({depth}) of {fen}");
        assert_eq!(perft(&pos(fen), depth), expected, "perft({depth}) of {fen}");
    }
}

/// Move lists and resulting positions agree with cozy-chess over whole trees of depth 3 from
/// random positions and from positions just after a double step; counts agree to depth 4.
#[test]
fn random_positions_agree_with_cozy_chess() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut roots, mut with_ep, mut promotions, mut ep_captures) = (0, 0, 0, 0);
    while roots < 2000 {
        let p = random_position(&mut rng);
        let mut todo = vec![p.clone()];
        todo.extend(after_double_steps(&p));
        for q in todo {
            let fen = q.fen();
            let b = cozy(&fen);
            compare_tree(&q, &b, 3, &mut Vec::new());
            if roots % 4 == 0 {
                assert_eq!(perft(&q, 4), cozy_perft(&b, 4), "perft(4) of {fen}");
            }
            with_ep += q.ep.is_some() as usize;
            let moves = q.legal_moves();
            promotions += moves.iter().filter(|m| m.promotion.is_some()).count();
            ep_captures += moves.iter().filter(|m| m.en_passant).count();
            roots += 1;
        }
    }
    // The sample must exercise what it claims to.
    assert!(with_ep >= 400, "only {with_ep} positions with an e.p. square");
    assert!(ep_captures >= 400, "only {ep_captures} e.p. captures");
    assert!(promotions >= 500, "only {promotions} promotions");
}

// ---------------------------------------------------------------------------------------
// En passant
// ---------------------------------------------------------------------------------------

#[test]
fn en_passant_examples() {
    // The d4 pawn is pinned along the rank once e4 is gone: the square is dropped.
    let p = pos("8/8/8/8/R2pP2k/8/8/4K3 b - e3 0 1");
    assert_eq!(p.ep, None);
    assert!(p.legal_moves().iter().all(|m| !m.en_passant));
    assert_eq!(p.fen(), "8/8/8/8/R2pP2k/8/8/4K3 b - - 0 1");
    // Without the square black is stalemated; with it b4xa3 is the only move.
    let p = pos("8/8/8/8/Pp6/1B6/8/k1K5 b - a3 0 1");
    assert_eq!(p.ep, Some(16));
    let moves = p.legal_moves();
    assert_eq!(moves.len(), 1);
    let mv = moves[0];
    assert_eq!((mv.to_string(), mv.capture, mv.en_passant, mv.pawn), ("b4a3".to_string(), true, true, true));
    assert_eq!(p.parse_uci("b4a3"), Some(mv));
    let after = p.play(mv);
    assert_eq!(after.fen(), "8/8/8/8/8/pB6/8/k1K5 w - - 0 1");
    assert!(!pos("8/8/8/8/Pp6/1B6/8/k1K5 b - - 0 1").has_legal_move());
}

#[test]
fn double_steps_set_the_square_only_when_the_capture_is_legal() {
    // e2-e4 next to a black pawn on d4 and f4: both may take.
    let p = pos("4k3/8/8/8/3p1p2/8/4P3/4K3 w - - 0 1");
    let next = p.play(p.parse_uci("e2e4").unwrap());
    assert_eq!(next.ep, Some(20));
    assert_eq!(next.fen(), "4k3/8/8/8/3pPp2/8/8/4K3 b - e3 0 1");
    assert_eq!(next.legal_moves().iter().filter(|m| m.en_passant).count(), 2);
    // No pawn beside it: no square.
    let p = pos("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1");
    assert_eq!(p.play(p.parse_uci("e2e4").unwrap()).ep, None);
    // The only capturer is pinned to its king along the diagonal: no square.
    let p = pos("8/8/3B4/8/5p2/6k1/4P3/4K3 w - - 0 1");
    let next = p.play(p.parse_uci("e2e4").unwrap());
    assert_eq!(next.ep, None, "{}", next.fen());
    // A single step never sets it, and the square lasts one move.
    let p = pos("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1");
    let next = p.play(p.parse_uci("e2e3").unwrap());
    assert_eq!(next.ep, None);
    let p = pos("4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1");
    assert_eq!(p.play(p.parse_uci("e8e7").unwrap()).ep, None);
    // Black's double step, taken by white.
    let p = pos("4k3/2p5/8/1P6/8/8/8/4K3 b - - 0 1");
    let next = p.play(p.parse_uci("c7c5").unwrap());
    assert_eq!(next.ep, Some(42));
    let take = next.parse_uci("b5c6").unwrap();
    assert!(take.en_passant && take.capture);
    assert_eq!(next.play(take).fen(), "4k3/8/2P5/8/8/8/8/4K3 b - - 0 1");
}

/// Whether a FEN's e.p. field is accepted agrees with cozy-chess for every square of ranks 3
/// and 6 in random positions (cozy-chess keeps squares without a legal capture; we drop them).
#[test]
fn en_passant_fields_agree_with_cozy_chess() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let (mut accepted, mut dropped, mut refused) = (0, 0, 0);
    let mut n = 0;
    while n < 3000 {
        let p = random_position(&mut rng);
        let mut all = vec![p.clone()];
        all.extend(after_double_steps(&p));
        for q in all {
            let base = q.fen();
            let f: Vec<&str> = base.split_whitespace().collect();
            for rank in ['3', '6'] {
                for file in 'a'..='h' {
                    let fen = format!("{} {} - {file}{rank} 0 1", f[0], f[1]);
                    let ours = Position::from_fen(&fen);
                    let theirs = Board::from_fen(&fen, false);
                    assert_eq!(ours.is_ok(), theirs.is_ok(), "{fen}: {ours:?} vs {theirs:?}");
                    match ours {
                        Ok(r) if r.ep.is_some() => {
                            accepted += 1;
                            assert!(r.legal_moves().iter().any(|m| m.en_passant), "{fen}");
                            assert_eq!(r.fen(), fen);
                        }
                        Ok(r) => {
                            dropped += 1;
                            assert_eq!(r, Position::from_fen(&base.replace(&format!(" {}", f[3]), " -")).unwrap());
                            assert!(r.legal_moves().iter().all(|m| !m.en_passant), "{fen}");
                        }
                        Err(e) => {
                            refused += 1;
                            assert_eq!(e, FenError::EnPassant(format!("{file}{rank}")), "{fen}");
                        }
                    }
                }
            }
            n += 1;
        }
    }
    assert!(accepted >= 100 && dropped >= 100 && refused > 1000, "{accepted} {dropped} {refused}");
}

#[test]
fn impossible_en_passant_fields_are_refused() {
    let refused = [
        // Wrong rank for the side to move.
        ("4k3/8/8/3pP3/8/8/8/4K3 w - d3 0 1", "d3"),
        ("4k3/8/8/8/3pP3/8/8/4K3 b - e6 0 1", "e6"),
        ("4k3/8/8/8/3pP3/8/8/4K3 b - e4 0 1", "e4"),
        // No enemy pawn in front of it, or the wrong one.
        ("4k3/8/8/3pP3/8/8/8/4K3 w - c6 0 1", "c6"),
        ("4k3/8/8/3PP3/8/8/8/4K3 w - d6 0 1", "d6"),
        ("4k3/8/8/3nP3/8/8/8/4K3 w - d6 0 1", "d6"),
        // The square itself or the pawn's origin is occupied.
        ("4k3/8/3n4/3pP3/8/8/8/4K3 w - d6 0 1", "d6"),
        ("4k3/3n4/8/3pP3/8/8/8/4K3 w - d6 0 1", "d6"),
        // A check the double step cannot have given: the rook checked before it.
        ("8/8/8/8/k2pP3/8/8/R3K3 b - e3 0 1", "e3"),
        ("4k3/8/8/3pP3/8/8/8/4K2r w - d6 0 1", "d6"),
        // Not a square at all.
        ("4k3/8/8/3pP3/8/8/8/4K3 w - d9 0 1", "d9"),
        ("4k3/8/8/3pP3/8/8/8/4K3 w - x 0 1", "x"),
    ];
    for (fen, field) in refused {
        let e = Position::from_fen(fen).unwrap_err();
        assert_eq!(e, FenError::EnPassant(field.to_string()), "{fen}");
        assert!(e.to_string().contains(field) && e.to_string().contains("en passant"), "{e}");
    }
    // Checks the double step explains. Given by the pawn, which e.p. takes: kept.
    let p = pos("8/8/8/2k5/2pP4/8/8/4K3 b - d3 0 1");
    assert!(p.in_check(Color::Black));
    assert_eq!(p.ep, Some(19));
    assert!(p.legal_moves().iter().any(|m| m.en_passant && m.to_string() == "c4d3"));
    // Discovered through the origin d2; taking e.p. leaves the check: dropped.
    let p = pos("8/8/8/k7/2pP4/8/8/4B2K b - d3 0 1");
    assert!(p.in_check(Color::Black));
    assert_eq!(p.ep, None);
}

// ---------------------------------------------------------------------------------------
// FEN: round trips and refusals
// ---------------------------------------------------------------------------------------

#[test]
fn fen_round_trips_with_pawns() {
    for fen in [
        "8/8/8/8/8/3k4/1P6/K7 w - - 0 1",
        "8/8/8/8/8/3k4/1P6/K7 b - - 7 1",
        "4k3/8/8/8/3pPp2/8/8/4K3 b - e3 0 1",
        "4k3/8/8/2pP4/8/8/8/4K3 w - c6 0 1",
        "8/1P6/Pk6/8/8/8/8/K7 b - - 0 1",
        "8/7k/1p6/1P6/7K/8/8/8 w - - 0 1",
    ] {
        let p = pos(fen);
        assert_eq!(p.fen(), fen);
        assert_eq!(Position::from_fen(&p.fen()), Ok(p.clone()));
        assert_eq!(Position::from_fen(&p.flipped().fen()), Ok(p.flipped()));
        assert_eq!(Position::from_fen(&p.mirrored().fen()), Ok(p.mirrored()));
    }
    // The material counts the pawns, named after the pieces.
    assert_eq!(pos("8/8/8/8/8/3k4/1P6/KR6 w - - 0 1").material().to_string(), "KRPvK");
    assert_eq!(pos("4k3/8/8/8/3pPp2/8/8/4K3 b - e3 0 1").material().to_string(), "KPvKPP");
}

#[test]
fn bad_fens_with_pawns_are_refused() {
    let pawn_rank = [
        ("8/8/8/8/8/2k5/8/KP6 w - - 0 1", "b1"),
        ("1P6/8/8/8/8/2k5/8/K7 w - - 0 1", "b8"),
        ("8/8/8/8/8/2k5/8/K6p b - - 0 1", "h1"),
        ("p7/8/8/8/8/2k5/8/K7 w - - 0 1", "a8"),
    ];
    for (fen, sq) in pawn_rank {
        let e = Position::from_fen(fen).unwrap_err();
        assert_eq!(e, FenError::PawnRank(sq.to_string()), "{fen}");
        assert!(e.to_string().contains("pawn") && e.to_string().contains(sq), "{e}");
    }
    // Seven men.
    assert_eq!(Position::from_fen("4k3/pp6/8/8/8/8/PPP5/4K3 w - - 0 1"), Err(FenError::Count(7)));
    // Men placed directly obey the same rules.
    let man = |sq: u8, color, role| (sq, Piece { color, role });
    let kings = [man(4, Color::White, Role::King), man(60, Color::Black, Role::King)];
    let with = |extra: (u8, Piece)| Position::from_men(&[kings[0], kings[1], extra], Color::White);
    assert_eq!(with(man(56, Color::White, Role::Pawn)), Err(FenError::PawnRank("a8".into())));
    assert_eq!(with(man(7, Color::Black, Role::Pawn)), Err(FenError::PawnRank("h1".into())));
    let p = with(man(8, Color::White, Role::Pawn)).unwrap();
    assert_eq!((p.ep, p.fen().as_str()), (None, "4k3/8/8/8/8/8/P7/4K3 w - - 0 1"));
    // A pawn gives check like any man: the side not to move may not stand in it.
    assert_eq!(Position::from_fen("8/8/8/8/8/8/3p4/4K2k b - - 0 1"), Err(FenError::OppositeCheck));
    assert!(Position::from_fen("8/8/8/8/8/8/3p4/4K2k w - - 0 1").unwrap().in_check(Color::White));
}

// ---------------------------------------------------------------------------------------
// Moves
// ---------------------------------------------------------------------------------------

#[test]
fn promotions_are_four_moves_written_in_uci() {
    let p = pos("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1");
    let promotions: Vec<String> =
        p.legal_moves().iter().filter(|m| m.promotion.is_some()).map(|m| m.to_string()).collect();
    assert_eq!(promotions, ["a7a8q", "a7a8r", "a7a8b", "a7a8n", "a7b8q", "a7b8r", "a7b8b", "a7b8n"]);
    let mv = p.parse_uci("a7b8n").unwrap();
    assert_eq!(
        mv,
        Move { from: 48, to: 57, capture: true, promotion: Some(Role::Knight), pawn: true, en_passant: false }
    );
    assert!(mv.is_zeroing());
    let after = p.play(mv);
    assert_eq!(after.fen(), "1N2k3/8/8/8/8/8/8/4K3 b - - 0 1");
    assert_eq!(after.material().to_string(), "KNvK");
    // A push to the last rank needs its letter; a letter on any other move is refused.
    assert_eq!(p.parse_uci("a7a8"), None);
    assert_eq!(p.parse_uci("a7a8k"), None);
    assert_eq!(p.parse_uci("a7a8qq"), None);
    assert_eq!(p.parse_uci("e1e2q"), None);
    assert_eq!(p.parse_uci("a7a8r").map(|m| m.promotion), Some(Some(Role::Rook)));
    // Black promotes on the first rank.
    let p = pos("4k3/8/8/8/8/8/6p1/4K3 b - - 0 1");
    assert_eq!(p.play(p.parse_uci("g2g1q").unwrap()).fen(), "4k3/8/8/8/8/8/8/4K1q1 w - - 0 1");
}

#[test]
fn zeroing_moves_reset_the_clock() {
    let p = pos("4k3/8/8/8/8/8/4P3/R3K3 w - - 37 1");
    for mv in p.legal_moves() {
        let next = p.play(mv);
        assert_eq!(mv.is_zeroing(), mv.pawn, "{mv}");
        assert_eq!(next.halfmove, if mv.pawn { 0 } else { 38 }, "{mv}");
    }
    let p = pos("4k3/8/8/8/8/3p4/4P3/R3K3 w - - 37 1");
    let take = p.parse_uci("e2d3").unwrap();
    assert!(take.capture && take.pawn && take.is_zeroing());
    let rook = p.parse_uci("a1a2").unwrap();
    assert!(!rook.is_zeroing());
    assert_eq!((p.play(take).halfmove, p.play(rook).halfmove), (0, 38));
}

/// Mirroring and the colour swap are involutions that carry the legal moves along.
#[test]
fn mirror_and_flip_are_involutions() {
    let mut rng = Rng(42);
    let mut with_ep = 0;
    for _ in 0..400 {
        let p = random_position(&mut rng);
        for q in std::iter::once(p.clone()).chain(after_double_steps(&p)) {
            with_ep += q.ep.is_some() as usize;
            let (m, f) = (q.mirrored(), q.flipped());
            assert_eq!(m.mirrored(), q);
            assert_eq!(f.flipped(), q);
            assert_eq!(m.flipped(), f.mirrored());
            assert_eq!((m.turn, f.turn), (q.turn, q.turn.other()));
            assert_eq!(m.ep, q.ep.map(|e| e ^ 7));
            assert_eq!(f.ep, q.ep.map(|e| e ^ 56));
            assert_eq!(m.material(), q.material());
            assert_eq!(f.material(), q.material().swapped());
            let image = |mv: Move, x: u8| Move { from: mv.from ^ x, to: mv.to ^ x, ..mv };
            let mut expect: Vec<String> = q.legal_moves().into_iter().map(|mv| image(mv, 7).to_string()).collect();
            let mut got: Vec<String> = m.legal_moves().iter().map(|mv| mv.to_string()).collect();
            expect.sort();
            got.sort();
            assert_eq!(got, expect, "mirror of {}", q.fen());
            let mut expect: Vec<String> = q.legal_moves().into_iter().map(|mv| image(mv, 56).to_string()).collect();
            let mut got: Vec<String> = f.legal_moves().iter().map(|mv| mv.to_string()).collect();
            expect.sort();
            got.sort();
            assert_eq!(got, expect, "colour swap of {}", q.fen());
        }
    }
    assert!(with_ep >= 20, "{with_ep}");
}
