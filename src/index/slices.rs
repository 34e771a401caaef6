//! Pawn configurations: the slices of a run with pawns.
//!
//! Pawns are not index bits. Every canonical configuration of the pawns is a *slice*: the
//! positions of the other men with those pawns fixed. Only the left-right mirror remains as
//! a symmetry once pawns are on the board; a configuration is stored iff its file pattern
//! `σ(P)` (white's pawn files sorted, then black's) is at most that of its mirror image, so
//! white's pawns lead (black's when white has none), and both orientations are stored when
//! the pattern is symmetric. A push keeps the files, so it never changes the orientation.
//!
//! Slices are ordered for solving: by *level* descending (a pawn move raises the level by 1
//! or 2), then by key ascending. The key is a `u32`: the white pawn squares ascending, then
//! black's, 6 bits each, the first pawn in the top bits.

use crate::chess::{Color, Square};
use std::cmp::Ordering;

/// Most pawns of one run (6 men: two kings and four pawns).
pub const MAX_PAWNS: usize = 4;

/// The pawns of one configuration: white's squares ascending, then black's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pawns {
    pub n_white: usize,
    pub n: usize,
    pub sq: [Square; MAX_PAWNS],
}

impl Pawns {
    /// Pawns from squares (any order within a side).
    pub fn new(white: &[Square], black: &[Square]) -> Pawns {
        let mut sq = [0; MAX_PAWNS];
        sq[..white.len()].copy_from_slice(white);
        sq[white.len()..white.len() + black.len()].copy_from_slice(black);
        sq[..white.len()].sort_unstable();
        sq[white.len()..white.len() + black.len()].sort_unstable();
        Pawns { n_white: white.len(), n: white.len() + black.len(), sq }
    }

    /// The squares of one side's pawns, ascending.
    pub fn of(&self, color: Color) -> &[Square] {
        match color {
            Color::White => &self.sq[..self.n_white],
            Color::Black => &self.sq[self.n_white..self.n],
        }
    }

    /// All pawn squares as a bitboard.
    pub fn occupied(&self) -> u64 {
        self.sq[..self.n].iter().fold(0, |o, &s| o | 1 << s)
    }

    /// One side's pawn squares as a bitboard.
    #[inline]
    pub fn occupied_by(&self, color: Color) -> u64 {
        self.of(color).iter().fold(0, |b, &s| b | 1 << s)
    }

    /// The configuration's key (see the module documentation).
    pub fn key(&self) -> u32 {
        self.sq[..self.n].iter().fold(0u32, |k, &s| (k << 6) | s as u32)
    }

    /// The configuration of a key, given the run's pawn counts.
    pub fn from_key(key: u32, n_white: usize, n_black: usize) -> Pawns {
        let n = n_white + n_black;
        let mut sq = [0; MAX_PAWNS];
        for (i, s) in sq[..n].iter_mut().enumerate() {
            *s = ((key >> (6 * (n - 1 - i))) & 63) as Square;
        }
        Pawns { n_white, n, sq }
    }

    /// The level: white pawns' ranks above the second plus black pawns' ranks below the
    /// seventh. A push adds 1, a double step 2.
    pub fn level(&self) -> u8 {
        let white: u32 = self.of(Color::White).iter().map(|&s| (s / 8) as u32 - 1).sum();
        let black: u32 = self.of(Color::Black).iter().map(|&s| 6 - (s / 8) as u32).sum();
        (white + black) as u8
    }

    /// The pawns after the one on `from` moves to `to` (`None`: it leaves the board: taken,
    /// or promoted). Allocates nothing.
    pub fn moved(&self, from: Square, to: Option<Square>) -> Pawns {
        let (mut w, mut b) = ([0; MAX_PAWNS], [0; MAX_PAWNS]);
        let (mut nw, mut nb) = (0, 0);
        for (i, &s) in self.sq[..self.n].iter().enumerate() {
            let s = match (s == from, to) {
                (false, _) => s,
                (true, Some(t)) => t,
                (true, None) => continue,
            };
            if i < self.n_white {
                w[nw] = s;
                nw += 1;
            } else {
                b[nb] = s;
                nb += 1;
            }
        }
        Pawns::new(&w[..nw], &b[..nb])
    }

    /// The left-right mirror image. Allocates nothing.
    pub fn mirrored(&self) -> Pawns {
        let mut sq = self.sq;
        for s in &mut sq[..self.n] {
            *s ^= 7;
        }
        Pawns::new(&sq[..self.n_white], &sq[self.n_white..self.n])
    }

    /// The colour swap flipped top to bottom: black's pawns become white's. Allocates
    /// nothing.
    pub fn swapped(&self) -> Pawns {
        let mut w = [0; MAX_PAWNS];
        let mut b = [0; MAX_PAWNS];
        let (nw, nb) = (self.n - self.n_white, self.n_white);
        for (i, &s) in self.of(Color::Black).iter().enumerate() {
            w[i] = s ^ 56;
        }
        for (i, &s) in self.of(Color::White).iter().enumerate() {
            b[i] = s ^ 56;
        }
        Pawns::new(&w[..nw], &b[..nb])
    }

