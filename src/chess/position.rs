//! A plain one-position board for probing: FEN parsing, legality, legal moves.
//! It shares only the attack tables with the generator's bit-parallel passes.

use super::attacks::attacks;
use super::material::{Material, MAX_MEN};
use super::piece::{Color, Piece, Role};
use super::square::{file_of, parse_square, rank_of, square, square_name, Square};
use std::fmt;

/// The board field of a FEN from the letters on the squares (a1 first).
pub fn board_field(cells: &[Option<char>; 64]) -> String {
    let mut s = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match cells[square(file, rank) as usize] {
                None => empty += 1,
                Some(c) => {
                    if empty > 0 {
                        s.push_str(&empty.to_string());
                        empty = 0;
                    }
                    s.push(c);
                }
            }
        }
        if empty > 0 {
            s.push_str(&empty.to_string());
        }
        if rank > 0 {
            s.push('/');
        }
    }
    s
}

/// Why a FEN was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FenError {
    #[error("FEN needs 2 to 6 fields (board, side to move, castling, en passant, clocks)")]
    Fields,
    #[error("bad board field: {0}")]
    Board(String),
    #[error("bad side to move '{0}' (expected w or b)")]
    Turn(String),
    #[error("castling rights are not supported in pawnless endgames ('{0}')")]
    Castling(String),
    #[error("en passant square '{0}' is impossible without pawns")]
    EnPassant(String),
    #[error("bad half-move clock '{0}'")]
    Clock(String),
    #[error("pawns are not supported yet")]
    Pawns,
    #[error("each side needs exactly one king")]
    Kings,
    #[error("illegal position: the side not to move is in check")]
    OppositeCheck,
    #[error("{0} men on the board: only 2 to 6 are supported")]
    Count(usize),
}

/// A pawnless position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    board: [Option<Piece>; 64],
    /// The occupied squares of `board`.
    occ: u64,
    pub turn: Color,
    /// Half-moves since the last capture (the FEN's clock).
    pub halfmove: u32,
}

/// A move, written in UCI as `from` `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    pub from: Square,
    pub to: Square,
    pub capture: bool,
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", square_name(self.from), square_name(self.to))
    }
}

