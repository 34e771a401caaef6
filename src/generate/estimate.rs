//! A run's time, estimated before it starts: the rates of each stage per position, measured
//! on this project's reference machine (2 cores, 24 GiB, one virtual disk; see
//! `docs/BENCHMARKS.md`, "Time estimates"), scaled to the run's positions and threads, and
//! bounded below by the disk once the tables outgrow the page cache.
//!
//! What a run costs per position depends on the endgame (how many steps its chains take, how
//! many of them are dense) and on the number of men (the cache misses of the moves and the
//! sub-endgame probes grow with the tables), so the rates are per men count, each measured on
//! one endgame and checked on others. Runs of 7 men use the 6-men rates: a lower bound for
//! the computation, and the disk usually bounds them anyway.

use super::plan::{needs_of, RunNeeds, RunShape};
use crate::index::Layout;

/// Seconds per position (of one side to move) of each stage of a run with the measuring
/// thread count, for runs of `men` men.
struct Rates {
    men: usize,
    init: f64,
    white: f64,
    black: f64,
    merge: f64,
    compact: f64,
}

/// Threads of the measurements.
const MEASURED_THREADS: f64 = 2.0;

/// Measured with `gen --threads 2`, sub-endgames prebuilt, from the run's own stage times
/// (`docs/BENCHMARKS.md`, "Time estimates"): 5 men on KQRvKQ, 6 men on KQRvKRR.
const RATES: [Rates; 2] = [
    // KQRvKQ (167,772,160 positions per side; chains to step 120): 0.38 s init, 1.57 s
    // white passes, 2.11 s black passes, 1.61 s edge and merge, 2.29 s compaction.
    Rates { men: 5, init: 2.26e-9, white: 9.33e-9, black: 1.255e-8, merge: 9.60e-9, compact: 1.365e-8 },
    // KQRvKRR (10,737,418,240 positions per side; chains to step 68): 66.0 s init, 71.1 s
    // white passes, 108.2 s black passes, 48.8 s merge, 140.6 s compaction.
    Rates { men: 6, init: 6.15e-9, white: 6.62e-9, black: 1.008e-8, merge: 4.54e-9, compact: 1.310e-8 },
];

/// The machine a job is estimated for.
#[derive(Clone, Copy, Debug)]
pub struct Machine {
    /// Threads the job runs (at most the cores).
    pub threads: usize,
    /// RAM in bytes (the page cache that keeps a step's tables off the disk).
    pub ram: u64,
    /// The disk's streaming speeds, bytes per second.
    pub disk_read: f64,
    pub disk_write: f64,
}

impl Machine {
    /// This machine with `threads` threads: its RAM, and the disk speeds of the reference
    /// machine (`dd` with direct I/O, `docs/BENCHMARKS.md`) unless told otherwise.
    pub fn this(threads: usize) -> Machine {
        Machine { threads, ram: meminfo("MemTotal").unwrap_or(8 << 30), disk_read: 600e6, disk_write: 1000e6 }
    }
}

/// Bytes of RAM the kernel could give a process now (`MemAvailable`), if it says.
pub fn available_ram() -> Option<u64> {
    meminfo("MemAvailable")
}

/// A size in bytes from `/proc/meminfo` (`key` such as `MemTotal`).
fn meminfo(key: &str) -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib << 10)
}

/// Estimated seconds of each stage of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TimeEstimate {
    pub init: f64,
    pub white: f64,
    pub black: f64,
    /// The edge phase and the merge.
    pub merge: f64,
    pub compact: f64,
    /// Whether the disk, not the computation, bounds the estimate somewhere.
    pub disk_bound: bool,
}

impl TimeEstimate {
    pub fn total(&self) -> f64 {
        self.init + self.white + self.black + self.merge + self.compact
    }
}

/// Steps a run is assumed to take: up to the 50-move horizon (a run whose wins need more
/// than 100 plies takes more, each late step costing about a second at 6 men).
const ASSUMED_STEPS: f64 = 101.0;

/// A run's time on `machine`.
///
/// Computation: the measured rates times the positions per side, times the measuring threads
/// over the job's. Disk: when the four bit tables a step reads and writes do not fit in half
/// the RAM, every stage moves its tables through the disk: the init passes write eight bit
/// tables and read one, a step of each side reads two (white) or three (black) and writes one,
/// the merge reads the last tables and the delta streams and writes the assembled table (14
/// bit tables), which the compaction reads back (the rates' model; since then the compaction
/// reads the streams instead). A stage takes the longer of the two.
pub fn estimate_run(layout: &Layout, machine: &Machine) -> TimeEstimate {
    let level_slots = layout.levels().iter().map(|l| l.n_slots).max().unwrap_or(0);
    estimate(layout.material.men(), layout.n_slots, level_slots, machine)
}

