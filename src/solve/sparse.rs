//! Sparse steps: a step's candidates derived from the previous step's new positions alone.
//!
//! For `k >= 3` the new positions of step `k` are predecessors of those of step `k-1`:
//! white's `t(k) \ t(k-2)` is reached by a white quiet move into `new(k-1)` (everything
//! reached from `t(k-3)` is in `t(k-2)` already), and a btm position new at `k` has every
//! black move in `t(k-1)` and one of them in `new(k-1)` (otherwise it was in `t(k-2)`). When
//! `new(k-1)` is small, un-moving from it and evaluating only those words costs far less
//! than the dense kernels' sweep over every configuration; the words it leaves zero combine
//! into "nothing new", so the step's tables and streams come out bit for bit the same.

use super::frame::{Config, Frame, INVALID};
use super::kernels::{king_steps, KingStep};
use crate::chess::attacks::{attacks, king_attacks, king_dilate, BETWEEN};
use crate::chess::square::{on_diagonal, triangle_code};
use crate::chess::{Role, Square, Symmetry};

/// A word of positions: its chunk-local word index and its bits (white-king squares).
pub type Word = (usize, u64);

#[inline]
fn word(base: u64, contrib: u64) -> usize {
    ((base + contrib) >> 6) as usize
}

/// Calls `f(square, passed)` for every free square a man of `role` on `from` moves to (its
/// moves are their own reverses), with the squares it passes over on the way.
#[inline]
fn each_move(role: Role, from: Square, occ: u64, mut f: impl FnMut(Square, u64)) {
    let between = &BETWEEN[from as usize];
    let mut targets = attacks(role, from, occ) & !occ;
    while targets != 0 {
        let to = targets.trailing_zeros() as usize;
        targets &= targets - 1;
        f(to as Square, between[to]);
    }
}

/// White's step from the previous step's new btm positions (`new_prev`, any order): sets in
/// `out` every wtm position with a white quiet move into them, as the dense white kernel
/// would from a table holding only `new_prev`, and marks in `marked` (one bit per word of
/// `out`) every word it sets a bit of: the only words of `out` that are not zero.
pub fn white_reached_marked(frame: &Frame, new_prev: &[Word], out: &mut [u64], marked: &mut [u64]) {
    white_reached_each(frame, new_prev, |w, bits| {
        out[w] |= bits;
        marked[w / 64] |= ((bits != 0) as u64) << (w % 64);
    });
}

/// [`white_reached_marked`] as a list of words in increasing order (for a few positions, where a
/// chunk-sized buffer would cost more than the moves).
pub fn white_reached_words(frame: &Frame, new_prev: &[Word]) -> Vec<Word> {
    let mut list = Vec::new();
    white_reached_each(frame, new_prev, |w, bits| list.push((w, bits)));
    list.sort_unstable_by_key(|&(w, _)| w);
    let mut out: Vec<Word> = Vec::with_capacity(list.len());
    for (w, bits) in list {
        push_bits(&mut out, w, bits);
    }
    out.retain(|&(_, bits)| bits != 0);
    out
}

/// Appends `bits` of word `w` to a list of words in increasing order (`w` at least its last).
#[inline]
pub fn push_bits(list: &mut Vec<Word>, w: usize, bits: u64) {
    match list.last_mut() {
        Some((last, acc)) if *last == w => *acc |= bits,
        _ => list.push((w, bits)),
    }
}

/// Calls `f(word, bits)` for the wtm positions with a white quiet move into `new_prev`.
fn white_reached_each(frame: &Frame, new_prev: &[Word], mut f: impl FnMut(usize, u64)) {
    for &(w, bits) in new_prev {
        f(w, king_dilate(bits));
        let Some(cfg) = frame.config_at(w) else { continue };
        for k in 0..frame.n_white {
            let (contrib, at) = (&frame.piece[k], cfg.sq[k] as usize);
            let base = cfg.base - contrib[at];
            // The white king standing on a square the man passes over blocks it there only.
            each_move(frame.roles[k], cfg.sq[k], cfg.occ, |from, passed| {
                f(word(base, contrib[from as usize]), bits & !passed);
            });
        }
    }
}

