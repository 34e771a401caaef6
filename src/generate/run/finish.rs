//! The end of a run: its compact table, written (resumably) straight from its levels' delta
//! streams and published in the output folder; and the run's report.

use super::{longest_cursed, rule_last_step, solved_level, RunReport, TableSettings};
use crate::chess::Material;
use crate::generate::convert_folder::block_progress;
use crate::generate::edge::EdgeSet;
use crate::generate::level::LevelFiles;
use crate::generate::merge::StreamPlanes;
use crate::generate::plan::Plan;
use crate::index::Layout;
use crate::progress::Progress;
use crate::solve::Pass;
use crate::table::compact::CompactTable;
use crate::table::compact::{slice_bytes, TableMeta};
use crate::table::convert::{planes_to_compact, CompactTarget};
use crate::table::version::table_path;
use crate::table::PlaneSource;
use crate::table::TableError;
use crate::work::manifest::PassDone;
use crate::work::manifest::{new_per_pass, RunManifest};
use crate::work::RunFolder;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

/// Writes the compact table of a solved run straight from its delta streams (`planes`, of
/// every level; `levels`: each level's passes, in solve order), resuming an interrupted
/// write, and publishes it in the output folder.
pub(super) fn compact_from_streams(
    planes: &StreamPlanes,
    levels: &[&[PassDone]],
    layout: &Layout,
    folder: &RunFolder,
    settings: &TableSettings,
    progress: &dyn Progress,
) -> anyhow::Result<PathBuf> {
    let material = &layout.material;
    let per_pass: Vec<(Pass, u64)> = levels.iter().flat_map(|p| new_per_pass(p)).collect();
    let last_steps: Vec<u8> = levels.iter().map(|p| rule_last_step(&new_per_pass(p))).collect();
    let (five_valued, edge_exact) = sub_flags(material, &settings.out_dir)?;
    // Conversions into cursed positions are followed (`c∞`, `d∞`); what the sub-endgames
    // could not tell, this table cannot either. Wins of exactly 100 plies are told apart
    // from cursed wins; a black capture into a sub-endgame's win of exactly 100 plies is a
    // rule loss only if the sub-endgame tells them apart too.
    let meta = TableMeta {
        last_step: rule_last_step(&per_pass),
        five_valued,
        edge_exact,
        longest_cursed: longest_cursed(&per_pass),
    };
    // The streams are identified by what each pass found (a resumed run recomputes a lost
    // pass to the same positions) and the header's facts.
    let id = xxh3_64(format!("{material} {} {per_pass:?} {last_steps:?} {meta:?}", planes.n_slots()).as_bytes());
    compacting(material, folder, settings, progress, |to, show| {
        planes_to_compact(planes, layout, meta, &slice_bytes(layout, &last_steps), id, to, show)
    })
}

/// Writes the compact table of a solved run with pawns from the files its levels kept
/// (resuming an interrupted write) and publishes it in the output folder.
pub(super) fn compact_kept_levels(
    manifest: &RunManifest,
    layout: &Layout,
    folder: &RunFolder,
    settings: &TableSettings,
    progress: &dyn Progress,
) -> anyhow::Result<PathBuf> {
    let solved: Vec<_> = manifest
        .levels
        .iter()
        .map(|done| Ok((solved_level(layout, done)?, folder.level(done.level))))
        .collect::<anyhow::Result<_>>()?;
    let mut levels = Vec::new();
    for ((level, dir), done) in solved.iter().zip(&manifest.levels) {
        let files = LevelFiles { folder: dir, level, block_bits: manifest.block_bits };
        let edge = EdgeSet::load(&dir.exact_100_log(), files.n_blocks())?;
        levels.push((files, done.passes.as_slice(), (edge.count() > 0).then_some(edge)));
    }
    let planes = StreamPlanes::open(levels, layout.n_slots, settings.threads)?;
    let passes: Vec<&[PassDone]> = manifest.levels.iter().map(|l| l.passes.as_slice()).collect();
    compact_from_streams(&planes, &passes, layout, folder, settings, progress)
}

/// Runs a compaction `write` into the run's compact table (published in the output folder)
/// with the job's progress line and hooks: a hook's error stops it where it is, as a kill
/// would.
fn compacting(
    material: &Material,
    folder: &RunFolder,
    settings: &TableSettings,
    progress: &dyn Progress,
    write: impl FnOnce(&CompactTarget, &mut dyn FnMut(u64, u64) -> Result<(), TableError>) -> Result<PathBuf, TableError>,
) -> anyhow::Result<PathBuf> {
    let target = table_path(&settings.out_dir, material);
    let to = CompactTarget {
        partial: &folder.compact_table(),
        target: &target,
        zstd_level: settings.zstd_level,
        threads: settings.threads,
    };
    let mut show = block_progress(progress, material, "compaction");
    let mut stopped = None;
    let written = write(&to, &mut |done, total| {
        show(done, total);
        match settings.hooks.as_deref().map(|h| h.after_compaction_block()) {
            Some(Err(e)) => {
                let why = TableError::Wrong(format!("{e:#}"));
                stopped = Some(e);
                Err(why)
            }
            _ => Ok(()),
        }
    });
    if let Some(e) = stopped {
        return Err(e);
    }
    let path = written?;
    progress.finish("written");
    Ok(path)
}

/// Whether every sub-endgame of the run marks all its cursed positions, and whether every
/// one's edge is exact (the header flags; the tables were checked when loaded).
fn sub_flags(material: &Material, out_dir: &Path) -> anyhow::Result<(bool, bool)> {
    let (mut five_valued, mut edge_exact) = (true, true);
    for sub in material.successor_runs().iter().filter(|s| !s.white_bare()) {
        let meta = CompactTable::open_run(&table_path(out_dir, sub), sub)?.header.meta;
        five_valued &= meta.five_valued;
        edge_exact &= meta.edge_exact;
    }
    Ok((five_valued, edge_exact))
}

/// The report of a run whose levels are all solved.
pub(super) fn run_report(manifest: &RunManifest, layout: &Layout) -> RunReport {
    // Chunks summed over the levels.
    let (mut white_chunks, mut black_chunks) = (0, 0);
    for level in layout.levels() {
        let plan = Plan::new(layout, &level, super::resume::cut_of(manifest));
        white_chunks += plan.white.list.len();
        black_chunks += plan.black.list.len();
    }
    let levels = &manifest.levels;
    let all: Vec<(Pass, u64)> = levels.iter().flat_map(|l| new_per_pass(&l.passes)).collect();
    RunReport {
        passes: levels.iter().flat_map(|l| l.passes.iter().cloned()).collect(),
        last_step: rule_last_step(&all),
        longest_cursed: longest_cursed(&all),
        levels: levels.len(),
        block_bits: manifest.block_bits,
        white_chunks,
        black_chunks,
        merge_secs: levels.iter().map(|l| l.merge_secs).sum(),
        merge_bytes_read: levels.iter().map(|l| l.merge_bytes_read).sum(),
        merge_bytes_written: levels.iter().map(|l| l.merge_bytes_written).sum(),
        compact_secs: 0.0,
        path: PathBuf::new(),
    }
}
