//! The checks of a batch of words: black's derived codes against the stored classes and
//! the reader's illegal positions, white's against the stored codes, and the transposed
//! images (black king on the long diagonal) against each other; each side's distances
//! counted for the summary. White's stored codes are first resolved where a version 6 table
//! leaves them don't-cares ([`resolve_zeroing_wins`]).

use super::derive::{Config, Run};
use super::lanes::{lanes, lanes_where, Lanes};
use super::window::{Chunking, Window};
use crate::chess::{Color, Square, Symmetry};
use crate::index::{illegal_word, Block, ChunkKey};
use crate::table::compact::{planes_at, Summary, SUMMARY_DISTANCES};
use crate::table::error::TableError;
use crate::table::values::{
    code_to_distance, describe_code, is_beyond_rule, Class, CODE_CURSED, CODE_EDGE, CODE_EXACT_100, CODE_ILLEGAL,
    CODE_NONE,
};
use crate::table::verify::SideReport;
use std::sync::atomic::{AtomicBool, Ordering};

/// A side to move's distances of some words, as the summary section holds them: the
/// positions counted by distance, and the smallest slot of a longest one.
pub(super) struct Distances {
    by_distance: Vec<u64>,
    longest: Option<(u8, u64)>,
}

impl Distances {
    pub(super) fn new() -> Distances {
        Distances { by_distance: vec![0; SUMMARY_DISTANCES], longest: None }
    }

    /// Counts the lanes `counted` of storage word `word` (codes `codes` of `stm`) that have
    /// a distance.
    #[inline(always)]
    fn count(&mut self, stm: Color, codes: &Lanes, counted: u64, word: usize) {
        for l in lanes(counted) {
            let Some(d) = code_to_distance(stm, codes[l]) else { continue };
            self.by_distance[d as usize] += 1;
            let slot = 64 * word as u64 + l as u64;
            if self.longest.is_none_or(|(ld, ls)| d > ld || (d == ld && slot < ls)) {
                self.longest = Some((d, slot));
            }
        }
    }

    /// Adds the distances of other words.
    pub(super) fn add(&mut self, o: &Distances) {
        for (a, x) in self.by_distance.iter_mut().zip(&o.by_distance) {
            *a += x;
        }
        if let Some((d, s)) = o.longest {
            if self.longest.is_none_or(|(ld, ls)| d > ld || (d == ld && s < ls)) {
                self.longest = Some((d, s));
            }
        }
    }

    /// The summary of every word added.
    pub(super) fn summary(&self) -> Summary {
        Summary {
            by_distance: self.by_distance.clone().try_into().expect("a count per distance"),
            longest_slot: self.longest.map(|(_, s)| s),
        }
    }
}

/// What one batch of black's words found.
pub(super) struct BtmBatch {
    pub(super) rep: SideReport,
    pub(super) distances: Distances,
}

/// What one batch of white's words found: white's counts and distances, and black's split
/// between derived and by-symmetry slots.
pub(super) struct WtmBatch {
    pub(super) rep: SideReport,
    pub(super) btm_rep: SideReport,
    pub(super) distances: Distances,
}

/// Version 6 (a table whose distance section leaves the wins by a zeroing move out): sets
/// code 1 in `codes`, white's stored codes of `block` of chunk `key` of `chunking`, at every
/// legal position of class 1 (`wins`, a mask per word) whose side to move wins by a zeroing
/// move ([`Run::zeroing_wins`]): it wins in 1 ply whatever its stored byte holds, which is
/// what black's quiet moves into it, the comparison with the derived codes and the summary
/// read.
pub(super) fn resolve_zeroing_wins(
    ctx: &Run,
    chunking: &Chunking,
    key: ChunkKey,
    block: &Block,
    wins: &[u64],
    codes: &mut [[u8; 64]],
) {
    for (i, (word_codes, &won)) in codes.iter_mut().zip(wins).enumerate() {
        let pending = won & !lanes_where(word_codes, |c| c == 1);
        if pending == 0 {
            continue;
        }
        let word = block.slot_word + i;
        let c = ctx.config(chunking.scheme.global_index(key, ((block.local_word + i) as u64) << 6), word);
        for l in lanes(ctx.zeroing_wins(&c, pending)) {
            word_codes[l] = 1;
        }
    }
}

