//! Statistics of finished tables: for a signature, positions by result for each side to move,
//! stalemates and checkmates, the distance histogram, and the longest wins with an example.
//!
//! Positions are counted once up to the board's symmetries: the index stores a position
//! twice when the black king stands on the a1-h8 diagonal (the position and its transpose)
//! and once per order of two identical men; only the smallest of those slots counts. Both runs
//! of a signature then count the same set of positions, which [`SignatureStats::runs`] shows.

use super::codes::{CodeSource, PlaneSource, BATCH_WORDS};
use super::compact::{CompactTable, Summary};
use super::error::TableError;
use super::men::Men;
use super::uncompressed::{at_most_mask, code_mask, codes_of_planes};
use super::values::{
    code_to_distance, is_beyond_rule, BTM_MAX_CODE, CODE_EXACT_100, CODE_ILLEGAL, CODE_LOST_UNMEASURED, CODE_NONE,
    MAX_DISTANCE, WTM_MAX_CODE,
};
use super::version::table_path;
use crate::chess::square::on_diagonal;
use crate::chess::{Color, Material, Position, Square, Symmetry, MAX_PIECES};
use crate::index::{Layout, Pawns};
use crate::pipeline::{self, Order};
use std::path::Path;

/// Longest win of a run over both sides to move (plies, chain parity), 0 if none: the
/// longest wtm distance (of the summary in version 6, else stored), and the longest btm
/// distance of the summary.
pub fn longest_win(table: &CompactTable) -> Result<u8, TableError> {
    let mut longest = table.summary().longest_distance();
    if let Some(wtm) = table.wtm_summary() {
        return Ok(longest.max(wtm.longest_distance()));
    }
    let layout = Layout::new(&table.header.material);
    let source = CodeSource::Compact(table, &layout);
    let n_words = (table.header.n_slots / 64) as usize;
    let mut codes = Vec::new();
    for first in (0..n_words).step_by(BATCH_WORDS) {
        source.read(Color::White, first, BATCH_WORDS.min(n_words - first), &mut codes)?;
        for &c in codes.iter().flatten() {
            longest = longest.max(code_to_distance(Color::White, c).unwrap_or(0));
        }
    }
    Ok(longest)
}

/// A longest win: its distance and one position (FEN) that needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Longest {
    pub plies: u8,
    pub fen: String,
}

/// One side to move of a signature, in the signature's own colours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToMove {
    pub side: Color,
    /// Legal positions (up to symmetry).
    pub legal: u64,
    pub white_wins: u64,
    pub black_wins: u64,
    /// Won by white only without the 50-move rule (cursed wins for white; for black, when
    /// black is to move, blessed losses).
    pub white_cursed: u64,
    /// Won by black only without the 50-move rule.
    pub black_cursed: u64,
    /// The longest cursed wins of white and of black with this side to move, in plies
    /// rounded up to the side to move's parity (0: none). Only the step is known, not a
    /// position.
    pub longest_cursed_white: u16,
    pub longest_cursed_black: u16,
    /// A position (FEN) that white, and one that black, wins only without the rule: the
    /// first in storage order, not a longest one.
    pub cursed_white_example: Option<String>,
    pub cursed_black_example: Option<String>,
    /// The side to move has no legal move and is not in check.
    pub stalemates: u64,
    /// The side to move is checkmated (distance 0, counted among the other side's wins).
    pub checkmates: u64,
    /// White's wins by distance in plies (index = plies).
    pub white_by_distance: Vec<u64>,
    /// Black's wins by distance in plies.
    pub black_by_distance: Vec<u64>,
    pub longest_white: Option<Longest>,
    pub longest_black: Option<Longest>,
}

impl ToMove {
    /// Legal positions that neither side wins, even without the 50-move rule.
    pub fn draws(&self) -> u64 {
        self.legal - self.white_wins - self.black_wins - self.white_cursed - self.black_cursed
    }
}

/// What one run's table holds, in the run's own colours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSummary {
    pub run: Material,
    /// Stored slots per side to move.
    pub slots: u64,
    /// Illegal or broken slots, wtm and btm.
    pub illegal: [u64; 2],
    /// Legal positions up to symmetry, wtm and btm.
    pub legal: [u64; 2],
    /// The header's flags: every cursed position marked; wins of exactly 100 plies told
    /// apart from cursed wins (`docs/FORMAT.md`).
    pub five_valued: bool,
    pub edge_exact: bool,
}

