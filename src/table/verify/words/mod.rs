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
//! Out of core, as the generator: the run is cut into black chunks (white's high digits
//! fixed), whose black codes are derived from white's stored codes of the same chunk and
//! kept in storage order ([`store`]), then into white chunks (the black king and black's
//! high digits fixed), whose white codes are derived from black's kept codes of the chunk
//! ([`window`]). A budget sets how large the chunks are and whether black's codes stay in
//! RAM; the sub-endgames' codes of the side a capture leads to are held whole.

mod check;
mod derive;
mod lanes;
mod load;
mod pawns;
mod store;
mod targets;
mod window;

use super::checks::{check_level_steps, check_slice_section};
use super::{Checked, SideReport};
use crate::chess::{Color, Material};
use crate::index::Layout;
use crate::index::{Block, ChunkKey, ChunkScheme};
use crate::pipeline::{self, Order};
use crate::table::compact::{CompactTable, Summary};
use crate::table::compact::{Part, WDL_BLOCK_BITS, WDL_WORD_BYTES};
use crate::table::error::TableError;
pub use check::force_baseline_lanes;
use check::{check_btm_block, check_wtm_block, resolve_zeroing_wins, BtmBatch, Distances, WtmBatch};
use derive::{Run, Slice, SliceClasses};
use load::{capture_of, capture_sides, conversion_sides, load_classes, load_subs};
use std::cmp::Ordering;
use std::path::Path;
use std::sync::Mutex;
use store::Store;
use targets::{push_targets, Targets};
use window::{Chunking, Window};

/// RAM besides the chunks and the sub-endgames: tables, queues, the reader's buffers.
const FIXED_BYTES: u64 = 4 << 20;

/// How a check is cut to fit a budget: the chunks' fixed bits, and whether black's derived
/// codes stay in RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cut {
    black_fixed: usize,
    white_fixed: usize,
    in_memory: bool,
}

/// What a check of `run` cut by `cut` holds in RAM, in bytes, with `threads` workers: the
/// sub-endgames' codes, black's derived codes if kept in RAM, and the larger phase: a black
/// chunk's white codes, or a white chunk's black and white codes; plus the blocks in flight.
fn bytes_of_cut(layout: &Layout, subs: u64, cut: Cut, threads: usize) -> u64 {
    let bb = block_bits(layout);
    let largest =
        |mover, fixed| Chunking::largest_chunk_of(&ChunkScheme::with_fixed_limit(layout, mover, bb, fixed), layout);
    let phase = largest(Color::Black, cut.black_fixed).max(2 * largest(Color::White, cut.white_fixed));
    let in_flight = 16 * threads.max(1) as u64 * (1 << bb);
    FIXED_BYTES + subs + if cut.in_memory { slice_slots(layout) } else { 0 } + phase + in_flight
}

/// Positions checked at once: a slice of a run with pawns, else the whole run.
fn slice_slots(layout: &Layout) -> u64 {
    match layout.has_pawns() {
        true => 1 << layout.total_bits,
        false => layout.n_slots,
    }
}

/// The storage blocks the check's chunks are cut on: the compact format's class blocks, or
/// smaller in small runs.
fn block_bits(layout: &Layout) -> u32 {
    WDL_BLOCK_BITS.min(ChunkScheme::max_block_bits(layout))
}

/// The largest chunks that fit `budget` (black's codes kept in RAM if they fit too), or the
/// smallest chunks if nothing fits.
fn cut_for(layout: &Layout, subs: u64, threads: usize, budget: u64) -> Cut {
    let bb = block_bits(layout);
    let most = |mover| ChunkScheme::new(layout, mover, bb).fixed_bits.len();
    let smallest = |in_memory| Cut { black_fixed: most(Color::Black), white_fixed: most(Color::White), in_memory };
    for in_memory in [true, false] {
        let fits = |cut: Cut| bytes_of_cut(layout, subs, cut, threads) <= budget;
        if !fits(smallest(in_memory)) {
            continue;
        }
        // Each side's fewest fixed bits that fit with the other side's smallest chunks.
        let black_fixed = (0..=most(Color::Black))
            .find(|&f| fits(Cut { black_fixed: f, ..smallest(in_memory) }))
            .expect("the most fixed bits fit");
        let white_fixed = (0..=most(Color::White))
            .find(|&f| fits(Cut { white_fixed: f, ..smallest(in_memory) }))
            .expect("the most fixed bits fit");
        return Cut { black_fixed, white_fixed, in_memory };
    }
    smallest(false)
}

