//! The sub-endgames a run's captures and promotions lead to: their finished tables opened
//! and checked, their bitbases decoded into RAM (or into mapped files of the run's work
//! folder when they would crowd the budget), shared between the runs that read them.

use super::plan::Budget;
use crate::chess::{Color, Material};
use crate::index::Layout;
use crate::solve::{BitWords, Bitbase, Captures, Promotions};
use crate::table::compact::CompactTable;
use crate::table::version::table_path;
use crate::table::FormatError;
use anyhow::Context;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// The sub-endgame bitbases a run's captures read: the final ones, and the eventual ones of
/// sub-endgames with cursed positions.
pub struct LoadedCaptures {
    pub rule: Captures,
    pub eventual: Option<Captures>,
    /// RAM they hold (out of the budget) with the promotions loaded, whichever levels a
    /// run solves: its chunk buffers are planned around it. 0 when they are mapped.
    pub full_bytes: u64,
}

impl LoadedCaptures {
    /// Whether the promotions without capture are loaded (never, without pawns).
    pub fn promotions(&self) -> Promotions {
        if self.rule.promotion.iter().any(Option::is_some) {
            Promotions::Load
        } else {
            Promotions::Skip
        }
    }

    /// The same captures with the promotions without capture loaded or left out; the other
    /// sub-endgames' bitbases are shared, not loaded again (the eventual ones of cursed
    /// sub-endgames are decoded again).
    pub fn with_promotions(
        &self,
        m: &Material,
        out: &Path,
        budget: &Budget,
        run_work: &Path,
        promotions: Promotions,
    ) -> anyhow::Result<LoadedCaptures> {
        let mut loaded = Loaded::default();
        for b in self.rule.tables().filter(|b| b.layout.material.men() < m.men()) {
            loaded.bitbases.insert(b.layout.material.clone(), b.clone());
            loaded.checked.insert(b.layout.material.clone());
        }
        loaded.captures_of(m, out, budget, run_work, promotions)
    }
}

/// Whether an existing table's blocks are to be checked when it is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Every block against its checksum.
    Blocks,
    /// Header and block indexes only: this job checked or built the table already.
    HeaderOnly,
}

/// Where decoded bitbase words are kept.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Placement<'a> {
    Ram,
    /// In a file of this work folder, deleted when closed, and mapped: the kernel holds the
    /// pages instead of the budget.
    Mapped(&'a Path),
}

/// Opens an existing table of the output folder (checking its blocks with
/// [`Check::Blocks`]).
pub fn open_existing(path: &Path, m: &Material, check: Check) -> Result<CompactTable, FormatError> {
    let table = CompactTable::open_run(path, m)?;
    if check == Check::Blocks {
        table.check_sums()?;
    }
    Ok(table)
}

/// Whether a finished, undamaged table of a run is in `dir`.
pub fn is_built(dir: &Path, m: &Material) -> bool {
    open_existing(&table_path(dir, m), m, Check::Blocks).is_ok()
}

/// Loads the final bitbases of a finished run, checking its checksums.
pub fn load_bitbase(dir: &Path, m: &Material) -> anyhow::Result<Bitbase> {
    let [rule, _] = open_bitbases(dir, m, [true, false], Placement::Ram, Check::Blocks, 1)?;
    rule.context("the rule's bitbase")
}