/// Statistics of a signature (both of its runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureStats {
    pub material: Material,
    pub white_to_move: ToMove,
    pub black_to_move: ToMove,
    pub runs: Vec<RunSummary>,
}

impl SignatureStats {
    /// The side to move's half.
    pub fn to_move(&self, side: Color) -> &ToMove {
        if side == Color::White {
            &self.white_to_move
        } else {
            &self.black_to_move
        }
    }

    /// Longest win of a colour over both sides to move (plies), 0 if it never wins.
    pub fn longest(&self, winner: Color) -> u8 {
        [&self.white_to_move, &self.black_to_move]
            .iter()
            .filter_map(|t| if winner == Color::White { &t.longest_white } else { &t.longest_black }.as_ref())
            .map(|l| l.plies)
            .max()
            .unwrap_or(0)
    }
}

/// What a scan of one side to move of a run counted (run colours).
#[derive(Clone, Debug, Default)]
struct RunSide {
    legal: u64,
    illegal: u64,
    /// Won for the run's white.
    won: u64,
    /// Won for the run's white only without the 50-move rule.
    cursed: u64,
    /// The run's black checkmated (btm, distance 0).
    mates: u64,
    stalemates: u64,
    by_distance: Vec<u64>,
    /// Longest distance and the first slot that holds it.
    longest: Option<(u8, u64)>,
    /// The first slot of a position won only without the rule.
    first_cursed: Option<u64>,
}

impl RunSide {
    fn new() -> RunSide {
        RunSide { by_distance: vec![0; MAX_DISTANCE + 1], ..Default::default() }
    }

