//! Choosing chunks and blocks for a RAM budget, and estimating a job's disk and I/O.

use crate::chess::Color;
use crate::index::{Block, ChunkKey, ChunkScheme, Layout, Level};
use crate::solve::Pass;

/// Smallest storage block: 512 positions (64 bytes of a bit table).
pub const MIN_BLOCK_BITS: u32 = 9;
/// RAM that a run needs besides its chunks: code, tables, allocator slack.
pub const BASE_MEM: u64 = 12 << 20;

/// What the user allows.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// RAM budget in bytes.
    pub mem: u64,
    pub threads: usize,
    /// Preferred I/O block in bytes.
    pub block_bytes: u64,
}

/// How a run's levels are cut: storage blocks of `2^block_bits` positions, and chunks whose
/// keys fix at most `max_fixed_bits` of the other side's high bits (`None`: as many as the
/// index allows). Fixed for a run: its manifest records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    pub block_bits: u32,
    pub max_fixed_bits: Option<u32>,
}

/// A chunk with its stored blocks (ids and words counted from its level's first slot).
#[derive(Clone, Debug)]
pub struct Chunk {
    pub key: ChunkKey,
    /// The slice (pawn configuration) the chunk lies in, for a run with pawns.
    pub slice: Option<u32>,
    pub blocks: Vec<Block>,
}

/// The chunks of one side's passes.
#[derive(Clone, Debug)]
pub struct Chunks {
    pub scheme: ChunkScheme,
    pub list: Vec<Chunk>,
    /// Words of a chunk buffer: up to the last stored block of any chunk (the black-king
    /// codes 10..15 at the top of a black chunk need no room).
    pub buffer_words: usize,
}

impl Chunks {
    /// The chunks of one level's passes where `mover` moves.
    pub fn new(layout: &Layout, level: &Level, mover: Color, cut: Cut) -> Chunks {
        let scheme = Chunks::scheme(layout, mover, cut);
        let list: Vec<Chunk> = Chunks::slices(layout, level)
            .iter()
            .flat_map(|&slice| scheme.keys().map(move |key| (slice, key)))
            .map(|(slice, key)| Chunk { key, slice, blocks: scheme.blocks(layout, key, slice, level.first_slot) })
            .filter(|c| !c.blocks.is_empty())
            .collect();
        let buffer_words = list.iter().flat_map(|c| c.blocks.last()).map(|b| b.local_word + b.words).max().unwrap_or(0);
        Chunks { scheme, list, buffer_words }
    }

    fn scheme(layout: &Layout, mover: Color, cut: Cut) -> ChunkScheme {
        let limit = cut.max_fixed_bits.map_or(usize::MAX, |bits| bits as usize);
        ChunkScheme::with_fixed_limit(layout, mover, cut.block_bits, limit)
    }

    /// The slices a level's chunks lie in (`None`: a pawnless run).
    fn slices(layout: &Layout, level: &Level) -> Vec<Option<u32>> {
        match &layout.slices {
            None => vec![None],
            Some(_) => {
                let first = (level.first_slot >> layout.total_bits) as u32;
                (first..first + (level.n_slots >> layout.total_bits) as u32).map(Some).collect()
            }
        }
    }

    /// Bytes of the chunk buffer that [`Chunks::new`] would give, without listing the blocks
    /// (with small blocks the lists take tens of MB).
    /// (Which blocks are holes does not depend on the slice.)
    pub fn buffer_bytes_of(layout: &Layout, mover: Color, cut: Cut) -> u64 {
        let block_bits = cut.block_bits;
        let scheme = Chunks::scheme(layout, mover, cut);
        let words = 1usize << (block_bits - 6);
        let blocks_per_chunk = 1usize << (scheme.local_bits() - block_bits);
        let last_stored = |key| {
            (0..blocks_per_chunk)
                .rev()
                .find(|&b| layout.slot(scheme.global_index(key, (b as u64) << block_bits)).is_some())
        };
        let buffer_words = scheme.keys().filter_map(last_stored).map(|b| (b + 1) * words).max().unwrap_or(0);
        buffer_words as u64 * 8
    }

    /// Bytes of one chunk buffer.
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer_words as u64 * 8
    }
}

/// Chunk buffers alive at once in a pass with `t` workers: each worker's inputs and
/// outputs, one chunk prefetched by the reader, one being written (see `pass`; a worker
/// reads the tables it combines with in I/O-sized batches, not whole chunks).
pub fn pass_slots(pass: Pass, t: u64) -> u64 {
    match pass {
        Pass::InitWhite => 3 * t + 3,
        Pass::InitBlack => 2 * t + 3,
        Pass::Step(_) => 2 * t + 2,
    }
}

