//! Transposed twins: without pawns, a position whose black king stands on the a1-h8
//! diagonal is stored twice, as itself and as its image in that diagonal (the triangle
//! holds both). Format 5 keeps the value of the smaller slot of each pair and leaves the
//! larger a don't-care (issue 28): readers go to the kept twin.
//!
//! The twins lie in one unit of the stored orders: the transposition keeps the black
//! king's code and every man's H digit (symmetric images share it), which are the index's
//! top bits; only the L digits and the white king move. So a reader that puts a unit back
//! into slot order finds both twins in it.

use super::{extract, Layout, StoredOrder};
use crate::chess::square::on_diagonal;
use crate::chess::{Square, Symmetry, MAX_PIECES};

/// A storage word (64 positions, one per white-king square) whose black king stands on the
/// diagonal: where its positions' transposed twins lie, and which of them are don't-cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TwinWord {
    /// The storage word of the twins: lane `l`'s twin is its lane `transpose(l)`.
    pub word: u64,
    /// Lanes whose twin is the smaller slot: don't-cares in a format 5 table.
    pub dropped: u64,
}

/// The men of a stored position on the squares its index holds them on: the pieces in the
/// layout's order (the first ones used), the kings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredMen {
    pub pieces: [Square; MAX_PIECES],
    pub wk: Square,
    pub bk: Square,
}

/// Lanes whose white king stands above the a1-h8 diagonal (rank greater than file): the
/// larger slot of each pair a word shares with its own transposed image.
const ABOVE_DIAGONAL: u64 = 0x7f3f_1f0f_0703_0100;

impl Layout {
    /// Whether the black king of storage word `word` stands on the a1-h8 diagonal (without
    /// pawns: the word's positions have transposed twins).
    #[inline]
    pub fn bk_on_diagonal(&self, word: u64) -> bool {
        self.bk_on_diagonal_at(self.index_of_slot(word * 64))
    }

    #[inline]
    fn bk_on_diagonal_at(&self, index: u64) -> bool {
        on_diagonal(self.bk_square(extract(index, &self.bk_bits) as u8))
    }

    /// The index of black-king code `code` with the pieces on `pieces` (the layout's order)
    /// each moved by `image`: a twin's index, the white king's bits left to the caller.
    #[inline]
    fn image_index(&self, code: u8, pieces: &[Square], image: impl Fn(Square) -> Square) -> u64 {
        pieces.iter().enumerate().fold(self.bk_contrib(code), |i, (k, &sq)| i | self.piece_contrib(k, image(sq)))
    }

    /// The transposed twins of storage word `word`, or `None` when it has none (black king
    /// off the diagonal, or a run with pawns).
    #[inline]
    pub fn transposed_twin(&self, word: u64) -> Option<TwinWord> {
        if self.slices.is_some() {
            return None;
        }
        let index = self.index_of_slot(word * 64);
        // The black king first: most words (and probes) stop here.
        self.bk_on_diagonal_at(index).then(|| self.twin_of_diagonal(index))
    }

    /// [`Layout::transposed_twin`] of the word at `index`, whose black king stands on the
    /// diagonal.
    #[inline]
    fn twin_of_diagonal(&self, index: u64) -> TwinWord {
        let n = self.pieces.len();
        let mut squares = [0 as Square; MAX_PIECES];
        let (code, _) = self.decode_into(index, &mut squares[..n]);
        let twin = self.image_index(code, &squares[..n], |sq| Symmetry::TRANSPOSE.apply(sq));
        // Both indexes have their white-king bits clear: the other men decide, and when they
        // are their own image, the white king does.
        let dropped = match twin.cmp(&index) {
            std::cmp::Ordering::Less => !0,
            std::cmp::Ordering::Equal => ABOVE_DIAGONAL,
            std::cmp::Ordering::Greater => 0,
        };
        let word = self.slot(twin).expect("the twin of a stored position is stored") / 64;
        TwinWord { word, dropped }
    }

    /// The index of the kept twin ([`Layout::kept_slot`]) of a position given by plain
    /// squares, without decoding: [`Layout::canonical_index`], and with the black king
    /// brought onto the diagonal the smaller of it and its transposed image's index (every
    /// man transposed, identical men not re-sorted). The probes' way to a slot: in tables
    /// before format 5 both twins hold the value, so the kept one serves them too.
    #[inline]
    pub fn kept_canonical_index(&self, bk: Square, pieces: &[Square], wk: Square) -> u64 {
        self.kept_canonical_men(bk, pieces, wk).0
    }

