//! Identical men out of order: a position with two identical men (same colour and role) is
//! stored at two slots, one per order of the men. Format 7 keeps the value of the slot whose
//! identical men have non-decreasing H digits (the stable sort by H digit of each run of
//! identical men) and leaves the others don't-cares (issue 28); readers go to the kept slot.
//!
//! The H digit is shared by a square's symmetric images, so the rule commutes with the
//! symmetries: a kept position's transposed twin is kept too, and the transposed-twin rule
//! (`twins.rs`) applies among kept slots unchanged. Men of equal H digit stay in both orders.
//! A slot and its kept slot hold the same white king (the lane of their words), but they can
//! lie in different units of the stored orders (the first white piece's H digit is in the
//! unit's bits), so readers in slot order fetch kept words from other units. With pawns the
//! men are pieces (identical pawns are one configuration of a slice), and a slot and its kept
//! slot lie in the same slice.

use super::{extract, square_code, Layout};
use crate::chess::{Square, MAX_PIECES};

impl Layout {
    /// Whether storage word `word` holds identical men (pieces, not pawns) whose H digits are
    /// out of order: a don't-care in a format 7 table.
    #[inline]
    pub fn identical_out_of_order(&self, word: u64) -> bool {
        self.out_of_order_at(self.index_of_slot(word * 64))
    }

    #[inline]
    fn out_of_order_at(&self, index: u64) -> bool {
        (0..self.pieces.len().saturating_sub(1)).any(|k| {
            self.same_as_next(k) && extract(index, &self.pieces[k].h_bits) > extract(index, &self.pieces[k + 1].h_bits)
        })
    }

    /// Sorts each run of identical men (`squares` in `pieces` order) by H digit, keeping the
    /// order of men of equal H digit: the men as a format 7 table keeps them.
    #[inline]
    pub fn sort_identical_by_h(&self, squares: &mut [Square]) {
        self.sort_identical_by_key(squares, |sq| square_code(sq) >> 3);
    }

    /// The storage word that a format 7 table keeps for `word`'s positions (the same
    /// white-king lanes), when `word` is a don't-care ([`Layout::identical_out_of_order`]).
    pub fn identical_partner(&self, word: u64) -> Option<u64> {
        let index = self.index_of_slot(word * 64);
        if !self.out_of_order_at(index) {
            return None;
        }
        let mut squares = [0 as Square; MAX_PIECES];
        let n = self.pieces.len();
        let (code, _) = self.decode_into(index, &mut squares[..n]);
        self.sort_identical_by_h(&mut squares[..n]);
        // With pawns, the same slice (the bits above the index inside it).
        let slice = if self.slices.is_some() { index >> self.total_bits << self.total_bits } else { 0 };
        let sorted = slice | self.index(code, &squares[..n], 0);
        Some(self.slot(sorted).expect("a stored position's image is stored") / 64)
    }

    /// Each storage word of `first..first + n` whose identical men are out of order, as its
    /// offset from `first` and its kept word ([`Layout::identical_partner`]).
    pub fn for_each_identical(&self, first: u64, n: usize, mut each: impl FnMut(usize, u64)) {
        if !self.has_identical_men() {
            return;
        }
        for w in 0..n {
            if let Some(kept) = self.identical_partner(first + w as u64) {
                each(w, kept);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Material;

    /// Every out-of-order word's kept word holds the same positions with the identical men
    /// sorted by H digit, is itself in order, and the share of dropped words is the share of
    /// out-of-order H digits: 28 of 64 pairs, 392 of 512 triples.
    #[test]
    fn kept_words_hold_the_same_positions_sorted() {
        for (name, expected) in
            [("KNNvK", 28.0 / 64.0), ("KBBvKN", 28.0 / 64.0), ("KRvKNN", 28.0 / 64.0), ("KRRRvK", 392.0 / 512.0)]
        {
            let m: Material = name.parse().unwrap();
            let layout = Layout::new(&m);
            let n_words = layout.n_slots / 64;
            let mut dropped = 0u64;
            let mut checked = 0u64;
            for word in (0..n_words).step_by(13) {
                checked += 1;
                let Some(kept) = layout.identical_partner(word) else {
                    continue;
                };
                dropped += 1;
                assert!(!layout.identical_out_of_order(kept), "{name} word {word}");
                let (code, mut sq, _) = layout.decode(layout.index_of_slot(word * 64));
                let (kcode, ksq, _) = layout.decode(layout.index_of_slot(kept * 64));
                assert_eq!(code, kcode);
                if layout.has_pawns() {
                    assert_eq!((word * 64) >> layout.total_bits, (kept * 64) >> layout.total_bits, "{name}: one slice");
                }
                let mut a = sq.clone();
                a.sort_unstable();
                let mut b = ksq.clone();
                b.sort_unstable();
                assert_eq!(a, b, "{name}: the same squares");
                layout.sort_identical_by_h(&mut sq);
                assert_eq!(sq, ksq, "{name}: the kept word is the sorted one");
            }
            let share = dropped as f64 / checked as f64;
            assert!((share - expected).abs() < 0.02, "{name}: {share} of the words dropped, not {expected}");
        }
    }

    #[test]
    fn runs_without_identical_men_drop_nothing() {
        let layout = Layout::new(&"KQRvKR".parse().unwrap());
        assert!((0..layout.n_slots / 64).step_by(101).all(|w| layout.identical_partner(w).is_none()));
    }
}
