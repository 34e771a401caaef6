//! Dead positions: neither side can ever checkmate, whatever the play. The lichess API flags
//! them (`insufficient_material`), and they are draws without a table.

use super::piece::{Color, Role};
use super::position::Position;

/// The light squares (b1, a2, ...), to tell bishops on one colour of squares.
const LIGHT_SQUARES: u64 = 0x55aa_55aa_55aa_55aa;

impl Position {
    /// Whether neither side can ever checkmate, whatever the play (the rules' dead
    /// position, in its usual approximation): each side has a bare king, or a king and one
    /// knight against a king with at most queens, or only bishops all on one colour of
    /// squares with no knight or pawn on the board.
    pub fn insufficient_material(&self) -> bool {
        self.cannot_mate(Color::White) && self.cannot_mate(Color::Black)
    }

    /// Whether `side` has too little to mate by any sequence of moves (lichess's rule).
    fn cannot_mate(&self, side: Color) -> bool {
        let of = |c: Color, r: Role| self.pieces().filter(|&(_, p)| p.color == c && p.role == r).count();
        let ours = |r: Role| of(side, r);
        if ours(Role::Pawn) + ours(Role::Rook) + ours(Role::Queen) > 0 {
            return false;
        }
        if ours(Role::Knight) > 0 {
            // A lone knight mates only with the help of the opponent's own men in the way.
            let theirs = self.pieces().filter(|&(_, p)| p.color != side && !matches!(p.role, Role::King | Role::Queen));
            return ours(Role::Knight) + ours(Role::Bishop) == 1 && theirs.count() == 0;
        }
        if ours(Role::Bishop) > 0 {
            let bishops = self.pieces().filter(|&(_, p)| p.role == Role::Bishop).fold(0u64, |b, (s, _)| b | 1 << s);
            let one_colour = bishops & LIGHT_SQUARES == 0 || bishops & !LIGHT_SQUARES == 0;
            let others = self.pieces().any(|(_, p)| matches!(p.role, Role::Knight | Role::Pawn));
            return one_colour && !others;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_positions() {
        let dead = |fen: &str| Position::from_fen(fen).unwrap().insufficient_material();
        assert!(dead("4k3/8/8/8/8/8/8/4K3 w - - 0 1"));
        assert!(dead("4k3/8/8/8/8/8/8/2N1K3 w - - 0 1"));
        assert!(dead("4k3/8/8/8/8/8/8/2B1K3 b - - 0 1"));
        // Bishops on c1 and d8, both dark squares; on c1 and c8, opposite colours.
        assert!(dead("3bk3/8/8/8/8/8/8/2B1K3 w - - 0 1"));
        assert!(!dead("2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1"));
        assert!(!dead("4k3/8/8/8/8/8/8/R3K3 w - - 0 1"));
        assert!(!dead("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"));
        assert!(!dead("4k3/8/8/8/8/8/8/1NN1K3 w - - 0 1"));
        assert!(!dead("4kn2/8/8/8/8/8/8/2N1K3 w - - 0 1"));
    }
}