    fn add(&mut self, o: &RunSide) {
        self.legal += o.legal;
        self.illegal += o.illegal;
        self.won += o.won;
        self.cursed += o.cursed;
        self.mates += o.mates;
        self.stalemates += o.stalemates;
        for (a, b) in self.by_distance.iter_mut().zip(&o.by_distance) {
            *a += b;
        }
        // The longest distance; among equals, the smallest slot (deterministic examples).
        self.longest = match (self.longest, o.longest) {
            (Some(a), Some(b)) => {
                Some(if (b.0, std::cmp::Reverse(b.1)) > (a.0, std::cmp::Reverse(a.1)) { b } else { a })
            }
            (a, b) => a.or(b),
        };
        self.first_cursed = match (self.first_cursed, o.first_cursed) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// The men of one storage word (all but the white king, whose square is the bit number).
struct WordMen {
    /// The men, the white king on a1 (see [`WordMen::at`]).
    men: Men,
    /// Index bits of the word (white-king bits zero).
    base: u64,
    /// With the black king on the diagonal, index bits of the transposed image (identical
    /// men in canonical order); the white king's bits are added per position.
    transposed_base: Option<u64>,
    /// Identical men stand in canonical (increasing square) order.
    canonical_order: bool,
    /// With pawns whose file pattern is its own mirror image (both orientations stored):
    /// the slot bits of the mirrored men; the mirrored white king is added per position.
    mirror_base: Option<u64>,
}

impl WordMen {
    /// The lanes (white-king squares) whose positions count: none when identical men stand
    /// out of order, else those not stored again at a smaller slot (the transposed image,
    /// the mirror image).
    fn counted_lanes(&self) -> u64 {
        if !self.canonical_order {
            return 0;
        }
        let kept = |image: u64, map: fn(Square) -> Square| {
            (0..64u8).filter(|&wk| image | map(wk) as u64 >= self.base | wk as u64).fold(0u64, |m, wk| m | 1 << wk)
        };
        let transposed = self.transposed_base.map_or(!0, |t| kept(t, |wk| Symmetry::TRANSPOSE.apply(wk)));
        let mirrored = self.mirror_base.map_or(!0, |m| kept(m, |wk| wk ^ 7));
        transposed & mirrored
    }

    /// The men of the word's position with the white king on `wk`.
    #[inline]
    fn at(&self, wk: Square) -> Men {
        let mut men = self.men;
        men.kings[Color::White.index()] = wk;
        men
    }
}

/// Scans one run's table.
struct RunScanner<'a> {
    layout: Layout,
    source: CodeSource<'a>,
    count_stalemates: bool,
    /// Without pawns and identical men, a word whose black king is off the diagonal has every
    /// position counted.
    plain_words: bool,
}

impl<'a> RunScanner<'a> {
    fn new(material: &Material, source: CodeSource<'a>, count_stalemates: bool) -> RunScanner<'a> {
        let layout = Layout::new(material);
        let plain_words = !layout.has_pawns() && !layout.has_identical_men();
        RunScanner { layout, source, count_stalemates, plain_words }
    }

    /// Index of men given as squares, identical men put in increasing square order.
    fn canonical_index(&self, bk_code: u8, squares: &mut [Square]) -> u64 {
        self.layout.sort_identical(squares);
        self.layout.index(bk_code, squares, 0)
    }

    fn word_men(&self, word: u64) -> WordMen {
        let base = self.layout.index_of_slot(word * 64);
        let n = self.layout.pieces.len();
        let mut squares = [0; MAX_PIECES];
        let (bk_code, _) = self.layout.decode_into(base, &mut squares[..n]);
        let bk = self.layout.bk_square(bk_code);
        let canonical_order = self.layout.identical_in_order(&squares[..n]);
        let Some(slices) = &self.layout.slices else {
            let transposed_base = on_diagonal(bk).then(|| {
                let mut t = squares.map(|s| Symmetry::TRANSPOSE.apply(s));
                self.canonical_index(bk_code, &mut t[..n])
            });
            let men = Men::of_squares(&self.layout, bk, &squares[..n], 0, Pawns::none());
            return WordMen { men, base, transposed_base, canonical_order, mirror_base: None };
        };
        let pawns = slices.pawns((base >> self.layout.total_bits) as u32);
        let mirror_base = (pawns.orientation() == std::cmp::Ordering::Equal).then(|| {
            let mut m = squares.map(|s| s ^ 7);
            self.layout.sort_identical(&mut m[..n]);
            let (slot, _) =
                self.layout.canonical_slot(bk ^ 7, &m[..n], 0, &pawns.mirrored()).expect("a stored mirror image");
            slot
        });
        let men = Men::of_squares(&self.layout, bk, &squares[..n], 0, pawns);
        WordMen { men, base, transposed_base: None, canonical_order, mirror_base }
    }

    /// Whether the side to move (run colours) is stalemated in a legal position.
    fn stalemated(&self, men: &WordMen, wk: Square, stm: Color) -> bool {
        let men = men.at(wk);
        !men.in_check(stm) && !men.has_legal_move(stm)
    }

    /// The position of a slot (run colours), if legal.
    fn position_of_slot(&self, slot: u64, stm: Color) -> Option<Position> {
        self.word_men(slot / 64).at((slot % 64) as Square).position(stm)
    }

    fn scan_words(&self, stm: Color, first: u64, codes: &[[u8; 64]], acc: &mut RunSide) {
        for (word, codes) in (first..).zip(codes) {
            let men = self.word_men(word);
            let counted = men.counted_lanes();
            for wk in 0..64u8 {
                let code = codes[wk as usize];
                if code == CODE_ILLEGAL {
                    acc.illegal += 1;
                    continue;
                }
                if counted >> wk & 1 == 0 {
                    continue;
                }
                acc.legal += 1;
                if is_beyond_rule(stm, code) {
                    acc.cursed += 1;
                    acc.first_cursed = acc.first_cursed.or(Some(word * 64 + wk as u64));
                }
                match code_to_distance(stm, code) {
                    None if code == CODE_LOST_UNMEASURED => acc.won += 1,
                    None => {
                        if self.count_stalemates && self.stalemated(&men, wk, stm) {
                            acc.stalemates += 1;
                        }
                    }
                    Some(d) => {
                        acc.won += 1;
                        acc.mates += (d == 0) as u64;
                        acc.by_distance[d as usize] += 1;
                        if acc.longest.is_none_or(|(l, _)| d > l) {
                            acc.longest = Some((d, word * 64 + wk as u64));
                        }
                    }
                }
            }
        }
    }

    /// The lanes of storage word `word` whose positions count ([`WordMen::counted_lanes`]),
    /// without decoding the word when every one counts.
    #[inline]
    fn counted_lanes(&self, word: u64) -> u64 {
        if self.plain_words && !self.layout.bk_on_diagonal(word) {
            return !0;
        }
        self.word_men(word).counted_lanes()
    }

    /// A summary's part (the side to move's distances and the longest; the other counts stay
    /// 0) of its codes of `words` (storage word, its codes), in increasing order. Codes are
    /// counted, then turned into distances; the longest is the first counted lane of the
    /// largest distance.
    fn count_distances(&self, stm: Color, words: impl Iterator<Item = (u64, [u8; 64])>, acc: &mut RunSide) {
        // A code's distance plus 1, 0 for none: what the longest is found by.
        let rank: [u8; 64] = std::array::from_fn(|c| code_to_distance(stm, c as u8).map_or(0, |d| d + 1));
        // Four histograms, a lane's by its number mod 4: runs of one code do not wait on one
        // counter.
        let mut by_code = [[0u64; 64]; 4];
        let mut longest = acc.longest.map_or(0, |(d, _)| d + 1);
        for (word, codes) in words {
            let counted = self.counted_lanes(word);
            let most = if counted == !0 {
                for (lane, &c) in codes.iter().enumerate() {
                    by_code[lane % 4][c as usize] += 1;
                }
                codes.iter().map(|&c| rank[c as usize & 63]).max().unwrap_or(0)
            } else {
                let mut most = 0;
                let mut lanes = counted;
                while lanes != 0 {
                    let c = codes[lanes.trailing_zeros() as usize];
                    lanes &= lanes - 1;
                    by_code[0][c as usize] += 1;
                    most = most.max(rank[c as usize & 63]);
                }
                most
            };
            if most > longest {
                longest = most;
                let wk = (0..64)
                    .find(|&wk| counted >> wk & 1 != 0 && rank[codes[wk] as usize & 63] == most)
                    .expect("the largest distance's lane");
                acc.longest = Some((most - 1, word * 64 + wk as u64));
            }
        }
        for c in 0..64u8 {
            if let Some(d) = code_to_distance(stm, c) {
                acc.by_distance[d as usize] += by_code.iter().map(|h| h[c as usize]).sum::<u64>();
            }
        }
    }

    /// Scans one side to move with `threads` workers, counting each batch of words with
    /// `count` (`scan_words`, or a summary's `count_distances`).
    fn scan(
        &self,
        stm: Color,
        threads: usize,
        count: fn(&Self, Color, u64, &[[u8; 64]], &mut RunSide),
    ) -> Result<RunSide, TableError> {
        let n_words = (self.source.n_slots() / 64) as usize;
        let batches = n_words.div_ceil(BATCH_WORDS);
        let mut total = RunSide::new();
        pipeline::run(
            batches,
            threads,
            Order::Sequence { window: 2 * threads.max(1) },
            |b| Ok::<_, TableError>(b * BATCH_WORDS),
            |_, start| {
                let mut acc = RunSide::new();
                let mut codes = Vec::with_capacity(BATCH_WORDS);
                self.source.read(stm, start, BATCH_WORDS.min(n_words - start), &mut codes)?;
                count(self, stm, start as u64, &codes, &mut acc);
                Ok(acc)
            },
            |_, acc| {
                total.add(&acc);
                Ok(())
            },
        )?;
        Ok(total)
    }
}

/// One run of a signature, scanned.
struct ScannedRun {
    /// The run's white is the signature's black.
    swapped: bool,
    summary: RunSummary,
    /// By the run's side to move: wtm, btm.
    sides: [RunSide; 2],
    fens: [Option<String>; 2],
    /// A position won only without the rule, wtm and btm (signature colours).
    cursed_fens: [Option<String>; 2],
    /// The header's longest cursed wins, wtm and btm.
    longest_cursed: [u16; 2],
}

/// Computes the statistics of a signature from the tables in `dir` (its runs must be built).
/// `threads` workers (0 = the number of cores).
pub fn signature_stats(dir: &Path, material: &Material, threads: usize) -> Result<SignatureStats, TableError> {
    let threads = if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
    let runs = material.runs_of_signature();
    if runs.is_empty() {
        return Err(TableError::NoTable(material.clone()));
    }
    let mut scanned = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        // Stalemates are counted on the first run only: both count the same positions.
        scanned.push(scan_run(dir, material, run, i == 0, threads)?);
    }
    Ok(SignatureStats {
        material: material.clone(),
        white_to_move: to_move(material, &scanned, Color::White),
        black_to_move: to_move(material, &scanned, Color::Black),
        runs: scanned.into_iter().map(|r| r.summary).collect(),
    })
}

/// The summary of a side to move of a run's value planes (what a compact table stores in
/// place of black's distances, and of white's that its distance section leaves out): the
/// histogram of distances and a longest one.
pub(crate) fn side_summary(
    src: &dyn PlaneSource,
    material: &Material,
    stm: Color,
    threads: usize,
) -> Result<Summary, TableError> {
    let counter = SummaryCounter::new(src, material);
    let count: fn(&RunScanner, Color, u64, &[[u8; 64]], &mut RunSide) = |s, stm, first, codes, acc| {
        s.count_distances(stm, (first..).zip(codes.iter().copied()), acc);
    };
    Ok(SummaryPart(counter.0.scan(stm, threads, count)?).summary())
}

/// Counts a side to move's summary of a run from its codes a caller decodes anyway (the
/// compaction, a block at a time): [`SummaryCounter::count`] on each block (any thread),
/// the parts added in any order, [`SummaryPart::summary`] of their sum.
pub(crate) struct SummaryCounter<'a>(RunScanner<'a>);

