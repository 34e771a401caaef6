//! Folders of tables built once per run of the test binary, on first use, and shared by every
//! module that reads them. Nothing writes into them: a test that damages a table damages a
//! copy. They are removed when the test binary exits.
//!
//! The tables do not depend on how they were built (threads, RAM budget, chunks, in-process
//! `generate` or the binary's `gen`: `out_of_core` and `cli` check that), so each folder is
//! built one way for all its readers. Tests that compare builds made with different options
//! build their own folders.

use crate::cleanup::remove_at_exit;
use crate::util::{gen, stderr};
use std::path::Path;
use std::sync::OnceLock;
use tbstream::{generate, GenOptions, Material, SilentProgress};
use tempfile::TempDir;

/// Every 3- and 4-men pawnless signature with white at least as strong by convention of
/// the reference folder.
pub const SMALL: [&str; 24] = [
    "KQvK", "KRvK", "KBvK", "KNvK", "KQQvK", "KQRvK", "KQBvK", "KQNvK", "KRRvK", "KRBvK", "KRNvK", "KBBvK", "KBNvK",
    "KNNvK", "KQvKQ", "KQvKR", "KQvKB", "KQvKN", "KRvKR", "KRvKB", "KRvKN", "KBvKB", "KBvKN", "KNvKN",
];

/// The tables with pawns of the reference folder (4 and 5 men).
pub const PAWN_TABLES: [&str; 12] =
    ["KPvK", "KPvKP", "KQvKP", "KRvKP", "KBvKP", "KNvKP", "KPPvK", "KBPvK", "KNPvK", "KQPvK", "KRPvK", "KRPvKR"];

/// The 5-men pawnless tables of the reference's "Cursed wins and blessed losses" table; the
/// last is also the one 5-men row of its "Longest wins".
pub const CURSED: [&str; 4] = ["KBBvKN", "KBNvKN", "KRBvKR", "KQRvKR"];

/// A temporary folder, also removed when the test binary exits (should its `TempDir` never
/// be dropped).
fn shared_tempdir() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    remove_at_exit(dir.path());
    dir
}

/// The folder of `cell`, made by `build` the first time.
fn built_once(cell: &'static OnceLock<TempDir>, build: impl FnOnce(&Path)) -> &'static Path {
    cell.get_or_init(|| {
        let dir = shared_tempdir();
        build(dir.path());
        dir
    })
    .path()
}

/// Builds `sigs` and their sub-endgames into `dir` in this process, with two threads.
fn generate_in(dir: &Path, sigs: &[&str]) {
    let sigs: Vec<Material> = sigs.iter().map(|s| Material::parse(s).unwrap()).collect();
    generate(&sigs, &GenOptions::new(dir, 2), &SilentProgress).unwrap();
}

/// Builds with `tbstream gen ARGS --out DIR`, which must succeed.
fn gen_in(dir: &Path, args: &[&str]) {
    let o = gen(dir, args, &[]);
    assert!(o.status.success(), "gen {args:?}: {}", stderr(&o));
}

/// Every 3- and 4-men pawnless table (`SMALL` and their closure: 30 runs).
pub fn small_tables() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    built_once(&DIR, |d| generate_in(d, &SMALL))
}

/// The pawn tables of the reference folder but KRPvKR, with their closures (on top of a
/// copy of [`small_tables`], whose tables they share).
pub fn pawn_tables() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    built_once(&DIR, |d| extend(&[small_tables()], d, &PAWN_TABLES[..11]))
}

/// The `CURSED` tables with their sub-endgames, on top of a copy of [`small_tables`]: half a
/// minute on 2 cores. Independent of [`pawn_tables`], so that two tests can build both at
/// once.
pub fn cursed_tables() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    built_once(&DIR, |d| extend(&[small_tables()], d, &CURSED))
}

/// KRPvKR and its 29-run closure, on top of copies of [`pawn_tables`] and [`cursed_tables`]
/// (KQRvKR and KRBvKR, cursed tables, are promotion targets of KRPvKR): about a minute on 2
/// cores.
pub fn krpvkr() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    built_once(&DIR, |d| extend(&[pawn_tables(), cursed_tables()], d, &["KRPvKR"]))
}

/// Copies the tables of `bases` into `dir` (a table two bases hold, once), then builds
/// `sigs` there: the tables the bases hold are not built again (a table does not depend on
/// the folder it is built in).
fn extend(bases: &[&Path], dir: &Path, sigs: &[&str]) {
    for table in bases.iter().flat_map(|base| crate::util::tables(base)) {
        let to = dir.join(table.file_name().unwrap());
        if !to.exists() {
            std::fs::copy(&table, to).unwrap();
        }
    }
    generate_in(dir, sigs);
}

/// `tbstream gen KQvKR`: exactly KQvK, KRvK, KQvKR and KRvKQ, the reference of the builds
/// that are stopped, killed, damaged or distributed.
pub fn kqvkr() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    built_once(&DIR, |d| gen_in(d, &["KQvKR"]))
}

/// `tbstream gen KQvK KRvK`: the 3-men tables the command-line tests probe.
pub fn kqvk_krvk() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    built_once(&DIR, |d| gen_in(d, &["KQvK", "KRvK", "--threads", "2"]))
}
