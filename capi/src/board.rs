//! A position from Fathom-style bitboards, checked like a FEN and built without allocating
//! (the WDL probe of a search calls this millions of times a second).

use crate::error::{Failure, TbsError};
use tbstream_root::{Color, Position, Square};

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

impl Bitboards {
    /// Calls `then` with the position the bitboards describe, with the half-move clock
    /// `rule50`, the en passant square `ep` (0 for none: a1 never is one), `turn` 1 for
    /// white and 0 for black. `castling` must be 0: endgame tables have no castling. (A
    /// continuation rather than a returned `Position`, so that the position is built in
    /// place and not copied through `Result`s: this is on every probe's path.)
    #[inline(always)]
    pub fn with_position<T>(
        &self,
        rule50: u32,
        castling: u32,
        ep: u32,
        turn: u32,
        then: impl FnOnce(&Position) -> Result<T, Failure>,
    ) -> Result<T, Failure> {
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
        let roles = [self.kings, self.queens, self.rooks, self.bishops, self.knights, self.pawns];
        let mut pos = Position::from_bitboards([self.white, self.black], roles, turn)?;
        pos.halfmove = rule50;
        if ep != 0 {
            let with_ep = pos.with_en_passant(Square::try_from(ep).unwrap_or(Square::MAX))?;
            return then(&with_ep);
        }
        then(&pos)
    }
}
