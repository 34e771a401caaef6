//! Conversion of an uncompressed table (format 1 or 2: the run the generator assembles, or an
//! old published file) into the compact format: block by block in storage order, a few
//! blocks in flight, resumable from the last block written (`docs/FORMAT.md`).

use super::codes::PlaneSource;
use super::compact::{
    block_positions, n_blocks, pack_block, slice_bytes, CompactWriter, Part, Spill, TableMeta, DTZ_BLOCK_BITS,
    MIN_MATCH, WDL_BLOCK_BITS, WDL_WORD_BYTES,
};
use super::error::{FormatError, TableError};
use super::stats::{btm_summary, SummaryCounter, SummaryPart};
use super::uncompressed::{code_mask, codes_of_planes, Section, TableFile, LEVEL_RECORD_BYTES};
use super::values::{Class, CODE_CURSED, CODE_EDGE, CODE_ILLEGAL, CODE_NONE};
use crate::chess::Color;
use crate::index::Layout;
use crate::pipeline::{self, Order};
use crate::work::IoContext;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

/// Fills the don't-care positions of `plane` (bits clear in `legal`) with the value of the
/// position before them, `carry` being the value before the word's first position; returns
/// the value of its last position. (A Kogge-Stone fill: each legal 1 spreads up through the
/// don't-cares above it.)
#[inline]
fn fill_plane(plane: u64, legal: u64, carry: bool) -> (u64, bool) {
    let mut ones = plane & legal;
    let mut open = !legal;
    if carry {
        // The don't-cares at the bottom of the word, up to its first legal position.
        ones |= open & !open.wrapping_add(1);
    }
    for shift in [1, 2, 4, 8, 16, 32] {
        ones |= (ones << shift) & open;
        open &= open << shift;
    }
    (ones, ones >> 63 == 1)
}

/// The value planes of block `i` of a section, and its first word.
fn block_planes(src: &dyn PlaneSource, part: Part, i: usize) -> Result<(Vec<[u64; 6]>, u64), TableError> {
    let first = (i as u64) << part.block_bits();
    let n_words = (block_positions(part, src.n_slots(), i) / 64) as usize;
    let stm = if part == Part::BtmWdl { Color::Black } else { Color::White };
    let mut planes = Vec::with_capacity(n_words);
    src.read_planes(stm, (first / 64) as usize, n_words, &mut planes)?;
    Ok((planes, first / 64))
}

/// Distance blocks per white-to-move class block (they cover the same positions).
const DTZ_PER_WDL: usize = 1 << (WDL_BLOCK_BITS - DTZ_BLOCK_BITS);

/// The decoded bytes of a block of a section from its value planes, and its value if every
/// position holds the same one. Illegal positions (and in the distance section every position
/// that is not a win) are don't-cares: they take the value of the position before them (the
/// first ones the block's first value), which compresses best. `edge_exact`: the table tells
/// wins of exactly 100 plies from cursed wins.
fn block_values(planes: &[[u64; 6]], edge_exact: bool, part: Part) -> (Vec<u8>, Option<u8>) {
    let n_words = planes.len();
    let stm = if part == Part::BtmWdl { Color::Black } else { Color::White };
    let is = |p: &[u64; 6], c: u8| code_mask(p, c);
    if part == Part::WtmDtz {
        // Wins: every code but 0 (not won), 51, 52 (cursed) and 63 (illegal).
        let wins: Vec<u64> = planes
            .iter()
            .map(|p| !(is(p, CODE_NONE) | is(p, CODE_EDGE) | is(p, CODE_CURSED) | is(p, CODE_ILLEGAL)))
            .collect();
        let mut last = planes
            .iter()
            .zip(&wins)
            .find(|(_, &w)| w != 0)
            .map_or(0, |(p, &w)| codes_of_planes(p)[w.trailing_zeros() as usize]);
        let mut out = Vec::with_capacity(n_words * 64);
        for (p, &w) in planes.iter().zip(&wins) {
            let mut codes = codes_of_planes(p);
            if w == !0 {
                last = codes[63];
            } else {
                for (b, c) in codes.iter_mut().enumerate() {
                    if w >> b & 1 == 1 {
                        last = *c;
                    } else {
                        *c = last;
                    }
                }
            }
            out.extend_from_slice(&codes);
        }
        let constant = out.iter().all(|&c| c == out[0]).then(|| out[0]);
        return (out, constant);
    }
    // Classes: 0 not won, 1 won under the rule, 2 only without it, 3 (wtm code 51 of tables
    // that do not tell a win of exactly 100 plies from a cursed one of 101) either.
    let classes: Vec<(u64, u64, u64)> = planes
        .iter()
        .map(|p| {
            let illegal = is(p, CODE_ILLEGAL);
            let mut cursed = is(p, CODE_CURSED);
            let mut edge = 0;
            if stm == Color::White {
                if edge_exact {
                    cursed |= is(p, CODE_EDGE)
                } else {
                    edge = is(p, CODE_EDGE)
                }
            }
            let win = !(illegal | is(p, CODE_NONE) | cursed | edge);
            (!illegal, win | edge, cursed | edge)
        })
        .collect();
    let first_class = classes
        .iter()
        .find(|c| c.0 != 0)
        .map_or(Class::NotWon, |&(legal, lo, hi)| Class::of_planes(lo, hi, legal.trailing_zeros() as u64))
        .bits();
    let (mut carry_lo, mut carry_hi) = (first_class & 1 != 0, first_class & 2 != 0);
    let mut out = Vec::with_capacity(n_words * WDL_WORD_BYTES);
    let (mut all_lo, mut all_hi, mut any_lo, mut any_hi) = (!0u64, !0u64, 0u64, 0u64);
    for &(legal, lo, hi) in &classes {
        let (lo, c) = fill_plane(lo, legal, carry_lo);
        carry_lo = c;
        let (hi, c) = fill_plane(hi, legal, carry_hi);
        carry_hi = c;
        (all_lo, all_hi, any_lo, any_hi) = (all_lo & lo, all_hi & hi, any_lo | lo, any_hi | hi);
        out.extend_from_slice(&lo.to_le_bytes());
        out.extend_from_slice(&hi.to_le_bytes());
    }
    let constant = (all_lo == any_lo && all_hi == any_hi).then_some((all_lo & 1) as u8 | ((all_hi & 1) as u8) << 1);
    (out, constant)
}