/// Derives black's codes of one stored block of a black chunk (`key`) from white's codes of
/// the chunk (`wtm`), and checks them against the stored classes (`stored`, the block's
/// decoded class planes) and against where the reader finds illegal positions. Returns the
/// counts and the block's derived codes.
pub(super) fn check_btm_block(
    ctx: &Run,
    key: ChunkKey,
    block: &Block,
    wtm: &Window,
    stored: &[u8],
) -> Result<(BtmBatch, Vec<u8>), TableError> {
    #[cfg(target_arch = "x86_64")]
    if wide_lanes() {
        // SAFETY: the processor has the features `check_btm_block_wide` is compiled for.
        return unsafe { check_btm_block_wide(ctx, key, block, wtm, stored) };
    }
    check_btm_block_body(ctx, key, block, wtm, stored)
}

/// [`check_btm_block`] compiled for AVX2 (a word's 64 byte lanes in two registers).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
fn check_btm_block_wide(
    ctx: &Run,
    key: ChunkKey,
    block: &Block,
    wtm: &Window,
    stored: &[u8],
) -> Result<(BtmBatch, Vec<u8>), TableError> {
    check_btm_block_body(ctx, key, block, wtm, stored)
}

/// Set: the checks compiled for the baseline processor run even where AVX2 is present (the
/// tests compare the two builds of the checks).
static BASELINE_ONLY: AtomicBool = AtomicBool::new(false);

/// Makes the word verifier run its checks as compiled for the baseline processor (`true`) or
/// for the widest lanes the processor has (`false`, the default); both give the same results.
#[doc(hidden)]
pub fn force_baseline_lanes(on: bool) {
    BASELINE_ONLY.store(on, Ordering::Relaxed);
}

/// Whether the processor runs the checks compiled for AVX2 (the standard library detects
/// the features once and keeps them): the folds of byte lanes take about a quarter less time
/// than with the baseline's SSE2 (`verify KQRvKR`).
#[cfg(target_arch = "x86_64")]
fn wide_lanes() -> bool {
    use std::arch::is_x86_feature_detected as has;
    !BASELINE_ONLY.load(Ordering::Relaxed)
        && has!("avx2")
        && has!("bmi1")
        && has!("bmi2")
        && has!("lzcnt")
        && has!("popcnt")
}

#[inline(always)]
fn check_btm_block_body(
    ctx: &Run,
    key: ChunkKey,
    block: &Block,
    wtm: &Window,
    stored: &[u8],
) -> Result<(BtmBatch, Vec<u8>), TableError> {
    let mut b = BtmBatch { rep: SideReport::default(), distances: Distances::new() };
    let mut out = Vec::with_capacity(64 * block.words);
    for i in 0..block.words {
        let (word, index) =
            (block.slot_word + i, wtm.chunking.scheme.global_index(key, ((block.local_word + i) as u64) << 6));
        let c = ctx.config(index, word);
        let (codes, mates, stalemates) = ctx.derive_btm(&c, wtm);
        let reader_illegal = illegal_word(ctx.layout, word as u64, Color::Black);
        let [lo, hi] = planes_at(stored, i);
        // The classes the derived codes give are the stored planes: lo the wins, hi the cursed.
        let Classes { illegal, won, cursed } = count_word(Color::Black, &codes, &mut b.rep);
        if illegal != reader_illegal || ((lo ^ won) | (hi ^ cursed)) & !illegal != 0 {
            return Err(wrong_btm_class(ctx, &c, word, &codes, reader_illegal, lo, hi));
        }
        // The positions the summary counts: each position once, as `stats` counts them.
        b.distances.count(Color::Black, &codes, won & counted_lanes(ctx, &c, word), word);
        // Mates and stalemates are counted once per position pair, as derived slots.
        let derived = ctx.first_images(&c, word, false);
        b.rep.mates += (mates & derived).count_ones() as u64;
        b.rep.stalemates += (stalemates & derived).count_ones() as u64;
        out.extend_from_slice(&codes);
    }
    Ok((b, out))
}