/// Bytes of what a check of `run` holds besides its chunks: without pawns a byte per
/// position of each (sub-endgame, side to move) a capture leads to; with pawns the class bits
/// of each a conversion leads to, and of the most slices one slice's pushes reach.
fn subs_bytes(run: &Material, layout: &Layout) -> u64 {
    let Some(slices) = &layout.slices else {
        return capture_sides(run, layout).iter().map(|(m, _)| Layout::new(m).n_slots).sum();
    };
    let classes = |positions: u64| positions / 64 * WDL_WORD_BYTES as u64;
    let pushed = (0..slices.len() as u32).map(|s| push_targets(slices, s).len() as u64).max().unwrap_or(0);
    let subs: u64 = conversion_sides(run, layout).iter().map(|(m, _)| classes(Layout::new(m).n_slots)).sum();
    subs + pushed * classes(slice_slots(layout))
}

/// Bytes of RAM the smallest check of a run takes with `threads` workers: the
/// sub-endgames' codes whole, the smallest chunks, black's codes in a temporary file
/// (KQRvKQR: 812 MiB).
pub(super) fn memory_needed(run: &Material, threads: usize) -> u64 {
    let layout = Layout::new(run);
    let subs = subs_bytes(run, &layout);
    bytes_of_cut(&layout, subs, cut_for(&layout, subs, threads, 0), threads)
}

