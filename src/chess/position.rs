//! A plain one-position board for probing: FEN parsing, legality, legal moves (pawns,
//! promotions and en passant included). It shares only the attack tables with the
//! generator's bit-parallel passes.

use super::attacks::{attacks_of, attacks_square, between, pawn_attacks};
use super::material::{Material, MAX_MEN};
use super::piece::{Color, Piece, Role};
use super::square::{file_of, mirror_files, parse_square, rank_of, square, square_name, Square};
use std::fmt;

mod bitboards;

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
    #[error("castling rights are not supported in endgames ('{0}')")]
    Castling(String),
    #[error(
        "impossible en passant square '{0}': it must be the square an enemy pawn just passed in a double step \
         (rank 6 with white to move, rank 3 with black), empty, with that pawn in front of it, the square \
         behind it empty, and any check given by that step"
    )]
    EnPassant(String),
    #[error("bad half-move clock '{0}'")]
    Clock(String),
    #[error("pawn on {0}: pawns cannot stand on the first or last rank")]
    PawnRank(String),
    #[error("each side needs exactly one king")]
    Kings,
    #[error("illegal position: the side not to move is in check")]
    OppositeCheck,
    #[error("{0} men on the board: only 2 to 6 are supported")]
    Count(usize),
}

/// The 50-move rule: a game is drawn once this many plies have gone by without a capture or
/// a pawn move (a zeroing move). Every limit of the tables derives from it: the longest
/// distance stored, the last step of the chains under the rule.
pub const RULE_PLIES: u16 = 100;

/// A position: the men, the side to move, the en passant square and the half-move clock.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    board: [Option<Piece>; 64],
    /// The occupied squares of `board`.
    occ: u64,
    pub turn: Color,
    /// The square a pawn of the side to move may capture onto en passant. Set only when such
    /// a capture is legal, so that two positions with the same moves compare equal.
    pub ep: Option<Square>,
    /// Half-moves since the last capture or pawn move (the FEN's clock).
    pub halfmove: u32,
}

/// A move, written in UCI as `from` `to` and the promotion's letter (`e7e8q`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    pub from: Square,
    pub to: Square,
    /// A man is taken (en passant included).
    pub capture: bool,
    /// What a pawn reaching the last rank becomes.
    pub promotion: Option<Role>,
    /// The moving man is a pawn.
    pub pawn: bool,
    /// A pawn takes en passant: the pawn taken stands on `to`'s file and `from`'s rank.
    pub en_passant: bool,
}

impl Move {
    /// Whether the move resets the half-move clock (a capture or a pawn move): the 50-move
    /// count starts again after it.
    pub fn is_zeroing(&self) -> bool {
        self.capture || self.pawn
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", square_name(self.from), square_name(self.to))?;
        if let Some(role) = self.promotion {
            write!(f, "{}", role.letter().to_ascii_lowercase())?;
        }
        Ok(())
    }
}

/// The rank (0 = rank 1) a pawn of `color` promotes on.
const fn last_rank(color: Color) -> u8 {
    match color {
        Color::White => 7,
        Color::Black => 0,
    }
}

/// The rank a pawn of `color` may double-step from.
const fn start_rank(color: Color) -> u8 {
    match color {
        Color::White => 1,
        Color::Black => 6,
    }
}

/// The square one step ahead of `sq` for a pawn of `color` (not on its last rank).
const fn ahead(color: Color, sq: Square) -> Square {
    match color {
        Color::White => sq + 8,
        Color::Black => sq - 8,
    }
}

