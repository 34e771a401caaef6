//! The men: colours, roles (piece kinds) and coloured pieces.

/// Side: white or black.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Color {
    White,
    Black,
}

impl Color {
    /// The other side.
    pub fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// 0 for white, 1 for black: the index of per-colour arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A piece kind (colour is held elsewhere). The order is the order of a side's men in a
/// signature: K, then Q R B N, then P.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    King,
    Queen,
    Rook,
    Bishop,
    Knight,
    Pawn,
}

impl Role {
    /// Upper-case letter of the role.
    pub fn letter(self) -> char {
        match self {
            Role::King => 'K',
            Role::Queen => 'Q',
            Role::Rook => 'R',
            Role::Bishop => 'B',
            Role::Knight => 'N',
            Role::Pawn => 'P',
        }
    }

    /// Role of an (upper- or lower-case) letter.
    pub fn from_letter(c: char) -> Option<Role> {
        Some(match c.to_ascii_uppercase() {
            'K' => Role::King,
            'Q' => Role::Queen,
            'R' => Role::Rook,
            'B' => Role::Bishop,
            'N' => Role::Knight,
            'P' => Role::Pawn,
            _ => return None,
        })
    }

    /// The pieces a pawn may promote to, strongest first (the order of promotion moves).
    pub const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

    /// Whether the role moves along rays that can be blocked.
    pub fn is_slider(self) -> bool {
        matches!(self, Role::Queen | Role::Rook | Role::Bishop)
    }

    /// Indices into [`DIRECTIONS`] along which this role slides.
    pub fn directions(self) -> &'static [usize] {
        match self {
            Role::Queen => &[0, 1, 2, 3, 4, 5, 6, 7],
            Role::Rook => &[0, 1, 2, 3],
            Role::Bishop => &[4, 5, 6, 7],
            _ => &[],
        }
    }
}

/// A man on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub color: Color,
    pub role: Role,
}

impl Piece {
    /// The FEN letter: upper case for white, lower case for black.
    pub fn letter(self) -> char {
        let c = self.role.letter();
        if self.color == Color::White {
            c
        } else {
            c.to_ascii_lowercase()
        }
    }
}
