//! The checks of a batch of words: black's derived codes against the stored classes and
//! the reader's illegal positions, white's against the stored codes, and the transposed
//! images (black king on the long diagonal) against each other.

use super::derive::Run;
use crate::chess::{Color, Square, Symmetry};
use crate::index::illegal_word;
use crate::table::compact::{planes_at, SUMMARY_DISTANCES};
use crate::table::error::TableError;
use crate::table::values::{
    code_to_distance, describe_code, Class, CODE_CURSED, CODE_EDGE, CODE_EXACT_100, CODE_ILLEGAL,
};
use crate::table::verify::checks::count;
use crate::table::verify::SideReport;

/// What one batch of black's words found.
#[derive(Default)]
pub(super) struct BtmBatch {
    pub(super) rep: SideReport,
    pub(super) by_distance: Vec<u64>,
    /// The smallest slot of a longest loss in the batch.
    pub(super) longest: Option<(u8, u64)>,
}

/// Derives black's codes of the local words `words` of black-king code `bk_code` into `out`
/// and checks them against the stored classes (`stored`, the decoded class section) and
/// against where the reader finds illegal positions.
pub(super) fn check_btm_batch(
    ctx: &Run,
    bk_code: u8,
    words: std::ops::Range<usize>,
    stored: &[u8],
) -> Result<(BtmBatch, Vec<u8>), TableError> {
    let mut b = BtmBatch { by_distance: vec![0; SUMMARY_DISTANCES], ..Default::default() };
    let mut out = Vec::with_capacity(64 * words.len());
    for u in words {
        let (c, word) = ctx.config(bk_code, u);
        let (codes, mates, stalemates) = ctx.derive_btm(&c);
        let (_, reader_illegal) = illegal_word(ctx.layout, word as u64);
        let [lo, hi] = planes_at(stored, word);
        // The positions the summary counts: each position once, as `stats` counts them.
        let counted = if ctx.in_order(&c) { ctx.first_images(&c, word, true) } else { 0 };
        for (l, &want) in codes.iter().enumerate() {
            let illegal = reader_illegal >> l & 1 != 0;
            let got = Class::of_planes(lo, hi, l as u64);
            let expected = Class::of_code(Color::Black, want);
            if illegal != (want == CODE_ILLEGAL) || (!illegal && got != expected) {
                let s = if illegal { "illegal" } else { got.btm_name() };
                let w = if want == CODE_ILLEGAL { "illegal" } else { expected.btm_name() };
                let msg = format!(
                    "{}: black to move is stored as {s}, but its moves make it {w} (code {want})",
                    ctx.describe(&c, Color::Black, l, word)
                );
                return Err(TableError::Wrong(msg));
            }
            if want == CODE_ILLEGAL {
                b.rep.illegal += 1;
                continue;
            }
            count(Color::Black, want, &mut b.rep);
            if let Some(d) = code_to_distance(Color::Black, want).filter(|_| counted >> l & 1 != 0) {
                b.by_distance[d as usize] += 1;
                let slot = 64 * word as u64 + l as u64;
                if b.longest.is_none_or(|(ld, ls)| d > ld || (d == ld && slot < ls)) {
                    b.longest = Some((d, slot));
                }
            }
        }
        // Mates and stalemates are counted once per position pair, as derived slots.
        let derived = ctx.first_images(&c, word, false);
        b.rep.mates += (mates & derived).count_ones() as u64;
        b.rep.stalemates += (stalemates & derived).count_ones() as u64;
        out.extend_from_slice(&codes);
    }
    Ok((b, out))
}

/// Derives white's codes of the local words `words` of black-king code `bk_code` from
/// black's (`btm`, that black-king square's) and compares them with the stored ones; checks
/// that the transposed images (black king on the diagonal) hold the same values, both
/// sides. Returns white's counts and black's split between derived and by-symmetry slots.
pub(super) fn check_wtm_batch(
    ctx: &Run,
    bk_code: u8,
    words: std::ops::Range<usize>,
    btm: &[u8],
) -> Result<(SideReport, SideReport), TableError> {
    let (mut rep, mut btm_rep) = (SideReport::default(), SideReport::default());
    let wrong = |msg: String| Err(TableError::Wrong(msg));
    for u in words {
        let (c, word) = ctx.config(bk_code, u);
        let derived = ctx.derive_wtm(&c, u, btm);
        let stored = &ctx.wtm[64 * word..][..64];
        let image = ctx.transposed(&c, false);
        for (l, (&got, &want)) in stored.iter().zip(&derived).enumerate() {
            if want == CODE_ILLEGAL {
                if got != CODE_ILLEGAL {
                    let here = ctx.describe(&c, Color::White, l, word);
                    return wrong(format!(
                        "{here}: illegal position stored as {}, expected code 63",
                        describe_code(Color::White, got)
                    ));
                }
                rep.illegal += 1;
                continue;
            }
            let edge = want == CODE_EDGE && matches!(got, CODE_CURSED | CODE_EXACT_100);
            if got != want && !edge {
                let here = ctx.describe(&c, Color::White, l, word);
                let (g, w) = (describe_code(Color::White, got), describe_code(Color::White, want));
                return wrong(format!("{here}: stored {g}, expected {w}"));
            }
            count(Color::White, got, &mut rep);
        }
        // The transposed images, stored too when the black king is on the diagonal.
        for (stm, r) in [(Color::White, &mut rep), (Color::Black, &mut btm_rep)] {
            let (codes, own): (&[u8], usize) = match stm {
                Color::White => (ctx.wtm, word),
                Color::Black => (btm, u),
            };
            for l in (0..64).filter(|&l| codes[64 * own + l] != CODE_ILLEGAL) {
                let t = Symmetry::TRANSPOSE.apply(l as Square) as usize;
                match image {
                    Some((local, img_word)) if (img_word, t) < (word, l) => {
                        let img = if stm == Color::White { 64 * img_word + t } else { 64 * local + t };
                        if codes[img] != codes[64 * own + l] {
                            let here = ctx.describe(&c, stm, l, word);
                            let (v, i) = (describe_code(stm, codes[64 * own + l]), describe_code(stm, codes[img]));
                            let at = 64 * img_word + t;
                            return wrong(format!("{here}: value {v}, but its symmetric image at slot {at} holds {i}"));
                        }
                        r.by_symmetry += 1;
                    }
                    _ => r.derived += 1,
                }
            }
        }
    }
    Ok((rep, btm_rep))
}