    /// [`Layout::kept_canonical_index`], and the men on the squares that index holds them
    /// on (a stored order reads them: [`StoredOrder::stored_of_men`]). Without pawns. A
    /// format 7 table's reader sorts identical men by H digit first
    /// ([`Layout::sort_identical_by_h`]): the slot then found is the one the table keeps.
    #[inline]
    pub fn kept_canonical_men(&self, bk: Square, pieces: &[Square], wk: Square) -> (u64, StoredMen) {
        let (index, sym) = self.canonical_index(bk, pieces, wk);
        let mut men = StoredMen { pieces: [0; MAX_PIECES], wk: sym.apply(wk), bk: sym.apply(bk) };
        let n = pieces.len();
        for (to, &sq) in men.pieces.iter_mut().zip(pieces) {
            *to = sym.apply(sq);
        }
        if self.slices.is_some() || !on_diagonal(men.bk) {
            return (index, men);
        }
        let image = |sq: Square| Symmetry::TRANSPOSE.apply(sq);
        let twin =
            self.image_index(extract(index, &self.bk_bits) as u8, &men.pieces[..n], image) | image(men.wk) as u64;
        if twin < index {
            men.pieces[..n].iter_mut().for_each(|sq| *sq = image(*sq));
            men.wk = image(men.wk);
        }
        (index.min(twin), men)
    }

    /// Each storage word of `first..first + n` that has transposed twins, as its offset from
    /// `first` and its [`TwinWord`]. The black king's code is constant over a unit of
    /// [`StoredOrder::max_unit_bits`] (the index's top bits hold it), so whole units are
    /// skipped at once when it stands off the diagonal.
    pub fn for_each_twin(&self, first: u64, n: usize, mut each: impl FnMut(usize, TwinWord)) {
        if self.slices.is_some() {
            return;
        }
        let unit_words = 1u64 << (StoredOrder::max_unit_bits(self) - 6);
        let end = first + n as u64;
        let mut w = first;
        while w < end {
            let stop = ((w / unit_words + 1) * unit_words).min(end);
            if self.bk_on_diagonal(w) {
                for word in w..stop {
                    each((word - first) as usize, self.twin_of_diagonal(self.index_of_slot(word * 64)));
                }
            }
            w = stop;
        }
    }

