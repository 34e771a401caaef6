//! The men against the plain board ([`Position`]): gathering, legality, check, moves and
//! their successors, en passant.

use super::moves::{beside, on_last_rank, on_start_rank};
use super::*;
use crate::chess::{Material, Move};
use crate::table::keys::{piece_set_index, run_key};

/// xorshift64*, enough to draw positions.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// Random men of `layout`'s material (pawns on ranks 2 to 7), possibly overlapping.
fn random_men(rng: &mut Rng, layout: &Layout) -> Men {
    let material = &layout.material;
    let (wk, bk) = (rng.below(64) as Square, rng.below(64) as Square);
    let pieces: Vec<Square> = layout.pieces.iter().map(|_| rng.below(64) as Square).collect();
    let mut pawns = |n| (0..n).map(|_| 8 + rng.below(48) as Square).collect::<Vec<_>>();
    let (w, b) = (pawns(material.pawns(Color::White)), pawns(material.pawns(Color::Black)));
    Men::of_squares(layout, bk, &pieces, wk, Pawns::new(&w, &b))
}

/// The board field of a FEN.
fn board(fen: &str) -> &str {
    fen.split(' ').next().unwrap()
}

/// The squares of the black king, the pieces in the layout's order and the white king, read
/// from the plain board.
fn in_layout_order(layout: &Layout, pos: &Position) -> (Square, Vec<Square>, Square) {
    crate::table::probe::men_in_layout_order(layout, pos)
}

fn check_gathered(pos: &Position) {
    let fen = pos.fen();
    for flip in [false, true] {
        let p = if flip { pos.flipped() } else { pos.clone() };
        let men = Men::gather(pos, flip);
        let us = p.turn;
        assert_eq!(men.has_legal_move(us), !p.legal_moves().is_empty(), "{fen} {flip}");
        assert_eq!(men.has_legal_move(us), p.has_legal_move(), "{fen} {flip}");
        assert_eq!(men.in_check(us), p.in_check(p.turn), "{fen} {flip}");
        assert_eq!(men.kings, [p.king(Color::White), p.king(Color::Black)]);
        let m = p.material();
        assert_eq!(men.piece_sets(), [piece_set_index(&m.white).unwrap(), piece_set_index(&m.black).unwrap()]);
        assert_eq!(Some(men.run_key()), run_key(&m));
        assert_eq!(men.position(p.turn).as_ref(), Some(&p), "{fen} {flip}");
        if !m.white_bare() {
            let layout = Layout::new(&m);
            let (bk, pieces, wk) = in_layout_order(&layout, &p);
            let mut sq = men.pieces().to_vec();
            sq.sort_unstable();
            let mut expect = pieces.clone();
            expect.sort_unstable();
            assert_eq!((bk, sq, wk), (men.king(Color::Black), expect, men.king(Color::White)));
            for (k, slot) in layout.pieces.iter().enumerate() {
                assert_eq!((men.role[k], men.color(k)), (slot.role, slot.color));
            }
        }
    }
}

#[test]
fn gathered_men_agree_with_the_plain_board() {
    for fen in [
        "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",
        "k7/8/1QK5/8/8/8/8/8 b - - 0 1",
        "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1",
        "8/8/8/8/8/1Qk5/8/K7 b - - 0 1",
        "8/8/8/8/8/1Rk5/K7/8 b - - 0 1",
        "4k3/8/8/8/8/2n5/8/RN2K3 w - - 0 1",
        "1n2k3/3r4/8/8/8/8/8/RQ2K3 b - - 0 1",
        "k7/8/1QK5/8/8/8/8/7r b - - 0 1",
        "8/8/8/8/1p6/1B6/P7/k1K5 w - - 0 1",
        "8/8/8/8/R2p3k/8/4P3/4K3 w - - 0 1",
    ] {
        check_gathered(&Position::from_fen(fen).unwrap());
    }
}

/// Random positions of up to 6 men, many of them with few moves (crowded corners).
#[test]
fn gathered_men_agree_with_the_plain_board_on_random_positions() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let roles = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];
    let (mut tested, mut stuck) = (0, 0);
    while tested < 20_000 {
        let n_pieces = rng.below(5) as usize;
        let mut men = vec![
            (0u8, Piece { color: Color::White, role: Role::King }),
            (0u8, Piece { color: Color::Black, role: Role::King }),
        ];
        for _ in 0..n_pieces {
            let color = if rng.below(2) == 0 { Color::White } else { Color::Black };
            men.push((0, Piece { color, role: roles[rng.below(4) as usize] }));
        }
        // Half of the time crowd the men into a 3x3 corner area and its surroundings.
        let span = if rng.below(2) == 0 { 4 } else { 8 };
        for m in men.iter_mut() {
            m.0 = (rng.below(span) * 8 + rng.below(span)) as u8;
        }
        let turn = if rng.below(2) == 0 { Color::White } else { Color::Black };
        if let Ok(pos) = Position::from_men(&men, turn) {
            stuck += !pos.has_legal_move() as usize;
            check_gathered(&pos);
            tested += 1;
        }
    }
    assert!(stuck > 50, "the sample should hold mates and stalemates ({stuck})");
}

