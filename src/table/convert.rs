//! Conversion of an uncompressed table (format 1 or 2: the run the generator assembles, or an
//! old published file) into the compact format: block by block in storage order, a few
//! blocks in flight, resumable from the last block written (`docs/FORMAT.md`).

use super::codes::PlaneSource;
use super::compact::{
    block_positions, n_blocks, pack_block, pack_masked, slice_bytes, CompactWriter, Part, Spill, TableMeta, BYTE_MASKS,
    DTZ_BLOCK_BITS, MIN_MATCH, WDL_BLOCK_BITS, WDL_WORD_BYTES,
};
use super::error::{FormatError, TableError};
use super::stats::{side_summary, SummaryCounter, SummaryPart};
use super::uncompressed::{code_mask, codes_of_planes, Section, TableFile, LEVEL_RECORD_BYTES};
use super::values::{Class, CODE_CURSED, CODE_EDGE, CODE_ILLEGAL, CODE_NONE};
use crate::chess::Color;
use crate::index::{Layout, Man, StoredOrder};
use crate::pipeline::{self, Order};
use crate::table::version::VERSION_COMPACT;
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

/// The value planes of `2^bits` positions (fewer at the end of the table) from `first_slot`,
/// in slot order.
fn span_planes(src: &dyn PlaneSource, stm: Color, first_slot: u64, bits: u32) -> Result<Vec<[u64; 6]>, TableError> {
    let n_words = ((1u64 << bits).min(src.n_slots() - first_slot) / 64) as usize;
    let mut planes = Vec::with_capacity(n_words);
    src.read_planes(stm, (first_slot / 64) as usize, n_words, &mut planes)?;
    Ok(planes)
}

/// Marks the dropped duplicates of a span's planes (slot order, from `first_slot`) as
/// don't-cares: the larger transposed twins (format 5) and the words whose identical men are
/// out of order (format 7). They take the illegal code 63 (every plane set), which the blocks
/// fill as they fill illegal positions.
fn drop_twins(layout: &Layout, first_slot: u64, planes: &mut [[u64; 6]]) {
    layout.for_each_twin(first_slot / 64, planes.len(), |at, twin| {
        for plane in planes[at].iter_mut() {
            *plane |= twin.dropped;
        }
    });
    if layout.has_identical_men() {
        for (w, word) in (first_slot / 64..).zip(planes.iter_mut()) {
            if layout.identical_out_of_order(w) {
                *word = [!0; 6];
            }
        }
    }
}

/// Marks the wtm positions of a span's planes (slot order, from `first_slot`) that win in one
/// ply by a zeroing move as don't-cares of the distance section (format 6): like the dropped
/// twins, they take the illegal code 63, which the blocks fill. A reader finds their
/// distance by searching the zeroing moves. Nothing is marked when `src` does not know them.
fn drop_zeroing_wins(src: &dyn PlaneSource, first_slot: u64, planes: &mut [[u64; 6]]) -> Result<(), TableError> {
    let mut zeroing = Vec::new();
    if !src.zeroing_wins((first_slot / 64) as usize, planes.len(), &mut zeroing)? {
        return Ok(());
    }
    for (p, &z) in planes.iter_mut().zip(&zeroing) {
        let dont_care = z & code_mask(p, 1);
        for plane in p.iter_mut() {
            *plane |= dont_care;
        }
    }
    Ok(())
}

/// The planes of stored words `words` of a span (`from`: [`StoredOrder::slot_words`] of the
/// span).
fn gather(planes: &[[u64; 6]], from: Option<&[u32]>, words: std::ops::Range<usize>) -> Vec<[u64; 6]> {
    match from {
        None => planes[words].to_vec(),
        Some(from) => from[words].iter().map(|&w| planes[w as usize]).collect(),
    }
}