/// The lanes of storage word `word` (men `c`) that the summary counts: each position once,
/// as `stats` counts it.
#[inline(always)]
fn counted_lanes(ctx: &Run, c: &Config, word: usize) -> u64 {
    if ctx.in_order(c) {
        ctx.first_images(c, word, true)
    } else {
        0
    }
}

/// A word's lanes by class: illegal, won under the 50-move rule, won only without it (the
/// rest: not won).
struct Classes {
    illegal: u64,
    won: u64,
    cursed: u64,
}

/// Counts a word's codes of side to move `stm` by class into `rep`, with the longest
/// distance of its wins; returns the lanes of each class.
#[inline(always)]
fn count_word(stm: Color, codes: &Lanes, rep: &mut SideReport) -> Classes {
    let illegal = lanes_where(codes, |c| c == CODE_ILLEGAL);
    let not_won = lanes_where(codes, |c| c == CODE_NONE);
    let cursed = lanes_where(codes, |c| is_beyond_rule(stm, c));
    let won = !(illegal | not_won | cursed);
    rep.illegal += illegal.count_ones() as u64;
    rep.not_won += not_won.count_ones() as u64;
    rep.cursed += cursed.count_ones() as u64;
    rep.won += won.count_ones() as u64;
    rep.longest = rep.longest.max(lanes(won).filter_map(|l| code_to_distance(stm, codes[l])).max());
    Classes { illegal, won, cursed }
}

/// The error of a word whose stored black classes or illegal positions differ from the
/// derived ones: its first differing lane, named.
#[cold]
fn wrong_btm_class(
    ctx: &Run,
    c: &Config,
    word: usize,
    codes: &Lanes,
    reader_illegal: u64,
    lo: u64,
    hi: u64,
) -> TableError {
    for (l, &want) in codes.iter().enumerate() {
        let illegal = reader_illegal >> l & 1 != 0;
        let got = Class::of_planes(lo, hi, l as u64);
        let expected = Class::of_code(Color::Black, want);
        if illegal != (want == CODE_ILLEGAL) || (!illegal && got != expected) {
            let s = if illegal { "illegal" } else { got.btm_name() };
            let w = if want == CODE_ILLEGAL { "illegal" } else { expected.btm_name() };
            return TableError::Wrong(format!(
                "{}: black to move is stored as {s}, but its moves make it {w} (code {want})",
                ctx.describe(c, Color::Black, l, word)
            ));
        }
    }
    unreachable!("a differing lane")
}

/// Derives white's codes of one stored block of a white chunk (`key`) from black's derived
/// codes of the chunk (`btm`) and compares them with the stored ones (`wtm`, the chunk's,
/// resolved by [`resolve_zeroing_wins`]); checks that the transposed images (black king on
/// the diagonal) hold the same values, both sides. Returns white's counts and distances and
/// black's split between derived and by-symmetry slots.
pub(super) fn check_wtm_block(
    ctx: &Run,
    key: ChunkKey,
    block: &Block,
    btm: &Window,
    wtm: &Window,
) -> Result<WtmBatch, TableError> {
    #[cfg(target_arch = "x86_64")]
    if wide_lanes() {
        // SAFETY: the processor has the features `check_wtm_block_wide` is compiled for.
        return unsafe { check_wtm_block_wide(ctx, key, block, btm, wtm) };
    }
    check_wtm_block_body(ctx, key, block, btm, wtm)
}

