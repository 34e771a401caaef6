//! The [`Tablebase`]: a folder of tables opened once, its runs reached by material without
//! locking, and the probes of a position (win/draw/loss, distance, five-valued category).

use super::result::{Category, Probe, Wdl};
use super::run::{code_distance, Located, Run};
use crate::chess::{Color, Material, Move, Position, RULE_PLIES};
use crate::index::Layout;
use crate::table::cache::{BlockCache, DEFAULT_CACHE_BYTES};
use crate::table::compact::CompactTable;
use crate::table::keys::{material_of_key, run_key, PIECE_SETS};
use crate::table::men::Men;
use crate::table::values::{Class, WTM_MAX_CODE};
use crate::table::version::table_path;
use crate::table::TableError;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The result of a position where the side to move has no legal move: checkmate (a loss)
/// or stalemate (a draw); `None` when it has one.
#[inline]
fn game_over(men: &Men, pos: &Position) -> Option<Wdl> {
    let (has_move, in_check) = if men.pawns.n == 0 {
        (men.has_legal_move(Color::White), men.in_check(Color::White))
    } else {
        // Pawn moves (pushes, promotions, en passant): the plain board decides.
        (pos.has_legal_move(), pos.in_check(pos.turn))
    };
    (!has_move).then_some(if in_check { Wdl::Loss } else { Wdl::Draw })
}

/// An error of the search for a winning zeroing move of a position of `run`: a missing
/// table is a sub-endgame's that the run's distances need.
#[cold]
fn searched(e: TableError, run: &Run) -> TableError {
    match e {
        TableError::Missing { path, signature } => {
            TableError::MissingForSearch { path, signature, run: run.layout.material.clone() }
        }
        e => e,
    }
}

/// A folder of tables, opened once and shared between threads.
///
/// Runs are mapped and verified on first use; each is then reached through a fixed table
/// indexed by the material, without locking. See the [module documentation](self) for an
/// example.
pub struct Tablebase {
    dir: PathBuf,
    /// Open runs, indexed by [`run_key`].
    runs: Box<[OnceLock<Arc<Run>>]>,
    /// Held while a run is being opened, so that each is mapped and checked once.
    opening: Mutex<()>,
    /// Decoded blocks of every open run.
    cache: Arc<BlockCache>,
}

/// Children of a lost position whose distances a whole [`Tablebase::loser_distance`] fetches
/// before it reads them: enough to overlap their memory latencies (a lone king and rook give at most 22
/// quiet moves, a queen 35). Public for the tests that pick positions with more.
#[doc(hidden)]
pub const LOSER_BATCH: usize = 16;

impl Tablebase {
    /// Opens a folder of tables (files are mapped on first use) with a block cache of
    /// [`DEFAULT_CACHE_BYTES`].
    pub fn open(dir: &Path) -> Result<Tablebase, TableError> {
        Tablebase::with_cache(dir, DEFAULT_CACHE_BYTES)
    }

    /// Opens a folder of tables with a cache of at most `cache_bytes` of decoded blocks
    /// (a probe decodes a block of 64 KiB the first time it reads it).
    pub fn with_cache(dir: &Path, cache_bytes: u64) -> Result<Tablebase, TableError> {
        if !dir.is_dir() {
            return Err(TableError::NoFolder(dir.to_path_buf()));
        }
        Ok(Tablebase {
            dir: dir.to_path_buf(),
            runs: (0..PIECE_SETS * PIECE_SETS).map(|_| OnceLock::new()).collect(),
            opening: Mutex::new(()),
            cache: Arc::new(BlockCache::new(cache_bytes)?),
        })
    }

    /// Bytes of decoded blocks held in the cache now.
    pub fn cached_bytes(&self) -> u64 {
        self.cache.weight()
    }

    /// The folder of the tables.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The run of a material, mapped (and its checksums verified) on first use.
    pub fn run(&self, m: &Material) -> Result<Arc<Run>, TableError> {
        let key = run_key(m).ok_or_else(|| TableError::TooManyPieces(m.clone()))?;
        self.open_run(key, m).cloned()
    }

    /// The open run at `key`, or opens it.
    #[inline]
    pub(super) fn run_at(&self, key: usize) -> Result<&Run, TableError> {
        match self.runs[key].get() {
            Some(r) => Ok(r),
            None => self.open_run(key, &material_of_key(key)).map(|r| &**r),
        }
    }

