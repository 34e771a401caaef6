//! The illegal positions of a storage word, a fact of the layout: the init passes mark them
//! (`IllegalWtm`, `IllegalBtm`), and readers of the compact format, which stores nothing for
//! them, find them here.

use super::{Layout, Pawns};
use crate::chess::attacks::{black_attack_set, white_attack_mask};
use crate::chess::{Color, Role, Square, MAX_PIECES};

/// The illegal positions of one storage word (the 64 white-king squares of one configuration
/// of the other men) with `stm` to move: with white to move, the white king on a man or the
/// black king attacked; with black to move, the white king on a man or on a square black
/// attacks. A configuration with two of the other men on one square is illegal for every
/// white-king square. One side at a time: readers of one side's values compute half.
pub fn illegal_word(layout: &Layout, word: u64, stm: Color) -> u64 {
    let index = layout.index_of_slot(word * 64);
    let n = layout.pieces.len();
    let mut sq = [0 as Square; MAX_PIECES];
    let (code, _) = layout.decode_into(index, &mut sq[..n]);
    let bk = layout.bk_square(code);
    let pawns = match &layout.slices {
        Some(slices) => slices.pawns((index >> layout.total_bits) as u32),
        None => Pawns::none(),
    };
    let mut occ = pawns.occupied();
    for s in std::iter::once(bk).chain(sq[..n].iter().copied()) {
        if occ & (1 << s) != 0 {
            return !0;
        }
        occ |= 1 << s;
    }
    let n_white = layout.pieces.iter().filter(|p| p.color == Color::White).count();
    let mut roles = [Role::King; MAX_PIECES];
    for (r, p) in roles.iter_mut().zip(&layout.pieces) {
        *r = p.role;
    }
    occ | match stm {
        Color::White => white_attack_mask(&roles[..n_white], &sq, bk, None, occ, pawns.occupied_by(Color::White)),
        Color::Black => black_attack_set(&roles[n_white..n], &sq[n_white..n], bk, occ, pawns.occupied_by(Color::Black)),
    }
}
