//! The end of a run: the header of the table assembled in its work folder (checksums, last
//! steps, the sub-endgames' flags, the slice section with pawns), its conversion into the
//! compact format (resumable) and its publication in the output folder; and the run's
//! report.

use super::{longest_cursed, rule_last_step, RunReport, TableSettings};
use crate::chess::Material;
use crate::generate::convert_folder::block_progress;
use crate::generate::merge::StreamPlanes;
use crate::generate::plan::Plan;
use crate::index::Layout;
use crate::progress::Progress;
use crate::solve::Pass;
use crate::table::compact::CompactTable;
use crate::table::compact::{slice_bytes, TableMeta};
use crate::table::convert::{planes_to_compact, uncompressed_to_compact, CompactTarget};
use crate::table::uncompressed::{slice_section, LevelRecord, PartialTable, TableFile};
use crate::table::version::table_path;
use crate::table::PlaneSource;
use crate::table::TableError;
use crate::work::manifest::PassDone;
use crate::work::manifest::{new_per_pass, RunManifest};
use crate::work::RunFolder;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

/// Writes the header of the run's table as assembled, then converts it into the compact
/// format (resuming an interrupted conversion) and publishes that in the output folder.
pub(super) fn finish_table(
    partial: PartialTable,
    manifest: &RunManifest,
    layout: &Layout,
    folder: &RunFolder,
    settings: &TableSettings,
    progress: &dyn Progress,
) -> anyhow::Result<PathBuf> {
    let material = &layout.material;
    let passes: Vec<(Pass, u64)> = manifest.levels.iter().flat_map(|l| new_per_pass(&l.passes)).collect();
    // One level covers every section whole: its range checksums are the sections'.
    let sums = if manifest.levels.len() == 1 { Some(manifest.levels[0].range_sums) } else { None };
    let slices = layout.has_pawns().then(|| {
        let records: Vec<LevelRecord> = manifest
            .levels
            .iter()
            .map(|l| LevelRecord { last_step: rule_last_step(&new_per_pass(&l.passes)), range_sums: l.range_sums })
            .collect();
        slice_section(layout, &records)
    });
    // Conversions into cursed positions are followed (`c∞`, `d∞`); what the sub-endgames
    // could not tell, this table cannot either.
    // Wins of exactly 100 plies are told apart from cursed wins (`exact_100_wins`); a black
    // capture into a sub-endgame's win of exactly 100 plies is a rule loss only if the
    // sub-endgame tells them apart too.
    let assembled = partial.finish(
        rule_last_step(&passes),
        longest_cursed(&passes),
        sub_flags(material, &settings.out_dir)?,
        sums,
        slices.as_deref(),
    )?;
    let src = TableFile::open_run_unchecked(&assembled, material)?;
    compacting(material, folder, settings, progress, |to, show| uncompressed_to_compact(&src, to, show))
}

/// Writes the compact table of a solved pawnless run straight from its delta streams
/// (`planes`), resuming an interrupted write, and publishes it in the output folder.
pub(super) fn compact_from_streams(
    planes: &StreamPlanes,
    passes: &[PassDone],
    layout: &Layout,
    folder: &RunFolder,
    settings: &TableSettings,
    progress: &dyn Progress,
) -> anyhow::Result<PathBuf> {
    let material = &layout.material;
    let per_pass = new_per_pass(passes);
    let (five_valued, edge_exact) = sub_flags(material, &settings.out_dir)?;
    let meta = TableMeta {
        last_step: rule_last_step(&per_pass),
        five_valued,
        edge_exact,
        longest_cursed: longest_cursed(&per_pass),
    };
    // The streams are identified by what each pass found (a resumed run recomputes a lost
    // pass to the same positions) and the header's facts.
    let id = xxh3_64(format!("{material} {} {per_pass:?} {meta:?}", planes.n_slots()).as_bytes());
    compacting(material, folder, settings, progress, |to, show| {
        planes_to_compact(planes, layout, meta, &slice_bytes(layout, &[]), id, to, show)
    })
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
