//! Materials as numbers, so that a probe finds a run without hashing or allocating: a
//! side's men besides its king (at most 4 of Q, R, B, N, P) are one of [`PIECE_SETS`]
//! multisets, and a run is the pair of its sides' piece sets ([`run_key`]).

use crate::chess::{Material, Role, MAX_PIECES};

/// Number of multisets of one side's men besides the king (at most 4 of Q, R, B, N, P):
/// C(9, 4).
pub const PIECE_SETS: usize = 126;

/// Index of a side's counts `q + 5r + 25b + 125n + 625p` among the multisets of at most 4
/// men (0 = bare king); `u8::MAX` for more than 4.
pub const PIECE_SET_INDEX: [u8; 3125] = {
    let mut t = [u8::MAX; 3125];
    let mut i = 0;
    let mut next = 0;
    while i < 3125 {
        if i % 5 + i / 5 % 5 + i / 25 % 5 + i / 125 % 5 + i / 625 <= 4 {
            t[i] = next;
            next += 1;
        }
        i += 1;
    }
    t
};

/// Weight of a role in a side's count code `q + 5r + 25b + 125n + 625p`.
#[inline]
pub fn role_weight(role: Role) -> usize {
    match role {
        Role::Queen => 1,
        Role::Rook => 5,
        Role::Bishop => 25,
        Role::Knight => 125,
        Role::Pawn => 625,
        Role::King => 0,
    }
}

/// The piece set of a side's men besides its king, or `None` with more than 4.
pub fn piece_set_index(roles: &[Role]) -> Option<usize> {
    if roles.len() > MAX_PIECES || roles.contains(&Role::King) {
        return None;
    }
    Some(PIECE_SET_INDEX[roles.iter().map(|&r| role_weight(r)).sum::<usize>()] as usize)
}

/// The roles of a piece set (inverse of [`piece_set_index`]).
pub fn piece_set_roles(index: usize) -> Vec<Role> {
    let code = PIECE_SET_INDEX.iter().position(|&i| i as usize == index).expect("side index in range");
    let mut roles = Vec::new();
    for (role, w) in [(Role::Queen, 1), (Role::Rook, 5), (Role::Bishop, 25), (Role::Knight, 125), (Role::Pawn, 625)] {
        roles.extend(std::iter::repeat_n(role, code / w % 5));
    }
    roles
}

/// A run as a number below `PIECE_SETS^2`: white's piece set, then black's (the slot of
/// the run in a tablebase's table of open runs); `None` with more than 4 men on a side.
pub fn run_key(m: &Material) -> Option<usize> {
    Some(piece_set_index(&m.white)? * PIECE_SETS + piece_set_index(&m.black)?)
}

/// The material of a run key (inverse of [`run_key`]).
pub fn material_of_key(key: usize) -> Material {
    Material::new(piece_set_roles(key / PIECE_SETS), piece_set_roles(key % PIECE_SETS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_indices_are_dense_and_invert() {
        let mut seen = [false; PIECE_SETS];
        for &i in &PIECE_SET_INDEX {
            if i != u8::MAX {
                assert!(!seen[i as usize]);
                seen[i as usize] = true;
                let roles = piece_set_roles(i as usize);
                assert_eq!(piece_set_index(&roles), Some(i as usize));
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(piece_set_index(&[]), Some(0));
        let m = Material::parse("KQRvKNN").unwrap();
        assert_eq!(material_of_key(run_key(&m).unwrap()), m);
    }
}
