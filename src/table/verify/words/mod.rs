//! The pawnless verifier, a word at a time: the 64 positions of a storage word differ only
//! in the white king's square (the index's low six bits), so the verifier generates the
//! other men's moves once per word and applies each to the 64 white-king squares together,
//! as byte lanes. Where the white king stands decides, per lane, whether a move is blocked
//! (the king on the ray), legal (the mover's king not left attacked, the king blocking a
//! slider) and what its successor's value is (the successor word's lane, through the
//! symmetry that brings a moved black king back into the triangle).
//!
//! Owns: the word-at-a-time pawnless method. May not import the position-by-position method
//! (`verify::positions`), which the tests compare it with.
//!
//! The rules are those of the verifier's (`super`), restated per lane as an order: a
//! white-to-move value is the least rank among its moves' successors (a win in fewer plies
//! first, then the cursed results), a black-to-move value the greatest (an escape beats a
//! loss only without the rule, which beats the longest loss). Every slot is derived,
//! symmetric images included, and each image is also compared with its smaller slot.
//!
//! Memory: white's codes of the whole run (a byte per slot), and black's derived codes of one
//! black-king square at a time (a tenth), since white's moves never move the black king; the
//! sub-endgames' codes of the side a capture leads to.

mod check;
mod derive;
mod lanes;
mod load;

use super::{Checked, SideReport};
use crate::chess::{Color, Material};
use crate::index::Layout;
use crate::pipeline::{self, Order};
use crate::table::compact::{CompactTable, Summary, SUMMARY_DISTANCES};
use crate::table::error::TableError;
use check::{check_btm_batch, check_wtm_batch, BtmBatch};
use derive::Run;
use load::{capture_of, load_classes, load_codes, load_subs};
use std::path::Path;

/// Storage words a worker takes at a time.
const BATCH_WORDS: usize = 1 << 10;

/// Bytes of RAM [`verify_words`] takes for a pawnless run: a byte per position for white's
/// codes, a quarter for black's stored classes, a tenth for black's derived codes, and a byte
/// per position of the sub-endgames that captures lead to (KQRvKQR: 14.1 GiB).
pub(super) fn memory_needed(run: &Material) -> u64 {
    let layout = Layout::new(run);
    let n = layout.n_slots;
    let mut subs: Vec<(Material, Color)> = layout
        .pieces
        .iter()
        .map(|p| (capture_of(run, p.color, p.role), p.color))
        .filter(|(m, _)| !m.white_bare())
        .collect();
    subs.sort_by_key(|(m, c)| (m.clone(), c.index()));
    subs.dedup();
    n + n / 4 + n / 10 + subs.iter().map(|(m, _)| Layout::new(m).n_slots).sum::<u64>()
}

/// Checks every slot of a pawnless run, both sides to move, a word at a time; returns the
/// counts and black's distance summary (to compare with the stored one).
pub(super) fn verify_words(
    run: &Material,
    table: &CompactTable,
    tables_dir: &Path,
    threads: usize,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Checked, Summary), TableError> {
    let layout = Layout::new(run);
    let n = layout.n_slots;
    progress(0, 3 * n);
    let wtm = load_codes(table, &layout, Color::White, threads)?;
    let stored_btm = load_classes(table, Color::Black, threads)?;
    let loaded = load_subs(run, &layout, tables_dir, threads)?;
    let subs = layout
        .pieces
        .iter()
        .map(|p| loaded.iter().find(|(m, stm, _)| *m == capture_of(run, p.color, p.role) && *stm == p.color))
        .map(|s| s.map(|(_, _, sub)| sub))
        .collect();
    let ctx = Run::new(run, &layout, &wtm, subs);
    progress(n, 3 * n);
    let words = ctx.local_words();
    let (mut wtm_rep, mut btm_rep) = (SideReport::default(), SideReport::default());
    let mut by_distance = vec![0u64; SUMMARY_DISTANCES];
    let mut longest: Option<(u8, u64)> = None;
    let mut btm = vec![0u8; 64 * words];
    let batches = words.div_ceil(BATCH_WORDS);
    let range = |b: usize| b * BATCH_WORDS..words.min((b + 1) * BATCH_WORDS);
    // In word order: the error reported is the one of the smallest wrong word.
    let order = Order::Sequence { window: 8 * threads.max(1) };
    for bk_code in 0..10u8 {
        // Black's codes of this black-king square: derived, their classes checked.
        let check_btm = |b, _| check_btm_batch(&ctx, bk_code, range(b), &stored_btm);
        pipeline::run(batches, threads, order, Ok, check_btm, |b, (batch, codes): (BtmBatch, Vec<u8>)| {
            btm[64 * range(b).start..][..codes.len()].copy_from_slice(&codes);
            btm_rep.add(&batch.rep);
            for (a, x) in by_distance.iter_mut().zip(&batch.by_distance) {
                *a += x;
            }
            if let Some((d, s)) = batch.longest {
                if longest.is_none_or(|(ld, ls)| d > ld || (d == ld && s < ls)) {
                    longest = Some((d, s));
                }
            }
            Ok(())
        })?;
        // White's codes of this black-king square, derived from black's and compared.
        let check_wtm = |b, _| check_wtm_batch(&ctx, bk_code, range(b), &btm);
        pipeline::run(batches, threads, order, Ok, check_wtm, |_, (w, b): (SideReport, SideReport)| {
            wtm_rep.add(&w);
            btm_rep.derived += b.derived;
            btm_rep.by_symmetry += b.by_symmetry;
            Ok(())
        })?;
        progress(n + 2 * n * (bk_code as u64 + 1) / 10, 3 * n);
    }
    let mut sub_runs: Vec<Material> = loaded.into_iter().map(|(m, _, _)| m).collect();
    sub_runs.sort();
    sub_runs.dedup();
    let summary = Summary {
        by_distance: by_distance.try_into().expect("a count per distance"),
        longest_slot: longest.map(|(_, s)| s),
    };
    Ok((Checked { wtm: wtm_rep, btm: btm_rep, sub_runs }, summary))
}
