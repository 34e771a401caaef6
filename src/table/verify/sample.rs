//! `verify --sample N`: random positions of a run re-derived from their successors, read
//! where they stand in the compact tables (through a block cache) instead of expanding them.
//!
//! The rules are the full verifier's ([`Positions`], generic over where values come
//! from): a white-to-move position's code must
//! be the one its moves give, black's distances being derived from white's one ply deeper
//! (as the format defines them; in a version 6 table white's code is 1 where white wins by a
//! zeroing move, whatever is stored there), and a black-to-move position's class (not won,
//! won, won only without the rule) must be the one its moves give. Every symmetric image of a sampled
//! white-to-move position is checked too. Positions are drawn from a seeded generator, so a
//! failure can be run again.

use super::checks::{side_name, Values};
use super::positions::Positions;
use super::{open_compact, SideReport};
use crate::chess::{Color, Material};
use crate::index::{illegal_word, Layout};
use crate::pipeline::{self, Order};
use crate::table::cache::BlockCache;
use crate::table::compact::CompactTable;
use crate::table::error::{FormatError, TableError};
use crate::table::values::{Class, CODE_CURSED, CODE_EDGE, CODE_ILLEGAL, CODE_LOST_UNMEASURED, CODE_NONE};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

/// A compact table read slot by slot, with the codes of `CompactTable::read_codes`: black's
/// losses as [`CODE_LOST_UNMEASURED`] (their distances are derived by the checks).
pub(super) struct Sampled<'a> {
    table: &'a CompactTable,
    layout: Layout,
    cache: &'a BlockCache,
    /// The first read error (a damaged block); the checks then stop and report it.
    error: Mutex<Option<TableError>>,
}

impl<'a> Sampled<'a> {
    fn new(table: &'a CompactTable, cache: &'a BlockCache) -> Sampled<'a> {
        Sampled { table, layout: Layout::new(&table.header.material), cache, error: Mutex::new(None) }
    }

    /// The slot's class, or `None` for an illegal position (not stored).
    pub(super) fn class(&self, stm: Color, slot: u64) -> Option<Class> {
        let illegal = illegal_word(&self.layout, slot >> 6, stm);
        if illegal >> (slot & 63) & 1 != 0 {
            return None;
        }
        Some(self.table.class(stm, slot, self.cache).unwrap_or_else(|e| self.fail(e, Class::NotWon)))
    }

    /// Keeps the first read error; the read then gives `value`.
    fn fail<T>(&self, e: FormatError, value: T) -> T {
        self.error.lock().expect("error slot").get_or_insert(e.into());
        value
    }

    fn take_error(&self) -> Option<TableError> {
        self.error.lock().expect("error slot").take()
    }
}

impl Values for Sampled<'_> {
    fn value_code(&self, stm: Color, slot: u64) -> u8 {
        match self.class(stm, slot) {
            None => CODE_ILLEGAL,
            Some(Class::NotWon) => CODE_NONE,
            Some(Class::Win) if stm == Color::White => {
                self.table.dtz_code(slot, self.cache).unwrap_or_else(|e| self.fail(e, CODE_NONE))
            }
            Some(Class::Win) => CODE_LOST_UNMEASURED,
            Some(Class::Cursed) => CODE_CURSED,
            Some(Class::Edge) => CODE_EDGE,
        }
    }

    fn bit(&self, stm: Color, slot: u64) -> bool {
        match self.class(stm, slot) {
            None => stm == Color::White,
            Some(c) => c == Class::Win,
        }
    }
}

/// What `verify --sample` checked of one run.
#[derive(Clone, Debug)]
pub struct SampleReport {
    pub material: Material,
    /// Positions drawn per side to move (wtm, btm), illegal ones included.
    pub drawn: [u64; 2],
    /// Legal positions checked per side to move.
    pub legal: [u64; 2],
    pub seed: u64,
    pub secs: f64,
}