/// A side's summary of some blocks of a run.
pub(crate) struct SummaryPart(RunSide);

impl SummaryPart {
    pub(crate) fn new() -> SummaryPart {
        SummaryPart(RunSide::new())
    }

    pub(crate) fn add(&mut self, other: &SummaryPart) {
        self.0.add(&other.0);
    }

    /// The summary of a whole run's parts added up.
    pub(crate) fn summary(&self) -> Summary {
        Summary {
            by_distance: std::array::from_fn(|d| self.0.by_distance[d]),
            longest_slot: self.0.longest.map(|(_, slot)| slot),
        }
    }
}

impl<'a> SummaryCounter<'a> {
    pub(crate) fn new(src: &'a dyn PlaneSource, material: &Material) -> SummaryCounter<'a> {
        SummaryCounter(RunScanner::new(material, CodeSource::Plain(src), false))
    }

    /// The part of a side to move's values of words `first..` (their six bit planes); the
    /// codes of words without a distance are never spread.
    pub(crate) fn count(&self, stm: Color, first: u64, planes: &[[u64; 6]]) -> SummaryPart {
        let mut part = SummaryPart::new();
        let with_distance = |p: &[u64; 6]| match stm {
            Color::Black => at_most_mask(p, BTM_MAX_CODE) & !code_mask(p, CODE_NONE) != 0,
            Color::White => {
                (at_most_mask(p, WTM_MAX_CODE) & !code_mask(p, CODE_NONE)) | code_mask(p, CODE_EXACT_100) != 0
            }
        };
        let words = (first..).zip(planes).filter(|(_, p)| with_distance(p)).map(|(w, p)| (w, codes_of_planes(p)));
        self.0.count_distances(stm, words, &mut part.0);
        part
    }
}

/// Scans both sides to move of one run of `signature`.
fn scan_run(
    dir: &Path,
    signature: &Material,
    run: &Material,
    count_stalemates: bool,
    threads: usize,
) -> Result<ScannedRun, TableError> {
    let path = table_path(dir, run);
    if !path.exists() {
        return Err(TableError::Missing { path, signature: signature.clone() });
    }
    let table = CompactTable::open_run(&path, run)
        .map_err(|cause| TableError::Opening { material: run.clone(), cause: Box::new(cause) })?;
    let layout = Layout::new(run);
    let scanner = RunScanner::new(run, CodeSource::Compact(&table, &layout), count_stalemates);
    let mut sides = [
        scanner.scan(Color::White, threads, RunScanner::scan_words)?,
        scanner.scan(Color::Black, threads, RunScanner::scan_words)?,
    ];
    // Black's distances are not stored, nor white's wins by a zeroing move in version 6: the
    // summary holds their histograms.
    for (side, summary) in sides.iter_mut().zip([table.wtm_summary(), Some(table.summary())]) {
        let Some(summary) = summary else { continue };
        side.by_distance = summary.by_distance.to_vec();
        side.mates = summary.by_distance[0];
        side.longest = summary.longest_slot.map(|slot| (summary.longest_distance(), slot));
    }
    let swapped = run != signature;
    // The FEN (in the signature's colours) of a slot each side to move picks.
    let fens_of = |pick: fn(&RunSide) -> Option<u64>| {
        [Color::White, Color::Black].map(|stm| {
            let pos = pick(&sides[stm.index()]).and_then(|slot| scanner.position_of_slot(slot, stm));
            pos.map(|p| if swapped { p.flipped() } else { p }.fen())
        })
    };
    let fens = fens_of(|s| s.longest.map(|(_, slot)| slot));
    let cursed_fens = fens_of(|s| s.first_cursed);
    let meta = &table.header.meta;
    let summary = RunSummary {
        run: run.clone(),
        slots: table.header.n_slots,
        illegal: [sides[0].illegal, sides[1].illegal],
        legal: [sides[0].legal, sides[1].legal],
        five_valued: meta.five_valued,
        edge_exact: meta.edge_exact,
    };
    Ok(ScannedRun { swapped, summary, sides, fens, cursed_fens, longest_cursed: meta.longest_cursed })
}

/// One side to move of a signature, from the scans of its runs (in the signature's colours).
fn to_move(material: &Material, scanned: &[ScannedRun], side: Color) -> ToMove {
    let first = &scanned[0];
    let in_run = |r: &ScannedRun| if r.swapped { side.other() } else { side }.index();
    let base = &first.sides[in_run(first)];
    let mut t = ToMove {
        side,
        legal: base.legal,
        white_wins: 0,
        black_wins: 0,
        white_cursed: 0,
        black_cursed: 0,
        longest_cursed_white: 0,
        longest_cursed_black: 0,
        cursed_white_example: None,
        cursed_black_example: None,
        stalemates: base.stalemates,
        checkmates: 0,
        white_by_distance: vec![0; MAX_DISTANCE + 1],
        black_by_distance: vec![0; MAX_DISTANCE + 1],
        longest_white: None,
        longest_black: None,
    };
    // Each colour's wins come from the run where it is white; a symmetric signature has
    // one run, whose black wins are its white wins with the colours swapped.
    let mut sources: Vec<(Color, &ScannedRun, usize, bool)> =
        scanned.iter().map(|r| (if r.swapped { Color::Black } else { Color::White }, r, in_run(r), false)).collect();
    if material.is_symmetric() {
        sources.push((Color::Black, first, side.other().index(), true));
    }
    for (winner, r, s, flip) in sources {
        let side_stats = &r.sides[s];
        let fen = |f: &Option<String>| f.as_deref().map(|f| if flip { flip_fen(f) } else { f.to_string() });
        let longest = side_stats.longest.map(|(plies, _)| Longest { plies, fen: fen(&r.fens[s]).unwrap_or_default() });
        // Checkmates: distance 0 of a win for the side not to move.
        if winner != side {
            t.checkmates += side_stats.mates;
        }
        if winner == Color::White {
            t.white_cursed = side_stats.cursed;
            t.longest_cursed_white = r.longest_cursed[s];
            t.cursed_white_example = fen(&r.cursed_fens[s]);
            t.white_wins = side_stats.won;
            t.white_by_distance = side_stats.by_distance.clone();
            t.longest_white = longest;
        } else {
            t.black_cursed = side_stats.cursed;
            t.longest_cursed_black = r.longest_cursed[s];
            t.cursed_black_example = fen(&r.cursed_fens[s]);
            t.black_wins = side_stats.won;
            t.black_by_distance = side_stats.by_distance.clone();
            t.longest_black = longest;
        }
    }
    t
}

/// The FEN of the colour-swapped position.
fn flip_fen(fen: &str) -> String {
    Position::from_fen(fen).map(|p| p.flipped().fen()).unwrap_or_else(|_| fen.to_string())
}
