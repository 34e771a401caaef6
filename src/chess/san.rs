//! Standard algebraic notation (SAN) of a move, as GUIs and the lichess tablebase API show
//! it (`Nbd7`, `R1e2`, `exd6`, `b8=Q+`, `Qg7#`). Castling never arises: positions here
//! have no castling rights.

use super::piece::Role;
use super::position::{Move, Position};
use super::square::{file_of, rank_of, square_name, Square};

impl Position {
    /// The SAN of a legal move of this position: the piece letter (none for a pawn), the
    /// origin's file, rank or square when another piece of the same kind could also go
    /// there (file first, as the rules prefer), `x` for a capture (a pawn's with its file),
    /// the target, `=Q` for a promotion, and `+` for check or `#` for checkmate.
    pub fn san(&self, mv: Move) -> String {
        let role = self.at(mv.from).map_or(Role::Pawn, |p| p.role);
        let mut san = String::with_capacity(8);
        if role == Role::Pawn {
            if mv.capture {
                san.push((b'a' + file_of(mv.from)) as char);
            }
        } else {
            san.push(role.letter());
            san.push_str(&self.disambiguation(mv, role));
        }
        if mv.capture {
            san.push('x');
        }
        san.push_str(&square_name(mv.to));
        if let Some(promoted) = mv.promotion {
            san.push('=');
            san.push(promoted.letter());
        }
        let after = self.play(mv);
        if after.in_check(after.turn) {
            san.push(if after.has_legal_move() { '+' } else { '#' });
        }
        san
    }

    /// What tells `mv` from the other legal moves of a `role` to the same square: nothing,
    /// the origin's file, its rank, or (with three or more such pieces) its square.
    fn disambiguation(&self, mv: Move, role: Role) -> String {
        let rivals: Vec<Square> = self
            .legal_moves()
            .into_iter()
            .filter(|m| m.to == mv.to && m.from != mv.from && self.at(m.from).is_some_and(|p| p.role == role))
            .map(|m| m.from)
            .collect();
        if rivals.is_empty() {
            return String::new();
        }
        let name = square_name(mv.from);
        if rivals.iter().all(|&s| file_of(s) != file_of(mv.from)) {
            name[..1].to_string()
        } else if rivals.iter().all(|&s| rank_of(s) != rank_of(mv.from)) {
            name[1..].to_string()
        } else {
            name
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SAN of the UCI move `uci` in `fen`.
    fn san(fen: &str, uci: &str) -> String {
        let pos = Position::from_fen(fen).unwrap();
        let mv = pos.parse_uci(uci).unwrap_or_else(|| panic!("{uci} is not legal in {fen}"));
        pos.san(mv)
    }

    #[test]
    fn pieces_pawns_captures_and_promotions() {
        assert_eq!(san("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "a1a7"), "Ra7");
        assert_eq!(san("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "e1d2"), "Kd2");
        assert_eq!(san("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5"), "exd5");
        assert_eq!(san("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4e5"), "e5");
        assert_eq!(san("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6"), "exd6");
        assert_eq!(san("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q"), "b8=Q+");
        assert_eq!(san("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8n"), "b8=N");
        // A promotion with capture, and one that mates.
        assert_eq!(san("r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7a8r"), "bxa8=R+");
        assert_eq!(san("2r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7c8n"), "bxc8=N");
        assert_eq!(san("k7/6P1/8/8/8/8/8/K7 w - - 0 1", "g7g8q"), "g8=Q+");
        assert_eq!(san("8/1P6/8/8/8/8/8/K5k1 w - - 0 1", "b7b8q"), "b8=Q");
        assert_eq!(san("2r2k2/1P3p2/5Kp1/8/8/8/8/8 w - - 0 1", "b7c8q"), "bxc8=Q#");
    }

    #[test]
    fn check_and_mate() {
        assert_eq!(san("k7/8/1K6/8/8/8/8/7R w - - 0 1", "h1h8"), "Rh8#");
        assert_eq!(san("k7/8/8/8/8/8/8/K6R w - - 0 1", "h1h8"), "Rh8+");
        assert_eq!(san("7k/8/5K2/8/8/8/8/6Q1 w - - 0 1", "g1g7"), "Qg7#");
        // Stalemate is no check.
        assert_eq!(san("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", "f1f7"), "Qf7");
    }

    #[test]
    fn two_pieces_that_reach_the_square() {
        // Knights on b1 and f1 both reach d2: the file tells them apart.
        assert_eq!(san("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "b1d2"), "Nbd2");
        // Rooks on a1 and a5 both reach a3: the same file, so the rank.
        assert_eq!(san("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1", "a1a3"), "R1a3");
        assert_eq!(san("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1", "a5a3"), "R5a3");
        // Rooks on a1 and h1 reach d1: the file.
        assert_eq!(san("4k3/8/8/8/8/8/4K3/R6R w - - 0 1", "h1d1"), "Rhd1");
        // Three queens reach d4 (a1, a4, d1): a1 shares its file with a4 and its rank with
        // d1, so its square; a4 shares only its file, so its rank; d1 neither, so its file.
        assert_eq!(san("8/7k/8/8/Q7/8/8/Q2Q3K w - - 0 1", "a1d4"), "Qa1d4");
        assert_eq!(san("8/7k/8/8/Q7/8/8/Q2Q3K w - - 0 1", "a4d4"), "Q4d4");
        assert_eq!(san("8/7k/8/8/Q7/8/8/Q2Q3K w - - 0 1", "d1d4"), "Qdd4");
        // The knight on e5 reaches d3 too, but it is pinned: no disambiguation.
        assert_eq!(san("4k3/4r3/8/4N3/8/8/8/2N1K3 w - - 0 1", "c1d3"), "Nd3");
        // Capturing with one of two knights.
        assert_eq!(san("4k3/8/8/3p4/8/2N1N3/8/4K3 w - - 0 1", "c3d5"), "Ncxd5");
    }
}
