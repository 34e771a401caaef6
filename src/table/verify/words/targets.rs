//! Where the conversions of a run with pawns lead: for each kind of capture and promotion,
//! the successor run's values and where its pieces come from among the mover's men; and the
//! slices of this run a pawn push reaches, whose classes are read where a push lands.

use super::load::{capture_of, Sub};
use crate::chess::{Color, Material, Role, Square, MAX_PIECES};
use crate::index::{Layout, Pawns, Slices};
use crate::table::men::{ahead, on_last_rank, on_start_rank};
use std::cmp::Ordering;

/// A successor run of a conversion: its values (`None`: white is left with a bare king, no
/// wins), and the successor's pieces in its layout's order: piece `k` is the mover's man
/// `order[k]` (its pieces in layout order, then at `MAX_PIECES` a promoted piece).
#[derive(Clone, Copy)]
pub(super) struct Target<'a> {
    pub(super) sub: Option<&'a Sub>,
    order: [u8; MAX_PIECES],
    n: usize,
}

impl Target<'_> {
    /// The successor's piece squares from the mover's men `ext` (pieces, then a promoted
    /// piece at `MAX_PIECES`).
    #[inline]
    pub(super) fn pieces(&self, ext: &[Square; MAX_PIECES + 1]) -> ([Square; MAX_PIECES], usize) {
        (std::array::from_fn(|k| if k < self.n { ext[self.order[k] as usize] } else { 0 }), self.n)
    }
}

/// Every conversion target of a run with pawns.
pub(super) struct Targets<'a> {
    /// The capture of piece `j` (layout order).
    pub(super) capture: Vec<Target<'a>>,
    /// The capture of a pawn of each colour (`None` where that colour has none).
    pub(super) pawn_taken: [Option<Target<'a>>; 2],
    /// A pawn of each colour promoting to `Role::PROMOTIONS[q]`.
    pub(super) promote: [Vec<Target<'a>>; 2],
    /// ... while capturing piece `j`: `[colour][q][j]` (only the other side's `j` occur).
    pub(super) promote_capture: [Vec<Vec<Target<'a>>>; 2],
}

impl<'a> Targets<'a> {
    /// The targets of `run` (layout `layout`) among the loaded successor values `loaded`.
    pub(super) fn new(run: &Material, layout: &Layout, loaded: &'a [(Material, Color, Sub)]) -> Targets<'a> {
        let ours: Vec<(Color, Role)> = layout.pieces.iter().map(|p| (p.color, p.role)).collect();
        let target = |m: Material, stm: Color, promoted: Option<(Color, Role)>, gone: Option<usize>| {
            if m.white_bare() {
                return Target { sub: None, order: [0; MAX_PIECES], n: 0 };
            }
            let sub = loaded
                .iter()
                .find(|(lm, ls, _)| *lm == m && *ls == stm)
                .map(|(_, _, sub)| sub)
                .expect("every conversion's successor is loaded");
            let mut used = [false; MAX_PIECES + 1];
            if let Some(j) = gone {
                used[j] = true;
            }
            let man = |i: usize| if i == MAX_PIECES { promoted } else { ours.get(i).copied() };
            let mut order = [0u8; MAX_PIECES];
            for (k, p) in sub.layout.pieces.iter().enumerate() {
                let i = (0..=MAX_PIECES)
                    .find(|&i| !used[i] && man(i) == Some((p.color, p.role)))
                    .expect("the successor's men are the mover's");
                used[i] = true;
                order[k] = i as u8;
            }
            Target { sub: Some(sub), order, n: sub.layout.pieces.len() }
        };
        let capture =
            ours.iter().enumerate().map(|(j, &(c, r))| target(capture_of(run, c, r), c, None, Some(j))).collect();
        let pawn_taken = [Color::White, Color::Black]
            .map(|c| (run.pawns(c) > 0).then(|| target(capture_of(run, c, Role::Pawn), c, None, None)));
        let promote = [Color::White, Color::Black].map(|c| {
            if run.pawns(c) == 0 {
                return Vec::new();
            }
            Role::PROMOTIONS.iter().map(|&q| target(run.promoted(c, q), c.other(), Some((c, q)), None)).collect()
        });
        let promote_capture = [Color::White, Color::Black].map(|c| {
            if run.pawns(c) == 0 {
                return Vec::new();
            }
            Role::PROMOTIONS
                .iter()
                .map(|&q| {
                    let promoted = run.promoted(c, q);
                    ours.iter()
                        .enumerate()
                        .map(|(j, &(jc, jr))| match jc == c {
                            // Never taken by a promotion: a placeholder.
                            true => Target { sub: None, order: [0; MAX_PIECES], n: 0 },
                            false => target(capture_of(&promoted, jc, jr), c.other(), Some((c, q)), Some(j)),
                        })
                        .collect()
                })
                .collect()
        });
        Targets { capture, pawn_taken, promote, promote_capture }
    }
}

/// The pawns in their stored orientation (mirrored when the mirror image is the one stored).
pub(super) fn stored_orientation(pawns: Pawns) -> Pawns {
    match pawns.orientation() {
        Ordering::Greater => pawns.mirrored(),
        _ => pawns,
    }
}

/// The slices a pawn push or double step from slice `s` reaches, each with the side to move
/// there (the pusher's opponent), once each.
pub(super) fn push_targets(slices: &Slices, s: u32) -> Vec<(u32, Color)> {
    let pawns = slices.pawns(s);
    let mut out = Vec::new();
    for color in [Color::White, Color::Black] {
        for &p in pawns.of(color) {
            let one = ahead(color, p);
            if on_last_rank(color, one) || pawns.occupied() & (1 << one) != 0 {
                continue;
            }
            let mut steps = vec![one];
            let two = ahead(color, one);
            if on_start_rank(color, p) && pawns.occupied() & (1 << two) != 0 {
                // Blocked by a pawn: no double step.
            } else if on_start_rank(color, p) {
                steps.push(two);
            }
            for t in steps {
                let slice = slices.find(&stored_orientation(pawns.moved(p, Some(t)))).expect("a stored slice");
                if !out.contains(&(slice, color.other())) {
                    out.push((slice, color.other()));
                }
            }
        }
    }
    out
}
