//! Positions from bitboards, as the C library gets them from engines (Fathom's
//! arguments): built and checked without a list of men and without allocating.

use super::{FenError, Position};
use crate::chess::attacks::{attacks_square, king_attacks, knight_attacks, pawn_attacks};
use crate::chess::material::MAX_MEN;
use crate::chess::piece::{Color, Piece, Role};
use crate::chess::square::{square_name, Square};

impl Position {
    /// Builds a position from bitboards (bit `s` is square `s`): the squares of each side,
    /// `[white, black]`, and of each role, `[kings, queens, rooks, bishops, knights, pawns]`.
    /// Checks legality as [`Position::from_men`] does, from the bitboards, and allocates
    /// nothing unless it fails: the C library builds a position per probe. It has no en
    /// passant square ([`Position::with_en_passant`]) and a clock of 0.
    #[inline(always)]
    pub fn from_bitboards(sides: [u64; 2], roles: [u64; 6], turn: Color) -> Result<Position, FenError> {
        const ROLES: [Role; 6] = [Role::King, Role::Queen, Role::Rook, Role::Bishop, Role::Knight, Role::Pawn];
        const BACK_RANKS: u64 = 0xff00_0000_0000_00ff;
        let occ = sides[0] | sides[1];
        let (union, count) = roles.iter().fold((0u64, 0), |(u, n), bb| (u | bb, n + bb.count_ones()));
        if sides[0] & sides[1] != 0 || union != occ || count != occ.count_ones() {
            return Err(FenError::Board(not_a_board(sides, roles)));
        }
        let kings = roles[0];
        if (kings & sides[0]).count_ones() != 1 || (kings & sides[1]).count_ones() != 1 {
            return Err(FenError::Kings);
        }
        let men = occ.count_ones() as usize;
        if men > MAX_MEN {
            return Err(FenError::Count(men));
        }
        if roles[5] & BACK_RANKS != 0 {
            return Err(FenError::PawnRank(square_name((roles[5] & BACK_RANKS).trailing_zeros() as Square)));
        }
        let mut board = [None; 64];
        let mut rest = occ;
        while rest != 0 {
            let s = rest.trailing_zeros() as Square;
            rest &= rest - 1;
            // The role bitboards are disjoint: the index of the one holding `s`, without
            // branches (random positions would mispredict them).
            let index: u64 = (1..6).map(|i| i as u64 * (roles[i] >> s & 1)).sum();
            let color = [Color::Black, Color::White][(sides[0] >> s & 1) as usize];
            board[s as usize] = Some(Piece { color, role: ROLES[index as usize] });
        }
        // The side not to move in check, from the bitboards: its king's square as seen by
        // each of the mover's men.
        let (mine, king) = (sides[turn.index()], (kings & sides[turn.other().index()]).trailing_zeros() as Square);
        let mut check = mine
            & (king_attacks(king) & kings
                | knight_attacks(king) & roles[4]
                | pawn_attacks(turn.other(), king) & roles[5])
            != 0;
        let mut sliders = mine & (roles[1] | roles[2] | roles[3]);
        while sliders != 0 && !check {
            let s = sliders.trailing_zeros() as Square;
            sliders &= sliders - 1;
            let role = if roles[1] >> s & 1 != 0 {
                Role::Queen
            } else if roles[2] >> s & 1 != 0 {
                Role::Rook
            } else {
                Role::Bishop
            };
            check = attacks_square(Piece { color: turn, role }, s, king, occ);
        }
        if check {
            return Err(FenError::OppositeCheck);
        }
        Ok(Position { board, occ, turn, ep: None, halfmove: 0 })
    }
}

/// Why bitboards do not describe a board: a square of both sides or of two roles, a man
/// without a side or without a role.
#[cold]
fn not_a_board(sides: [u64; 2], roles: [u64; 6]) -> String {
    let occ = sides[0] | sides[1];
    let union = roles.iter().fold(0, |u, bb| u | bb);
    let name = |bb: u64| square_name(bb.trailing_zeros() as Square);
    if sides[0] & sides[1] != 0 {
        return format!("{} is both white and black", name(sides[0] & sides[1]));
    }
    if union & !occ != 0 {
        return format!("{} has a role but neither side", name(union & !occ));
    }
    if occ & !union != 0 {
        return format!("{} has a side but no role", name(occ & !union));
    }
    let (mut seen, mut twice) = (0u64, 0u64);
    for bb in roles {
        twice |= seen & bb;
        seen |= bb;
    }
    format!("{} is in two role bitboards", name(twice))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitboards_build_what_men_build() {
        let roles = [Role::King, Role::Queen, Role::Rook, Role::Bishop, Role::Knight, Role::Pawn];
        let mut rng = crate::test_rng::Rng(0x2545_f491_4f6c_dd1d);
        let mut next = |n: u64| rng.below(n);
        let (mut legal, mut refused) = (0, 0);
        for _ in 0..20_000 {
            // Two kings most of the time, 0 to 6 other men on distinct squares.
            let mut men: Vec<(Square, Piece)> = Vec::new();
            let n = 2 + next(7) as usize;
            while men.len() < n {
                let s = next(64) as Square;
                let role = if men.len() < 2 && next(20) != 0 { Role::King } else { roles[next(6) as usize] };
                let color = if men.len() < 2 {
                    [Color::White, Color::Black][men.len()]
                } else {
                    [Color::White, Color::Black][next(2) as usize]
                };
                if men.iter().all(|&(t, _)| t != s) {
                    men.push((s, Piece { color, role }));
                }
            }
            let (mut sides, mut bbs) = ([0u64; 2], [0u64; 6]);
            for &(s, p) in &men {
                sides[p.color.index()] |= 1 << s;
                bbs[p.role as usize] |= 1 << s;
            }
            let turn = [Color::White, Color::Black][next(2) as usize];
            let built = Position::from_bitboards(sides, bbs, turn);
            assert_eq!(built, Position::from_men(&men, turn), "{men:?}");
            if built.is_ok() {
                legal += 1
            } else {
                refused += 1
            }
        }
        assert!(legal > 1000 && refused > 1000, "{legal} legal, {refused} refused");
        // What men cannot say: a square of both sides or two roles, a man without a role.
        let king = |s: u64| 1u64 << s;
        let refusal = |sides, roles| Position::from_bitboards(sides, roles, Color::White).unwrap_err().to_string();
        assert!(refusal([king(0) | 2, king(9) | 2], [king(0) | king(9), 2, 0, 0, 0, 0])
            .contains("b1 is both white and black"));
        assert!(
            refusal([king(0) | 2, king(9)], [king(0) | king(9), 2, 2, 0, 0, 0]).contains("b1 is in two role bitboards")
        );
        assert!(
            refusal([king(0) | 2, king(9)], [king(0) | king(9), 0, 0, 0, 0, 0]).contains("b1 has a side but no role")
        );
        assert!(
            refusal([king(0), king(9)], [king(0) | king(9), 0, 0, 0, 4, 0]).contains("c1 has a role but neither side")
        );
    }
}