/// The btm words where black has a quiet move into one of the previous step's new wtm
/// positions (`new_prev`), as a bitmap with one bit per chunk word: the only words where
/// black's step can find new positions. (Whole words: a superset is harmless, each is
/// evaluated.) A bitmap, not a list, so that its size does not grow with the positions.
pub fn black_candidates(frame: &Frame, new_prev: &[Word], words: usize) -> Vec<u64> {
    let mut out = vec![0u64; words.div_ceil(64)];
    let mut mark = |w: usize| out[w / 64] |= 1 << (w % 64);
    for &(w, _) in new_prev {
        let Some(cfg) = frame.config_at(w) else { continue };
        for k in frame.n_white..frame.n_pieces() {
            let (contrib, at) = (&frame.piece[k], cfg.sq[k] as usize);
            let base = cfg.base - contrib[at];
            each_move(frame.roles[k], cfg.sq[k], cfg.occ, |from, _| mark(word(base, contrib[from as usize])));
        }
        black_king_predecessors(frame, &cfg, &mut mark);
    }
    out
}

/// The words marked in a bitmap of [`black_candidates`], in increasing order.
pub fn marked(bitmap: &[u64]) -> impl Iterator<Item = usize> + '_ {
    bitmap.iter().enumerate().flat_map(|(i, &bits)| {
        let mut bits = bits;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let w = i * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                w
            })
        })
    })
}

/// The words of `range` that `bitmap` marks, in increasing order.
pub fn marked_within(bitmap: &[u64], range: std::ops::Range<usize>) -> impl Iterator<Item = usize> + '_ {
    let (first, end) = (range.start / 64, range.end.div_ceil(64).min(bitmap.len()));
    marked(&bitmap[first.min(end)..end]).map(move |w| w + 64 * first).filter(move |w| range.contains(w))
}

/// The words of the positions whose black king stepped into `cfg`'s square.
fn black_king_predecessors(frame: &Frame, cfg: &Config, mark: &mut impl FnMut(usize)) {
    let mut from_squares = king_attacks(cfg.bk) & !cfg.occ;
    let base = cfg.base - frame.bk[cfg.bk_code as usize];
    while from_squares != 0 {
        let from = from_squares.trailing_zeros() as Square;
        from_squares &= from_squares - 1;
        if frame.bk.len() == 64 {
            // With pawns the king is an ordinary man.
            if frame.bk[from as usize] != INVALID {
                mark(word(base, frame.bk[from as usize]));
            }
            continue;
        }
        // Without pawns the position is stored with the king mapped into the triangle, and
        // with the king on the diagonal in both of its images.
        let sym = Symmetry::to_triangle(from);
        let code = triangle_code(sym.apply(from)).expect("mapped into the triangle");
        let twice = on_diagonal(sym.apply(from));
        for transposed in [false, true].into_iter().take(if twice { 2 } else { 1 }) {
            let image = |sq: Square| {
                let s = sym.apply(sq);
                if transposed {
                    Symmetry::TRANSPOSE.apply(s)
                } else {
                    s
                }
            };
            let mut at = frame.bk[code as usize];
            let mut valid = at != INVALID;
            for k in 0..frame.n_pieces() {
                let c = frame.piece[k][image(cfg.sq[k]) as usize];
                valid &= c != INVALID;
                at = at.wrapping_add(c);
            }
            if valid {
                mark((at >> 6) as usize);
            }
        }
    }
}

/// Black's step at the candidate words: `out[w]` becomes the AND over black's quiet moves
/// of `input` (`t(k-1)`), exactly what the dense black kernel leaves there.
pub fn black_reached(frame: &Frame, input: &[u64], candidates: &[u64], out: &mut [u64]) {
    black_eval(frame, candidates, |w| input[w], |w, acc| out[w] = acc);
}

/// [`black_reached`] as a list: each candidate word (in increasing order) with the AND over
/// black's quiet moves of `input` there, for callers that hold no chunk-sized output.
pub fn black_reached_words(frame: &Frame, input: &[u64], candidates: &[u64]) -> Vec<Word> {
    let mut out = Vec::new();
    black_eval(frame, candidates, |w| input[w], |w, acc| out.push((w, acc)));
    out
}