/// Converts the uncompressed table `src` into a compact table written at `partial` (resuming
/// an interrupted conversion of the same table at the same `zstd_level`) and published as
/// `target`.
/// `threads` workers compress blocks; `progress(done, total)` counts blocks (the first call
/// after a resume counts the blocks written before), and an error it returns stops the
/// conversion where it is, as a kill would.
pub fn uncompressed_to_compact(
    src: &TableFile,
    to: &CompactTarget,
    progress: &mut dyn FnMut(u64, u64) -> Result<(), TableError>,
) -> Result<PathBuf, TableError> {
    let layout = Layout::new(&src.header.material);
    let last_steps: Vec<u8> = match src.header.slices {
        Some(info) => {
            let bytes = src.section(Section::Slices);
            let at = 4 * info.n_slices as usize;
            (0..info.n_levels as usize).map(|l| bytes[at + LEVEL_RECORD_BYTES as usize * l + 8]).collect()
        }
        None => Vec::new(),
    };
    let meta = TableMeta {
        last_step: src.header.last_step,
        five_valued: src.header.five_valued,
        edge_exact: src.header.edge_exact,
        longest_cursed: src.header.longest_cursed,
    };
    let id = xxh3_64(src.header_bytes());
    planes_to_compact(src, &layout, meta, &slice_bytes(&layout, &last_steps), id, to, progress)
}

/// Where and how a compact table is written.
pub struct CompactTarget<'a> {
    /// The table being written (resumed if it was written from the same source).
    pub partial: &'a Path,
    /// Where it is published.
    pub target: &'a Path,
    pub zstd_level: i32,
    /// Workers compressing blocks.
    pub threads: usize,
}