/// Checks every slot of a run, both sides to move, a word at a time (with pawns, a slice at
/// a time), within `budget` bytes of RAM if one is given (black's codes go to a temporary
/// file in `tables_dir` when they do not fit); returns the counts and the distance summaries
/// of black and of white (to compare with the stored ones). With pawns the slice section and
/// each level's last step are checked too. In a version 6 table white's stored codes are
/// resolved first where they are don't-cares ([`resolve_zeroing_wins`]).
pub(super) fn verify_words(
    run: &Material,
    table: &CompactTable,
    tables_dir: &Path,
    threads: usize,
    budget: Option<u64>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Checked, [Summary; 2]), TableError> {
    let layout = Layout::new(run);
    let n = layout.n_slots;
    let records = match &layout.slices {
        Some(_) => Some(check_slice_section(run, table, &layout)?),
        None => None,
    };
    let cut = cut_for(&layout, subs_bytes(run, &layout), threads, budget.unwrap_or(u64::MAX));
    progress(0, 2 * n);
    let loaded = load_subs(run, &layout, tables_dir, threads)?;
    let subs: Vec<_> = layout
        .pieces
        .iter()
        .map(|p| loaded.iter().find(|(m, stm, _)| *m == capture_of(run, p.color, p.role) && *stm == p.color))
        .map(|s| s.map(|(_, _, sub)| sub))
        .collect();
    let targets = layout.has_pawns().then(|| Targets::new(run, &layout, &loaded));
    let bb = block_bits(&layout);
    let (black, white) = (
        Chunking::new(&layout, Color::Black, bb, cut.black_fixed),
        Chunking::new(&layout, Color::White, bb, cut.white_fixed),
    );
    let mut store = Store::new(slice_slots(&layout), cut.in_memory, tables_dir)?;
    let (mut wtm_rep, mut btm_rep) = (SideReport::default(), SideReport::default());
    let (mut wtm_distances, mut btm_distances) = (Distances::new(), Distances::new());
    let mut done = 0u64;
    // In block order: the error reported is the one of the chunk's smallest wrong word.
    let order = Order::Sequence { window: 8 * threads.max(1) };
    let class_words = 1usize << (WDL_BLOCK_BITS - 6);
    let levels = layout.levels();
    let mut level_longest = vec![None; levels.len()];
    let mut pushed = SliceClasses::new();
    let slice_numbers: Vec<Option<u32>> = match &layout.slices {
        Some(slices) => (0..slices.len() as u32).map(Some).collect(),
        None => vec![None],
    };
    for number in slice_numbers {
        let slice = match (number, &layout.slices, &targets) {
            (Some(s), Some(slices), Some(targets)) => {
                // The classes of the slices this one's pushes reach (only those held).
                let reached = push_targets(slices, s);
                pushed.retain(|k, _| reached.contains(k));
                for (t, stm) in reached {
                    if let std::collections::hash_map::Entry::Vacant(e) = pushed.entry((t, stm)) {
                        let first = ((t as u64) << layout.total_bits) as usize / 64;
                        let words = first..first + slice_slots(&layout) as usize / 64;
                        e.insert(load_classes(table, stm, words, threads)?);
                    }
                }
                let pawns = slices.pawns(s);
                Some((s, pawns, pawns.orientation() == Ordering::Equal, targets))
            }
            _ => None,
        };
        let slice = slice.map(|(number, pawns, symmetric, targets)| Slice {
            number,
            pawns,
            symmetric,
            targets,
            pushed: &pushed,
        });
        let ctx = Run::new(run, &layout, subs.clone(), slice);
        let base = ctx.base();
        let (mut slice_wtm, mut slice_btm) = (SideReport::default(), SideReport::default());

        // Black's codes, a black chunk at a time: derived from white's stored codes of the
        // chunk, checked against the stored classes, kept for the white chunks.
        let mut wtm = Window::new(&black)?;
        for key in black.scheme.keys() {
            let blocks = black.blocks(&layout, key, number);
            fill_stored(&mut wtm, table, None, (&ctx, key), &blocks, threads)?;
            let check = |i: usize, _| {
                let b = &blocks[i];
                let mut planes = Vec::new();
                table.block_into(Part::BtmWdl, b.slot_word / class_words, &mut planes)?;
                let first = WDL_WORD_BYTES * (b.slot_word % class_words);
                check_btm_block(&ctx, key, b, &wtm, &planes[first..first + WDL_WORD_BYTES * b.words])
            };
            pipeline::run(blocks.len(), threads, order, Ok, check, |i, (batch, codes): (BtmBatch, Vec<u8>)| {
                store.write(64 * blocks[i].slot_word as u64 - base, &codes)?;
                slice_btm.add(&batch.rep);
                btm_distances.add(&batch.distances);
                done += codes.len() as u64;
                progress(done, 2 * n);
                Ok(())
            })?;
        }
        drop(wtm);

        // White's codes, a white chunk at a time: derived from black's kept codes of the
        // chunk, compared with the stored ones.
        let (mut btm, mut wtm) = (Window::new(&white)?, Window::new(&white)?);
        for key in white.scheme.keys() {
            let blocks = white.blocks(&layout, key, number);
            fill_stored(&mut wtm, table, Some(&layout), (&ctx, key), &blocks, threads)?;
            for b in &blocks {
                store.read(64 * b.slot_word as u64 - base, &mut btm.codes[64 * b.local_word..][..64 * b.words])?;
            }
            let check = |i: usize, _| check_wtm_block(&ctx, key, &blocks[i], &btm, &wtm);
            pipeline::run(blocks.len(), threads, order, Ok, check, |i, batch: WtmBatch| {
                slice_wtm.add(&batch.rep);
                slice_btm.derived += batch.btm_rep.derived;
                slice_btm.by_symmetry += batch.btm_rep.by_symmetry;
                wtm_distances.add(&batch.distances);
                done += 64 * blocks[i].words as u64;
                progress(done, 2 * n);
                Ok(())
            })?;
        }
        let level = levels.iter().position(|l| (l.first_slot..l.first_slot + l.n_slots).contains(&base));
        let level = &mut level_longest[level.expect("a slice lies in a level")];
        *level = (*level).max(slice_wtm.longest).max(slice_btm.longest);
        wtm_rep.add(&slice_wtm);
        btm_rep.add(&slice_btm);
    }
    if let Some(records) = &records {
        check_level_steps(run, &levels, records, &level_longest)?;
    }
    let mut sub_runs: Vec<Material> = loaded.into_iter().map(|(m, _, _)| m).collect();
    sub_runs.sort();
    sub_runs.dedup();
    let summaries = [wtm_distances.summary(), btm_distances.summary()];
    Ok((Checked { wtm: wtm_rep, btm: btm_rep, sub_runs }, summaries))
}