    #[cold]
    fn open_run(&self, key: usize, m: &Material) -> Result<&Arc<Run>, TableError> {
        if let Some(r) = self.runs[key].get() {
            return Ok(r);
        }
        let _guard = self.opening.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = self.runs[key].get() {
            return Ok(r);
        }
        let path = table_path(&self.dir, m);
        if !path.exists() {
            return Err(TableError::Missing { path, signature: m.clone() });
        }
        // The header and block indexes are checked here; each block when first decoded.
        let file = CompactTable::open_run(&path, m)
            .map_err(|cause| TableError::Opening { material: m.clone(), cause: Box::new(cause) })?;
        let run = Arc::new(Run { layout: Layout::new(m), file, cache: self.cache.clone() });
        Ok(self.runs[key].get_or_init(|| run))
    }

    /// Win/draw/loss and distance of a position for the side to move.
    ///
    /// `wdl` is 1, 0 or -1 under the 50-move rule given the position's half-move clock;
    /// `dtz` is the stored distance in plies to mate or a zeroing move (odd when the winner
    /// moves, even when the loser moves, 0 when checkmated), signed like `wdl`, 0 for a draw.
    /// Once the position's tables are open this allocates nothing.
    ///
    /// ```
    /// # use tbstream::{generate, GenOptions, SilentProgress, Material, Position, Tablebase};
    /// # let dir = tempfile::tempdir()?;
    /// # generate(&[Material::parse("KRvK")?], &GenOptions::new(dir.path(), 1), &SilentProgress)?;
    /// let tb = Tablebase::open(dir.path())?;
    /// // Black to move loses in 32 plies ...
    /// let p = tb.probe(&Position::from_fen("8/8/8/8/8/8/1Rk5/K7 b - - 0 1")?)?;
    /// assert_eq!((p.wdl, p.dtz), (-1, -32));
    /// // ... unless 69 half-moves have gone by without a capture: then it is a draw.
    /// let p = tb.probe(&Position::from_fen("8/8/8/8/8/8/1Rk5/K7 b - - 69 1")?)?;
    /// assert_eq!((p.wdl, p.dtz), (0, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn probe(&self, pos: &Position) -> Result<Probe, TableError> {
        let men = Men::gather(pos, pos.turn == Color::Black);
        if let Some(end) = game_over(&men, pos) {
            return Ok(Probe { wdl: end.as_i8(), dtz: 0 });
        }
        let stored = self.probe_stored(pos, &men)?;
        if pos.ep.is_some() {
            return self.with_en_passant(pos, stored);
        }
        Ok(stored)
    }

    /// The five-valued result of a position with a fresh 50-move counter (its half-move
    /// clock is ignored); `None` when a table it reads does not mark all its cursed
    /// positions, or cannot tell a win of exactly 100 plies from a cursed win of 101 there
    /// (header flags, `docs/FORMAT.md`).
    pub fn category(&self, pos: &Position) -> Result<Option<Category>, TableError> {
        let men = Men::gather(pos, pos.turn == Color::Black);
        // Mates and stalemates are stored (see `probe_wdl`): the moves are looked at only
        // when a table cannot be read, or cannot tell a draw.
        let ended = || game_over(&men, pos).map(|end| if end == Wdl::Loss { Category::Loss } else { Category::Draw });
        let read = self.read_runs(
            &men,
            |run, stm, at| {
                let meta = &run.file.header.meta;
                Ok((run.kept_class(stm, at)?, meta.five_valued, meta.edge_exact))
            },
            |(class, ..)| class != Class::NotWon,
        );
        let (white, black) = match read {
            Ok(found) => found,
            Err(e) => return ended().map(Some).ok_or(e),
        };
        let complete = white.is_none_or(|w| w.1) && black.is_none_or(|b| b.1);
        if white.is_some_and(|w| w.0 == Class::Edge && !w.2) {
            // A win of exactly 100 plies or a cursed win of 101: not told apart in this table.
            return Ok(None);
        }
        let stored = match (white.map(|w| w.0), black.map(|b| b.0)) {
            (Some(Class::Win), _) => Category::Win,
            (Some(Class::Cursed | Class::Edge), _) => Category::CursedWin,
            (_, Some(Class::Win)) => Category::Loss,
            (_, Some(Class::Cursed)) => Category::BlessedLoss,
            _ => Category::Draw,
        };
        if !complete && stored == Category::Draw {
            return Ok(ended());
        }
        if pos.ep.is_none() {
            return Ok(Some(stored));
        }
        // En passant (no stored position has it): a capture is a zeroing move.
        let moves = pos.legal_moves();
        let mut best: Option<Category> = None;
        for &mv in moves.iter().filter(|m| m.en_passant) {
            match self.category(&pos.play(mv))? {
                Some(child) => best = best.max(Some(child.flip())),
                None => return Ok(None),
            }
        }
        Ok(Some(match best {
            Some(b) if moves.iter().all(|m| m.en_passant) => b,
            Some(b) => b.max(stored),
            None => stored,
        }))
    }

    /// The probe of a position as stored (no en-passant capture available), the side to move
    /// having a legal move: the side to move's wins are stored with their distances; its
    /// losses with their class only, the distance searched one ply deep
    /// ([`Tablebase::loser_distance`]).
    #[inline]
    fn probe_stored(&self, pos: &Position, men: &Men) -> Result<Probe, TableError> {
        let g50 = RULE_PLIES as i32 - pos.halfmove.min(RULE_PLIES as u32 + 1) as i32;
        let (white, black) =
            self.read_runs(men, |run, stm, at| Ok((run.kept_class(stm, at)?, at)), |(c, _)| c == Class::Win)?;
        let [w, b] = men.piece_sets();
        if let Some((Class::Win, at)) = white {
            let run = self.run_at(w * PIECE_SETS + b)?;
            let d = self.win_distance(pos, run, at)?;
            return Ok(if d as i32 <= g50 { Probe { wdl: 1, dtz: d as i32 } } else { Probe { wdl: 0, dtz: 0 } });
        }
        if let Some((Class::Win, _)) = black {
            let run = self.run_at(b * PIECE_SETS + w)?;
            let d = self.loser_distance::<LOSER_BATCH>(pos, men, run, None)?.expect("no bound");
            if d as i32 <= g50 {
                return Ok(Probe { wdl: -1, dtz: -(d as i32) });
            }
        }
        Ok(Probe { wdl: 0, dtz: 0 })
    }

    /// The distance of a position won for the side to move (found at `at` of `run`, white's
    /// run with the men as they are): the stored code, unless the table leaves the wins by a
    /// zeroing move out of its distance section (format 6) and the code read is not 1 (a
    /// don't-care holds any code): then a winning zeroing move makes it 1 ply.
    #[inline]
    fn win_distance(&self, pos: &Position, run: &Run, at: Located) -> Result<u8, TableError> {
        let code = run.kept_dtz_code(at)?;
        if code != 1 && run.file.header.zeroing_dont_cares && self.wins_by_zeroing(pos).map_err(|e| searched(e, run))? {
            return Ok(1);
        }
        code_distance(run, at.slot, code)
    }

    /// Whether the side to move of `pos` wins by a zeroing move: a capture or a pawn move
    /// after which the other side, to move with a fresh counter, is lost.
    fn wins_by_zeroing(&self, pos: &Position) -> Result<bool, TableError> {
        if pos.has_pawns() || pos.ep.is_some() {
            let mut failed = None;
            let found = pos.find_legal_move(|mv| {
                if !mv.is_zeroing() {
                    return false;
                }
                match self.probe_wdl(&pos.play(mv)) {
                    Ok(wdl) => wdl == Wdl::Loss,
                    Err(e) => {
                        failed = Some(e);
                        true
                    }
                }
            });
            return match failed {
                Some(e) => Err(e),
                None => Ok(found.is_some()),
            };
        }
        // The side to move as black, as a loser's search finds its children.
        self.wins_by_capture(&Men::gather(pos, pos.turn == Color::White))
    }

    /// Whether black, to move in `men` (no pawns), wins by a capture: after it white, to move,
    /// is lost with a fresh counter, which black's run alone says (its btm class; a bare
    /// black king wins nothing).
    fn wins_by_capture(&self, men: &Men) -> Result<bool, TableError> {
        let mut failed = None;
        let found = men.for_each_capture(Color::Black, &mut |_, child| {
            let [w, b] = child.piece_sets();
            if b == 0 {
                return false;
            }
            let lost =
                self.run_at(b * PIECE_SETS + w).and_then(|run| run.kept_class(Color::Black, run.slot(child, true)));
            match lost {
                Ok(class) => class == Class::Win,
                Err(e) => {
                    failed = Some(e);
                    true
                }
            }
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }

    /// The distance of a position lost for the side to move (which has a legal move), in
    /// `run`, the winner's run: black's distances are not stored, but a loser's distance is
    /// two plies more than the longest of the winner's distances after its moves other than
    /// zeroing ones (captures and pawn moves, which count as distance 0), and at least 2.
    /// `men` are the position's, the side to move as white ([`Men::gather`]). With `bound`,
    /// returns `None` as soon as the distance is found to exceed it.
    ///
    /// The children are read `N` at a time, each one's word fetched when it is found, so
    /// that the reads' memory latencies overlap (a decoded block's word is mostly a miss in
    /// every cache): [`LOSER_BATCH`] for a whole search, 1 for a bounded one that mostly stops
    /// at its first reply (finding children it would not read costs more than the overlap
    /// gains: 4 at a time made best moves 0.94x). A batch is read longest first: where the
    /// table leaves the wins by a zeroing move out (format 6), a child's code is taken once
    /// its winning zeroing moves are searched, and only the codes that would lengthen the
    /// loss need the search (a child that wins by one is 1 ply from its win, the least).
    pub(super) fn loser_distance<const N: usize>(
        &self,
        pos: &Position,
        men: &Men,
        run: &Run,
        bound: Option<u8>,
    ) -> Result<Option<u8>, TableError> {
        let (mut worst, mut failed) = (1u8, None);
        let dont_cares = run.file.header.zeroing_dont_cares;
        // Per pending child: where its distance code lies, its men, and the move (with pawns).
        let mut batch: [Option<(u64, Men, Option<Move>)>; N] = [None; N];
        let mut pending = 0;
        // Reads the pending children's distances; true once the search can stop.
        let drain = |batch: &[Option<(u64, Men, Option<Move>)>], worst: &mut u8, failed: &mut Option<TableError>| {
            // (sort key, code, child): codes that are no distance first (a don't-care's, or
            // a damaged table's), then the longest.
            let mut read = [(0u8, 0u8, 0usize); N];
            let mut n = 0;
            for (i, &(stored, ..)) in batch.iter().enumerate().filter_map(|(i, b)| b.as_ref().map(|b| (i, b))) {
                match run.dtz_code_at(stored) {
                    Ok(c) => {
                        let key = if (1..=WTM_MAX_CODE).contains(&c) { c } else { u8::MAX };
                        let at = read[..n].iter().position(|&(k, ..)| k < key).unwrap_or(n);
                        read.copy_within(at..n, at + 1);
                        read[at] = (key, c, i);
                        n += 1;
                    }
                    Err(e) => {
                        *failed = Some(e);
                        return true;
                    }
                }
            }
            for &(key, code, i) in &read[..n] {
                if key <= *worst {
                    break;
                }
                let (_, child, mv) = batch[i].as_ref().expect("a pending child");
                if dont_cares {
                    let by_zeroing = match mv {
                        Some(mv) => self.wins_by_zeroing(&pos.play(*mv)),
                        None => self.wins_by_capture(child),
                    };
                    match by_zeroing {
                        Ok(true) => continue,
                        Ok(false) => {}
                        Err(e) => {
                            *failed = Some(searched(e, run));
                            return true;
                        }
                    }
                }
                if key == u8::MAX {
                    let after = mv.map_or_else(|| "a quiet move".to_string(), |mv| mv.to_string());
                    *failed = Some(TableError::Wrong(format!(
                        "{}: {} is lost, but after {after} the winner's distance code is {code} (table damaged)",
                        run.file.path.display(),
                        pos.fen(),
                    )));
                    return true;
                }
                *worst = code;
                // The batch's longest that stands: the rest are no longer.
                break;
            }
            bound.is_some_and(|b| 2 * *worst > b)
        };
        let mut after = |child: &Men, mv: Option<Move>| {
            // The winner (black of `child`) is the run's white, to move.
            batch[pending] = Some((run.fetch_dtz_code(run.slot(child, true)), *child, mv));
            pending += 1;
            if pending < N {
                return false;
            }
            pending = 0;
            drain(&batch, &mut worst, &mut failed)
        };
        let mut stopped = if men.pawns.n == 0 {
            men.find_quiet_move(Color::White, |child| after(child, None))
        } else {
            pos.find_legal_move(|mv| {
                if mv.is_zeroing() {
                    return false;
                }
                let child = pos.play(mv);
                // Gathered as the loser's (to move in `pos`): white of the men.
                after(&Men::gather(&child, pos.turn == Color::Black), Some(mv))
            })
            .is_some()
        };
        if !stopped {
            stopped = drain(&batch[..pending], &mut worst, &mut failed);
        }
        if let Some(e) = failed {
            return Err(e);
        }
        Ok((!stopped).then_some(2 * worst))
    }

    /// The probe of a position with an en-passant capture available (which no stored
    /// position has): the better of the stored value and the captures; a capture that wins is
    /// a zeroing move (distance 1), and when only en-passant captures are legal, they decide.
    #[cold]
    fn with_en_passant(&self, pos: &Position, stored: Probe) -> Result<Probe, TableError> {
        let moves = pos.legal_moves();
        let mut best: Option<i8> = None;
        for &mv in moves.iter().filter(|m| m.en_passant) {
            let child = self.probe(&pos.play(mv))?;
            best = best.max(Some(-child.wdl));
        }
        let Some(best) = best else { return Ok(stored) };
        if best == 1 {
            return Ok(Probe { wdl: 1, dtz: 1 });
        }
        if moves.iter().all(|m| m.en_passant) {
            return Ok(Probe { wdl: best, dtz: if best < 0 { -2 } else { 0 } });
        }
        Ok(match stored.wdl {
            -1 if best == 0 => Probe { wdl: 0, dtz: 0 },
            -1 => Probe { wdl: -1, dtz: stored.dtz.min(-2) },
            _ => stored,
        })
    }

    /// Reads the two runs a position (white to move) needs: white's run with the men as they
    /// are (`W v B`, white to move), then, unless white's answer `decides`, black's run with
    /// the colour swap flipped (`B v W`, black to move). A run of a bare side is skipped
    /// (`None`). Runs are opened as the plain algorithm would: white's first, black's only
    /// when needed. When both are already open both reads are issued before either is
    /// looked at, so that their cache misses overlap.
    #[inline(always)]
    fn read_runs<T: Copy>(
        &self,
        men: &Men,
        read: impl Fn(&Run, Color, Located) -> Result<T, TableError>,
        decides: impl Fn(T) -> bool,
    ) -> Result<(Option<T>, Option<T>), TableError> {
        let [w, b] = men.piece_sets();
        let white_run = if w != 0 { Some(self.run_at(w * PIECE_SETS + b)?) } else { None };
        let black_key = b * PIECE_SETS + w;
        let early = if b != 0 { self.runs[black_key].get() } else { None };
        let early = early.map(|run| read(run, Color::Black, run.slot(men, true))).transpose()?;
        let white = white_run.map(|run| read(run, Color::White, run.slot(men, false))).transpose()?;
        if b == 0 || white.is_some_and(&decides) {
            return Ok((white, None));
        }
        let black = match early {
            Some(v) => v,
            None => {
                let run = self.run_at(black_key)?;
                read(run, Color::Black, run.slot(men, true))?
            }
        };
        Ok((white, Some(black)))
    }

    /// Win, draw or loss of a position for the side to move under the 50-move rule (the
    /// `wdl` of [`Tablebase::probe`], cheaper): with a half-move clock of 0 it reads one bit of
    /// the final bitbases (`t99`, `t100`) per run instead of a 6-bit value. Once the
    /// position's tables are open this allocates nothing.
    ///
    /// ```
    /// # use tbstream::{generate, GenOptions, SilentProgress, Material, Position, Tablebase, Wdl};
    /// # let dir = tempfile::tempdir()?;
    /// # generate(&[Material::parse("KRvK")?], &GenOptions::new(dir.path(), 1), &SilentProgress)?;
    /// let tb = Tablebase::open(dir.path())?;
    /// let win = Position::from_fen("8/8/8/8/8/2k5/8/KR6 w - - 0 1")?;
    /// assert_eq!(tb.probe_wdl(&win)?, Wdl::Win);
    /// // The rook hangs with black to move: black takes it and draws.
    /// let hanging = Position::from_fen("8/8/8/8/8/1Rk5/8/K7 b - - 0 1")?;
    /// assert_eq!(tb.probe_wdl(&hanging)?, Wdl::Draw);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn probe_wdl(&self, pos: &Position) -> Result<Wdl, TableError> {
        if pos.halfmove != 0 || pos.ep.is_some() {
            return self.probe(pos).map(|p| Wdl::from_sign(p.wdl));
        }
        let men = Men::gather(pos, pos.turn == Color::Black);
        // A fresh clock: a win (at most 100 plies) is class 1 of the winner's run, with either
        // side to move. The tables hold mates (lost) and stalemates (not won by either side)
        // too, so the moves are looked at only when a table cannot be read: a mate or a
        // stalemate needs none.
        let read = self.read_runs(&men, |run, stm, at| Ok(run.kept_class(stm, at)? == Class::Win), |won| won);
        let (white, black) = match read {
            Ok(found) => found,
            Err(e) => return game_over(&men, pos).ok_or(e),
        };
        Ok(if white == Some(true) {
            Wdl::Win
        } else if black == Some(true) {
            Wdl::Loss
        } else {
            Wdl::Draw
        })
    }
}
