//! The position-by-position verifier ([`Method::Positions`](super::Method), and every run with
//! pawns): each slot decoded into its [`Men`], its value derived from its successors' (the
//! men's legal moves; conversions valued as [`super::conversions`] says), compared with the
//! stored one, and its symmetric images checked to hold the same value. It reads tables
//! through [`Values`]: expanded tables, or where they stand in compact tables
//! ([`super::sample`]).

use super::checks::{
    check_bit_and_count, check_derived, check_illegal, check_level_steps, check_slice_section, side_name, Values,
};
use super::expand::{fill_btm_codes, resolve_zeroing_wins};
use super::{Checked, SideReport, Sources};
use crate::chess::{Color, Material, Move, Symmetry};
use crate::index::Layout;
use crate::pipeline::{self, Order};
use crate::table::error::TableError;
use crate::table::keys::run_key;
use crate::table::men::Men;
use crate::table::uncompressed::TableFile;
use crate::table::values::{
    describe_code, lost_only_without_rule_after, BTM_MAX_CODE, CODE_CURSED, CODE_EDGE, CODE_ILLEGAL, CODE_NONE,
    WTM_MAX_CODE,
};
use std::cmp::Ordering;
use std::ops::Range;

/// Slots a worker takes at a time.
const BATCH: u64 = 1 << 12;

/// A successor run's table and layout, `None` when white is left with a bare king (no wins).
pub(super) type Sub<'a, V> = Option<(Layout, &'a V)>;

/// Everything the workers of one run read.
pub(super) struct Positions<'a, V: Values> {
    pub(super) material: &'a Material,
    pub(super) layout: Layout,
    pub(super) file: &'a V,
    /// With pawns, whether each slice's file pattern is its own mirror image (both
    /// orientations stored).
    symmetric_slices: Vec<bool>,
    /// The successor runs (captures, promotions) by run key.
    pub(super) subs: Vec<(usize, Sub<'a, V>)>,
    /// Whether the run's black-to-move codes are derived from white's where they are read
    /// (a compact table stores only their classes).
    derive_black: bool,
    /// Whether white's codes are resolved where they are read: a version 6 table read in
    /// place, whose distance section leaves the wins by a zeroing move out (don't-cares).
    resolve_white: bool,
}