    /// The slot whose value a format 5 table keeps for `slot`: its transposed twin when that
    /// is smaller, else itself. With `identical` (format 7), of the slot with its identical
    /// men sorted by H digit ([`Layout::identical_partner`]).
    #[inline]
    pub fn kept_slot(&self, slot: u64, identical: bool) -> u64 {
        let slot = match identical.then(|| self.identical_partner(slot / 64)).flatten() {
            Some(word) => word * 64 + slot % 64,
            None => slot,
        };
        match self.transposed_twin(slot / 64) {
            Some(t) if t.dropped >> (slot % 64) & 1 != 0 => {
                t.word * 64 + Symmetry::TRANSPOSE.apply((slot % 64) as Square) as u64
            }
            _ => slot,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::square::transpose;
    use crate::chess::Material;

    #[test]
    fn above_diagonal_lanes_are_the_larger_of_their_pair() {
        for l in 0..64u8 {
            let t = Symmetry::TRANSPOSE.apply(l);
            assert_eq!(ABOVE_DIAGONAL >> l & 1 == 1, t < l, "lane {l}");
        }
        assert_eq!(transpose(1 << 1), 1 << 8);
    }

    /// Every slot's kept twin is the smaller of the two slots of its position's pair,
    /// kept twins are their own kept slot, and every word's twin word holds the images.
    #[test]
    fn kept_slots_are_the_smaller_images() {
        for name in ["KQvK", "KBNvK", "KRvKB", "KNNvK"] {
            let m: Material = name.parse().unwrap();
            let layout = Layout::new(&m);
            let mut dropped = 0u64;
            for slot in (0..layout.n_slots).step_by(7) {
                let (code, sq, wk) = layout.decode(layout.index_of_slot(slot));
                let bk = layout.bk_square(code);
                let kept = layout.kept_slot(slot, false);
                assert_eq!(layout.kept_slot(kept, false), kept, "{name} slot {slot}");
                if !on_diagonal(bk) {
                    assert_eq!(kept, slot);
                    continue;
                }
                let t: Vec<Square> = sq.iter().map(|&s| Symmetry::TRANSPOSE.apply(s)).collect();
                let image = layout.slot(layout.index(code, &t, Symmetry::TRANSPOSE.apply(wk))).unwrap();
                assert_eq!(kept, slot.min(image), "{name} slot {slot}");
                let tw = layout.transposed_twin(slot / 64).unwrap();
                assert_eq!(tw.word, image / 64);
                assert_eq!(tw.word / (1 << (layout.total_bits - 13)), slot / 64 / (1 << (layout.total_bits - 13)));
                dropped += (kept != slot) as u64;
            }
            assert!(dropped > 0, "{name}: some slots are dropped");
        }
    }

    #[test]
    fn probes_find_the_kept_twin_without_decoding() {
        for name in ["KQvK", "KBNvK", "KRvKB", "KNNvK", "KQRvK", "KBBvKN", "KRvKNN"] {
            let layout = Layout::new(&name.parse::<Material>().unwrap());
            let mut on_diagonal_seen = 0;
            for slot in (0..layout.n_slots).step_by(11) {
                let (code, sq, wk) = layout.decode(layout.index_of_slot(slot));
                let bk = layout.bk_square(code);
                // The position in each of the board's eight orientations.
                // Format 5 and 6 (identical men in both orders), and format 7.
                for (sym, identical) in Symmetry::all().flat_map(|s| [(s, false), (s, true)]) {
                    let mut pieces: Vec<Square> = sq.iter().map(|&s| sym.apply(s)).collect();
                    let raw = pieces.clone();
                    if identical {
                        layout.sort_identical_by_h(&mut pieces);
                    }
                    let (kept, men) = layout.kept_canonical_men(sym.apply(bk), &pieces, sym.apply(wk));
                    // The slot of the men as given, and the slot a reader keeps for it.
                    let (index, _) = layout.canonical_index(sym.apply(bk), &raw, sym.apply(wk));
                    let want = layout.kept_slot(layout.slot(index).unwrap(), identical);
                    assert_eq!(layout.slot(kept), Some(want), "{name} slot {slot} {sym:?} {identical}");
                    assert_eq!(layout.kept_slot(want, identical), want, "{name} slot {slot}: kept slots are kept");
                    if !identical {
                        assert_eq!(kept, layout.kept_canonical_index(sym.apply(bk), &pieces, sym.apply(wk)));
                    }
                    // The men on the squares the kept index holds them on.
                    let (kept_code, kept_sq, kept_wk) = layout.decode(kept);
                    let got = (&men.pieces[..kept_sq.len()], men.wk, men.bk);
                    assert_eq!(got, (&kept_sq[..], kept_wk, layout.bk_square(kept_code)), "{name} slot {slot} {sym:?}");
                }
                on_diagonal_seen += on_diagonal(bk) as u32;
            }
            assert!(on_diagonal_seen > 0, "{name}");
        }
    }

    #[test]
    fn units_skipped_off_the_diagonal_have_no_twins() {
        for name in ["KQvK", "KBNvK", "KRvKB", "KQRvK"] {
            let layout = Layout::new(&name.parse::<Material>().unwrap());
            let n_words = layout.n_slots / 64;
            let mut seen = Vec::new();
            // From an odd first word, in pieces that end inside units.
            let (a, b) = (n_words / 3 + 1, n_words / 3 + 78);
            for (first, n) in [(1u64, (a - 1) as usize), (a, (b - a) as usize), (b, (n_words - b) as usize)] {
                layout.for_each_twin(first, n, |at, twin| seen.push((first + at as u64, twin)));
            }
            let want: Vec<(u64, TwinWord)> =
                (1..n_words).filter_map(|w| layout.transposed_twin(w).map(|t| (w, t))).collect();
            assert!(!want.is_empty(), "{name}");
            assert_eq!(seen, want, "{name}");
        }
    }
}