/// [`check_wtm_block`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
fn check_wtm_block_wide(
    ctx: &Run,
    key: ChunkKey,
    block: &Block,
    btm: &Window,
    wtm: &Window,
) -> Result<WtmBatch, TableError> {
    check_wtm_block_body(ctx, key, block, btm, wtm)
}

#[inline(always)]
fn check_wtm_block_body(
    ctx: &Run,
    key: ChunkKey,
    block: &Block,
    btm: &Window,
    wtm: &Window,
) -> Result<WtmBatch, TableError> {
    let (mut rep, mut btm_rep) = (SideReport::default(), SideReport::default());
    let mut distances = Distances::new();
    let wrong = |msg: String| Err(TableError::Wrong(msg));
    for i in 0..block.words {
        let (word, u) = (block.slot_word + i, block.local_word + i);
        let c = ctx.config(wtm.chunking.scheme.global_index(key, (u as u64) << 6), word);
        let derived = ctx.derive_wtm(&c, u, btm);
        let stored = wtm.at(u);
        if stored != &derived {
            if let Some(e) = wrong_wtm(ctx, &c, word, stored, &derived) {
                return Err(e);
            }
        }
        // Counted as stored (an edge class where the derivation says which).
        let Classes { won, .. } = count_word(Color::White, stored, &mut rep);
        distances.count(Color::White, stored, won & counted_lanes(ctx, &c, word), word);
        let image = ctx
            .transposed(&c, false)
            .map(|(img, img_word)| (wtm.chunking.word(c.bk_code, &img[..ctx.n_pieces()]), img_word));
        // The transposed images, stored too when the black king is on the diagonal.
        for (stm, window, r) in [(Color::White, wtm, &mut rep), (Color::Black, btm, &mut btm_rep)] {
            let own = window.at(u);
            let legal = !lanes_where(own, |c| c == CODE_ILLEGAL);
            let Some((local, img_word)) = image else {
                // With pawns the mirror images of a symmetric slice are derived as every slot
                // is; counted apart, as the position-by-position check counts them.
                let first = ctx.first_images(&c, word, false);
                r.derived += (legal & first).count_ones() as u64;
                r.by_symmetry += (legal & !first).count_ones() as u64;
                continue;
            };
            for l in lanes(legal) {
                let t = Symmetry::TRANSPOSE.apply(l as Square) as usize;
                if (img_word, t) >= (word, l) {
                    r.derived += 1;
                    continue;
                }
                let img = window.at(local)[t];
                if img != own[l] {
                    let here = ctx.describe(&c, stm, l, word);
                    let (v, i) = (describe_code(stm, own[l]), describe_code(stm, img));
                    let at = 64 * img_word + t;
                    return wrong(format!("{here}: value {v}, but its symmetric image at slot {at} holds {i}"));
                }
                r.by_symmetry += 1;
            }
        }
    }
    Ok(WtmBatch { rep, btm_rep, distances })
}

/// The error of a word whose stored white codes differ from the derived ones, at its first
/// differing lane (`None` if they differ only where a converted table's edge class stands for
/// a cursed win or a win in exactly 100 plies, which the check accepts).
#[cold]
fn wrong_wtm(ctx: &Run, c: &Config, word: usize, stored: &Lanes, derived: &Lanes) -> Option<TableError> {
    for (l, (&got, &want)) in stored.iter().zip(derived).enumerate() {
        let here = || ctx.describe(c, Color::White, l, word);
        if want == CODE_ILLEGAL && got != CODE_ILLEGAL {
            let got = describe_code(Color::White, got);
            return Some(TableError::Wrong(format!("{}: illegal position stored as {got}, expected code 63", here())));
        }
        let edge = want == CODE_EDGE && matches!(got, CODE_CURSED | CODE_EXACT_100);
        if got != want && !edge {
            let (g, w) = (describe_code(Color::White, got), describe_code(Color::White, want));
            return Some(TableError::Wrong(format!("{}: stored {g}, expected {w}", here())));
        }
    }
    None
}