    /// No pawns (a pawnless position).
    pub fn none() -> Pawns {
        Pawns { n_white: 0, n: 0, sq: [0; MAX_PAWNS] }
    }

    /// The file pattern σ: each side's pawn files, sorted.
    fn files(&self) -> [u8; MAX_PAWNS] {
        let mut f = [0u8; MAX_PAWNS];
        for (i, &s) in self.sq[..self.n].iter().enumerate() {
            f[i] = s % 8;
        }
        f[..self.n_white].sort_unstable();
        f[self.n_white..self.n].sort_unstable();
        f
    }

    /// How this configuration's file pattern compares with its mirror's: `Less` or `Equal`
    /// means it is stored as it stands, `Greater` that its mirror image is stored instead.
    pub fn orientation(&self) -> Ordering {
        // The mirror's pattern without building the mirror (probes and captures into runs
        // with pawns ask this per position): a side's files `7 - f` sorted ascending are its
        // own sorted files, mirrored, in reverse.
        let files = self.files();
        let mirror = |i: usize| {
            let (lo, hi) = if i < self.n_white { (0, self.n_white) } else { (self.n_white, self.n) };
            7 - files[lo + hi - 1 - i]
        };
        files[..self.n].iter().copied().cmp((0..self.n).map(mirror))
    }
}

/// A contiguous run of slices of one level, in solve order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelSlices {
    pub level: u8,
    pub first: u32,
    pub count: u32,
}

/// The slices of a run with pawns.
#[derive(Clone, Debug)]
pub struct Slices {
    pub n_white: usize,
    pub n_black: usize,
    /// Keys in solve order (level descending, key ascending).
    pub keys: Vec<u32>,
    /// The levels in solve order.
    pub levels: Vec<LevelSlices>,
    /// (key, slice number), sorted by key, for lookups.
    by_key: Vec<(u32, u32)>,
}

impl Slices {
    /// Whether a pawn of level `level` can promote: some configuration of it has a white
    /// pawn on the seventh rank or a black one on the second. Only such levels read the
    /// sub-endgames that promotions lead to.
    pub fn level_promotes(&self, level: u8) -> bool {
        self.levels.iter().filter(|l| l.level == level).any(|l| {
            self.keys[l.first as usize..(l.first + l.count) as usize].iter().any(|&key| {
                let p = Pawns::from_key(key, self.n_white, self.n_black);
                p.of(Color::White).iter().any(|&s| s / 8 == 6) || p.of(Color::Black).iter().any(|&s| s / 8 == 1)
            })
        })
    }

    /// Every canonical configuration of `n_white` white and `n_black` black pawns on ranks
    /// 2 to 7.
    pub fn new(n_white: usize, n_black: usize) -> Slices {
        assert!(n_white + n_black <= MAX_PAWNS);
        let mut all: Vec<(u8, u32)> = Vec::new();
        let mut white = Vec::new();
        combinations(n_white, 8, 0, &mut white, &mut |w| {
            let mut black = Vec::new();
            combinations(n_black, 8, 0, &mut black, &mut |b| {
                if b.iter().any(|s| w.contains(s)) {
                    return;
                }
                let p = Pawns::new(w, b);
                if p.orientation() != Ordering::Greater {
                    all.push((p.level(), p.key()));
                }
            });
        });
        all.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut levels: Vec<LevelSlices> = Vec::new();
        for (i, &(level, _)) in all.iter().enumerate() {
            match levels.last_mut() {
                Some(l) if l.level == level => l.count += 1,
                _ => levels.push(LevelSlices { level, first: i as u32, count: 1 }),
            }
        }
        let keys: Vec<u32> = all.iter().map(|&(_, k)| k).collect();
        let mut by_key: Vec<(u32, u32)> = keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
        by_key.sort_unstable();
        Slices { n_white, n_black, keys, levels, by_key }
    }

    /// Number of slices.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none (never, for a run with pawns).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The pawns of slice `s`.
    pub fn pawns(&self, s: u32) -> Pawns {
        Pawns::from_key(self.keys[s as usize], self.n_white, self.n_black)
    }

    /// The slice holding a canonical configuration, if it is one.
    pub fn find(&self, pawns: &Pawns) -> Option<u32> {
        let key = pawns.key();
        self.by_key.binary_search_by_key(&key, |&(k, _)| k).ok().map(|i| self.by_key[i].1)
    }
}