/// The words of `t(k-1)` that [`black_reached`] may read at these candidates, as a bitmap
/// with one bit per chunk word: a sparse step reads only the blocks that hold them.
pub fn black_reads(frame: &Frame, candidates: &[u64], words: usize) -> Vec<u64> {
    let mut need = vec![0u64; words.div_ceil(64)];
    // Every move is followed: an input of all ones never ends a word's evaluation early.
    black_eval(
        frame,
        candidates,
        |w| {
            need[w / 64] |= 1 << (w % 64);
            !0
        },
        |_, _| {},
    );
    need
}

/// Whether a bitmap of words marks any of the words `first..first + n`.
pub fn any_marked(bitmap: &[u64], first: usize, n: usize) -> bool {
    let end = first + n;
    let mut w = first;
    while w < end {
        let (i, bit) = (w / 64, w % 64);
        let span = (64 - bit).min(end - w);
        let mask = if span == 64 { !0 } else { ((1u64 << span) - 1) << bit };
        if bitmap[i] & mask != 0 {
            return true;
        }
        w += span;
    }
    false
}

/// Evaluates black's moves at each candidate word: `input(w)` gives a word of `t(k-1)`,
/// `out(w, acc)` receives the AND over the moves.
fn black_eval(frame: &Frame, candidates: &[u64], mut input: impl FnMut(usize) -> u64, mut out: impl FnMut(usize, u64)) {
    let (steps, _) = king_steps();
    for w in marked(candidates) {
        let Some(cfg) = frame.config_at(w) else { continue };
        // The king first, then man by man, until every white-king square has an escape.
        let mut acc = black_king_and(frame, steps, &cfg, &mut input);
        for k in frame.n_white..frame.n_pieces() {
            if acc == 0 {
                break;
            }
            let (contrib, at) = (&frame.piece[k], cfg.sq[k] as usize);
            let base = cfg.base - contrib[at];
            // A white king on a square passed over would be in check: that bit is illegal.
            each_move(frame.roles[k], cfg.sq[k], cfg.occ, |to, _| acc &= input(word(base, contrib[to as usize])));
        }
        out(w, acc);
    }
}