/// The kind of a move, as the verifier values it: a quiet move, a push, a double step, a
/// capture or promotion.
fn kind(mv: &Move) -> usize {
    match mv {
        m if m.capture || m.promotion.is_some() => 3,
        m if !m.pawn => 0,
        m if m.from.abs_diff(m.to) == 16 => 2,
        _ => 1,
    }
}

/// The moves, legality and successors agree with `Position` (no en passant: stored
/// positions never allow it), and the run keys of the successors with their materials.
#[test]
fn moves_agree_with_position() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = [0u64; 4];
    for material in ["KPvK", "KPvKP", "KQvKP", "KRPvKR", "KPPvKN", "KBPvKP", "KNPvKB", "KQRvKR", "KRvKNN"] {
        let layout = Layout::new(&Material::parse(material).unwrap());
        for _ in 0..20_000 {
            let men = random_men(&mut rng, &layout);
            let stm = if rng.below(2) == 0 { Color::White } else { Color::Black };
            if !men.apart() {
                continue;
            }
            let pos = Position::from_fen(&men.describe(stm));
            assert_eq!(pos.is_ok(), men.legal(stm), "{}", men.describe(stm));
            let Ok(pos) = pos else { continue };
            assert_eq!(men.position(stm).as_ref(), Some(&pos));
            let expected = pos.legal_moves();
            let mut seen = 0;
            let mut quiet = 0;
            men.for_each_move(stm, &mut |mv, child| {
                assert!(expected.contains(&mv), "{}: {mv} {mv:?} is not legal", pos.fen());
                let after = pos.play(mv);
                let child_pos = child.position(stm.other()).expect("a legal successor");
                assert_eq!(board(&child_pos.fen()), board(&after.fen()), "{} {mv}", pos.fen());
                assert_eq!(Some(child.run_key()), run_key(&after.material()), "{} {mv}", pos.fen());
                checked[kind(&mv)] += 1;
                quiet += !mv.is_zeroing() as usize;
                seen += 1;
                false
            });
            assert_eq!(seen, expected.len(), "{}: {expected:?}", pos.fen());
            assert_eq!(men.has_move(stm), !expected.is_empty());
            assert_eq!(men.has_legal_move(stm), !expected.is_empty());
            let mut quiet_children = Vec::new();
            men.find_quiet_move(stm, |child| {
                quiet_children.push(board(&child.position(stm.other()).expect("legal").fen()).to_string());
                false
            });
            let mut want: Vec<String> =
                expected.iter().filter(|m| !m.is_zeroing()).map(|&m| board(&pos.play(m).fen()).to_string()).collect();
            quiet_children.sort();
            want.sort();
            assert_eq!((quiet_children.len(), &quiet_children), (quiet, &want), "{}", pos.fen());
        }
    }
    assert!(checked.iter().all(|&n| n > 1000), "every kind of move seen: {checked:?}");
}

