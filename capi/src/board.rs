//! A position from Fathom-style bitboards, checked like a FEN and built without allocating
//! (the WDL probe of a search calls this millions of times a second).

use crate::error::{Failure, TbsError};
use tbstream_root::{Color, Piece, Position, Role, Square, MAX_MEN};

/// The colour and role bitboards of a position (bit `s` = square `s`, a1 = 0, h8 = 63).
#[derive(Clone, Copy, Debug)]
pub struct Bitboards {
    pub white: u64,
    pub black: u64,
    pub kings: u64,
    pub queens: u64,
    pub rooks: u64,
    pub bishops: u64,
    pub knights: u64,
    pub pawns: u64,
}

/// The square name of the lowest bit of `bb`, for messages.
fn lowest(bb: u64) -> String {
    let s = bb.trailing_zeros() as u8;
    format!("{}{}", (b'a' + s % 8) as char, s / 8 + 1)
}

impl Bitboards {
    /// The position the bitboards describe, with the half-move clock `rule50`, the en
    /// passant square `ep` (0 for none: a1 never is one), `turn` 1 for white and 0 for
    /// black. `castling` must be 0: endgame tables have no castling.
    #[inline]
    pub fn position(&self, rule50: u32, castling: u32, ep: u32, turn: u32) -> Result<Position, Failure> {
        let turn = match turn {
            1 => Color::White,
            0 => Color::Black,
            t => return Err(Failure::argument(format!("turn {t}: 1 for white to move, 0 for black"))),
        };
        if castling != 0 {
            return Err(Failure::new(
                TbsError::BadPosition,
                format!("castling rights {castling:#x}: endgame tables have no castling, so they cannot answer"),
            ));
        }
        let roles = [
            (self.kings, Role::King),
            (self.queens, Role::Queen),
            (self.rooks, Role::Rook),
            (self.bishops, Role::Bishop),
            (self.knights, Role::Knight),
            (self.pawns, Role::Pawn),
        ];
        let occupied = self.white | self.black;
        let (mut union, mut count) = (0u64, 0u32);
        for (bb, _) in roles {
            union |= bb;
            count += bb.count_ones();
        }
        if self.white & self.black != 0 || count != union.count_ones() || union != occupied {
            return Err(self.overlap());
        }
        if occupied.count_ones() as usize > MAX_MEN {
            return Err(Failure::new(
                TbsError::BadPosition,
                format!("{} men on the board: tables have at most {MAX_MEN}", occupied.count_ones()),
            ));
        }
        let mut men = [(0 as Square, Piece { color: Color::White, role: Role::King }); MAX_MEN];
        let mut n = 0;
        let mut rest = occupied;
        while rest != 0 {
            let s = rest.trailing_zeros() as Square;
            rest &= rest - 1;
            let role = roles.iter().find(|(bb, _)| bb >> s & 1 != 0).map_or(Role::King, |&(_, r)| r);
            let color = if self.white >> s & 1 != 0 { Color::White } else { Color::Black };
            men[n] = (s, Piece { color, role });
            n += 1;
        }
        let mut pos = Position::from_men(&men[..n], turn)?;
        pos.halfmove = rule50;
        if ep != 0 {
            let square = Square::try_from(ep).unwrap_or(Square::MAX);
            pos = pos.with_en_passant(square)?;
        }
        Ok(pos)
    }

    /// Why the bitboards do not describe a board (a square in two colours or two roles, a
    /// man without a colour or without a role).
    #[cold]
    fn overlap(&self) -> Failure {
        let roles = [self.kings, self.queens, self.rooks, self.bishops, self.knights, self.pawns];
        let occupied = self.white | self.black;
        let union = roles.iter().fold(0, |u, bb| u | bb);
        let message = if self.white & self.black != 0 {
            format!("{} is both white and black", lowest(self.white & self.black))
        } else if union & !occupied != 0 {
            format!("{} has a role but neither colour", lowest(union & !occupied))
        } else if occupied & !union != 0 {
            format!("{} has a colour but no role", lowest(occupied & !union))
        } else {
            let mut seen = 0u64;
            let twice = roles.iter().fold(0, |t, &bb| {
                let t = t | seen & bb;
                seen |= bb;
                t
            });
            format!("{} is in two role bitboards", lowest(twice))
        };
        Failure::new(TbsError::BadPosition, message)
    }
}