/// Calls `f` with every strictly increasing sequence of `n` squares from `from` to 55 (ranks
/// 2 to 7).
fn combinations(n: usize, from: Square, depth: usize, acc: &mut Vec<Square>, f: &mut dyn FnMut(&[Square])) {
    if depth == n {
        f(acc);
        return;
    }
    for s in from..56 {
        acc.push(s);
        combinations(n, s + 1, depth + 1, acc, f);
        acc.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orientation_compares_with_the_mirror_image() {
        // Every configuration of up to four pawns of one side or both, on a few files.
        for (nw, nb) in [(1, 0), (0, 1), (1, 1), (2, 0), (2, 1), (1, 2), (2, 2), (3, 1)] {
            let squares: Vec<Square> = (8..56).filter(|s| s % 8 != 3 && s % 8 != 5).collect();
            let mut rng = crate::test_rng::Rng(0x2545F4914F6CDD1D);
            for _ in 0..2000 {
                let mut pick = |n: usize, taken: &mut Vec<Square>| -> Vec<Square> {
                    let mut out = Vec::new();
                    while out.len() < n {
                        let s = squares[rng.below(squares.len() as u64) as usize];
                        if !taken.contains(&s) {
                            taken.push(s);
                            out.push(s);
                        }
                    }
                    out
                };
                let mut taken = Vec::new();
                let (w, b) = (pick(nw, &mut taken), pick(nb, &mut taken));
                let p = Pawns::new(&w, &b);
                let direct = p.files()[..p.n].cmp(&p.mirrored().files()[..p.n]);
                assert_eq!(p.orientation(), direct, "{p:?}");
            }
        }
    }

    #[test]
    fn only_levels_with_a_pawn_one_step_from_promoting_promote() {
        let promoting = |w, b| {
            let s = Slices::new(w, b);
            s.levels.iter().filter(|l| s.level_promotes(l.level)).map(|l| l.level).collect::<Vec<_>>()
        };
        // One pawn: on the seventh rank (white, level 5) or the second (black, level 5).
        assert_eq!(promoting(1, 0), vec![5]);
        assert_eq!(promoting(0, 1), vec![5]);
        // Two white pawns: one on the seventh rank with the other on rank 2 to 6 or 7.
        assert_eq!(promoting(2, 0), vec![10, 9, 8, 7, 6, 5]);
        // A white and a black pawn: either one about to promote.
        assert_eq!(promoting(1, 1), vec![10, 9, 8, 7, 6, 5]);
    }

    #[test]
    fn slice_counts_match_the_design() {
        for ((w, b), n, levels) in
            [((1, 0), 24, 6), ((0, 1), 24, 6), ((1, 1), 1128, 11), ((2, 0), 636, 11), ((2, 2), 593_316, 21)]
        {
            let s = Slices::new(w, b);
            assert_eq!((s.len(), s.levels.len()), (n, levels), "{w} white, {b} black pawns");
            assert_eq!(s.levels.iter().map(|l| l.count as usize).sum::<usize>(), n);
        }
    }

    #[test]
    fn slices_are_in_solve_order_and_found_by_key() {
        let s = Slices::new(1, 1);
        for (i, &key) in s.keys.iter().enumerate() {
            let p = s.pawns(i as u32);
            assert_eq!(p.key(), key);
            assert_eq!(s.find(&p), Some(i as u32));
            assert_ne!(p.orientation(), Ordering::Greater);
            assert!(p.of(Color::White)[0] % 8 < 4, "white's pawn on a-d");
            if i > 0 {
                let q = s.pawns(i as u32 - 1);
                assert!(q.level() > p.level() || (q.level() == p.level() && q.key() < key));
            }
        }
        for l in &s.levels {
            for i in l.first..l.first + l.count {
                assert_eq!(s.pawns(i).level(), l.level);
            }
        }
    }

    #[test]
    fn pushes_keep_the_orientation_and_raise_the_level() {
        let s = Slices::new(2, 1);
        for i in 0..s.len() as u32 {
            let p = s.pawns(i);
            let (w, b) = (p.of(Color::White).to_vec(), p.of(Color::Black).to_vec());
            for k in 0..w.len() {
                let to = w[k] + 8;
                if to >= 56 || p.occupied() & (1 << to) != 0 {
                    continue;
                }
                let mut w2 = w.clone();
                w2[k] = to;
                let q = Pawns::new(&w2, &b);
                let j = s.find(&q).expect("a push target is stored as it stands");
                assert_eq!(q.level(), p.level() + 1);
                assert!(j < i, "pushes lead to slices solved before");
            }
        }
    }

    #[test]
    fn symmetric_patterns_are_stored_in_both_orientations() {
        let s = Slices::new(2, 0);
        let p = Pawns::new(&[8, 15], &[]); // a2, h2: its own mirror
        assert!(s.find(&p).is_some());
        let (q, mq) = (Pawns::new(&[9, 22], &[]), Pawns::new(&[14, 17], &[])); // b2 g3, g2 b3
        assert_eq!(q.orientation(), Ordering::Equal);
        assert!(s.find(&q).is_some() && s.find(&mq).is_some());
        let r = Pawns::new(&[12, 13], &[]); // e2 f2: stored as its mirror d2 c2
        assert_eq!(r.orientation(), Ordering::Greater);
        assert!(s.find(&r).is_none() && s.find(&r.mirrored()).is_some());
    }
}
