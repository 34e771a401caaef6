//! The unit tests of the plain board: FENs, legality, moves, en passant, clocks.

use super::*;

#[test]
fn fen_round_trip_and_errors() {
    let p = Position::from_fen("8/8/8/8/8/2k5/8/KQ6 w - - 3 10").unwrap();
    assert_eq!(p.fen(), "8/8/8/8/8/2k5/8/KQ6 w - - 3 1");
    assert_eq!(p.halfmove, 3);
    assert_eq!(Position::from_fen("8/8/8/8/8/2k5/8/KQ6"), Err(FenError::Fields));
    assert_eq!(Position::from_fen("8/8/8/8/8/2k5/8/KQ6 x"), Err(FenError::Turn("x".into())));
    assert_eq!(Position::from_fen("8/8/8/8/8/2k5/8/KP6 w"), Err(FenError::PawnRank("b1".into())));
    assert_eq!(Position::from_fen("8/8/8/8/8/2k5/8/KQ6 w KQ"), Err(FenError::Castling("KQ".into())));
    assert_eq!(Position::from_fen("8/8/8/8/8/2k5/8/KQ6 w - e3"), Err(FenError::EnPassant("e3".into())));
    assert_eq!(Position::from_fen("8/8/8/8/8/2k5/8/Q7 w"), Err(FenError::Kings));
    // Black king in check with white to move is fine; with black... the side not to move in check is illegal.
    assert_eq!(Position::from_fen("k7/8/8/8/8/8/8/Q1K5 b").unwrap().turn, Color::Black);
    assert_eq!(Position::from_fen("k7/8/8/8/8/8/8/Q1K5 w"), Err(FenError::OppositeCheck));
    assert!(matches!(Position::from_fen("8/8/8/8/8/2k5/8/KQ7 w"), Err(FenError::Board(_))));
    assert!(matches!(Position::from_fen("8/8/8/8/8/2k5/8/KQ5 w"), Err(FenError::Board(_))));
}

#[test]
fn en_passant_of_men_is_checked_like_a_fen() {
    let fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1";
    let men: Vec<(Square, Piece)> = Position::from_fen(fen).unwrap().pieces().collect();
    let pos = Position::from_men(&men, Color::White).unwrap();
    assert_eq!(pos.clone().with_en_passant(43), Position::from_fen(fen));
    assert_eq!(pos.clone().with_en_passant(43).unwrap().ep, Some(43));
    assert_eq!(pos.clone().with_en_passant(44), Err(FenError::EnPassant("e6".into())));
    assert_eq!(pos.with_en_passant(64), Err(FenError::EnPassant("square 64".into())));
}

#[test]
fn clock_saturates_instead_of_wrapping() {
    // Found by tests/fuzz.rs: the clock wrapped to 0 (or overflowed with debug assertions).
    let p = Position::from_fen("8/8/8/8/8/8/8/K1k5 w - - 4294967295").unwrap();
    let mv = p.parse_uci("a1a2").unwrap();
    assert_eq!(p.play(mv).halfmove, u32::MAX);
}

#[test]
fn legal_moves_respect_check() {
    // Black king a8, white queen b6, white king c7: stalemate.
    let p = Position::from_fen("k7/2K5/1Q6/8/8/8/8/8 b").unwrap();
    assert!(p.legal_moves().is_empty());
    assert!(!p.has_legal_move());
    assert!(!p.in_check(Color::Black));
    let p = Position::from_fen("k7/8/8/8/8/8/8/Q1K5 b").unwrap();
    assert!(p.in_check(Color::Black));
    assert_eq!(p.legal_moves().len(), 2); // a7, b8
    assert!(p.has_legal_move());
    // The occupancy follows moves and flips.
    let q = p.play(p.legal_moves()[0]).flipped();
    assert_eq!(q.occupied(), q.pieces().fold(0, |b, (s, _)| b | (1u64 << s)));
    assert_eq!(q.occupied().count_ones(), 3);
}

#[test]
fn pawns_push_double_step_take_and_promote() {
    let p = Position::from_fen("4k3/1P6/8/8/8/2n5/3P4/4K3 w - - 5 1").unwrap();
    let pawn_moves: Vec<String> = p.legal_moves().iter().filter(|m| m.pawn).map(|m| m.to_string()).collect();
    assert_eq!(pawn_moves, ["d2c3", "d2d3", "d2d4", "b7b8q", "b7b8r", "b7b8b", "b7b8n"]);
    let take = p.parse_uci("d2c3").unwrap();
    assert!(take.capture && take.is_zeroing() && !take.en_passant);
    // A blocked pawn has no push and no double step.
    let p = Position::from_fen("4k3/8/8/8/8/3n4/3P4/4K3 w - - 0 1").unwrap();
    assert!(p.legal_moves().iter().all(|m| !m.pawn));
    let p = Position::from_fen("4k3/8/8/8/3n4/8/3P4/4K3 w - - 0 1").unwrap();
    let pawn_moves: Vec<String> = p.legal_moves().iter().filter(|m| m.pawn).map(|m| m.to_string()).collect();
    assert_eq!(pawn_moves, ["d2d3"]);
    // A pinned pawn keeps to its pin line.
    let p = Position::from_fen("4k3/4r3/8/8/8/8/4P3/4K3 w - - 0 1").unwrap();
    let pawn_moves: Vec<String> = p.legal_moves().iter().filter(|m| m.pawn).map(|m| m.to_string()).collect();
    assert_eq!(pawn_moves, ["e2e3", "e2e4"]);
    let p = Position::from_fen("4k3/8/8/b7/8/8/3P4/4K3 w - - 0 1").unwrap();
    assert!(p.legal_moves().iter().all(|m| !m.pawn), "the d2 pawn is pinned on the diagonal");
    assert!(p.has_pawns() && p.pawns(Color::White) == 1 << 11 && p.pawns(Color::Black) == 0);
}

#[test]
fn moves_show_their_promotion_in_uci() {
    let mv = Move { from: 52, to: 60, capture: false, promotion: Some(Role::Queen), pawn: true, en_passant: false };
    assert_eq!(mv.to_string(), "e7e8q");
    assert_eq!(Move { promotion: None, ..mv }.to_string(), "e7e8");
    assert_eq!(Move { promotion: Some(Role::Knight), ..mv }.to_string(), "e7e8n");
}