/// [`estimate_run`] for a run of `men` men with `positions` per side, `level_slots` in its
/// largest level.
fn estimate(men: usize, positions: u64, level_slots: u64, machine: &Machine) -> TimeEstimate {
    let rates = RATES.iter().rev().find(|r| r.men <= men).unwrap_or(&RATES[0]);
    let positions = positions as f64;
    let scale = positions * MEASURED_THREADS / machine.threads.max(1) as f64;
    let cpu = TimeEstimate {
        init: rates.init * scale,
        white: rates.white * scale,
        black: rates.black * scale,
        merge: rates.merge * scale,
        compact: rates.compact * scale,
        disk_bound: false,
    };
    if 4.0 * level_slots as f64 / 8.0 <= machine.ram as f64 / 2.0 {
        return cpu;
    }
    // Bytes of one bit table over all levels.
    let table = positions / 8.0;
    let io = |read: f64, written: f64| table * (read / machine.disk_read + written / machine.disk_write);
    let steps = ASSUMED_STEPS / 2.0;
    let disk = [io(1.0, 8.0), io(2.0 * steps, steps), io(3.0 * steps, steps), io(4.0, 14.0), io(14.0, 1.0)];
    let stages = [cpu.init, cpu.white, cpu.black, cpu.merge, cpu.compact];
    let [init, white, black, merge, compact] = std::array::from_fn(|i| stages[i].max(disk[i]));
    let disk_bound = stages.iter().zip(&disk).any(|(c, d)| d > c);
    TimeEstimate { init, white, black, merge, compact, disk_bound }
}

/// A pawnless run beyond the men this build indexes (7 men), projected: its positions per
/// side, disk needs and time.
pub struct Projection {
    pub men: usize,
    pub positions: u64,
    pub needs: RunNeeds,
    pub time: TimeEstimate,
}

/// Projects a pawnless run of `men` men on `machine` (its positions: the black king in the
/// 10-square triangle, every other man anywhere, as this build stores them).
pub fn project_pawnless(men: usize, machine: &Machine) -> Projection {
    let positions = 10 * 64u64.pow(men as u32 - 1);
    Projection {
        men,
        positions,
        needs: needs_of(&RunShape {
            level_slots: positions,
            n_slots: positions,
            eventual: true,
            pawns: false,
            capture_bitbases: 0,
            promotion_bitbases: 0,
        }),
        time: estimate(men, positions, positions, machine),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Material;

    fn layout(sig: &str) -> Layout {
        Layout::new(&Material::parse(sig).unwrap())
    }

    #[test]
    fn time_scales_with_positions_and_threads() {
        let this = Machine { threads: 2, ram: 24 << 30, disk_read: 600e6, disk_write: 1000e6 };
        let five = estimate_run(&layout("KQRvKR"), &this);
        let six = estimate_run(&layout("KQRvKQR"), &this);
        assert!(five.total() > 0.0 && !five.disk_bound && !six.disk_bound);
        // 64 times the positions, at rates of the same order.
        assert!((32.0..128.0).contains(&(six.total() / five.total())), "{five:?} {six:?}");
        let four_threads = estimate_run(&layout("KQRvKQR"), &Machine { threads: 4, ..this });
        assert!((four_threads.total() * 2.0 - six.total()).abs() < 1e-6 * six.total());
    }

    #[test]
    fn seven_men_outgrow_the_page_cache() {
        let this = Machine { threads: 2, ram: 24 << 30, disk_read: 600e6, disk_write: 1000e6 };
        let seven = project_pawnless(7, &this);
        assert_eq!(seven.positions, 64 * layout("KQRvKQR").n_slots);
        assert!(seven.time.disk_bound);
        // A step of each side moves seven 86 GB bit tables through the disk at least.
        let table = seven.positions as f64 / 8.0;
        let steps = seven.time.white + seven.time.black;
        assert!(steps >= 101.0 / 2.0 * table * (5.0 / 600e6 + 2.0 / 1000e6) * 0.999);
        assert_eq!(seven.needs.table_bytes, seven.positions / 8);
        // With RAM for the tables, the computation bounds it again.
        let big = project_pawnless(7, &Machine { ram: 2 << 40, ..this });
        assert!(!big.time.disk_bound && big.time.total() < seven.time.total());
        // The same arithmetic as a 6-men run.
        assert_eq!(project_pawnless(6, &this).time, estimate_run(&layout("KQRvKQR"), &this));
    }
}