impl<'a, V: Values> Positions<'a, V> {
    /// The checks of `run` over its own values `file` and its successor runs' `subs`; with
    /// `resolve_white`, white's stored codes are don't-cares where white wins by a zeroing
    /// move (version 6), resolved as they are read ([`Positions::own_code`]).
    pub(super) fn new(
        run: &'a Material,
        file: &'a V,
        subs: &[(Material, Option<&'a V>)],
        derive_black: bool,
        resolve_white: bool,
    ) -> Self {
        let layout = Layout::new(run);
        let key = |m: &Material| run_key(m).expect("a successor run has at most four men a side");
        let subs = subs.iter().map(|(m, t)| (key(m), t.map(|f| (Layout::new(m), f)))).collect();
        let symmetric_slices = match &layout.slices {
            Some(slices) => {
                (0..slices.len() as u32).map(|s| slices.pawns(s).orientation() == Ordering::Equal).collect()
            }
            None => Vec::new(),
        };
        Positions { material: run, layout, file, symmetric_slices, subs, derive_black, resolve_white }
    }

    /// The men of a slot of this run.
    #[inline]
    pub(super) fn men_of_slot(&self, slot: u64) -> Men {
        Men::of_slot(&self.layout, slot)
    }

    /// The run's own value code of a slot (black's derived with `derive_black`; white's
    /// resolved with `resolve_white`: 1 where a legal position of class 1, its bitbase bit
    /// set, wins by a zeroing move, whatever is stored there).
    pub(super) fn own_code(&self, stm: Color, slot: u64) -> u8 {
        if stm == Color::White {
            let code = self.file.value_code(stm, slot);
            if self.resolve_white && code != 1 && self.file.bit(stm, slot) {
                let men = self.men_of_slot(slot);
                if men.legal(stm) && self.wins_by_zeroing(&men) {
                    return 1;
                }
            }
            return code;
        }
        if !self.derive_black {
            return self.file.value_code(stm, slot);
        }
        let men = self.men_of_slot(slot);
        if !men.legal(Color::Black) {
            return CODE_ILLEGAL;
        }
        self.derive_btm(&men, slot, &mut SideReport::default()).0
    }

    /// The slot of a position of this run, in any orientation.
    #[inline]
    pub(super) fn own_slot(&self, men: &Men) -> u64 {
        let found =
            self.layout.canonical_slot(men.king(Color::Black), men.pieces(), men.king(Color::White), &men.pawns);
        found.expect("pawns of the run on ranks 2 to 7").0
    }

    /// The slot of the position after a quiet move from `slot` (with pawns, in its slice).
    #[inline]
    fn quiet_slot(&self, slot: u64, child: &Men) -> u64 {
        if !self.layout.has_pawns() {
            return self.own_slot(child);
        }
        let slice_mask = (1u64 << self.layout.total_bits) - 1;
        let (bk, wk) = (child.king(Color::Black), child.king(Color::White));
        (slot & !slice_mask) | self.layout.index(bk, child.pieces(), wk)
    }

    /// The symmetries under which a position of `slot` has another stored image: all eight
    /// without pawns, the left-right mirror in a slice whose file pattern is its own mirror.
    fn symmetries(&self, slot: u64) -> impl Iterator<Item = Symmetry> {
        let (all, mirror) = match self.layout.slices {
            None => (true, false),
            Some(_) => (false, self.symmetric_slices[(slot >> self.layout.total_bits) as usize]),
        };
        Symmetry::all().filter(move |&s| all || (mirror && s == Symmetry::MIRROR_FILES))
    }

    /// Checks that every stored symmetric image of a legal position holds its value; returns
    /// the smallest slot among the images (the one whose value is derived).
    fn smallest_image(
        &self,
        stm: Color,
        slot: u64,
        men: &Men,
        stored: u8,
        fen: &dyn Fn() -> String,
    ) -> Result<u64, TableError> {
        let mut representative = slot;
        for sym in self.symmetries(slot) {
            let other = self.own_slot(&men.image(sym));
            representative = representative.min(other);
            if other == slot {
                continue;
            }
            let code = self.own_code(stm, other);
            if code != stored {
                let what = if sym == Symmetry::MIRROR_FILES {
                    "mirror image".to_string()
                } else {
                    format!("symmetric image (under {sym:?})")
                };
                wrong!(
                    "{}: stored {}, but its {what} at slot {other}, {}, holds {}",
                    fen(),
                    describe_code(stm, stored),
                    self.men_of_slot(other).describe(stm),
                    describe_code(stm, code)
                );
            }
        }
        Ok(representative)
    }

    /// Whether white, to move in the legal position `men`, wins by a zeroing move: a
    /// conversion into a position lost for black with a fresh counter (in 1 ply: a version 6
    /// table's distance there is a don't-care).
    pub(super) fn wins_by_zeroing(&self, men: &Men) -> bool {
        men.for_each_move(Color::White, &mut |mv, child| {
            mv.is_zeroing() && self.conversion_won(&mv, child, Color::Black, false)
        })
    }

    /// The expected wtm code of a legal position in `slot`, and the move that decides it.
    fn derive_wtm(&self, men: &Men, slot: u64) -> (u8, Option<Move>) {
        let mut best = (CODE_NONE, None);
        let mut winning = None;
        let mut cursed = None;
        men.for_each_move(Color::White, &mut |mv, child| {
            if !mv.is_zeroing() {
                let c = self.own_code(Color::Black, self.quiet_slot(slot, child));
                // btm code c = distance 2(c-1), so the move wins in 2c-1 plies: wtm code c.
                if (1..=WTM_MAX_CODE).contains(&c) && (best.0 == CODE_NONE || c < best.0) {
                    best = (c, Some(mv));
                }
                // Into a loss of 100 plies or one only without the rule: a cursed win.
                // (Its step is 101 after a loss of 100 plies, later after a cursed one.)
                let code = if c == BTM_MAX_CODE { CODE_EDGE } else { CODE_CURSED };
                if (c == BTM_MAX_CODE || c == CODE_CURSED) && cursed.is_none_or(|(best, _)| code < best) {
                    cursed = Some((code, mv));
                }
                return false;
            }
            let wins = self.conversion_won(&mv, child, Color::Black, false);
            // Into a loss only without the rule: a cursed win.
            if !wins && cursed.is_none() && self.conversion_won(&mv, child, Color::Black, true) {
                cursed = Some((CODE_CURSED, mv));
            }
            if wins {
                winning = Some(mv);
            }
            wins
        });
        match (winning, cursed) {
            (Some(mv), _) => (1, Some(mv)),
            (None, Some((code, mv))) if best.0 == CODE_NONE => (code, Some(mv)),
            _ => best,
        }
    }

    /// The expected btm code of a legal position in `slot` and the move that decides it;
    /// counts a checkmate or a stalemate in `rep`.
    pub(super) fn derive_btm(&self, men: &Men, slot: u64, rep: &mut SideReport) -> (u8, Option<Move>) {
        let mut worst = (1u8, None);
        let mut moves = 0u32;
        let mut escape = None;
        let mut cursed = None;
        men.for_each_move(Color::Black, &mut |mv, child| {
            moves += 1;
            let loses = if !mv.is_zeroing() {
                let c = self.own_code(Color::White, self.quiet_slot(slot, child));
                let won = (1..=WTM_MAX_CODE).contains(&c);
                if won && (c > worst.0 || worst.1.is_none()) {
                    worst = (worst.0.max(c), Some(mv));
                }
                // A loss only without the rule: no escape, and the position's loss is so.
                let beyond = lost_only_without_rule_after(c);
                if beyond {
                    cursed = cursed.or(Some(mv));
                }
                won || beyond
            } else if self.conversion_won(&mv, child, Color::White, false) {
                true
            } else if self.conversion_won(&mv, child, Color::White, true) {
                // Into a win only without the rule: no escape, and the loss is so.
                cursed = cursed.or(Some(mv));
                true
            } else {
                false
            };
            if !loses {
                escape = Some(mv);
            }
            !loses
        });
        if escape.is_some() {
            return (CODE_NONE, escape);
        }
        if moves == 0 {
            return if men.in_check(Color::Black) {
                rep.mates += 1;
                (1, None)
            } else {
                rep.stalemates += 1;
                (CODE_NONE, None)
            };
        }
        if cursed.is_some() {
            return (CODE_CURSED, cursed);
        }
        // Every move wins for white within 2*worst - 1 plies: black loses in 2*worst, code worst + 1.
        (worst.0 + 1, worst.1)
    }

    /// Checks one slot; `Err` names the wrong position.
    pub(super) fn check_slot(&self, stm: Color, slot: u64, rep: &mut SideReport) -> Result<(), TableError> {
        let men = self.men_of_slot(slot);
        let stored = self.own_code(stm, slot);
        let stored_bit = self.file.bit(stm, slot);
        let here = || format!("{} {} slot {slot}", self.material, side_name(stm));
        if !men.legal(stm) {
            return check_illegal(stm, stored, stored_bit, || format!("{}: {}", here(), men.describe(stm)), rep);
        }
        let pos = || men.position(stm).expect("a legal position");
        let fen = || format!("{}: {}", here(), pos().fen());
        if self.smallest_image(stm, slot, &men, stored, &fen)? == slot {
            let (expected, via) = match stm {
                Color::White => self.derive_wtm(&men, slot),
                Color::Black => self.derive_btm(&men, slot, rep),
            };
            check_derived(stm, stored, (expected, via), &fen, &|mv| pos().play(mv).fen())?;
            rep.derived += 1;
        } else {
            rep.by_symmetry += 1;
        }
        check_bit_and_count(stm, stored, stored_bit, &fen, rep)
    }
}

/// Checks the slots `range` of one side with `threads` workers; returns the merged counts or
/// the error of the smallest wrong slot. Progress counts `done_before` plus the slots of
/// `range` checked so far, out of `total`.
fn verify_side<V: Values>(
    ctx: &Positions<V>,
    stm: Color,
    range: Range<u64>,
    threads: usize,
    done_before: u64,
    total: u64,
    progress: &mut impl FnMut(u64, u64),
) -> Result<SideReport, TableError> {
    let (first, n) = (range.start, range.end - range.start);
    let batches = n.div_ceil(BATCH) as usize;
    let mut merged = SideReport::default();
    pipeline::run(
        batches,
        threads,
        // In slot order: the first error written is the one of the smallest wrong slot.
        Order::Sequence { window: 4 * threads.max(1) },
        |b| Ok::<_, TableError>(b as u64 * BATCH),
        |_, start| {
            let mut rep = SideReport::default();
            for slot in first + start..first + (start + BATCH).min(n) {
                ctx.check_slot(stm, slot, &mut rep)?;
            }
            Ok(rep)
        },
        |b, rep| {
            merged.add(&rep);
            progress(done_before + ((b as u64 + 1) * BATCH).min(n), total);
            Ok(())
        },
    )?;
    Ok(merged)
}

/// Checks every slot of a run, both sides to move, level by level (a pawnless run is one
/// level): in a version 6 table white's wins by a zeroing move first get code 1 in the
/// expanded table (their stored distances are don't-cares), then black's distances are
/// derived into it (their classes checked against the stored ones). With pawns, the slice
/// section and each level's last step are checked too.
pub(super) fn verify_positions(
    run: &Material,
    sources: &Sources,
    threads: usize,
    progress: &mut impl FnMut(u64, u64),
) -> Result<Checked, TableError> {
    let layout = Layout::new(run);
    let records = match layout.has_pawns() {
        true => Some(check_slice_section(run, sources.table, &layout)?),
        false => None,
    };
    let subs: Vec<(Material, Option<&TableFile>)> = sources.subs.iter().map(|(m, t)| (m.clone(), *t)).collect();
    let ctx = Positions::new(run, &sources.own.file, &subs, false, false);
    let levels = layout.levels();
    let n = layout.n_slots;
    // Version 6: white's don't-cares resolved first, in a pass of their own.
    let resolving = sources.table.header.zeroing_dont_cares;
    let total = if resolving { 4 * n } else { 3 * n };
    progress(0, total);
    if resolving {
        let wins = |slot: u64| ctx.wins_by_zeroing(&ctx.men_of_slot(slot));
        resolve_zeroing_wins(&layout, sources.own, threads, &wins, &mut |d| progress(d, total))?;
    }
    let done_before = if resolving { n } else { 0 };
    let derive = |slot: u64| {
        let men = ctx.men_of_slot(slot);
        men.legal(Color::Black).then(|| ctx.derive_btm(&men, slot, &mut SideReport::default()).0)
    };
    let describe = |slot: u64| format!("{run} btm slot {slot}: {}", ctx.men_of_slot(slot).describe(Color::Black));
    let fill_progress = &mut |d| progress(done_before + d, total);
    fill_btm_codes(sources.table, sources.own, 0..n, threads, &derive, &describe, fill_progress)?;
    let mut done = done_before + n;
    let mut sides = [SideReport::default(), SideReport::default()];
    let mut longest = vec![None; levels.len()];
    for (stm, side) in [Color::White, Color::Black].into_iter().zip(&mut sides) {
        for (l, level_longest) in levels.iter().zip(&mut longest) {
            let range = l.first_slot..l.first_slot + l.n_slots;
            let rep = verify_side(&ctx, stm, range, threads, done, total, progress)?;
            done += l.n_slots;
            *level_longest = rep.longest.max(*level_longest);
            side.add(&rep);
        }
    }
    if let Some(records) = &records {
        check_level_steps(run, &levels, records, &longest)?;
    }
    let [wtm, btm] = sides;
    Ok(Checked {
        wtm,
        btm,
        sub_runs: sources.subs.iter().filter(|(_, t)| t.is_some()).map(|(m, _)| m.clone()).collect(),
    })
}