impl Position {
    /// Parses a FEN (board, side to move, and optionally castling `-`, en passant,
    /// half-move clock, move number) and checks that the position is legal. An en passant
    /// square must be possible (see [`FenError::EnPassant`]); it is kept only when an en
    /// passant capture is legal.
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
        let halfmove = match fields.get(4) {
            Some(h) => h.parse().map_err(|_| FenError::Clock(h.to_string()))?,
            None => 0,
        };
        if let Some(n) = fields.get(5) {
            n.parse::<u32>().map_err(|_| FenError::Clock(n.to_string()))?;
        }
        let mut pos = Position { board, occ: occupancy(&board), turn, ep: None, halfmove };
        pos.check()?;
        if let Some(&e) = fields.get(3).filter(|&&e| e != "-") {
            let ep = parse_square(e).ok_or_else(|| FenError::EnPassant(e.to_string()))?;
            pos = pos.with_en_passant(ep).map_err(|_| FenError::EnPassant(e.to_string()))?;
        }
        Ok(pos)
    }

    /// The position with an en passant square (a FEN's fourth field), for positions built
    /// from their men ([`Position::from_men`]): refused unless possible (see
    /// [`FenError::EnPassant`]), kept only when an en passant capture is legal.
    pub fn with_en_passant(mut self, ep: Square) -> Result<Position, FenError> {
        if ep >= 64 || !self.ep_square_possible(ep) {
            let name = if ep < 64 { square_name(ep) } else { format!("square {ep}") };
            return Err(FenError::EnPassant(name));
        }
        self.ep = self.ep_capture_legal(ep).then_some(ep);
        Ok(self)
    }

    /// Checks that the position is legal: one king a side, at most [`MAX_MEN`] men, no pawn
    /// on the first or last rank, the side not to move not in check. One pass over the men
    /// (`from_fen` and `from_men`; the C library's probes use `from_bitboards`).
    fn check(&self) -> Result<(), FenError> {
        const BACK_RANKS: u64 = 0xff00_0000_0000_00ff;
        let (mut kings, mut king_sq, mut pawn_on_back_rank) = ([0u32; 2], [0 as Square; 2], None);
        for (s, p) in self.pieces() {
            if p.role == Role::King {
                kings[p.color.index()] += 1;
                king_sq[p.color.index()] = s;
            } else if p.role == Role::Pawn && (1u64 << s) & BACK_RANKS != 0 && pawn_on_back_rank.is_none() {
                pawn_on_back_rank = Some(s);
            }
        }
        if kings != [1, 1] {
            return Err(FenError::Kings);
        }
        let men = self.occ.count_ones() as usize;
        if men > MAX_MEN {
            return Err(FenError::Count(men));
        }
        if let Some(s) = pawn_on_back_rank {
            return Err(FenError::PawnRank(square_name(s)));
        }
        if self.attacked(king_sq[self.turn.other().index()], self.turn) {
            return Err(FenError::OppositeCheck);
        }
        Ok(())
    }

    /// Whether `ep` can be the square an enemy pawn has just passed in a double step: on
    /// rank 6 with white to move (3 with black), that pawn in front of it, it and the pawn's
    /// origin behind it empty, and every check on the side to move given by that pawn or
    /// discovered through its origin.
    fn ep_square_possible(&self, ep: Square) -> bool {
        let us = self.turn;
        let them = us.other();
        let ep_rank = if us == Color::White { 5 } else { 2 };
        if rank_of(ep) != ep_rank {
            return false;
        }
        let (pushed, origin) = (ahead(them, ep), ahead(us, ep));
        if self.at(pushed) != Some(Piece { color: them, role: Role::Pawn }) || self.occ & (1 << ep | 1 << origin) != 0 {
            return false;
        }
        let king = self.king(us);
        self.pieces().filter(|(_, p)| p.color == them).all(|(s, p)| {
            attacks_of(p, s, self.occ) & (1 << king) == 0 || s == pushed || between(s, king) & (1 << origin) != 0
        })
    }

    /// Whether the side to move may legally take en passant onto `ep` (the enemy pawn in
    /// front of it having just double-stepped).
    fn ep_capture_legal(&self, ep: Square) -> bool {
        let mut capturers = pawn_attacks(self.turn.other(), ep) & self.pawns(self.turn);
        while capturers != 0 {
            let from = capturers.trailing_zeros() as Square;
            capturers &= capturers - 1;
            let mv = Move { from, to: ep, capture: true, promotion: None, pawn: true, en_passant: true };
            if !self.play(mv).in_check(self.turn) {
                return true;
            }
        }
        false
    }

    /// The FEN of the position.
    pub fn fen(&self) -> String {
        let cells = self.board.map(|p| p.map(Piece::letter));
        let t = if self.turn == Color::White { 'w' } else { 'b' };
        let ep = self.ep.map_or("-".to_string(), square_name);
        format!("{} {t} - {ep} {} 1", board_field(&cells), self.halfmove)
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

    /// The squares of side `c`'s pawns.
    pub fn pawns(&self, c: Color) -> u64 {
        let pawn = Piece { color: c, role: Role::Pawn };
        self.pieces().filter(|&(_, p)| p == pawn).fold(0, |b, (s, _)| b | 1 << s)
    }

    /// Whether either side has a pawn.
    pub fn has_pawns(&self) -> bool {
        self.pieces().any(|(_, p)| p.role == Role::Pawn)
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
        self.pieces().any(|(s, p)| p.color == by && attacks_square(p, s, sq, self.occ))
    }

    /// Whether side `c`'s king is attacked.
    pub fn in_check(&self, c: Color) -> bool {
        self.attacked(self.king(c), c.other())
    }

    /// The material on the board (white's men besides the king, black's), pawns included.
    pub fn material(&self) -> Material {
        let side = |c: Color| {
            self.pieces().filter(|(_, p)| p.color == c && p.role != Role::King).map(|(_, p)| p.role).collect()
        };
        Material::new(side(Color::White), side(Color::Black))
    }

    /// The position after a move (no legality check). After a double step the en passant
    /// square is set when the reply may take en passant.
    pub fn play(&self, mv: Move) -> Position {
        let mut next = self.clone();
        let man = next.board[mv.from as usize].take();
        let pawn = man.is_some_and(|p| p.role == Role::Pawn);
        let placed = match (man, mv.promotion) {
            (Some(p), Some(role)) => Some(Piece { color: p.color, role }),
            (man, _) => man,
        };
        next.board[mv.to as usize] = placed;
        let mut emptied = 1u64 << mv.from | 1u64 << mv.to;
        if mv.en_passant {
            let taken = square(file_of(mv.to), rank_of(mv.from));
            next.board[taken as usize] = None;
            emptied |= 1u64 << taken;
        }
        next.occ = self.occ & !emptied | ((placed.is_some() as u64) << mv.to);
        next.turn = self.turn.other();
        // Saturating: a FEN may give any u32 clock, and u32::MAX + 1 must not wrap to a fresh 0.
        next.halfmove = if mv.capture || pawn { 0 } else { self.halfmove.saturating_add(1) };
        next.ep = None;
        if pawn && mv.from.abs_diff(mv.to) == 16 {
            let passed = (mv.from + mv.to) / 2;
            next.ep = next.ep_capture_legal(passed).then_some(passed);
        }
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

    /// Whether the side to move is checkmated.
    pub fn is_checkmate(&self) -> bool {
        self.in_check(self.turn) && !self.has_legal_move()
    }

    /// Calls `stop` on each legal move in the order of [`Position::legal_moves`] until it
    /// returns true, and returns that move. Allocates nothing.
    pub fn find_legal_move(&self, mut stop: impl FnMut(Move) -> bool) -> Option<Move> {
        let us = self.turn;
        let mut legal_and_stop = |mv: Move| !self.play(mv).in_check(us) && stop(mv);
        for (from, p) in self.pieces().filter(|(_, p)| p.color == us) {
            if p.role == Role::Pawn {
                if let Some(mv) = self.find_pawn_move(from, &mut legal_and_stop) {
                    return Some(mv);
                }
                continue;
            }
            let mut targets = attacks_of(p, from, self.occ);
            while targets != 0 {
                let to = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let capture = match self.board[to as usize] {
                    Some(q) if q.color == us || q.role == Role::King => continue,
                    Some(_) => true,
                    None => false,
                };
                let mv = Move { from, to, capture, promotion: None, pawn: false, en_passant: false };
                if legal_and_stop(mv) {
                    return Some(mv);
                }
            }
        }
        None
    }

    /// The pawn moves from `from` (legal or not) in the order pushes and captures by target
    /// square, then en passant; each move to the last rank as four promotions, Q R B N.
    /// Returns the first move `stop` accepts.
    fn find_pawn_move(&self, from: Square, stop: &mut impl FnMut(Move) -> bool) -> Option<Move> {
        let us = self.turn;
        let them_not_king = self.pieces().filter(|(_, p)| p.color != us && p.role != Role::King);
        let victims = them_not_king.fold(0u64, |b, (s, _)| b | 1 << s);
        let mut targets = pawn_attacks(us, from) & victims;
        if rank_of(from) != last_rank(us) {
            let one = ahead(us, from);
            if self.occ & (1 << one) == 0 {
                targets |= 1 << one;
                if rank_of(from) == start_rank(us) && self.occ & (1 << ahead(us, one)) == 0 {
                    targets |= 1 << ahead(us, one);
                }
            }
        }
        while targets != 0 {
            let to = targets.trailing_zeros() as Square;
            targets &= targets - 1;
            let mv =
                Move { from, to, capture: victims & (1 << to) != 0, promotion: None, pawn: true, en_passant: false };
            if rank_of(to) != last_rank(us) {
                if stop(mv) {
                    return Some(mv);
                }
                continue;
            }
            for role in Role::PROMOTIONS {
                let mv = Move { promotion: Some(role), ..mv };
                if stop(mv) {
                    return Some(mv);
                }
            }
        }
        let ep = self.ep.filter(|&ep| pawn_attacks(us, from) & (1 << ep) != 0)?;
        // `ep` is public: take only a pawn that can have just double-stepped past it.
        let taken = square(file_of(ep), rank_of(from));
        let enemy_pawn = Some(Piece { color: us.other(), role: Role::Pawn });
        if self.occ & (1 << ep) != 0 || self.at(taken) != enemy_pawn {
            return None;
        }
        let mv = Move { from, to: ep, capture: true, promotion: None, pawn: true, en_passant: true };
        stop(mv).then_some(mv)
    }

    /// The same position with colours swapped and the board flipped top to bottom.
    pub fn flipped(&self) -> Position {
        let mut board = [None; 64];
        for (s, p) in self.pieces() {
            board[square(file_of(s), 7 - rank_of(s)) as usize] = Some(Piece { color: p.color.other(), role: p.role });
        }
        Position {
            board,
            occ: self.occ.swap_bytes(),
            turn: self.turn.other(),
            ep: self.ep.map(|e| e ^ 56),
            halfmove: self.halfmove,
        }
    }

    /// The same position mirrored left to right (files a and h exchanged); colours and the
    /// side to move stay.
    pub fn mirrored(&self) -> Position {
        let mut board = [None; 64];
        for (s, p) in self.pieces() {
            board[(s ^ 7) as usize] = Some(p);
        }
        Position {
            board,
            occ: mirror_files(self.occ),
            turn: self.turn,
            ep: self.ep.map(|e| e ^ 7),
            halfmove: self.halfmove,
        }
    }

    /// Builds a position from men (for tests and tools); checks legality like a FEN. It has
    /// no en passant square.
    pub fn from_men(men: &[(Square, Piece)], turn: Color) -> Result<Position, FenError> {
        let (mut board, mut occ) = ([None; 64], 0u64);
        for &(s, p) in men {
            if board[s as usize].is_some() {
                return Err(FenError::Board(format!("two men on {}", square_name(s))));
            }
            board[s as usize] = Some(p);
            occ |= 1 << s;
        }
        let pos = Position { board, occ, turn, ep: None, halfmove: 0 };
        pos.check()?;
        Ok(pos)
    }

    /// Parses a UCI move of this position (`e2e4`, `e7e8q`); it must be legal.
    pub fn parse_uci(&self, uci: &str) -> Option<Move> {
        let (from, to) = (parse_square(uci.get(0..2)?)?, parse_square(uci.get(2..4)?)?);
        let promotion = match uci.get(4..)? {
            "" => None,
            letter if letter.len() == 1 => Some(Role::from_letter(letter.chars().next()?)?),
            _ => return None,
        };
        self.legal_moves().into_iter().find(|m| m.from == from && m.to == to && m.promotion == promotion)
    }
}

/// The occupied squares of a board.
fn occupancy(board: &[Option<Piece>; 64]) -> u64 {
    board.iter().enumerate().fold(0, |b, (s, p)| if p.is_some() { b | (1 << s) } else { b })
}

#[cfg(test)]
mod tests;