/// The candidate orders of a run's sections: slot order, and with units of the layout's
/// top bits every nesting of the men with the white king fastest (the only orders measured
/// to pay, docs/COMPACT.md; a stored word is then a word of slot order).
fn candidate_orders(layout: &Layout) -> Vec<Option<StoredOrder>> {
    let unit = StoredOrder::default_unit_bits(layout);
    let mut out = vec![None];
    if unit < 6 || !layout.n_slots.is_multiple_of(1 << unit) {
        return out;
    }
    let mut others = StoredOrder::free_men(layout, unit);
    others.retain(|&m| m != Man::WhiteKing);
    let mut nestings = Vec::new();
    permutations(&mut others, 0, &mut nestings);
    for mut men in nestings {
        men.push(Man::WhiteKing);
        out.push(Some(StoredOrder::new(layout, unit, &men)));
    }
    out
}

/// Every order of `items[k..]` after `items[..k]`, pushed to `out`.
fn permutations(items: &mut Vec<Man>, k: usize, out: &mut Vec<Vec<Man>>) {
    if k == items.len() {
        out.push(items.clone());
        return;
    }
    for i in k..items.len() {
        items.swap(k, i);
        permutations(items, k + 1, out);
        items.swap(k, i);
    }
}

/// Packs a block of a section from its value planes (in stored order): the stored bytes.
type PackBlock<'a> = dyn Fn(&[[u64; 6]], Part, usize) -> Result<Vec<u8>, TableError> + Sync + 'a;

/// Units sampled by [`choose_orders`], and per sampled unit the blocks of each section
/// compressed in each candidate order, at a zstd level of at most [`TRIAL_ZSTD_LEVEL`].
/// Measured against trials of whole units at the tables' level 8 (docs/BENCHMARKS.md):
/// KQRvKR 0.4% larger (5,590,904 bytes for 5,567,392: one section's order differs), KRvKQR
/// the same, KBBvKN 0.3% larger, in a third of the time; 2 class blocks per unit also chose
/// KBBvKN's btm classes wrongly (1.7% larger). Units of many class blocks (6 men: 512) give
/// one in [`SAMPLED_CLASS_SHARE`] at least: KQRvKQR's wtm classes 0.90x of the order 8 blocks
/// chose; the same share of its distance blocks chose an order 1.07x larger than 8 blocks did
/// (the trial's zstd 3 is not the tables' level 8), so distances keep 8.
const SAMPLED_UNITS: u64 = 8;
const SAMPLED_CLASS_BLOCKS: u64 = 8;
const SAMPLED_DISTANCE_BLOCKS: u64 = 8;
const SAMPLED_CLASS_SHARE: u64 = 16;
const TRIAL_ZSTD_LEVEL: i32 = 3;

/// Chooses each block section's stored order among [`candidate_orders`] by trial
/// compression of the same positions in each (`pack`, at a low zstd level): blocks spread
/// over units spread over the table. Deterministic, so a resumed write chooses the same.
fn choose_orders(
    src: &dyn PlaneSource,
    layout: &Layout,
    pack: &PackBlock<'_>,
    threads: usize,
) -> Result<[Option<StoredOrder>; 3], TableError> {
    let candidates = candidate_orders(layout);
    let Some(Some(unit_order)) = candidates.get(1) else { return Ok([None, None, None]) };
    let unit = unit_order.unit_bits;
    let n_units = src.n_slots() >> unit;
    let count = SAMPLED_UNITS.min(n_units);
    let units: Vec<u64> = (0..count).map(|k| (2 * k + 1) * n_units / (2 * count)).collect();
    let mut sizes = [vec![0usize; candidates.len()], vec![0; candidates.len()], vec![0; candidates.len()]];
    pipeline::run(
        units.len(),
        threads,
        Order::Completion,
        |k| Ok::<_, TableError>(units[k] << unit),
        |_, first_slot| {
            let mut out = [vec![0usize; candidates.len()], vec![0; candidates.len()], vec![0; candidates.len()]];
            let mut planes =
                [span_planes(src, Color::White, first_slot, unit)?, span_planes(src, Color::Black, first_slot, unit)?];
            for side in &mut planes {
                drop_twins(layout, first_slot, side);
            }
            for (c, order) in candidates.iter().enumerate() {
                let from = order.as_ref().map(|o| o.slot_words(first_slot, planes[0].len()));
                for (k, part) in Part::BLOCKED.into_iter().enumerate() {
                    let chunk_bits = unit.min(part.block_bits());
                    let n_chunks = 1u64 << (unit - chunk_bits);
                    let per_unit = match part {
                        Part::WtmDtz => SAMPLED_DISTANCE_BLOCKS,
                        _ => SAMPLED_CLASS_BLOCKS.max(n_chunks / SAMPLED_CLASS_SHARE),
                    };
                    let pick = per_unit.min(n_chunks);
                    for j in 0..pick {
                        let chunk = ((2 * j + 1) * n_chunks / (2 * pick)) as usize;
                        let words = 1usize << (chunk_bits - 6);
                        let block =
                            gather(&planes[part.side() as usize], from.as_deref(), chunk * words..(chunk + 1) * words);
                        out[k][c] += pack(&block, part, 0)?.len();
                    }
                }
            }
            Ok(out)
        },
        |_, unit_sizes| {
            for (total, part) in sizes.iter_mut().zip(unit_sizes) {
                for (t, x) in total.iter_mut().zip(part) {
                    *t += x;
                }
            }
            Ok(())
        },
    )?;
    Ok(std::array::from_fn(|k| {
        let best = (0..candidates.len()).min_by_key(|&c| (sizes[k][c], c)).expect("a candidate");
        candidates[best].clone()
    }))
}

