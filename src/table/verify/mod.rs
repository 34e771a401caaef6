//! An independent verifier of finished tables.
//!
//! Owns: the independent check of finished tables. May import the formats, `men`, `values`
//! and `stats`' code sources, never `solve` (it must not share the generator's code) or
//! `probe`.
//!
//! Every stored value of a run's table file is re-derived from the stored values of its
//! successors with a plain one-position-at-a-time move generator (the moves of
//! [`Men`](super::men::Men), on the attack tables of [`crate::chess::attacks`]): it shares no
//! code with the bit-parallel passes of `solve`. Captures probe the final bitbases of the
//! sub-endgames' files in the same folder. The rules (values for "white wins" in the run of
//! `W v B`, distances in plies):
//!
//! - legal wtm: the least odd `k` in 1..=99 such that some capture leads to a sub-position lost
//!   for black with a fresh counter (the sub-run's `t100`), giving `k = 1`, or some non-capture
//!   leads to a btm position of the run with value `k - 1`; otherwise not won (code 0);
//! - legal btm: 0 if checkmated; otherwise the least even `k` in 2..=100 such that every capture
//!   leads to a sub-position won for white with a fresh counter (the sub-run's `t99`; a bare
//!   white king wins nothing) and every non-capture to a wtm position of the run with a value
//!   of at most `k - 1`; not won (code 0) if there is no such `k` or black is stalemated;
//! - illegal positions (two men on a square, or the side not to move in check) have code 63,
//!   `t99 = 1` (wtm) and `t100 = 0` (btm);
//! - a legal position's bitbase bit is set iff its value code is not 0;
//! - all 8 symmetric images of a position hold the same value.
//!
//! In a version 6 table (`zeroing_dont_cares`) a legal wtm position of class 1 whose side to
//! move wins by a zeroing move (a capture or a promotion into a sub-position lost for black
//! with a fresh counter, or a pawn move into this run's btm class 1: the `k = 1` of a
//! conversion above) stores a don't-care distance: the verifier reads its code as 1 whatever
//! is stored (it **resolves** white's codes where it reads them: the wtm derivation's
//! comparison, black's quiet moves into it, the symmetric images, the counts, the longest
//! distance and white's summary). Its class must still be 1; a win in 1 ply by a quiet mate
//! alone must hold code 1, and every other code is checked as before. The summary section
//! then holds white's distances too, checked as black's are.
//!
//! A slot whose position is the image of a smaller slot (the black king on the a1-h8 diagonal
//! stores both a position and its transpose) is checked against that slot instead of being
//! derived again; since every value is then locally consistent with its successors, it is the
//! exact fixpoint of the definitions above (every win bottoms out in a capture or a mate).
//!
//! With pawns every pawn move is a conversion too (pushes and double steps read this run's own
//! final bitbases, promotions and captures a sub-run's: [`conversions`]), en passant is valued
//! at the double step, and only the left-right mirror is a symmetry.
//!
//! The methods, one per file: [`positions`] checks position by position, on tables expanded
//! into uncompressed temporary files ([`expand`], with [`Method::Positions`]); [`words`]
//! checks a word of 64 positions at a time, out of core (the default; with pawns a slice at a
//! time); [`sample`] checks random positions where they stand in the compact tables.
//! [`checks`] holds what every method compares.

use super::compact::{CompactTable, Summary};
use super::error::TableError;
use super::stats::side_summary;
use super::uncompressed::TableFile;
use super::version::table_path;
use crate::chess::{Color, Material, RULE_PLIES};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Returns a [`TableError::Wrong`] with a formatted message naming the position.
macro_rules! wrong {
    ($($arg:tt)*) => {
        return Err(TableError::Wrong(format!($($arg)*)))
    };
}

mod checks;
mod conversions;
mod expand;
mod positions;
pub mod sample;
mod words;

#[doc(hidden)]
pub use words::force_baseline_lanes;

use checks::side_name;
use expand::{expand, Expanded};

/// What was checked on one side to move of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideReport {
    /// Illegal or broken positions (code 63).
    pub illegal: u64,
    /// Legal positions won for white (wtm) or lost for black (btm).
    pub won: u64,
    /// Legal positions not won for white.
    pub not_won: u64,
    /// Legal slots whose value was re-derived from the successors.
    pub derived: u64,
    /// Legal slots holding a symmetric image of a smaller slot, checked against it.
    pub by_symmetry: u64,
    /// Black checkmated (btm, distance 0).
    pub mates: u64,
    /// Black stalemated (btm).
    pub stalemates: u64,
    /// Legal positions won for white only without the 50-move rule.
    pub cursed: u64,
    /// Longest stored distance in plies, if any position is won.
    pub longest: Option<u8>,
}

