//! Resuming a run: its manifest (an interrupted run's, or a fresh one), the check of the
//! solved levels' kept files, and the decision to solve levels again or to restart the run.

use super::{kept, level_is_cursed, solved_level};
use crate::chess::Material;
use crate::generate::level::LevelFiles;
use crate::generate::plan::Cut;
use crate::index::Layout;
use crate::progress::Progress;
use crate::work::manifest::{self, RunManifest, MANIFEST_FORMAT};
use crate::work::publish::Durability;
use crate::work::reaper::Reaper;
use crate::work::RunFolder;
use anyhow::Context;

/// Opens the run's manifest and checks the solved levels (with pawns, each keeps its files
/// until the compaction): from the first damaged one, it and the levels solved after it are
/// solved again. A fresh run is cut by `cut`; an interrupted one keeps its cut. A pawnless
/// run (its one level compacted straight from its streams) records its level only once its
/// table is published: found recorded, its streams are gone, and the run starts again.
pub fn resume_levels(
    layout: &Layout,
    folder: &RunFolder,
    cut: Cut,
    progress: &dyn Progress,
) -> anyhow::Result<RunManifest> {
    let material = &layout.material;
    let mut manifest = open_manifest(material, folder, cut, progress)?;
    if manifest.levels.is_empty() {
        return Ok(manifest);
    }
    if !layout.has_pawns() {
        let why = format!("{}: the run was finished, its table is not in the output folder", folder.path().display());
        return restart(material, folder, why, cut_of(&manifest), progress);
    }
    if let Some((first_bad, why)) = check_levels(layout, folder, &manifest)? {
        // Levels are recorded before their files are synced: after a power loss the lost
        // ones (and those solved after them, which read them) are redone.
        progress.log(&format!("{material}: {why}; solving it and the levels after it again"));
        manifest.levels.truncate(first_bad);
        manifest.passes.clear();
        remove_unsolved_levels(layout, folder, &manifest)?;
        manifest::save_with(&folder.manifest(), &manifest, Durability::Atomic)?;
    }
    Ok(manifest)
}

/// How a run's manifest says it is cut.
pub fn cut_of(manifest: &RunManifest) -> Cut {
    Cut { block_bits: manifest.block_bits, max_fixed_bits: manifest.max_fixed_bits }
}

/// Checks the solved levels' kept files (first deleting what a kill left behind them): the
/// position in the manifest of the first damaged level, with what is wrong, if any.
fn check_levels(
    layout: &Layout,
    folder: &RunFolder,
    manifest: &RunManifest,
) -> anyhow::Result<Option<(usize, String)>> {
    for (n, done) in manifest.levels.iter().enumerate() {
        let level = solved_level(layout, done)?;
        let dir = folder.level(level.number);
        if dir.path().exists() {
            let reaper = Reaper::new(&dir.trash());
            kept::prune(&dir, &reaper)?;
            reaper.finish();
        }
        let files = LevelFiles { folder: &dir, level: &level, block_bits: manifest.block_bits };
        if let Err(e) = kept::check(&files, &done.passes, level_is_cursed(manifest, &level)) {
            return Ok(Some((n, format!("level {} is damaged: {e:#}", level.number))));
        }
    }
    Ok(None)
}

/// Removes the folders of the levels the manifest does not hold as solved (their passes
/// are started again).
fn remove_unsolved_levels(layout: &Layout, folder: &RunFolder, manifest: &RunManifest) -> anyhow::Result<()> {
    for level in layout.levels() {
        let dir = folder.level(level.number);
        if !manifest.levels.iter().any(|l| l.level == level.number) && dir.path().exists() {
            std::fs::remove_dir_all(dir.path()).with_context(|| format!("removing {}", dir.path().display()))?;
        }
    }
    Ok(())
}

/// The run's manifest: the interrupted run's (which keeps its cut), or a fresh one. A
/// manifest of another run, or a damaged one, restarts the run.
fn open_manifest(
    material: &Material,
    folder: &RunFolder,
    cut: Cut,
    progress: &dyn Progress,
) -> anyhow::Result<RunManifest> {
    let path = folder.manifest();
    match manifest::load::<RunManifest>(&path) {
        Ok(Some(m)) if m.run == material.to_string() => {
            if m.block_bits != cut.block_bits {
                progress.log(&format!(
                    "{material}: keeping the interrupted run's blocks of {} positions",
                    1u64 << m.block_bits
                ));
            }
            Ok(m)
        }
        Ok(Some(m)) => restart(material, folder, format!("{} belongs to run {}", path.display(), m.run), cut, progress),
        Ok(None) => fresh(material, folder, cut, progress),
        Err(e) => restart(material, folder, format!("{:#}", anyhow::Error::from(e)), cut, progress),
    }
}

/// Starts a run in an empty folder.
fn fresh(material: &Material, folder: &RunFolder, cut: Cut, progress: &dyn Progress) -> anyhow::Result<RunManifest> {
    let m = RunManifest {
        format: MANIFEST_FORMAT,
        run: material.to_string(),
        block_bits: cut.block_bits,
        max_fixed_bits: cut.max_fixed_bits,
        levels: Vec::new(),
        passes: Vec::new(),
        eventual: false,
    };
    manifest::save(&folder.manifest(), &m)?;
    progress.log(&format!("{material}: starting in {}", folder.path().display()));
    Ok(m)
}

/// Empties the run's folder and starts the run again.
fn restart(
    material: &Material,
    folder: &RunFolder,
    why: String,
    cut: Cut,
    progress: &dyn Progress,
) -> anyhow::Result<RunManifest> {
    progress.log(&format!("{material}: {why}; restarting this run"));
    let dir = folder.path();
    std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    fresh(material, folder, cut, progress)
}