/// The AND over the black king's quiet moves of `input` at a configuration.
#[inline]
fn black_king_and(
    frame: &Frame,
    steps: &[Vec<KingStep>; 10],
    cfg: &Config,
    input: &mut impl FnMut(usize) -> u64,
) -> u64 {
    let mut acc = !0u64;
    let here = frame.bk[cfg.bk_code as usize];
    if frame.bk.len() == 64 {
        let mut targets = king_attacks(cfg.bk) & !cfg.occ;
        while targets != 0 {
            let to = targets.trailing_zeros() as usize;
            targets &= targets - 1;
            if frame.bk[to] != INVALID {
                acc &= input(word(cfg.base - here, frame.bk[to]));
            }
        }
        return acc;
    }
    for step in &steps[cfg.bk_code as usize] {
        if cfg.occ & (1 << step.to) != 0 {
            continue;
        }
        let base: u64 = (0..frame.n_pieces()).map(|k| frame.piece[k][step.sym.apply(cfg.sq[k]) as usize]).sum();
        acc &= step.back.apply_bb(input(word(base, frame.bk[step.to_code as usize])));
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::super::kernels::{black_moves, illegal_white_kings, white_moves};
    use super::*;
    use crate::chess::{Color, Material};
    use crate::index::{ChunkKey, ChunkScheme, Layout};
    use crate::test_rng::Rng;

    #[test]
    fn marked_within_lists_the_marked_words_of_its_range_only() {
        let bitmap = [1u64 << 63 | 1, 1 << 5, 1 | 1 << 9];
        let within = |r: std::ops::Range<usize>| marked_within(&bitmap, r).collect::<Vec<_>>();
        assert_eq!(within(0..192), [0, 63, 69, 128, 137]);
        assert_eq!(within(1..69), [63]);
        assert_eq!(within(63..138), [63, 69, 128, 137]);
        assert_eq!(within(70..128), Vec::<usize>::new());
        assert_eq!(within(130..400), [137]);
    }

    #[test]
    fn any_marked_sees_a_bit_only_inside_its_range() {
        let bitmap = [1u64 << 63, 0, 1];
        assert!(any_marked(&bitmap, 63, 1) && any_marked(&bitmap, 0, 64) && any_marked(&bitmap, 60, 80));
        assert!(!any_marked(&bitmap, 0, 63) && !any_marked(&bitmap, 64, 64) && any_marked(&bitmap, 64, 65));
        assert!(!any_marked(&bitmap, 129, 60));
    }

    /// Chunks of `sig` for `mover`'s passes (a few keys of each slice, with pawns).
    fn frames(sig: &str, mover: Color) -> Vec<(Frame, usize)> {
        let layout = Layout::new(&Material::parse(sig).unwrap());
        let scheme = ChunkScheme::new(&layout, mover, 9);
        let slices: Vec<Option<u32>> = match &layout.slices {
            Some(s) => (0..s.len() as u32).step_by(7).map(Some).collect(),
            None => vec![None],
        };
        let mut out = Vec::new();
        for slice in slices {
            for key in scheme.keys().step_by(3).take(4) {
                out.push((Frame::new(&layout, &scheme, ChunkKey(key.0), slice), scheme.local_words()));
            }
        }
        out
    }

    /// `count` random positions as sorted words, and the same as a dense table.
    fn sparse_set(rng: &mut Rng, words: usize, count: usize) -> (Vec<Word>, Vec<u64>) {
        let mut dense = vec![0u64; words];
        for _ in 0..count {
            let p = rng.next() as usize % (words * 64);
            dense[p / 64] |= 1 << (p % 64);
        }
        let list = dense.iter().enumerate().filter(|(_, &b)| b != 0).map(|(w, &b)| (w, b)).collect();
        (list, dense)
    }

    #[test]
    fn white_sparse_step_equals_the_dense_kernel_on_the_new_positions() {
        let mut rng = Rng(7);
        for sig in ["KQvKR", "KRNvK", "KBvKN", "KRPvKR"] {
            for (frame, words) in frames(sig, Color::White) {
                let (list, dense_in) = sparse_set(&mut rng, words, 300);
                let mut dense = vec![0u64; words];
                white_moves(&frame, &dense_in, &mut dense);
                let (mut sparse, mut reached) = (vec![0u64; words], vec![0u64; words.div_ceil(64)]);
                white_reached_marked(&frame, &list, &mut sparse, &mut reached);
                assert!(dense == sparse, "{sig}");
                // The marked words are exactly the nonzero ones.
                assert!(marked(&reached).eq((0..words).filter(|&w| sparse[w] != 0)), "{sig}");
            }
        }
    }

    #[test]
    fn black_sparse_step_finds_every_changed_word_and_its_exact_value() {
        let mut rng = Rng(11);
        for sig in ["KQvKR", "KRvKNN", "KQvKB", "KRPvKR", "KRvKP"] {
            for (frame, words) in frames(sig, Color::Black) {
                // t(k-1): dense random, with a sparse part new at k-1.
                let older: Vec<u64> = (0..words).map(|_| rng.next() | rng.next() | rng.next()).collect();
                let (list, new) = sparse_set(&mut rng, words, 300);
                let table: Vec<u64> = older.iter().zip(&new).map(|(&o, &n)| o | n).collect();
                let (mut before, mut after) = (vec![!0u64; words], vec![!0u64; words]);
                black_moves(&frame, &older, &mut before);
                black_moves(&frame, &table, &mut after);
                let candidates = black_candidates(&frame, &list, words);
                let mut sparse = vec![0u64; words];
                black_reached(&frame, &table, &candidates, &mut sparse);
                // The dense kernel may leave anything where the white king stands on a man or
                // next to the black king (illegal positions, masked by every reader).
                let legal = |w: usize| frame.config_at(w).map_or(0, |c| !illegal_white_kings(c.occ, c.bk));
                for w in 0..words {
                    if (after[w] ^ before[w]) & legal(w) != 0 {
                        assert!(candidates[w / 64] & (1 << (w % 64)) != 0, "{sig}: word {w} changed, not a candidate");
                    }
                }
                for w in marked(&candidates) {
                    assert_eq!(sparse[w] & legal(w), after[w] & legal(w), "{sig}: word {w}");
                }
                // Only the words black_reads marks are needed: the others zeroed, same result.
                let need = black_reads(&frame, &candidates, words);
                let only: Vec<u64> =
                    table.iter().enumerate().map(|(w, &t)| if any_marked(&need, w, 1) { t } else { 0 }).collect();
                let mut from_needed = vec![0u64; words];
                black_reached(&frame, &only, &candidates, &mut from_needed);
                assert!(from_needed == sparse, "{sig}: a word black_reads left out was read");
            }
        }
    }
}
