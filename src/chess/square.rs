//! Squares, bitboards and the eight symmetries of the board.
//!
//! Squares are numbered a1 = 0, b1 = 1, ..., h8 = 63; bit `s` of a `u64` bitboard is square `s`.

/// A board square, a1 = 0 ... h8 = 63.
pub type Square = u8;

/// File (0 = a) of a square.
#[inline]
pub const fn file_of(sq: Square) -> u8 {
    sq & 7
}

/// Rank (0 = rank 1) of a square.
#[inline]
pub const fn rank_of(sq: Square) -> u8 {
    sq >> 3
}

/// The square on `file`, `rank` (both 0..8).
#[inline]
pub const fn square(file: u8, rank: u8) -> Square {
    rank * 8 + file
}

/// Algebraic name of a square, e.g. `"e4"`.
pub fn square_name(sq: Square) -> String {
    format!("{}{}", (b'a' + file_of(sq)) as char, (b'1' + rank_of(sq)) as char)
}

/// Parses an algebraic square name such as `"e4"`.
pub fn parse_square(s: &str) -> Option<Square> {
    let b = s.as_bytes();
    if b.len() != 2 || !(b'a'..=b'h').contains(&b[0]) || !(b'1'..=b'8').contains(&b[1]) {
        return None;
    }
    Some(square(b[0] - b'a', b[1] - b'1'))
}

/// One of the 8 symmetries of the board (dihedral group D4), written as the composition
/// "mirror files if bit 0, then flip ranks if bit 1, then transpose along a1-h8 if bit 2".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Symmetry(u8);

impl Symmetry {
    pub const IDENTITY: Symmetry = Symmetry(0);
    pub const MIRROR_FILES: Symmetry = Symmetry(1);
    pub const FLIP_RANKS: Symmetry = Symmetry(2);
    pub const TRANSPOSE: Symmetry = Symmetry(4);

    /// All 8 symmetries.
    pub fn all() -> impl Iterator<Item = Symmetry> {
        (0..8).map(Symmetry)
    }

    /// The code 0..8 of this symmetry.
    pub fn code(self) -> u8 {
        self.0
    }

    /// The image of a square.
    #[inline]
    pub const fn apply(self, sq: Square) -> Square {
        let mut f = sq & 7;
        let mut r = sq >> 3;
        if self.0 & 1 != 0 {
            f = 7 - f;
        }
        if self.0 & 2 != 0 {
            r = 7 - r;
        }
        if self.0 & 4 != 0 {
            let t = f;
            f = r;
            r = t;
        }
        r * 8 + f
    }

    /// The image of every square of a bitboard: `{ apply(s) : s in bb }`.
    #[inline]
    pub fn apply_bb(self, mut bb: u64) -> u64 {
        if self.0 & 1 != 0 {
            bb = mirror_files(bb);
        }
        if self.0 & 2 != 0 {
            bb = bb.swap_bytes();
        }
        if self.0 & 4 != 0 {
            bb = transpose(bb);
        }
        bb
    }

    /// The symmetry that undoes this one.
    pub const fn inverse(self) -> Symmetry {
        // Mirror and flip commute with each other; transposing swaps their roles.
        if self.0 & 4 != 0 {
            let m = self.0 & 1;
            let f = (self.0 >> 1) & 1;
            Symmetry(4 | (m << 1) | f)
        } else {
            self
        }
    }

    /// The symmetry that maps `sq` into the a1-d1-d4 triangle (the black king's home).
    #[inline]
    pub const fn to_triangle(sq: Square) -> Symmetry {
        let mut code = 0;
        let mut f = sq & 7;
        let mut r = sq >> 3;
        if f > 3 {
            code |= 1;
            f = 7 - f;
        }
        if r > 3 {
            code |= 2;
            r = 7 - r;
        }
        if r > f {
            code |= 4;
        }
        Symmetry(code)
    }
}

/// Mirrors a bitboard left to right (a-file <-> h-file).
#[inline]
pub fn mirror_files(bb: u64) -> u64 {
    const K1: u64 = 0x5555_5555_5555_5555;
    const K2: u64 = 0x3333_3333_3333_3333;
    const K4: u64 = 0x0f0f_0f0f_0f0f_0f0f;
    let bb = ((bb >> 1) & K1) | ((bb & K1) << 1);
    let bb = ((bb >> 2) & K2) | ((bb & K2) << 2);
    ((bb >> 4) & K4) | ((bb & K4) << 4)
}

/// Transposes a bitboard along the a1-h8 diagonal (file <-> rank).
#[inline]
pub fn transpose(mut bb: u64) -> u64 {
    const K1: u64 = 0x5500_5500_5500_5500;
    const K2: u64 = 0x3333_0000_3333_0000;
    const K4: u64 = 0x0f0f_0f0f_0000_0000;
    let mut t = K4 & (bb ^ (bb << 28));
    bb ^= t ^ (t >> 28);
    t = K2 & (bb ^ (bb << 14));
    bb ^= t ^ (t >> 14);
    t = K1 & (bb ^ (bb << 7));
    bb ^= t ^ (t >> 7);
    bb
}

/// Squares of the a1-d1-d4 triangle in the order of their black-king codes 0..10.
pub const TRIANGLE: [Square; 10] = [0, 1, 2, 3, 9, 10, 11, 18, 19, 27];

/// Black-king code (0..10) of a triangle square, or `None` outside the triangle.
pub fn triangle_code(sq: Square) -> Option<u8> {
    TRIANGLE.iter().position(|&t| t == sq).map(|c| c as u8)
}

/// Whether a square lies on the a1-h8 diagonal.
#[inline]
pub const fn on_diagonal(sq: Square) -> bool {
    sq & 7 == sq >> 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitboard_images_agree_with_square_images() {
        for sym in Symmetry::all() {
            for sq in 0..64u8 {
                assert_eq!(sym.apply_bb(1u64 << sq), 1u64 << sym.apply(sq), "{sym:?} {sq}");
                assert_eq!(sym.inverse().apply(sym.apply(sq)), sq, "{sym:?} {sq}");
            }
        }
    }

    #[test]
    fn triangle_symmetry_lands_in_triangle() {
        for sq in 0..64u8 {
            let t = Symmetry::to_triangle(sq).apply(sq);
            assert!(triangle_code(t).is_some(), "{} -> {}", square_name(sq), square_name(t));
        }
    }

    #[test]
    fn names_round_trip() {
        for sq in 0..64u8 {
            assert_eq!(parse_square(&square_name(sq)), Some(sq));
        }
        assert_eq!(parse_square("i1"), None);
        assert_eq!(parse_square("a9"), None);
    }
}
