//! Attack sets, rays and the board lines that the bit-parallel passes sweep along.

use super::piece::Role;
use super::square::{file_of, rank_of, Square};
use std::sync::OnceLock;

/// The 8 ray directions as (file step, rank step): 4 orthogonal, then 4 diagonal.
pub const DIRECTIONS: [(i8, i8); 8] = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)];

/// Precomputed tables, built once.
pub struct Tables {
    /// King attack set of each square.
    pub king: [u64; 64],
    /// Knight attack set of each square.
    pub knight: [u64; 64],
    /// `ray[d][s]`: squares from `s` (exclusive) to the edge in direction `d`.
    pub ray: [[u64; 64]; 8],
    /// `between[a][b]`: squares strictly between `a` and `b` on a line, else empty.
    pub between: Box<[[u64; 64]; 64]>,
    /// `lines[d]`: every maximal line of squares ordered along direction `d`.
    pub lines: [Vec<Vec<Square>>; 8],
}

fn step(sq: Square, (df, dr): (i8, i8)) -> Option<Square> {
    let f = file_of(sq) as i8 + df;
    let r = rank_of(sq) as i8 + dr;
    ((0..8).contains(&f) && (0..8).contains(&r)).then(|| (r * 8 + f) as Square)
}

fn build() -> Tables {
    let mut king = [0u64; 64];
    let mut knight = [0u64; 64];
    let mut ray = [[0u64; 64]; 8];
    let mut between = Box::new([[0u64; 64]; 64]);
    for sq in 0..64u8 {
        for d in DIRECTIONS {
            if let Some(t) = step(sq, d) {
                king[sq as usize] |= 1 << t;
            }
        }
        for d in [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)] {
            if let Some(t) = step(sq, d) {
                knight[sq as usize] |= 1 << t;
            }
        }
        for (di, &d) in DIRECTIONS.iter().enumerate() {
            let mut cur = sq;
            let mut passed = 0u64;
            while let Some(t) = step(cur, d) {
                ray[di][sq as usize] |= 1 << t;
                between[sq as usize][t as usize] = passed;
                passed |= 1 << t;
                cur = t;
            }
        }
    }
    let lines = std::array::from_fn(|di| {
        let d = DIRECTIONS[di];
        let back = (-d.0, -d.1);
        (0..64u8)
            .filter(|&s| step(s, back).is_none() && step(s, d).is_some())
            .map(|start| {
                let mut line = vec![start];
                while let Some(t) = step(*line.last().unwrap(), d) {
                    line.push(t);
                }
                line
            })
            .collect()
    });
    Tables { king, knight, ray, between, lines }
}

/// The shared attack tables.
pub fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(build)
}

/// King attacks of a square.
#[inline]
pub fn king_attacks(sq: Square) -> u64 {
    tables().king[sq as usize]
}

/// Knight attacks of a square.
#[inline]
pub fn knight_attacks(sq: Square) -> u64 {
    tables().knight[sq as usize]
}

/// Sliding attacks along direction indices `dirs` from `sq`, stopped by (and including) the
/// first occupied square on each ray.
#[inline]
pub fn slider_attacks(sq: Square, occupied: u64, dirs: &[usize]) -> u64 {
    let t = tables();
    let mut att = 0;
    for &d in dirs {
        let ray = t.ray[d][sq as usize];
        let blockers = ray & occupied;
        if blockers == 0 {
            att |= ray;
        } else {
            // Directions 0, 2, 4, 7 increase the square number; the others decrease it.
            let first =
                if matches!(d, 0 | 2 | 4 | 7) { blockers.trailing_zeros() } else { 63 - blockers.leading_zeros() };
            att |= ray & !t.ray[d][first as usize];
        }
    }
    att
}

/// Attack set of a man of `role` on `sq` given the occupied squares.
#[inline]
pub fn attacks(role: Role, sq: Square, occupied: u64) -> u64 {
    match role {
        Role::King => king_attacks(sq),
        Role::Knight => knight_attacks(sq),
        r => slider_attacks(sq, occupied, r.directions()),
    }
}

/// Squares strictly between two squares on a common line (empty if none).
#[inline]
pub fn between(a: Square, b: Square) -> u64 {
    tables().between[a as usize][b as usize]
}

/// King-move dilation of a whole bitboard: every square one king step from a set square.
#[inline]
pub fn king_dilate(bb: u64) -> u64 {
    const NOT_A: u64 = !0x0101_0101_0101_0101;
    const NOT_H: u64 = !0x8080_8080_8080_8080;
    let row = ((bb << 1) & NOT_A) | ((bb >> 1) & NOT_H);
    let both = row | bb;
    row | (both << 8) | (both >> 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dilation_matches_king_tables() {
        for sq in 0..64u8 {
            assert_eq!(king_dilate(1 << sq), king_attacks(sq));
        }
    }

    #[test]
    fn slider_attacks_stop_at_blockers() {
        // Rook on a1, blocker on a4: attacks a2, a3, a4 and the first rank.
        let att = slider_attacks(0, 1 << 24, Role::Rook.directions());
        assert_eq!(att, (1 << 8) | (1 << 16) | (1 << 24) | 0xfe);
        assert_eq!(between(0, 63).count_ones(), 6);
        assert_eq!(between(0, 10), 0);
    }

    #[test]
    fn lines_cover_every_step_once() {
        for (d, lines) in tables().lines.iter().enumerate() {
            let steps: usize = lines.iter().map(|l| l.len() - 1).sum();
            let expected: u32 = (0..64u8).map(|s| (tables().ray[d][s as usize] != 0) as u32).sum();
            assert_eq!(steps as u32, expected);
        }
    }
}