/// A block of a section as the writer packs it.
struct BlockValues {
    /// The decoded bytes, don't-cares filled.
    bytes: Vec<u8>,
    /// The value of every position, if they all hold the same one.
    constant: Option<u8>,
    /// Per byte, the bits a reader may read (a distance byte all or nothing, a class byte the
    /// legal positions of its eight).
    mask: Vec<u8>,
}

/// The decoded bytes of a block of a section from its value planes. Illegal positions (and in
/// the distance section every position that is not a win) are don't-cares: they take the value
/// of the position before them (the first ones the block's first value), which compresses
/// best. `edge_exact`: the table tells wins of exactly 100 plies from cursed wins.
fn block_values(planes: &[[u64; 6]], edge_exact: bool, part: Part) -> BlockValues {
    let n_words = planes.len();
    let stm = part.side();
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
            if w == 0 {
                out.extend_from_slice(&[last; 64]);
                continue;
            }
            // Each run of don't-cares takes the win before it: filled plane by plane.
            let filled = std::array::from_fn(|j| fill_plane(p[j], w, last >> j & 1 != 0).0);
            let codes = codes_of_planes(&filled);
            last = codes[63];
            out.extend_from_slice(&codes);
        }
        let constant = out.iter().all(|&c| c == out[0]).then(|| out[0]);
        // A constant block is stored as its value: no mask needed.
        let mut mask = Vec::new();
        if constant.is_none() {
            mask.reserve(n_words * 64);
            for &w in &wins {
                for g in 0..8 {
                    mask.extend_from_slice(&BYTE_MASKS[(w >> (8 * g)) as u8 as usize].to_ne_bytes());
                }
            }
        }
        return BlockValues { bytes: out, constant, mask };
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
    let mut mask = Vec::with_capacity(n_words * WDL_WORD_BYTES);
    let (mut all_lo, mut all_hi, mut any_lo, mut any_hi) = (!0u64, !0u64, 0u64, 0u64);
    for &(legal, lo, hi) in &classes {
        let (lo, c) = fill_plane(lo, legal, carry_lo);
        carry_lo = c;
        let (hi, c) = fill_plane(hi, legal, carry_hi);
        carry_hi = c;
        (all_lo, all_hi, any_lo, any_hi) = (all_lo & lo, all_hi & hi, any_lo | lo, any_hi | hi);
        out.extend_from_slice(&lo.to_le_bytes());
        out.extend_from_slice(&hi.to_le_bytes());
        mask.extend_from_slice(&legal.to_le_bytes());
        mask.extend_from_slice(&legal.to_le_bytes());
    }
    let constant = (all_lo == any_lo && all_hi == any_hi).then_some((all_lo & 1) as u8 | ((all_hi & 1) as u8) << 1);
    BlockValues { bytes: out, constant, mask }
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
/// identifies it), then publishes it as `to.target`. Each block section's stored order is
/// chosen first ([`choose_orders`]); the sections are then written a span at a time (a unit
/// of the orders or a class block, whichever is larger: its planes read once, permuted into
/// each section's order, cut into blocks). `progress(done, total)` counts blocks (the first
/// call after a resume counts the blocks written before), and an error it returns stops the
/// write where it is, as a kill would.
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
    // Whether the wins by a zeroing move are left out of the distance section.
    let drops_zeroing = src.zeroing_wins(0, 0, &mut Vec::new())?;
    let mut id_bytes = source_id.to_le_bytes().to_vec();
    id_bytes.push(drops_zeroing as u8);
    id_bytes.extend_from_slice(&zstd_level.to_le_bytes());
    id_bytes.extend_from_slice(&MIN_MATCH.to_le_bytes());
    id_bytes.extend_from_slice(&VERSION_COMPACT.to_le_bytes());
    // Blocks by `pack_masked` (its parse weighing offsets since 2026-12-06, class blocks too
    // since the tenth session): a partial of an older writer is not resumed, so a resumed
    // table is the fresh one.
    id_bytes.extend_from_slice(b"masked distances and classes, weighed offsets");
    let mut writer = CompactWriter::open(partial, n_slots, xxh3_64(&id_bytes))?;
    let total: u64 = Part::BLOCKED.iter().map(|&p| n_blocks(p, n_slots) as u64).sum();
    let pack_at = |level: i32, masked: bool| {
        move |planes: &[[u64; 6]], part: Part, i: usize| {
            let block = block_values(planes, meta.edge_exact, part);
            let packed = match block.constant {
                // Blocks choose their don't-cares' values (class blocks since 2026-12-06).
                None if masked => pack_masked(&block.bytes, &block.mask, level),
                constant => pack_block(&block.bytes, constant, level),
            };
            packed.map_err(|e| {
                TableError::Wrong(format!("compressing block {i} of {part:?} for {}: {e}", target.display()))
            })
        }
    };
    let pack = pack_at(zstd_level, true);
    // The trials pack distance blocks plainly: masked trials chose the same orders for KQRvKR
    // and KRBvKR (KRRvK's 2.5% smaller, KQvK's 0.2% larger), coding each trial block twice.
    let orders = choose_orders(src, layout, &pack_at(zstd_level.min(TRIAL_ZSTD_LEVEL), false), threads)?;
    let span_of =
        |part: Part| orders[part as usize].as_ref().map_or(part.block_bits(), |o| o.unit_bits.max(part.block_bits()));
    // The wtm class blocks are written with the distance blocks over the same positions.
    let wtm_span = span_of(Part::WtmWdl).max(span_of(Part::WtmDtz));
    // Each side's summary is counted from its class blocks as they are written, unless some
    // were written before a resume (then it is counted afterwards, in a scan of its own).
    let counter = SummaryCounter::new(src, &layout.material);
    let fresh = |part: Part| {
        writer.position().is_some_and(|at| (at.part as usize) < part as usize || (at.part == part && at.block == 0))
    };
    let mut summaries = [fresh(Part::WtmWdl).then(SummaryPart::new), fresh(Part::BtmWdl).then(SummaryPart::new)];
    // The wtm distance blocks are packed with the class blocks over the same positions and
    // spilled beside the table until their section comes; a spill that does not hold every
    // distance block of the spans before the resume point is dropped, and those blocks are
    // computed in their turn.
    let n_dtz = n_blocks(Part::WtmDtz, n_slots);
    let spill_path = partial.with_extension("dtz");
    let spill = match writer.position() {
        Some(at) if at.part == Part::WtmWdl => {
            let span_first = ((at.block as u64) << WDL_BLOCK_BITS) >> wtm_span << wtm_span;
            let want = ((span_first >> DTZ_BLOCK_BITS) as usize).min(n_dtz);
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
    while let Some(at) = writer.position() {
        let done_before: u64 =
            Part::BLOCKED.iter().take_while(|&&p| p != at.part).map(|&p| n_blocks(p, n_slots) as u64).sum();
        let mut done = done_before + at.block as u64;
        let n = n_blocks(at.part, n_slots);
        let spill = spill.as_ref();
        if let (Part::WtmDtz, Some(s)) = (at.part, spill) {
            pipeline::run(
                n - at.block,
                threads,
                Order::Sequence { window: 2 * threads.max(1) },
                |k| Ok::<_, TableError>(at.block + k),
                |_, i| Ok(s.read(i)?),
                |_, packed: Vec<u8>| {
                    writer.push(&packed)?;
                    done += 1;
                    progress(done, total)
                },
            )?;
            continue;
        }
        let side = at.part.side();
        let counting = at.part != Part::WtmDtz && summaries[side.index()].is_some();
        let spilling = at.part == Part::WtmWdl && spill.is_some();
        let span_bits = if spilling { wtm_span } else { span_of(at.part) };
        let first_span = ((at.block as u64) << at.part.block_bits() >> span_bits) as usize;
        let n_spans = n_slots.div_ceil(1 << span_bits) as usize;
        // The blocks of a section in a span (from `from` on), packed in its stored order.
        let blocks_of = |planes: &[[u64; 6]], first_slot: u64, part: Part, from: usize| {
            let bits = part.block_bits();
            let order_from = orders[part as usize].as_ref().map(|o| o.slot_words(first_slot, planes.len()));
            let first = (first_slot >> bits) as usize;
            let end = ((first_slot + 64 * planes.len() as u64).div_ceil(1 << bits)) as usize;
            (first.max(from)..end)
                .map(|j| {
                    let words = ((j - first) << (bits - 6))
                        ..((j - first) << (bits - 6)) + (block_positions(part, n_slots, j) / 64) as usize;
                    pack(&gather(planes, order_from.as_deref(), words), part, j)
                })
                .collect::<Result<Vec<_>, _>>()
        };
        pipeline::run(
            n_spans - first_span,
            threads,
            Order::Sequence { window: 2 * threads.max(1) },
            |k| Ok::<_, TableError>(((first_span + k) as u64) << span_bits),
            |_, first_slot| {
                let mut planes = span_planes(src, side, first_slot, span_bits)?;
                let counted = counting.then(|| counter.count(side, first_slot / 64, &planes));
                // After the summary's count, which reads every slot's value.
                drop_twins(layout, first_slot, &mut planes);
                if at.part == Part::WtmDtz {
                    drop_zeroing_wins(src, first_slot, &mut planes)?;
                }
                let packed = blocks_of(&planes, first_slot, at.part, at.block)?;
                // The spilled distance blocks after the class blocks, which keep every win.
                let dtz = if spilling {
                    drop_zeroing_wins(src, first_slot, &mut planes)?;
                    blocks_of(&planes, first_slot, Part::WtmDtz, 0)?
                } else {
                    Vec::new()
                };
                Ok((packed, counted, dtz))
            },
            |_, (packed, counted, dtz): (Vec<Vec<u8>>, Option<SummaryPart>, Vec<Vec<u8>>)| {
                if let (Some(total), Some(part)) = (summaries[side.index()].as_mut(), counted) {
                    total.add(&part);
                }
                // Spilled before the class blocks are pushed: a resume after them finds them.
                for d in &dtz {
                    spill.expect("spilling").append(d)?;
                }
                for p in &packed {
                    writer.push(p)?;
                    done += 1;
                    progress(done, total)?;
                }
                Ok(())
            },
        )?;
    }
    if let Some(s) = spill {
        s.remove()?;
    }
    let [wtm_summary, btm_summary] = [Color::White, Color::Black].map(|stm| match &summaries[stm.index()] {
        Some(counted) => Ok(counted.summary()),
        None => side_summary(src, &layout.material, stm, threads),
    });
    Ok(writer.finish(layout, meta, orders, &btm_summary?, &wtm_summary?, slices, target)?)
}