impl SideReport {
    fn add(&mut self, o: &SideReport) {
        self.illegal += o.illegal;
        self.won += o.won;
        self.not_won += o.not_won;
        self.cursed += o.cursed;
        self.derived += o.derived;
        self.by_symmetry += o.by_symmetry;
        self.mates += o.mates;
        self.stalemates += o.stalemates;
        self.longest = self.longest.max(o.longest);
    }

    /// Slots checked (every stored slot of the side).
    pub fn slots(&self) -> u64 {
        self.illegal + self.won + self.not_won + self.cursed
    }
}

/// The result of verifying one run's table.
#[derive(Clone, Debug)]
pub struct VerifyReport {
    pub material: Material,
    pub path: PathBuf,
    /// Stored positions per side to move.
    pub n_slots: u64,
    /// The header's last step.
    pub last_step: u8,
    pub wtm: SideReport,
    pub btm: SideReport,
    /// Sub-endgame runs probed by captures (bare white kings excluded).
    pub sub_runs: Vec<Material>,
    pub secs: f64,
}

/// A sub-endgame's (expanded) table, or `None` when white is left with a bare king (no wins).
type SubTable<'a> = Option<&'a TableFile>;

/// What the checks of one run read: its compact table, the table expanded, and its
/// sub-endgames' tables expanded.
struct Sources<'a> {
    table: &'a CompactTable,
    own: &'a Expanded,
    subs: &'a BTreeMap<Material, SubTable<'a>>,
}

/// Opens a run's compact table (its header and block indexes checked; its blocks are
/// checked as they are decoded).
fn open_compact(tables_dir: &Path, run: &Material) -> Result<CompactTable, TableError> {
    let path = table_path(tables_dir, run);
    if !path.exists() {
        return Err(TableError::Missing { path, signature: run.clone() });
    }
    Ok(CompactTable::open_run(&path, run)?)
}

/// The distance summaries a check counts from the values it checked (white's resolved):
/// black's, and white's (`None` where not counted: by the position-by-position check of a
/// table that holds none).
struct Summaries {
    wtm: Option<Summary>,
    btm: Summary,
}

/// What the slot checks of one run found.
struct Checked {
    wtm: SideReport,
    btm: SideReport,
    /// Sub-endgame runs read (bare white kings excluded).
    sub_runs: Vec<Material>,
}

/// Verifies the table of one white-wins run in `tables_dir` against its successors (the run
/// itself and the sub-endgames' tables, which must be in the same folder). `threads` workers
/// (0 = the number of cores); `progress(done, total)` is called now and then with slots
/// checked so far (both sides to move). Returns the counts, or an error naming the first wrong
/// position (as a FEN, with its stored and expected values), a damaged or missing file.
pub fn verify_run(
    tables_dir: &Path,
    run: &Material,
    threads: usize,
    progress: impl FnMut(u64, u64),
) -> Result<VerifyReport, TableError> {
    verify_run_with(tables_dir, run, threads, Method::Words, None, progress)
}

/// How runs are checked: a word of 64 positions at a time ([`words`], the default), or
/// position by position on expanded tables (slower, and its temporary files take seven bits
/// per position and side: kept as a second independent derivation that tests compare with
/// the first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Words,
    Positions,
}

/// The least RAM, in bytes, a full check of `run` takes with `threads` workers, checked a
/// word at a time in the smallest chunks: the sub-endgames' values (a byte per position
/// without pawns, two bits with pawns, with the slices a push reaches) and a chunk (KQRvKQR
/// 812 MiB); `None` for a run where white is bare (nothing to check).
pub fn memory_needed(run: &Material, threads: usize) -> Option<u64> {
    (!run.white_bare()).then(|| words::memory_needed(run, threads))
}