/// Writes a run's compact table from its value planes `src` (an uncompressed table, or the
/// generator's delta streams), with the header's `meta` and the slice section `slices`,
/// at `to.partial` (resuming an interrupted write from the same source: `source_id`
/// identifies it), then publishes it as `to.target`. `progress(done, total)` counts blocks
/// (the first call after a resume counts the blocks written before), and an error it returns
/// stops the write where it is, as a kill would.
pub fn planes_to_compact(
    src: &dyn PlaneSource,
    layout: &Layout,
    meta: TableMeta,
    slices: &[u8],
    source_id: u64,
    to: &CompactTarget,
    progress: &mut dyn FnMut(u64, u64) -> Result<(), TableError>,
) -> Result<PathBuf, TableError> {
    let CompactTarget { partial, target, zstd_level, threads } = *to;
    let n_slots = src.n_slots();
    let mut id_bytes = source_id.to_le_bytes().to_vec();
    id_bytes.extend_from_slice(&zstd_level.to_le_bytes());
    id_bytes.extend_from_slice(&MIN_MATCH.to_le_bytes());
    let mut writer = CompactWriter::open(partial, n_slots, xxh3_64(&id_bytes))?;
    let total: u64 = Part::BLOCKED.iter().map(|&p| n_blocks(p, n_slots) as u64).sum();
    // Black's summary is counted from the btm class blocks as they are written, unless some
    // were written before a resume (then it is counted afterwards, in a scan of its own).
    let counter = SummaryCounter::new(src, &layout.material);
    let mut summary =
        writer.position().is_some_and(|at| at.part != Part::BtmWdl || at.block == 0).then(SummaryPart::new);
    // The wtm distance blocks are packed with the class blocks over the same positions and
    // spilled beside the table until their section comes; a spill that does not hold every
    // block before the resume point is dropped, and those blocks are computed in their turn.
    let n_dtz = n_blocks(Part::WtmDtz, n_slots);
    let spill_path = partial.with_extension("dtz");
    let spill = match writer.position() {
        Some(at) if at.part == Part::WtmWdl => {
            let want = (at.block * DTZ_PER_WDL).min(n_dtz);
            Some(Spill::open(&spill_path, want)?).filter(|s| s.entries() == want)
        }
        Some(at) if at.part == Part::WtmDtz => Some(Spill::open(&spill_path, n_dtz)?).filter(|s| s.entries() == n_dtz),
        _ => None,
    };
    if spill.is_none() && spill_path.exists() {
        std::fs::remove_file(&spill_path)
            .doing(|| format!("removing {}", spill_path.display()))
            .map_err(FormatError::from)?;
    }
    let pack = |planes: &[[u64; 6]], part: Part, i: usize| {
        let (raw, constant) = block_values(planes, meta.edge_exact, part);
        pack_block(&raw, constant, zstd_level)
            .map_err(|e| TableError::Wrong(format!("compressing block {i} of {part:?} for {}: {e}", target.display())))
    };
    while let Some(at) = writer.position() {
        let done_before: u64 =
            Part::BLOCKED.iter().take_while(|&&p| p != at.part).map(|&p| n_blocks(p, n_slots) as u64).sum();
        let n = n_blocks(at.part, n_slots);
        let mut done = done_before + at.block as u64;
        let counting = summary.is_some();
        let spill = spill.as_ref();
        pipeline::run(
            n - at.block,
            threads,
            Order::Sequence { window: 2 * threads.max(1) },
            |k| Ok::<_, TableError>(at.block + k),
            |_, i| {
                if let (Part::WtmDtz, Some(s)) = (at.part, spill) {
                    return Ok((s.read(i)?, None, Vec::new()));
                }
                let (planes, first_word) = block_planes(src, at.part, i)?;
                let counted = (at.part == Part::BtmWdl && counting).then(|| {
                    let codes: Vec<[u8; 64]> = planes.iter().map(codes_of_planes).collect();
                    counter.count(first_word, &codes)
                });
                // A wtm class block packs the distance blocks over its positions too, from the
                // same planes, while they are spilled.
                let mut dtz = Vec::new();
                if let (Part::WtmWdl, Some(_)) = (at.part, spill) {
                    let words = 1usize << (DTZ_BLOCK_BITS - 6);
                    for (k, j) in (i * DTZ_PER_WDL..((i + 1) * DTZ_PER_WDL).min(n_dtz)).enumerate() {
                        let n_words = (block_positions(Part::WtmDtz, n_slots, j) / 64) as usize;
                        dtz.push(pack(&planes[k * words..k * words + n_words], Part::WtmDtz, j)?);
                    }
                }
                Ok((pack(&planes, at.part, i)?, counted, dtz))
            },
            |_, (packed, counted, dtz): (Vec<u8>, Option<SummaryPart>, Vec<Vec<u8>>)| {
                if let (Some(total), Some(part)) = (summary.as_mut(), counted) {
                    total.add(&part);
                }
                // Spilled before the class block is pushed: a resume after it finds them.
                for d in &dtz {
                    spill.expect("spilling").append(d)?;
                }
                writer.push(&packed)?;
                done += 1;
                progress(done, total)
            },
        )?;
    }
    if let Some(s) = spill {
        s.remove()?;
    }
    let summary = match summary {
        Some(counted) => counted.summary(),
        None => btm_summary(src, &layout.material, threads)?,
    };
    Ok(writer.finish(layout, meta, &summary, slices, target)?)
}