impl Position {
    /// Parses a FEN (board, side to move, and optionally castling `-`, en passant `-`,
    /// half-move clock, move number) and checks that the position is legal.
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let fields: Vec<&str> = fen.split_whitespace().collect();
        if fields.len() < 2 || fields.len() > 6 {
            return Err(FenError::Fields);
        }
        let mut board = [None; 64];
        let ranks: Vec<&str> = fields[0].split('/').collect();
        if ranks.len() != 8 {
            return Err(FenError::Board(format!("{} ranks instead of 8", ranks.len())));
        }
        for (i, row) in ranks.iter().enumerate() {
            let rank = 7 - i as u8;
            let mut file = 0u8;
            for c in row.chars() {
                if let Some(n) = c.to_digit(10).filter(|n| (1..=8).contains(n)) {
                    file += n as u8;
                } else {
                    if c == 'p' || c == 'P' {
                        return Err(FenError::Pawns);
                    }
                    let role = Role::from_letter(c).ok_or_else(|| FenError::Board(format!("unknown piece '{c}'")))?;
                    if file >= 8 {
                        return Err(FenError::Board(format!("rank {} is too long", rank + 1)));
                    }
                    let color = if c.is_ascii_uppercase() { Color::White } else { Color::Black };
                    board[square(file, rank) as usize] = Some(Piece { color, role });
                    file += 1;
                }
                if file > 8 {
                    return Err(FenError::Board(format!("rank {} is too long", rank + 1)));
                }
            }
            if file != 8 {
                return Err(FenError::Board(format!("rank {} has {file} squares", rank + 1)));
            }
        }
        let turn = match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            t => return Err(FenError::Turn(t.to_string())),
        };
        if let Some(&c) = fields.get(2) {
            if c != "-" {
                return Err(FenError::Castling(c.to_string()));
            }
        }
        if let Some(&e) = fields.get(3) {
            if e != "-" {
                return Err(FenError::EnPassant(e.to_string()));
            }
        }
        let halfmove = match fields.get(4) {
            Some(h) => h.parse().map_err(|_| FenError::Clock(h.to_string()))?,
            None => 0,
        };
        if let Some(n) = fields.get(5) {
            n.parse::<u32>().map_err(|_| FenError::Clock(n.to_string()))?;
        }
        let pos = Position { board, occ: occupancy(&board), turn, halfmove };
        pos.check()?;
        Ok(pos)
    }

    fn check(&self) -> Result<(), FenError> {
        for c in [Color::White, Color::Black] {
            let kings = self.pieces().filter(|(_, p)| p.color == c && p.role == Role::King).count();
            if kings != 1 {
                return Err(FenError::Kings);
            }
        }
        let men = self.pieces().count();
        if men > MAX_MEN {
            return Err(FenError::Count(men));
        }
        if self.in_check(self.turn.other()) {
            return Err(FenError::OppositeCheck);
        }
        Ok(())
    }

    /// The FEN of the position.
    pub fn fen(&self) -> String {
        let cells = self.board.map(|p| p.map(Piece::letter));
        let t = if self.turn == Color::White { 'w' } else { 'b' };
        format!("{} {t} - - {} 1", board_field(&cells), self.halfmove)
    }

    /// Occupied squares with their men, in square order (a1 first).
    #[inline]
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        let mut bits = self.occ;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let s = bits.trailing_zeros() as Square;
            bits &= bits - 1;
            Some((s, self.board[s as usize].expect("occupied square holds a man")))
        })
    }

    /// The occupied squares as a bitboard (bit `s` = square `s`).
    #[inline]
    pub fn occupied(&self) -> u64 {
        self.occ
    }

    /// The man on a square.
    pub fn at(&self, sq: Square) -> Option<Piece> {
        self.board[sq as usize]
    }

    /// Square of a side's king.
    pub fn king(&self, c: Color) -> Square {
        self.pieces().find(|(_, p)| p.color == c && p.role == Role::King).map(|(s, _)| s).expect("king")
    }

    /// Whether `sq` is attacked by side `by`.
    pub fn attacked(&self, sq: Square, by: Color) -> bool {
        let occ = self.occupied();
        self.pieces().any(|(s, p)| p.color == by && attacks(p.role, s, occ) & (1 << sq) != 0)
    }

    /// Whether side `c`'s king is attacked.
    pub fn in_check(&self, c: Color) -> bool {
        self.attacked(self.king(c), c.other())
    }

    /// The material on the board (white's non-king pieces, black's).
    pub fn material(&self) -> Material {
        let side = |c: Color| {
            self.pieces().filter(|(_, p)| p.color == c && p.role != Role::King).map(|(_, p)| p.role).collect()
        };
        Material::new(side(Color::White), side(Color::Black))
    }

    /// The position after a move (no legality check).
    pub fn play(&self, mv: Move) -> Position {
        let mut next = self.clone();
        let man = next.board[mv.from as usize].take();
        next.board[mv.to as usize] = man;
        next.occ = self.occ & !(1u64 << mv.from) & !(1u64 << mv.to) | ((man.is_some() as u64) << mv.to);
        next.turn = self.turn.other();
        // Saturating: a FEN may give any u32 clock, and u32::MAX + 1 must not wrap to a fresh 0.
        next.halfmove = if mv.capture { 0 } else { self.halfmove.saturating_add(1) };
        next
    }

    /// Every legal move of the side to move.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut out = Vec::new();
        self.find_legal_move(|mv| {
            out.push(mv);
            false
        });
        out
    }

    /// Whether the side to move has a legal move (stops at the first; allocates nothing).
    pub fn has_legal_move(&self) -> bool {
        self.find_legal_move(|_| true).is_some()
    }

    /// Calls `stop` on each legal move in the order of [`Position::legal_moves`] until it
    /// returns true, and returns that move.
    fn find_legal_move(&self, mut stop: impl FnMut(Move) -> bool) -> Option<Move> {
        let occ = self.occ;
        for (from, p) in self.pieces().filter(|(_, p)| p.color == self.turn) {
            let mut targets = attacks(p.role, from, occ);
            while targets != 0 {
                let to = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let capture = match self.board[to as usize] {
                    Some(q) if q.color == self.turn || q.role == Role::King => continue,
                    Some(_) => true,
                    None => false,
                };
                let mv = Move { from, to, capture };
                if !self.play(mv).in_check(self.turn) && stop(mv) {
                    return Some(mv);
                }
            }
        }
        None
    }

    /// The same position with colours swapped and the board flipped top to bottom.
    pub fn flipped(&self) -> Position {
        let mut board = [None; 64];
        for (s, p) in self.pieces() {
            board[square(file_of(s), 7 - rank_of(s)) as usize] = Some(Piece { color: p.color.other(), role: p.role });
        }
        Position { board, occ: self.occ.swap_bytes(), turn: self.turn.other(), halfmove: self.halfmove }
    }

    /// Builds a position from men (for tests and tools); checks legality like a FEN.
    pub fn from_men(men: &[(Square, Piece)], turn: Color) -> Result<Position, FenError> {
        let mut board = [None; 64];
        for &(s, p) in men {
            if board[s as usize].is_some() {
                return Err(FenError::Board(format!("two men on {}", square_name(s))));
            }
            board[s as usize] = Some(p);
        }
        let pos = Position { board, occ: occupancy(&board), turn, halfmove: 0 };
        pos.check()?;
        Ok(pos)
    }

    /// Parses a UCI move of this position (must be legal).
    pub fn parse_uci(&self, uci: &str) -> Option<Move> {
        let (from, to) = (parse_square(uci.get(0..2)?)?, parse_square(uci.get(2..4)?)?);
        self.legal_moves().into_iter().find(|m| m.from == from && m.to == to)
    }
}