/// [`verify_run`] with the method chosen, and the RAM the word check may
/// take (`None`: no limit; the chunks then take the whole run at once).
pub fn verify_run_with(
    tables_dir: &Path,
    run: &Material,
    threads: usize,
    method: Method,
    budget: Option<u64>,
    mut progress: impl FnMut(u64, u64),
) -> Result<VerifyReport, TableError> {
    let t = Instant::now();
    if run.white_bare() {
        return Err(TableError::BareWhite(run.clone()));
    }
    let threads = if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
    let path = table_path(tables_dir, run);
    let verifying = |needed: Option<&Material>, e: TableError| TableError::Verifying {
        run: run.clone(),
        needed: needed.cloned(),
        cause: Box::new(e),
    };
    let table = open_compact(tables_dir, run).map_err(|e| verifying(None, e))?;
    let (checked, summaries) = if method == Method::Words {
        let (checked, [wtm, btm]) = words::verify_words(run, &table, tables_dir, threads, budget, &mut progress)
            .map_err(|e| match e {
                e @ TableError::Verifying { .. } | e @ TableError::Wrong(_) => e,
                e => verifying(None, e),
            })?;
        (checked, Summaries { wtm: Some(wtm), btm })
    } else {
        verify_expanded(run, &table, tables_dir, threads, &mut progress)?
    };
    // White's summary (version 6) is the one of its resolved values: a win by a zeroing move
    // counts as 1 ply, whatever its stored byte.
    for (side, stored, counted) in [
        (Color::Black, Some(table.summary()), Some(&summaries.btm)),
        (Color::White, table.wtm_summary(), summaries.wtm.as_ref()),
    ] {
        let Some(stored) = stored else { continue };
        let counted = counted.expect("a side's summary is counted where the table holds one");
        if stored != *counted {
            wrong!(
                "{run}: the table's summary of {} distances ({:?}, longest at slot {:?}) is not the one its values give ({:?}, {:?})",
                if side == Color::White { "white-to-move" } else { "black-to-move" },
                stored.by_distance,
                stored.longest_slot,
                counted.by_distance,
                counted.longest_slot
            );
        }
    }
    let meta = &table.header.meta;
    let longest = checked.wtm.longest.max(checked.btm.longest).unwrap_or(0);
    if meta.last_step != longest {
        wrong!("{run}: header's last step is {}, but the longest stored distance is {longest}", meta.last_step);
    }
    for (side, rep) in [(Color::White, &checked.wtm), (Color::Black, &checked.btm)] {
        let beyond = meta.longest_cursed[side.index()];
        if (rep.cursed > 0) != (beyond > RULE_PLIES) {
            wrong!(
                "{run}: {} has {} cursed positions, but the header's longest cursed step is {beyond}",
                side_name(side),
                rep.cursed
            );
        }
    }
    Ok(VerifyReport {
        material: run.clone(),
        path,
        n_slots: table.header.n_slots,
        last_step: meta.last_step,
        wtm: checked.wtm,
        btm: checked.btm,
        sub_runs: checked.sub_runs,
        secs: t.elapsed().as_secs_f64(),
    })
}

/// The position-by-position check of a run ([`Method::Positions`]):
/// its table and its sub-endgames' are expanded into uncompressed temporary files first.
fn verify_expanded(
    run: &Material,
    table: &CompactTable,
    tables_dir: &Path,
    threads: usize,
    progress: &mut impl FnMut(u64, u64),
) -> Result<(Checked, Summaries), TableError> {
    let verifying = |needed: Option<&Material>, e: TableError| TableError::Verifying {
        run: run.clone(),
        needed: needed.cloned(),
        cause: Box::new(e),
    };
    let own = expand(table, tables_dir, threads).map_err(|e| verifying(None, e))?;
    let mut subs: BTreeMap<Material, Option<Expanded>> = BTreeMap::new();
    for sub in run.successor_runs() {
        let expanded = if sub.white_bare() {
            None
        } else {
            let sub_table = open_compact(tables_dir, &sub).map_err(|e| verifying(Some(&sub), e))?;
            Some(expand(&sub_table, tables_dir, threads).map_err(|e| verifying(Some(&sub), e))?)
        };
        subs.insert(sub, expanded);
    }
    let subs: BTreeMap<Material, SubTable> =
        subs.iter().map(|(m, e)| (m.clone(), e.as_ref().map(|e| &e.file))).collect();
    let sources = Sources { table, own: &own, subs: &subs };
    let checked = positions::verify_positions(run, &sources, threads, progress)?;
    // The expanded table holds white's resolved codes (`positions::verify_positions`).
    let material = &own.file.header.material;
    let wtm = match table.wtm_summary() {
        Some(_) => Some(side_summary(&own.file, material, Color::White, threads)?),
        None => None,
    };
    Ok((checked, Summaries { wtm, btm: side_summary(&own.file, material, Color::Black, threads)? }))
}

/// Verifies both runs of a signature (`Material::runs_of_signature`: one for a symmetric
/// signature, none for a bare white king) within `budget` bytes of RAM if given.
/// `progress(run, done, total)` as in [`verify_run`].
pub fn verify_signature(
    tables_dir: &Path,
    signature: &Material,
    threads: usize,
    budget: Option<u64>,
    mut progress: impl FnMut(&Material, u64, u64),
) -> Result<Vec<VerifyReport>, TableError> {
    signature
        .runs_of_signature()
        .iter()
        .map(|run| verify_run_with(tables_dir, run, threads, Method::Words, budget, |d, t| progress(run, d, t)))
        .collect()
}
