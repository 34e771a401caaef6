//! Attack sets, rays and the board lines that the bit-parallel passes sweep along, and the
//! attacks of a side's men on a square for all 64 squares of the white king at once.

use super::material::MAX_PIECES;
use super::piece::{Color, Piece, Role};
use super::square::{file_of, rank_of, Square};
use std::sync::OnceLock;

/// The 8 ray directions as (file step, rank step): 4 orthogonal, then 4 diagonal.
pub const DIRECTIONS: [(i8, i8); 8] = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)];

/// The board lines the bit-parallel passes sweep along, built once (the attack sets are
/// compile-time constants below).
pub struct Tables {
    /// `lines[d]`: every maximal line of squares ordered along direction `d`.
    pub lines: [Vec<Vec<Square>>; 8],
}

/// The square one step `(df, dr)` from `sq`, if on the board.
const fn step(sq: Square, (df, dr): (i8, i8)) -> Option<Square> {
    let f = file_of(sq) as i8 + df;
    let r = rank_of(sq) as i8 + dr;
    if f >= 0 && f < 8 && r >= 0 && r < 8 {
        Some((r * 8 + f) as Square)
    } else {
        None
    }
}

/// For each square, the union of the squares one of `steps` away.
const fn leaper_table(steps: &[(i8, i8)]) -> [u64; 64] {
    let mut out = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let mut i = 0;
        while i < steps.len() {
            if let Some(t) = step(sq as Square, steps[i]) {
                out[sq] |= 1 << t;
            }
            i += 1;
        }
        sq += 1;
    }
    out
}

/// King attack set of each square.
static KING: [u64; 64] = leaper_table(&DIRECTIONS);
/// Knight attack set of each square.
static KNIGHT: [u64; 64] = leaper_table(&[(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)]);
/// `PAWN[colour][s]`: the squares a pawn of that colour on `s` captures on.
static PAWN: [[u64; 64]; 2] = [leaper_table(&[(-1, 1), (1, 1)]), leaper_table(&[(-1, -1), (1, -1)])];

/// `RAY[d][s]`: squares from `s` (exclusive) to the edge in direction `d`.
static RAY: [[u64; 64]; 8] = {
    let mut ray = [[0u64; 64]; 8];
    let mut d = 0;
    while d < 8 {
        let mut sq = 0;
        while sq < 64 {
            let mut cur = sq as Square;
            while let Some(t) = step(cur, DIRECTIONS[d]) {
                ray[d][sq] |= 1 << t;
                cur = t;
            }
            sq += 1;
        }
        d += 1;
    }
    ray
};

/// `BETWEEN[a][b]`: squares strictly between `a` and `b` on a line, else empty.
pub static BETWEEN: [[u64; 64]; 64] = {
    let mut between = [[0u64; 64]; 64];
    let mut sq = 0;
    while sq < 64 {
        let mut d = 0;
        while d < 8 {
            let (mut cur, mut passed) = (sq as Square, 0u64);
            while let Some(t) = step(cur, DIRECTIONS[d]) {
                between[sq][t as usize] = passed;
                passed |= 1 << t;
                cur = t;
            }
            d += 1;
        }
        sq += 1;
    }
    between
};

/// `LINE_MASKS[s]`: the file, the diagonal and the anti-diagonal through `s`, `s` left out
/// (one square per rank each, as the byte-swap trick of [`line_attacks`] needs).
static LINE_MASKS: [[u64; 3]; 64] = {
    let mut masks = [[0u64; 3]; 64];
    let mut sq = 0;
    while sq < 64 {
        // Directions 2|3 (the file), 4|5 (a1-h8 diagonals), 6|7 (h1-a8 diagonals).
        let mut i = 0;
        while i < 3 {
            masks[sq][i] = RAY[2 + 2 * i][sq] | RAY[3 + 2 * i][sq];
            i += 1;
        }
        sq += 1;
    }
    masks
};