/// The en-passant replies to a double step, and whether they are forced, agree with
/// `Position` (which sets the en-passant square after a double step only when a capture
/// is legal).
#[test]
fn en_passant_agrees_with_position() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut seen = [0u64; 3];
    for material in ["KPvKP", "KRPvKP", "KBPvKP", "KPvKRP", "KPPvKP", "KPvKPP"] {
        let layout = Layout::new(&Material::parse(material).unwrap());
        for _ in 0..2_000 {
            let mut men = random_men(&mut rng, &layout);
            let stm = if rng.below(2) == 0 { Color::White } else { Color::Black };
            // A pawn of the mover on its start rank, an enemy pawn beside its target.
            let file = rng.below(8) as Square;
            let (from, beside_to) = if stm == Color::White { (8 + file, 24) } else { (48 + file, 32) };
            let enemy = match (file, rng.below(2)) {
                (0, _) | (1..=6, 0) => beside_to + file + 1,
                _ => beside_to + file - 1,
            };
            let (mut w, mut b) = (men.pawns.of(Color::White).to_vec(), men.pawns.of(Color::Black).to_vec());
            let (own, theirs) = if stm == Color::White { (&mut w, &mut b) } else { (&mut b, &mut w) };
            own[0] = from;
            theirs[0] = enemy;
            men.pawns = Pawns::new(&w, &b);
            if !men.legal(stm) {
                continue;
            }
            let pos = men.position(stm).expect("a legal position");
            men.for_each_move(stm, &mut |mv, child| {
                if kind(&mv) != 2 {
                    return false;
                }
                let after = pos.play(mv);
                let (replies, n) = child.en_passant(stm.other(), mv.to);
                assert_eq!(after.ep.is_some(), n > 0, "{} {mv}", pos.fen());
                let captures: Vec<Move> = after.legal_moves().into_iter().filter(|m| m.en_passant).collect();
                assert_eq!(captures.len(), n, "{} {mv}", pos.fen());
                for (c, ep) in captures.iter().zip(&replies[..n]) {
                    let ep_board = ep.position(stm).expect("a legal position").fen();
                    assert_eq!(board(&after.play(*c).fen()), board(&ep_board), "{} {mv} {c}", pos.fen());
                    assert_eq!(Some(ep.run_key()), run_key(&after.play(*c).material()));
                }
                let forced = after.legal_moves().iter().all(|m| m.en_passant) && !after.in_check(stm.other());
                assert_eq!(forced && n > 0, n > 0 && !child.in_check(stm.other()) && !child.has_move(stm.other()));
                seen[0] += 1;
                seen[1] += (n > 0) as u64;
                false
            });
        }
    }
    assert!(seen[1] > 1000, "double steps, with en passant: {seen:?}");
}

/// Men from a position (its en-passant square left out).
fn men_of(pos: &Position) -> Men {
    Men::gather(pos, false)
}

/// pawns.md §6: after a2-a4 in `8/8/8/8/1p6/1B6/P7/k1K5 w` the en-passant capture is
/// black's only move; after e2-e4 in `8/8/8/8/R2p3k/8/4P3/4K3 w` it is illegal (a rank pin).
#[test]
fn en_passant_forced_and_pinned() {
    let pos = Position::from_fen("8/8/8/8/1p6/1B6/P7/k1K5 w - - 0 1").unwrap();
    let men = men_of(&pos);
    assert_eq!(men.position(Color::White), Some(pos));
    let mut found = [false; 2];
    men.for_each_move(Color::White, &mut |mv, child| {
        if mv.to_string() == "a2a4" {
            let (replies, n) = child.en_passant(Color::Black, mv.to);
            assert_eq!(n, 1);
            assert_eq!(board(&replies[0].describe(Color::White)), "8/8/8/8/8/pB6/8/k1K5");
            assert!(!child.in_check(Color::Black) && !child.has_move(Color::Black));
            found[0] = true;
        }
        false
    });
    let pos = Position::from_fen("8/8/8/8/R2p3k/8/4P3/4K3 w - - 0 1").unwrap();
    let men = men_of(&pos);
    men.for_each_move(Color::White, &mut |mv, child| {
        if mv.to_string() == "e2e4" {
            assert_eq!(child.en_passant(Color::Black, mv.to).1, 0);
            assert!(child.has_move(Color::Black));
            found[1] = true;
        }
        false
    });
    assert_eq!(found, [true, true]);
}

#[test]
fn en_passant_neighbours_and_ranks() {
    assert!(beside(27, 28) && beside(28, 27) && !beside(31, 32) && !beside(27, 35));
    assert!(on_start_rank(Color::White, 12) && on_start_rank(Color::Black, 52) && !on_start_rank(Color::White, 52));
    assert!(on_last_rank(Color::White, 60) && on_last_rank(Color::Black, 4) && !on_last_rank(Color::Black, 60));
}

/// A slot's men are the men its index names, and put back into the index they give the slot.
#[test]
fn men_of_a_slot_go_back_to_it() {
    for material in ["KQvKR", "KRPvKR", "KPvKP"] {
        let layout = Layout::new(&Material::parse(material).unwrap());
        let mut rng = Rng(7);
        for _ in 0..2000 {
            let slot = rng.below(layout.n_slots);
            let men = Men::of_slot(&layout, slot);
            if men.pawns.n == 0 {
                let sym = crate::chess::Symmetry::to_triangle(men.king(Color::Black));
                assert_eq!(sym, crate::chess::Symmetry::IDENTITY, "stored black kings are in the triangle");
            }
            let back = layout
                .canonical_slot(men.king(Color::Black), men.pieces(), men.king(Color::White), &men.pawns)
                .map(|(s, _)| s);
            assert_eq!(back, Some(slot), "{material} slot {slot}: {}", men.describe(Color::White));
        }
    }
}