/// The occupied squares of a board.
fn occupancy(board: &[Option<Piece>; 64]) -> u64 {
    board.iter().enumerate().fold(0, |b, (s, p)| if p.is_some() { b | (1 << s) } else { b })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fen_round_trip_and_errors() {
        let p = Position::from_fen("8/8/8/8/8/2k5/8/KQ6 w - - 3 10").unwrap();
        assert_eq!(p.fen(), "8/8/8/8/8/2k5/8/KQ6 w - - 3 1");
        assert_eq!(p.halfmove, 3);
        assert_eq!(Position::from_fen("8/8/8/8/8/2k5/8/KQ6"), Err(FenError::Fields));
        assert_eq!(Position::from_fen("8/8/8/8/8/2k5/8/KQ6 x"), Err(FenError::Turn("x".into())));
        assert_eq!(Position::from_fen("8/8/8/8/8/2k5/P7/KQ6 w"), Err(FenError::Pawns));
        assert_eq!(Position::from_fen("8/8/8/8/8/2k5/8/Q7 w"), Err(FenError::Kings));
        // Black king in check with white to move is fine; with black... the side not to move in check is illegal.
        assert_eq!(Position::from_fen("k7/8/8/8/8/8/8/Q1K5 b").unwrap().turn, Color::Black);
        assert_eq!(Position::from_fen("k7/8/8/8/8/8/8/Q1K5 w"), Err(FenError::OppositeCheck));
        assert!(matches!(Position::from_fen("8/8/8/8/8/2k5/8/KQ7 w"), Err(FenError::Board(_))));
        assert!(matches!(Position::from_fen("8/8/8/8/8/2k5/8/KQ5 w"), Err(FenError::Board(_))));
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
}