/// A finished run's bitbases for the conversions into it, `[under the rule, eventually]`,
/// those `wanted` (one decoding of the table serves both; with `threads` above 1, white's
/// and black's sides are decoded at once).
fn open_bitbases(
    dir: &Path,
    m: &Material,
    wanted: [bool; 2],
    place: Placement,
    check: Check,
    threads: usize,
) -> anyhow::Result<[Option<Bitbase>; 2]> {
    let table = open_existing(&table_path(dir, m), m, check).with_context(|| format!("sub-endgame {m} is needed"))?;
    let side = |stm| bitbase_words(&table, stm, wanted, place);
    let (wtm, btm) = if threads > 1 {
        std::thread::scope(|scope| {
            let btm = scope.spawn(|| side(Color::Black));
            let wtm = side(Color::White);
            (wtm, btm.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        })
    } else {
        (side(Color::White), side(Color::Black))
    };
    let ([rule_wtm, eventual_wtm], [rule_btm, eventual_btm]) = (wtm?, btm?);
    let layout = Layout::new(m);
    let pair = |wtm: Option<BitWords>, btm| Some(Bitbase { layout: layout.clone(), wtm: wtm?, btm: btm? });
    Ok([pair(rule_wtm, rule_btm), pair(eventual_wtm, eventual_btm)])
}

/// Where one of a side's bitbases is being decoded to.
enum Sink {
    Ram(Vec<u64>),
    File(std::io::BufWriter<std::fs::File>),
}

/// One side's bitbases of a table, `[under the rule, eventually]`, those `wanted`, decoded.
fn bitbase_words(
    table: &CompactTable,
    stm: Color,
    wanted: [bool; 2],
    place: Placement,
) -> anyhow::Result<[Option<BitWords>; 2]> {
    use byteorder::{LittleEndian, WriteBytesExt};
    let m = &table.header.material;
    let n_words = (table.header.n_slots / 64) as usize;
    let open = |want: bool| -> anyhow::Result<Option<Sink>> {
        Ok(match (want, place) {
            (false, _) => None,
            (true, Placement::Ram) => Some(Sink::Ram(Vec::with_capacity(n_words))),
            (true, Placement::Mapped(work)) => {
                let tmp =
                    tempfile::tempfile_in(work).with_context(|| format!("creating a file in {}", work.display()))?;
                Some(Sink::File(std::io::BufWriter::with_capacity(1 << 20, tmp)))
            }
        })
    };
    let mut sinks = [open(wanted[0])?, open(wanted[1])?];
    let put = |sink: &mut Option<Sink>, w: u64| match sink {
        None => Ok(()),
        Some(Sink::Ram(words)) => {
            words.push(w);
            Ok(())
        }
        Some(Sink::File(out)) => out.write_u64::<LittleEndian>(w),
    };
    table
        .bitbase_words(stm, &mut |rule, eventual| {
            put(&mut sinks[0], rule)?;
            put(&mut sinks[1], eventual)
        })
        .with_context(|| match place {
            Placement::Ram => format!("decoding {m}'s bitbase"),
            Placement::Mapped(work) => format!("writing {m}'s bitbase into {}", work.display()),
        })?;
    let close = |sink: Option<Sink>| -> anyhow::Result<Option<BitWords>> {
        Ok(match sink {
            None => None,
            Some(Sink::Ram(words)) => Some(BitWords::Owned(words)),
            Some(Sink::File(out)) => {
                let tmp =
                    out.into_inner().map_err(|e| e.into_error()).context("writing a bitbase into the work folder")?;
                // SAFETY: the file is private to this process (unnamed) and never written again.
                let map = unsafe { memmap2::Mmap::map(&tmp) }.context("mapping a bitbase")?;
                let words = map.len() / 8;
                Some(BitWords::Mapped { map: Arc::new(map), offset: 0, words })
            }
        })
    };
    let [rule, eventual] = sinks;
    Ok([close(rule)?, close(eventual)?])
}

/// The bytes of the sub-endgames' final bitbases a run holds in RAM: all of them when they
/// fit half the budget `mem`, none when they are mapped instead (see
/// [`Loaded::captures_of`]).
pub fn held_bytes(m: &Material, mem: u64) -> u64 {
    let bytes: u64 = m.successor_runs().iter().filter(|s| !s.white_bare()).map(|s| Layout::new(s).n_slots / 4).sum();
    if bytes <= mem / 2 {
        bytes
    } else {
        0
    }
}

/// The bitbases already loaded, kept for the next runs that read them, and the tables this
/// job checked (or built) already.
#[derive(Default)]
pub struct Loaded {
    pub bitbases: HashMap<Material, Arc<Bitbase>>,
    pub checked: HashSet<Material>,
}

impl Loaded {
    fn check(&self, m: &Material) -> Check {
        if self.checked.contains(m) {
            Check::HeaderOnly
        } else {
            Check::Blocks
        }
    }

    /// Loads run `m`'s captures from the tables in `out`, reusing the bitbases loaded
    /// already (only `m`'s sub-endgames stay) and checking each table's blocks unless this
    /// job checked it (a table's two sides decoded at once with two or more `budget.threads`).
    /// When they would take more than half of `budget.mem` they are mapped from
    /// files in `run_work` instead of held. The promotions without capture lead to the
    /// largest sub-endgames (as many men as `m`), read only by the levels whose pawns can
    /// promote: with [`Promotions::Skip`] they are left out (their tables are still opened,
    /// to know whether they have cursed positions), and they are never kept for other runs,
    /// so that dropping the captures frees their RAM or disk.
    pub fn captures_of(
        &mut self,
        m: &Material,
        out: &Path,
        budget: &Budget,
        run_work: &Path,
        promotions: Promotions,
    ) -> anyhow::Result<LoadedCaptures> {
        let (mem, threads) = (budget.mem, budget.threads);
        let needed = m.successor_runs();
        self.bitbases.retain(|sub, _| needed.contains(sub));
        // Sub-endgames with cursed positions also give their eventual bitbases (`c∞`, `d∞`).
        let mut cursed = Vec::new();
        for sub in needed.iter().filter(|s| !s.white_bare()) {
            let table = CompactTable::open_run(&table_path(out, sub), sub)
                .with_context(|| format!("sub-endgame {sub} is needed"))?;
            if table.header.meta.longest_cursed != [0, 0] {
                cursed.push(sub.clone());
            }
        }
        let needed_bytes: u64 =
            needed.iter().chain(&cursed).filter(|s| !s.white_bare()).map(|s| Layout::new(s).n_slots / 4).sum();
        let place = if needed_bytes <= mem / 2 { Placement::Ram } else { Placement::Mapped(run_work) };
        // The eventual bitbases decoded with the rule's (not kept for other runs).
        let mut made: HashMap<Material, Arc<Bitbase>> = HashMap::new();
        let caps = Captures::new(m, promotions, |sub| -> anyhow::Result<Arc<Bitbase>> {
            if let Some(b) = self.bitbases.get(sub) {
                return Ok(b.clone());
            }
            std::fs::create_dir_all(run_work).with_context(|| format!("creating {}", run_work.display()))?;
            let [rule, eventual] =
                open_bitbases(out, sub, [true, cursed.contains(sub)], place, self.check(sub), threads)?;
            if let Some(e) = eventual {
                made.insert(sub.clone(), Arc::new(e));
            }
            let b = Arc::new(rule.context("the rule's bitbase")?);
            if sub.men() < m.men() {
                self.bitbases.insert(sub.clone(), b.clone());
            }
            Ok(b)
        })?;
        // The rule bitbases by sub-endgame (promotions included; those are not cached).
        let rule_tables: Vec<(Material, Arc<Bitbase>)> =
            caps.tables().map(|b| (b.layout.material.clone(), b.clone())).collect();
        let caps_eventual = if cursed.is_empty() {
            None
        } else {
            std::fs::create_dir_all(run_work).with_context(|| format!("creating {}", run_work.display()))?;
            Some(Captures::new(m, promotions, |sub| -> anyhow::Result<Arc<Bitbase>> {
                if !cursed.contains(sub) {
                    return rule_tables
                        .iter()
                        .find(|(s, _)| s == sub)
                        .map(|(_, b)| b.clone())
                        .context("sub-endgame loaded with the captures");
                }
                if let Some(b) = made.get(sub) {
                    return Ok(b.clone());
                }
                let [_, eventual] = open_bitbases(out, sub, [false, true], place, Check::HeaderOnly, threads)?;
                let b = Arc::new(eventual.context("the eventual bitbase")?);
                made.insert(sub.clone(), b.clone());
                Ok(b)
            })?)
        };
        let full_bytes = if place == Placement::Ram { needed_bytes } else { 0 };
        Ok(LoadedCaptures { rule: caps, eventual: caps_eventual, full_bytes })
    }
}