/// A small seeded generator (splitmix64): the same seed draws the same positions.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Checks `n` random positions of each side to move of a run in `tables_dir` (its
/// sub-endgames' tables must be there too), with `threads` workers; `cache` bytes of decoded
/// blocks. Returns the counts, or an error naming the first wrong position.
pub fn sample_run(
    tables_dir: &Path,
    run: &Material,
    n: u64,
    seed: u64,
    threads: usize,
    cache: u64,
) -> Result<SampleReport, TableError> {
    let t = Instant::now();
    if run.white_bare() {
        return Err(TableError::BareWhite(run.clone()));
    }
    let verifying = |needed: Option<&Material>, e: TableError| TableError::Verifying {
        run: run.clone(),
        needed: needed.cloned(),
        cause: Box::new(e),
    };
    let cache = BlockCache::new(cache)?;
    let table = open_compact(tables_dir, run).map_err(|e| verifying(None, e))?;
    // The successor runs: every capture's (and with pawns every promotion's).
    let mut sub_tables = Vec::new();
    for sub in run.successor_runs() {
        let opened = match sub.white_bare() {
            true => None,
            false => Some(open_compact(tables_dir, &sub).map_err(|e| verifying(Some(&sub), e))?),
        };
        sub_tables.push((sub, opened));
    }
    // Every block's checksum first: a damaged block is found whether or not a sample reads it.
    table.check_sums().map_err(|e| verifying(None, e.into()))?;
    for (sub, t) in &sub_tables {
        if let Some(t) = t {
            t.check_sums().map_err(|e| verifying(Some(sub), e.into()))?;
        }
    }
    let own = Sampled::new(&table, &cache);
    let sampled_subs: Vec<(Material, Option<Sampled>)> =
        sub_tables.iter().map(|(sub, t)| (sub.clone(), t.as_ref().map(|t| Sampled::new(t, &cache)))).collect();
    let read_error = || {
        own.take_error()
            .or_else(|| sampled_subs.iter().find_map(|(_, s)| s.as_ref().and_then(|s| s.take_error())))
            .map(|e| verifying(None, e))
    };
    let subs: Vec<(Material, Option<&Sampled>)> = sampled_subs.iter().map(|(m, s)| (m.clone(), s.as_ref())).collect();
    // Version 6: a win by a zeroing move holds a don't-care distance, resolved where read.
    let ctx = Positions::new(run, &own, &subs, true, table.header.zeroing_dont_cares);
    let legal = sample_sides(&ctx, n, seed, threads, &read_error)?;
    Ok(SampleReport { material: run.clone(), drawn: [n, n], legal, seed, secs: t.elapsed().as_secs_f64() })
}

/// Draws `n` slots of each side to move and checks the legal ones; returns how many.
fn sample_sides(
    ctx: &Positions<Sampled>,
    n: u64,
    seed: u64,
    threads: usize,
    read_error: &(dyn Fn() -> Option<TableError> + Sync),
) -> Result<[u64; 2], TableError> {
    const BATCH: u64 = 256;
    let n_slots = ctx.layout.n_slots;
    let mut legal = [0u64; 2];
    for stm in [Color::White, Color::Black] {
        pipeline::run(
            n.div_ceil(BATCH) as usize,
            threads.max(1),
            Order::Sequence { window: 4 * threads.max(1) },
            Ok::<_, TableError>,
            |b, _| {
                let mut state = seed ^ (stm.index() as u64) << 62 ^ (b as u64).wrapping_mul(0xA076_1D64_78BD_642F);
                let mut checked = 0u64;
                for _ in (b as u64 * BATCH)..((b as u64 + 1) * BATCH).min(n) {
                    let slot = splitmix(&mut state) % n_slots;
                    if !ctx.men_of_slot(slot).legal(stm) {
                        continue;
                    }
                    checked += 1;
                    let outcome = match stm {
                        Color::White => ctx.check_slot(Color::White, slot, &mut SideReport::default()),
                        Color::Black => check_black_class(ctx, slot),
                    };
                    // A damaged block is the cause of whatever mismatch it made.
                    if let Some(e) = read_error() {
                        return Err(e);
                    }
                    outcome?;
                }
                Ok(checked)
            },
            |_, checked| {
                legal[stm.index()] += checked;
                Ok(())
            },
        )?;
    }
    Ok(legal)
}

/// A black-to-move position's stored class against the one its moves give.
fn check_black_class(ctx: &Positions<Sampled>, slot: u64) -> Result<(), TableError> {
    let stored = ctx.file.class(Color::Black, slot).unwrap_or(Class::NotWon);
    let men = ctx.men_of_slot(slot);
    let (code, via) = ctx.derive_btm(&men, slot, &mut SideReport::default());
    let pos = men.position(Color::Black).expect("a legal position");
    let expected = Class::of_code(Color::Black, code);
    if stored != expected {
        let via = via.map(|mv| format!(" (move {})", pos.play(mv).fen())).unwrap_or_default();
        return Err(TableError::Wrong(format!(
            "{} {} slot {slot}: {}: stored {}, but its moves make it {}{via}",
            ctx.material,
            side_name(Color::Black),
            pos.fen(),
            stored.btm_name(),
            expected.btm_name()
        )));
    }
    Ok(())
}