/// Fills `window` with white's stored codes of the chunk `key` made of `blocks`, decoded on
/// `threads` workers; illegal positions marked 63 from `layout` if given (the white chunks
/// compare them), left as stored otherwise (black's moves never lead to one). In a version 6
/// table the bytes are read as stored ([`CompactTable::read_stored_wtm`]), illegal positions 63, and the
/// wins by a zeroing move get code 1, whatever is stored ([`resolve_zeroing_wins`] with
/// `ctx`).
fn fill_stored(
    window: &mut Window,
    table: &CompactTable,
    layout: Option<&Layout>,
    (ctx, key): (&Run, ChunkKey),
    blocks: &[Block],
    threads: usize,
) -> Result<(), TableError> {
    // The decoded blocks' buffers go back to a pool once copied: a fresh buffer of a block's
    // codes (256 KiB) would be mapped and zeroed by the kernel each time.
    let pool: Mutex<Vec<Vec<[u8; 64]>>> = Mutex::new(Vec::new());
    let chunking = window.chunking;
    let decode = |i: usize, _| {
        let b = &blocks[i];
        let mut codes = pool.lock().expect("the buffer pool").pop().unwrap_or_default();
        if table.header.zeroing_dont_cares {
            // The bytes as stored (illegal positions 63 in both halves), then resolved.
            let mut wins = Vec::new();
            table.read_stored_wtm(ctx.layout, b.slot_word, b.words, &mut codes, &mut wins)?;
            resolve_zeroing_wins(ctx, chunking, key, b, &wins, &mut codes);
            return Ok(codes);
        }
        table.read_codes(layout, Color::White, b.slot_word, b.words, &mut codes)?;
        Ok::<_, TableError>(codes)
    };
    pipeline::run(blocks.len(), threads, Order::Completion, Ok, decode, |i, codes: Vec<[u8; 64]>| {
        window.codes[64 * blocks[i].local_word..][..64 * codes.len()].copy_from_slice(codes.as_flattened());
        pool.lock().expect("the buffer pool").push(codes);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cut takes the whole run when nothing limits it, the smallest chunks (black's codes
    /// on disk) when nothing fits, and in between the largest chunks within the budget.
    #[test]
    fn the_cut_fits_the_budget() {
        let run = Material::parse("KQRvKR").unwrap();
        let layout = Layout::new(&run);
        let subs = subs_bytes(&run, &layout);
        let whole = cut_for(&layout, subs, 2, u64::MAX);
        assert_eq!(whole, Cut { black_fixed: 0, white_fixed: 0, in_memory: true });
        let smallest = cut_for(&layout, subs, 2, 0);
        assert!(!smallest.in_memory && smallest.black_fixed > 0 && smallest.white_fixed > 0, "{smallest:?}");
        assert_eq!(bytes_of_cut(&layout, subs, smallest, 2), memory_needed(&run, 2));
        let mut last = (false, u64::MAX);
        for mib in [16u64, 24, 32, 64, 128, 256, 512] {
            let cut = cut_for(&layout, subs, 2, mib << 20);
            let bytes = bytes_of_cut(&layout, subs, cut, 2);
            assert!(bytes <= mib << 20 || cut == smallest, "{mib} MiB: {cut:?} takes {bytes}");
            // A larger budget keeps black's codes in RAM once they fit, and never cuts finer
            // with them in the same place.
            let fixed = (cut.black_fixed + cut.white_fixed) as u64;
            assert!(cut.in_memory || !last.0, "{mib} MiB: {cut:?}");
            assert!(cut.in_memory != last.0 || fixed <= last.1, "{mib} MiB: {cut:?}");
            last = (cut.in_memory, fixed);
        }
    }
}
