//! `Position::san` and `Position::insufficient_material` cross-checked with an independent
//! library, `shakmaty` (the one the lichess tablebase server writes its SAN with), on every
//! legal move of thousands of random positions: pieces doubled so that moves need
//! disambiguation, pawns about to promote, en passant, checks and mates.

use crate::util::Rng;
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position as _, PositionError};
use tbstream::{board_field, Position};

/// White's and black's men: doubled knights, rooks and queens make rivals for a square.
const MEN: [char; 12] = ['Q', 'Q', 'R', 'R', 'B', 'N', 'N', 'P', 'P', 'P', 'P', 'B'];

/// A random legal position of 3 to 8 men (a third of them just after a double step beside
/// an enemy pawn), or `None` when the draw is not a legal position.
fn random_position(rng: &mut Rng) -> Option<Position> {
    let mut board = [None::<char>; 64];
    let mut place = |rng: &mut Rng, c: char, ranks: (u64, u64)| loop {
        let sq = (ranks.0 + rng.below(ranks.1 - ranks.0 + 1)) * 8 + rng.below(8);
        if board[sq as usize].is_none() {
            board[sq as usize] = Some(c);
            return;
        }
    };
    place(rng, 'K', (0, 7));
    place(rng, 'k', (0, 7));
    for _ in 0..1 + rng.below(4) {
        let man = MEN[rng.below(MEN.len() as u64) as usize];
        let man = if rng.below(2) == 0 { man } else { man.to_ascii_lowercase() };
        // Pawns mostly one step from promotion, so that promotions (with captures) abound.
        let ranks = match man {
            'P' if rng.below(2) == 0 => (6, 6),
            'p' if rng.below(2) == 0 => (1, 1),
            'P' | 'p' => (1, 6),
            _ => (0, 7),
        };
        place(rng, man, ranks);
    }
    let white = rng.below(2) == 0;
    let en_passant = rng.below(3) == 0;
    if en_passant {
        // A pawn on its start rank, an enemy pawn beside its double step's target.
        let (file, beside) = (rng.below(8) as usize, rng.below(2) as usize);
        let taker = if file == 0 || (beside == 1 && file < 7) { file + 1 } else { file - 1 };
        let (start, target, pawn) = if white { (8, 24, ['P', 'p']) } else { (48, 32, ['p', 'P']) };
        board[start + file] = Some(pawn[0]);
        board[target + taker] = Some(pawn[1]);
    }
    let fen = format!("{} {} - - 0 1", board_field(&board), if white { "w" } else { "b" });
    let pos = Position::from_fen(&fen).ok()?;
    if en_passant {
        // The double step, which the side to move then may answer en passant.
        let step = pos.legal_moves().into_iter().find(|m| m.pawn && m.from.abs_diff(m.to) == 16)?;
        return Some(pos.play(step));
    }
    Some(pos)
}

/// The position in shakmaty (which refuses checks that no move could have given; those
/// are legal here and kept).
fn shakmaty_position(fen: &str) -> Chess {
    let setup: Fen = fen.parse().unwrap_or_else(|e| panic!("shakmaty cannot parse {fen}: {e}"));
    setup
        .into_position(CastlingMode::Standard)
        .or_else(PositionError::ignore_impossible_check)
        .unwrap_or_else(|e| panic!("shakmaty refuses {fen}: {e}"))
}

/// shakmaty's SAN (with its check or mate suffix) of the UCI move `uci`.
fn shakmaty_san(pos: &Chess, uci: &str) -> String {
    let mv = uci.parse::<UciMove>().unwrap().to_move(pos).unwrap_or_else(|e| panic!("{uci}: {e}"));
    SanPlus::from_move(pos.clone(), mv).to_string()
}

#[test]
fn san_of_every_move_equals_shakmaty() {
    let mut rng = Rng(0x5a17_c0de_2024_0001);
    let (mut positions, mut moves) = (0, 0);
    let (mut disambiguated, mut promotions, mut captures, mut checks, mut mates, mut en_passant) = (0, 0, 0, 0, 0, 0);
    while positions < 10000 {
        let Some(pos) = random_position(&mut rng) else { continue };
        let fen = pos.fen();
        let theirs = shakmaty_position(&fen);
        let legal = pos.legal_moves();
        assert_eq!(legal.len(), theirs.legal_moves().len(), "number of moves of {fen}");
        for mv in legal {
            let san = pos.san(mv);
            assert_eq!(san, shakmaty_san(&theirs, &mv.to_string()), "SAN of {mv} in {fen}");
            moves += 1;
            let piece = san.starts_with(|c: char| c.is_ascii_uppercase());
            let target_at = san.rfind(|c: char| c.is_ascii_digit()).unwrap() - 1;
            disambiguated += usize::from(piece && !san[1..target_at].trim_end_matches('x').is_empty());
            promotions += usize::from(san.contains('='));
            captures += usize::from(san.contains('x'));
            checks += usize::from(san.ends_with('+'));
            mates += usize::from(san.ends_with('#'));
            en_passant += usize::from(mv.en_passant);
        }
        assert_eq!(pos.insufficient_material(), theirs.is_insufficient_material(), "insufficient material of {fen}");
        positions += 1;
    }
    // The draw covers every feature of the notation, many times over.
    for (what, n, at_least) in [
        ("disambiguated", disambiguated, 700),
        ("promotions", promotions, 3000),
        ("captures", captures, 2000),
        ("checks", checks, 5000),
        ("mates", mates, 80),
        ("en passant", en_passant, 800),
    ] {
        assert!(n >= at_least, "{what}: {n} of {moves} moves, expected at least {at_least}");
    }
}