/// `RANK_ATTACKS[f][inner]`: the squares of its rank a rook on file `f` attacks, given the
/// occupancy of files b to g as the 6 bits of `inner` (the edge squares never block).
static RANK_ATTACKS: [[u8; 64]; 8] = {
    let mut table = [[0u8; 64]; 8];
    let mut f = 0;
    while f < 8 {
        let mut inner = 0;
        while inner < 64 {
            let occ = (inner << 1) as u8;
            let mut att = 0u8;
            let mut t = f + 1;
            while t < 8 {
                att |= 1 << t;
                if occ >> t & 1 != 0 {
                    break;
                }
                t += 1;
            }
            let mut t = f as i32 - 1;
            while t >= 0 {
                att |= 1 << t;
                if occ >> t & 1 != 0 {
                    break;
                }
                t -= 1;
            }
            table[f][inner] = att;
            inner += 1;
        }
        f += 1;
    }
    table
};

fn build() -> Tables {
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
    Tables { lines }
}

/// The shared line tables.
pub fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(build)
}

/// King attacks of a square.
#[inline]
pub fn king_attacks(sq: Square) -> u64 {
    KING[sq as usize]
}

/// Knight attacks of a square.
#[inline]
pub fn knight_attacks(sq: Square) -> u64 {
    KNIGHT[sq as usize]
}

/// Sliding attacks along one line through `sq` (`mask`, one square per rank, `sq` left
/// out), stopped by (and including) the first occupied square each way: the occupied
/// squares above `sq` found by subtraction, those below by the same on the byte-swapped
/// board (hyperbola quintessence: no branch, no table beyond the masks).
#[inline]
fn line_attacks(sq: Square, occupied: u64, mask: u64) -> u64 {
    let bit = 1u64 << sq;
    let forward = occupied & mask;
    let reverse = forward.swap_bytes().wrapping_sub(bit.swap_bytes());
    ((forward.wrapping_sub(bit)) ^ reverse.swap_bytes()) & mask
}

/// A rook's attacks along its rank.
#[inline]
fn rank_attacks(sq: Square, occupied: u64) -> u64 {
    let shift = 8 * rank_of(sq) as u32;
    let inner = (occupied >> (shift + 1)) & 63;
    (RANK_ATTACKS[file_of(sq) as usize][inner as usize] as u64) << shift
}

/// A rook's attacks on `sq` given the occupied squares.
#[inline]
pub fn rook_attacks(sq: Square, occupied: u64) -> u64 {
    line_attacks(sq, occupied, LINE_MASKS[sq as usize][0]) | rank_attacks(sq, occupied)
}

/// A bishop's attacks on `sq` given the occupied squares.
#[inline]
pub fn bishop_attacks(sq: Square, occupied: u64) -> u64 {
    let [_, diagonal, anti] = LINE_MASKS[sq as usize];
    line_attacks(sq, occupied, diagonal) | line_attacks(sq, occupied, anti)
}

/// The squares a pawn of `color` on `sq` captures on (its pushes are not attacks).
#[inline]
pub fn pawn_attacks(color: Color, sq: Square) -> u64 {
    PAWN[color.index()][sq as usize]
}

/// Attack set of a piece of `role` on `sq` given the occupied squares.
///
/// Panics for a pawn, whose attacks depend on its colour: use [`attacks_of`] or
/// [`pawn_attacks`].
#[inline]
pub fn attacks(role: Role, sq: Square, occupied: u64) -> u64 {
    match role {
        Role::King => king_attacks(sq),
        Role::Knight => knight_attacks(sq),
        Role::Pawn => panic!("the attacks of a pawn depend on its colour: use attacks_of or pawn_attacks"),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Queen => rook_attacks(sq, occupied) | bishop_attacks(sq, occupied),
    }
}

/// Attack set of a man (pawns included) on `sq` given the occupied squares.
#[inline]
pub fn attacks_of(piece: Piece, sq: Square, occupied: u64) -> u64 {
    match piece.role {
        Role::Pawn => pawn_attacks(piece.color, sq),
        role => attacks(role, sq, occupied),
    }
}

