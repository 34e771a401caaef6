//! What a solved level with pawns keeps in its folder until the run's compaction: the files
//! its values are decoded from (its steps' logs and streams, its illegal tables, its wins of
//! exactly 100 plies) and its final bitbases, which the levels below read for pawn pushes;
//! everything else goes once the level is recorded. A resume checks them.

use crate::generate::edge::EdgeSet;
use crate::generate::level::LevelFiles;
use crate::solve::WorkTable;
use crate::work::deltalog::PassStreams;
use crate::work::manifest::PassDone;
use crate::work::reaper::Reaper;
use crate::work::LevelFolder;
use anyhow::Context;

/// Deletes (in the background, through `reaper`) every file of a solved level's folder that
/// it does not keep ([`LevelFolder::solved_keeps`]).
pub fn prune(folder: &LevelFolder, reaper: &Reaper) -> anyhow::Result<()> {
    let path = folder.path();
    let entries = std::fs::read_dir(path).with_context(|| format!("reading {}", path.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", path.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path() != folder.trash() && !LevelFolder::solved_keeps(&name) {
            reaper.discard(&entry.path())?;
        }
    }
    Ok(())
}

/// The final bitbases a solved level writes: none for the lowest level (nothing is below
/// it), with cursed positions the eventual ones too.
pub fn finals(level: u8, cursed: bool) -> Vec<WorkTable> {
    use crate::chess::Color::{Black, White};
    if level == 0 {
        return Vec::new();
    }
    let eventual = [WorkTable::FinalEventual(White), WorkTable::FinalEventual(Black)];
    [WorkTable::Final(White), WorkTable::Final(Black)]
        .into_iter()
        .chain(eventual.into_iter().filter(|_| cursed))
        .collect()
}

/// Checks a solved level's kept files, reading them whole: its final bitbases and illegal
/// tables block by block against their checksums, its steps' logs and streams and its wins
/// of exactly 100 plies against theirs.
pub fn check(files: &LevelFiles<'_>, passes: &[PassDone], cursed: bool) -> anyhow::Result<()> {
    let (n_blocks, block_words) = (files.n_blocks(), files.block_words());
    let tables = finals(files.level.number, cursed).into_iter().chain([WorkTable::IllegalWtm, WorkTable::IllegalBtm]);
    for table in tables {
        let (file, sums) = files.open_finished(table)?;
        let step = ((1 << 20) / (block_words * 8)).max(1);
        for first in (0..n_blocks).step_by(step) {
            file.read_range(first, step.min(n_blocks - first), block_words, &sums)?;
        }
    }
    for pass in passes.iter().map(|p| p.pass).filter(|p| p.step().is_some()) {
        PassStreams::open(&files.folder.log(pass), n_blocks)?;
    }
    EdgeSet::load(&files.folder.exact_100_log(), n_blocks)?;
    Ok(())
}