/// One pass of each kind, for the worst case over a run's passes.
const PASS_KINDS: [Pass; 4] = [Pass::InitWhite, Pass::InitBlack, Pass::Step(1), Pass::Step(2)];

/// Chunks on each side preferred for load balance, and the chunk buffer size preferred for
/// cache locality of the move kernels (measured on KQRvKR: larger chunks run slower).
const CACHE_BUFFER_BYTES: u64 = cache_buffer_bytes();

const fn cache_buffer_bytes() -> u64 {
    1 << 19
}

/// Largest merge group: 4M positions (3 MiB of values), plenty for sequential writing.
const MERGE_GROUP_POSITIONS: u64 = 1 << 22;

/// How a run is cut: one block size, and the chunks of each side's passes.
pub struct Plan {
    pub block_bits: u32,
    /// See [`Cut`].
    pub max_fixed_bits: Option<u32>,
    pub white: Chunks,
    pub black: Chunks,
    /// Per side (white, black): the chunk buffers a chunk of its init pass reads for its
    /// pawns' pushes (a push and a double step per pawn).
    pub push_buffers: [u64; 2],
}

/// Seconds as `850 ms`, `4.2 s`, `42 s`, `12.5 min`, `3.4 h` or `2.1 days`.
pub fn show_duration(secs: f64) -> String {
    // Nothing left to build sums to -0.0, shown as 0.
    let secs = if secs > 0.0 { secs } else { 0.0 };
    match secs {
        s if s < 1.0 => format!("{:.0} ms", s * 1000.0),
        s if s < 10.0 => format!("{s:.1} s"),
        s if s < 100.0 => format!("{s:.0} s"),
        s if s < 6000.0 => format!("{:.1} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86400.0),
    }
}

/// Human-readable bytes.
pub fn show_size(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

impl Plan {
    /// The plan of one level cut by `cut`.
    pub fn new(layout: &Layout, level: &Level, cut: Cut) -> Plan {
        Plan {
            block_bits: cut.block_bits,
            max_fixed_bits: cut.max_fixed_bits,
            white: Chunks::new(layout, level, Color::White, cut),
            black: Chunks::new(layout, level, Color::Black, cut),
            push_buffers: [Color::White, Color::Black].map(|c| 2 * layout.material.pawns(c) as u64),
        }
    }

    /// How the plan cuts its level.
    pub fn cut(&self) -> Cut {
        Cut { block_bits: self.block_bits, max_fixed_bits: self.max_fixed_bits }
    }

    /// The level a run's block size is chosen on: chunk buffers are the same in every level
    /// (a chunk lies in one slice), so the one with the fewest slices, to enumerate quickly.
    pub fn sample_level(layout: &Layout) -> Level {
        layout.levels().into_iter().min_by_key(|l| l.n_slots).expect("a run has a level")
    }

    /// Chunk buffers alive at once in a pass with `t` workers ([`pass_slots`]), with the
    /// pawn-push buffers of the init passes (each worker's, and the reader's).
    fn slots(&self, pass: Pass, t: u64) -> u64 {
        let pushes = if pass.is_init() { self.push_buffers[pass.mover().index()] * (t + 1) } else { 0 };
        pass_slots(pass, t) + pushes
    }

    /// The chunks of the side that moves in a pass.
    pub fn chunks_of(&self, pass: Pass) -> &Chunks {
        match pass.mover() {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }

    /// Workers a pass may use within the budget (0: not even one fits).
    pub fn pass_threads(&self, pass: Pass, budget: &Budget) -> usize {
        let bytes = self.chunks_of(pass).buffer_bytes();
        let fits = |t: &u64| self.slots(pass, *t) * bytes <= budget.mem;
        (1..=budget.threads.max(1) as u64).rev().find(fits).unwrap_or(0) as usize
    }

    /// Whether a black step's chunks may read `t(k-2)` whole with their input, so that the
    /// kernel starts from the positions not decided yet (`solve::compute_chunk`; the steps
    /// that combine with `t(k-2)` alone take it, `generate::pass`): when the budget holds one
    /// more chunk buffer per worker and one for the reader besides the pass's others (the
    /// choice of chunks does not count them).
    pub fn prefills(&self, pass: Pass, budget: &Budget) -> bool {
        let t = self.pass_threads(pass, budget).max(1) as u64;
        matches!(pass, Pass::Step(k) if k % 2 == 0)
            && (self.slots(pass, t) + t + 1) * self.chunks_of(pass).buffer_bytes() <= budget.mem
    }

    /// RAM of the chunk buffers at the worst pass, with the workers each pass may use.
    pub fn chunk_mem(&self, budget: &Budget) -> u64 {
        PASS_KINDS
            .iter()
            .map(|&p| {
                let t = self.pass_threads(p, budget).max(1) as u64;
                let prefill = if self.prefills(p, budget) { t + 1 } else { 0 };
                (self.slots(p, t) + prefill) * self.chunks_of(p).buffer_bytes()
            })
            .max()
            .unwrap_or(0)
    }

    /// Whether every pass fits the budget with at least one worker.
    pub fn fits(&self, budget: &Budget) -> bool {
        PASS_KINDS.iter().all(|&p| self.pass_threads(p, budget) > 0)
    }

    /// Estimated peak RSS: fixed overhead, the sub-endgames held in RAM (`extra`), and the
    /// chunk buffers.
    pub fn estimated_mem(&self, budget: &Budget, extra: u64) -> u64 {
        BASE_MEM + extra + self.chunk_mem(budget)
    }

    /// Positions per merge group: six value planes, the illegal mask and the output bytes
    /// of `threads + 2` groups fit the budget.
    pub fn merge_group_positions(&self, budget: &Budget) -> u64 {
        let per_position = 13.0 / 8.0 * (budget.threads as f64 + 2.0);
        let p = ((budget.mem as f64 / per_position) as u64).min(MERGE_GROUP_POSITIONS);
        let block = 1u64 << self.block_bits;
        (p / block).max(1) * block
    }

    /// The plan with the largest blocks (at most `budget.block_bytes`) whose chunk buffers fit
    /// the budget and stay cache-sized; failing that, the one with the smallest chunks. Its
    /// chunk keys fix at most `max_fixed_bits` bits ([`Cut`]).
    pub fn choose(layout: &Layout, budget: &Budget, max_fixed_bits: Option<u32>) -> anyhow::Result<Plan> {
        let max_bits = (budget.block_bytes.max(64) * 8).ilog2().min(ChunkScheme::max_block_bits(layout));
        let min_bits = MIN_BLOCK_BITS.min(max_bits);
        let level = Plan::sample_level(layout);
        // A side whose chunks cannot get cache-sized (one piece against many) aims at its
        // smallest chunks instead.
        let cut = |block_bits| Cut { block_bits, max_fixed_bits };
        let smallest = [Color::White, Color::Black].map(|c| Chunks::buffer_bytes_of(layout, c, cut(min_bits)));
        let target = |c: &Chunks, s: u64| c.buffer_bytes() <= CACHE_BUFFER_BYTES.max(s);
        let mut fitting = None;
        let mut least = u64::MAX;
        for bits in (min_bits..=max_bits).rev() {
            let plan = Plan::new(layout, &level, cut(bits));
            if plan.fits(budget) {
                if target(&plan.white, smallest[0]) && target(&plan.black, smallest[1]) {
                    return Ok(plan);
                }
                fitting = Some(plan);
            } else {
                least = least.min(plan.chunk_mem(&Budget { threads: 1, ..*budget }));
            }
        }
        fitting.ok_or_else(|| {
            anyhow::anyhow!(
                "RAM budget too small for {}: {} are left for chunk buffers, but they need at least {} \
                 (try a larger --mem)",
                layout.material,
                show_size(budget.mem),
                show_size(least)
            )
        })
    }
}

/// Disk and I/O needs of one run.
#[derive(Clone, Debug)]
pub struct RunNeeds {
    /// Bytes of one bit table.
    pub table_bytes: u64,
    /// Peak bytes in the work folder: the largest level's tables and delta streams, with
    /// pawns beside the files the other levels keep (their streams, illegal tables and final
    /// bitbases), or the compact table written from every level's streams, whichever is more.
    pub work_peak: u64,
    /// Bytes of the final (compact) table file, estimated from the uncompressed table:
    /// a twelfth with pawns, a sixteenth without (measured: KRPvKR 13x smaller, KQRvKQR
    /// 19x, KQRvKR 31x; `docs/BENCHMARKS.md`, "Disk peaks").
    pub final_bytes: u64,
    /// Bytes of the files the solved levels of a run with pawns keep until its compaction
    /// (all levels); 0 without pawns.
    pub kept_bytes: u64,
    /// Bytes read and written by one pass.
    pub pass_io: u64,
}

/// Bit tables alive in a level's folder at its peak, step 102 of a level that may be
/// eventual (5 men or more; its sub-endgames may have cursed positions, and they are not all
/// built when a job plans): `t100`, `t101` and `t102`, `d`, `d-inf`, `c-inf`,
/// `forced-zeroing` and the two illegal-position tables. (A level with pawns keeps `t99` for
/// its merge too, which the count leaves out: KRPvKR's sampled peak is within 10% of it.)
const TABLES_AT_MERGE: u64 = 9;
/// Without cursed positions and chains past 100 plies (3 and 4 men).
const TABLES_AT_MERGE_SHORT: u64 = 7;
/// Bytes of delta streams per position of a level, both sides to move: the gap-coded new
/// positions of every step, about a byte per won position, so it follows how much of the
/// endgame is won (measured: KQRvKR 7.4 bits, KRPvKR's last level 4.3, KQRvKQR 4.1); the
/// middle of those, which keeps the work peak of all three within 20%.
const DELTA_BITS_PER_POSITION: u64 = 6;
/// Bits per position a solved level with pawns keeps: its delta streams, its two illegal
/// tables and its two final bitbases (two more for a level with cursed positions, which few
/// have: KRPvKR's levels have none; measured there 4.1-7.4 bits of streams per position).
const KEPT_BITS_PER_POSITION: u64 = DELTA_BITS_PER_POSITION + 2 + 2;

/// Estimates a run's disk needs. The work folder peaks either while its largest level is
/// solved (its bit tables and delta streams, and with pawns what the levels solved before
/// keep: their streams, illegal tables and final bitbases) or while the compact table is
/// written (beside every level's kept files, with pawns). The sub-endgames' bitbases may be
/// files there too (when they do not fit half the RAM budget; counted as if they never did):
/// the captures' for every level, the promotions' only while the levels that promote are
/// solved, first, when little is kept (the larger of the two counts).
pub fn run_needs(layout: &Layout) -> RunNeeds {
    let level_slots = layout.levels().iter().map(|l| l.n_slots).max().unwrap_or(0);
    let m = &layout.material;
    let eventual = m.men() >= 5;
    // Both sides to move of each sub-run, and its eventual bitbases when it may have cursed
    // positions.
    let subs = m.successor_runs();
    let bitbases = |same_men: bool| -> u64 {
        let subs = subs.iter().filter(|s| !s.white_bare() && (s.men() == m.men()) == same_men);
        subs.map(|s| Layout::new(s).n_slots / 4 * if s.men() >= 5 { 2 } else { 1 }).sum()
    };
    needs_of(&RunShape {
        level_slots,
        n_slots: layout.n_slots,
        eventual,
        pawns: layout.has_pawns(),
        capture_bitbases: bitbases(false),
        promotion_bitbases: bitbases(true),
    })
}

/// What a run's disk needs follow from.
pub struct RunShape {
    /// Positions in its largest level, and in all.
    pub level_slots: u64,
    pub n_slots: u64,
    /// Whether it may be eventual (`d-inf` too) or need more than 100 steps.
    pub eventual: bool,
    /// Whether it has pawns (its final table compresses less, its levels keep their files).
    pub pawns: bool,
    /// Bytes of the sub-endgames' bitbases its captures read (every level), and its
    /// promotions (the levels that promote, solved first).
    pub capture_bitbases: u64,
    pub promotion_bitbases: u64,
}

/// [`run_needs`] from a run's shape.
pub fn needs_of(shape: &RunShape) -> RunNeeds {
    let &RunShape { level_slots, n_slots, eventual, pawns, capture_bitbases, promotion_bitbases } = shape;
    let table_bytes = level_slots / 8;
    let deltas = level_slots * DELTA_BITS_PER_POSITION / 8;
    let tables = if eventual { TABLES_AT_MERGE } else { TABLES_AT_MERGE_SHORT };
    let uncompressed = 2 * n_slots / 8 + 2 * n_slots * 6 / 8;
    let final_bytes = uncompressed / if pawns { 12 } else { 16 };
    let kept = |slots: u64| if pawns { slots * KEPT_BITS_PER_POSITION / 8 } else { 0 };
    let level_peak = tables * table_bytes + deltas + capture_bitbases;
    let work_peak = if pawns {
        // While the largest level is solved (beside what the others keep; the promotions'
        // bitbases only while the first levels are), or while the compact table is written.
        let solving = level_peak + kept(n_slots - level_slots);
        let first_levels = level_peak + promotion_bitbases;
        let compacting = capture_bitbases + kept(n_slots) + final_bytes;
        solving.max(first_levels).max(compacting)
    } else {
        // While the chains run, or while the compact table is written beside the streams,
        // the illegal tables and `forced-zeroing` (the chain tables, `c` and `d` are deleted
        // once the chains are complete).
        level_peak.max(3 * table_bytes + deltas + capture_bitbases + final_bytes)
    };
    RunNeeds {
        table_bytes,
        work_peak,
        final_bytes,
        kept_bytes: kept(n_slots),
        pass_io: 4 * table_bytes + level_slots / 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(show_duration(0.85), "850 ms");
        assert_eq!(show_duration(42.4), "42 s");
        assert_eq!(show_duration(725.0), "12.1 min");
        assert_eq!(show_duration(12000.0), "3.3 h");
        assert_eq!(show_duration(-0.0), "0 ms");
    }
}