/// Whether a man on `from` attacks `target` given the occupied squares: [`attacks_of`]
/// asked of one square, with one table lookup instead of a slider's rays (legality checks
/// ask it once per enemy man).
#[inline]
pub fn attacks_square(piece: Piece, from: Square, target: Square, occupied: u64) -> bool {
    let (df, dr) = (file_of(from).abs_diff(file_of(target)), rank_of(from).abs_diff(rank_of(target)));
    let on_line = match piece.role {
        Role::Pawn => return pawn_attacks(piece.color, from) & (1 << target) != 0,
        Role::King => return king_attacks(from) & (1 << target) != 0,
        Role::Knight => return knight_attacks(from) & (1 << target) != 0,
        Role::Rook => df == 0 || dr == 0,
        Role::Bishop => df == dr,
        Role::Queen => df == 0 || dr == 0 || df == dr,
    };
    on_line && from != target && between(from, target) & occupied == 0
}

/// Squares strictly between two squares on a common line (empty if none).
#[inline]
pub fn between(a: Square, b: Square) -> u64 {
    BETWEEN[a as usize][b as usize]
}

/// The a-file and the h-file.
const FILE_A: u64 = 0x0101_0101_0101_0101;
const FILE_H: u64 = FILE_A << 7;

/// All bits when `cond`, else none.
#[inline]
fn all_if(cond: bool) -> u64 {
    if cond {
        !0
    } else {
        0
    }
}

/// Squares attacked by the pawns `pawns` (a bitboard) of `color`.
#[inline]
pub fn pawn_attack_set(color: Color, pawns: u64) -> u64 {
    match color {
        Color::White => ((pawns & !FILE_A) << 7) | ((pawns & !FILE_H) << 9),
        Color::Black => ((pawns & !FILE_A) >> 9) | ((pawns & !FILE_H) >> 7),
    }
}

// The white king's squares as the bits of a word (the index's low six bits): white's attacks
// on a square, for every square of the white king at once.

/// White-king squares for which `target` is attacked by white: by the king itself when
/// adjacent, by a white piece (`white` roles on `sq`, other than `skip`) whose ray the king
/// does not block, or by a white pawn of `white_pawns`. `occ` is the board without the white
/// king.
#[inline]
pub fn white_attack_mask(
    white: &[Role],
    sq: &[Square],
    target: Square,
    skip: Option<usize>,
    occ: u64,
    white_pawns: u64,
) -> u64 {
    let mut att = [0u64; MAX_PIECES];
    for (k, (&role, &from)) in white.iter().zip(sq).enumerate() {
        if skip != Some(k) {
            att[k] = attacks(role, from, occ);
        }
    }
    white_attack_mask_of(white, sq, &att, target, white_pawns)
}

/// [`white_attack_mask`] from the white pieces' attack sets (`att`; a skipped man's empty),
/// for callers that compute them once for several uses.
#[inline]
pub fn white_attack_mask_of(white: &[Role], sq: &[Square], att: &[u64], target: Square, white_pawns: u64) -> u64 {
    let mut m = king_attacks(target) | all_if(pawn_attack_set(Color::White, white_pawns) & (1 << target) != 0);
    for ((&role, &from), &a) in white.iter().zip(sq).zip(att) {
        if a & (1 << target) != 0 {
            m |= if role.is_slider() { !between(from, target) } else { !0 };
        }
    }
    m
}

/// Squares attacked by the black king on `bk`, black's pieces (`roles` on `sq`) and black's
/// pawns, with the board occupied by `occ`.
#[inline]
pub fn black_attack_set(roles: &[Role], sq: &[Square], bk: Square, occ: u64, black_pawns: u64) -> u64 {
    black_attack_union(bk, black_pawns, roles.iter().zip(sq).map(|(&role, &from)| attacks(role, from, occ)))
}

/// Squares attacked by the black king on `bk`, black's pawns and black's pieces, whose attack
/// sets are `pieces`.
#[inline]
pub fn black_attack_union(bk: Square, black_pawns: u64, pieces: impl Iterator<Item = u64>) -> u64 {
    pieces.fold(king_attacks(bk) | pawn_attack_set(Color::Black, black_pawns), |a, b| a | b)
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

    /// Sliding attacks along direction indices `dirs` from `sq`, stopped by (and including) the
    /// first occupied square on each ray: a ray at a time (the reference the line attacks of
    /// [`attacks`] are tested against).
    fn slider_attacks(sq: Square, occupied: u64, dirs: &[usize]) -> u64 {
        let mut att = 0;
        for &d in dirs {
            let ray = RAY[d][sq as usize];
            let blockers = ray & occupied;
            if blockers == 0 {
                att |= ray;
            } else {
                // Directions 0, 2, 4, 7 increase the square number; the others decrease it.
                let first =
                    if matches!(d, 0 | 2 | 4 | 7) { blockers.trailing_zeros() } else { 63 - blockers.leading_zeros() };
                att |= ray & !RAY[d][first as usize];
            }
        }
        att
    }

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
    fn one_square_attacks_agree_with_attack_sets() {
        let mut occ = 0x0123_4567_89ab_cdefu64;
        for _ in 0..8 {
            for role in [Role::King, Role::Queen, Role::Rook, Role::Bishop, Role::Knight, Role::Pawn] {
                for color in [Color::White, Color::Black] {
                    let piece = Piece { color, role };
                    for from in 0..64u8 {
                        let set = attacks_of(piece, from, occ);
                        for target in 0..64u8 {
                            assert_eq!(attacks_square(piece, from, target, occ), set >> target & 1 != 0);
                        }
                    }
                }
            }
            occ = occ.rotate_left(13) ^ (occ >> 7);
        }
    }

    /// The branch-free line attacks agree with the ray-by-ray ones on every square for
    /// varied occupancies (the slider's own square occupied or not).
    #[test]
    fn line_attacks_agree_with_ray_attacks() {
        let mut occ = 0x0123_4567_89ab_cdefu64;
        for _ in 0..200 {
            for sq in 0..64u8 {
                for occupied in [occ, occ | 1 << sq, occ & !(1 << sq), occ & occ.rotate_left(29)] {
                    for role in [Role::Rook, Role::Bishop, Role::Queen] {
                        let expected = slider_attacks(sq, occupied, role.directions());
                        assert_eq!(attacks(role, sq, occupied), expected, "{role:?} on {sq}, occupied {occupied:#x}");
                    }
                }
            }
            occ = occ.rotate_left(13) ^ (occ >> 7) ^ occ.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    #[test]
    fn pawn_attacks_go_diagonally_forward() {
        // e4 (28) attacks d5 and f5 for white, d3 and f3 for black; a-file pawns one square.
        assert_eq!(pawn_attacks(Color::White, 28), (1 << 35) | (1 << 37));
        assert_eq!(pawn_attacks(Color::Black, 28), (1 << 19) | (1 << 21));
        assert_eq!(pawn_attacks(Color::White, 8), 1 << 17);
        assert_eq!(pawn_attacks(Color::Black, 15), 1 << 6);
        assert_eq!(pawn_attacks(Color::White, 60), 0);
        let piece = |color, role| Piece { color, role };
        for sq in 0..64u8 {
            // Black's pawns are white's seen from the other side of the board.
            let black = attacks_of(piece(Color::Black, Role::Pawn), sq ^ 56, 0);
            assert_eq!(black, attacks_of(piece(Color::White, Role::Pawn), sq, 0).swap_bytes());
            assert_eq!(attacks_of(piece(Color::Black, Role::Rook), sq, 1 << 36), attacks(Role::Rook, sq, 1 << 36));
        }
    }

    #[test]
    fn pawn_attack_sets_are_the_union_of_single_pawns() {
        for color in [Color::White, Color::Black] {
            for sq in 0..64u8 {
                assert_eq!(pawn_attack_set(color, 1 << sq), pawn_attacks(color, sq), "{color:?} {sq}");
            }
        }
    }

    #[test]
    #[should_panic(expected = "colour")]
    fn attacks_refuse_a_pawn() {
        attacks(Role::Pawn, 12, 0);
    }

    #[test]
    fn lines_cover_every_step_once() {
        for (d, lines) in tables().lines.iter().enumerate() {
            let steps: usize = lines.iter().map(|l| l.len() - 1).sum();
            let expected: u32 = (0..64u8).map(|s| (RAY[d][s as usize] != 0) as u32).sum();
            assert_eq!(steps as u32, expected);
        }
    }
}
