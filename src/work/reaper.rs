//! Deleting work files in the background.
//!
//! Freeing a work table takes the file system time in proportion to the file's extents, far
//! more with online discard: seconds for a 1.3 GB table whose slots were written in part
//! (before [`super::bits::BitFile::write_blocks`] wrote a new table's slots whole), about
//! a second for a 4 GiB file written whole. Deleted in the calling thread that time stops
//! the run; here a thread of its own frees the files while the run goes on
//! (docs/BENCHMARKS.md, "Work tables deleted in the background").
//!
//! A file handed over is first renamed into the trash folder under a name of its own, so
//! that a later file of the same name (the next pass's table) is never the one deleted; a
//! kill leaves the trash behind, and the next reaper of the same folder empties it first.

use super::error::{IoContext, StorageError};
use crossbeam::channel::{unbounded, Sender};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

/// A background thread that deletes the files handed to it; dropping it waits for them.
pub struct Reaper {
    trash: PathBuf,
    /// Whether the trash folder exists (made by the first discard, not again for each).
    trash_made: AtomicBool,
    /// Names files apart in the trash.
    next: AtomicU64,
    queue: Option<Sender<PathBuf>>,
    thread: Option<JoinHandle<()>>,
}

impl Reaper {
    /// A reaper whose trash is `trash` (created when first needed, in the folder of the files
    /// it will delete: a rename never crosses file systems). Files left in it by an
    /// interrupted run are deleted first.
    pub fn new(trash: &Path) -> Reaper {
        let (tx, rx) = unbounded::<PathBuf>();
        let leftovers: Vec<PathBuf> =
            std::fs::read_dir(trash).map(|entries| entries.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        let thread = std::thread::Builder::new()
            .name("reaper".to_string())
            .spawn(move || {
                for path in leftovers.into_iter().chain(rx) {
                    // A file that cannot be deleted is left in the trash, which goes with
                    // the level's folder; the run never reads it.
                    std::fs::remove_file(&path).ok();
                }
            })
            .ok();
        // Without a thread (none could be started) files are deleted by `discard` itself.
        let queue = thread.as_ref().map(|_| tx);
        Reaper {
            trash: trash.to_path_buf(),
            trash_made: AtomicBool::new(false),
            next: AtomicU64::new(0),
            queue,
            thread,
        }
    }

    /// Takes `path` out of its folder now and deletes it in the background; a missing file is
    /// no error.
    pub fn discard(&self, path: &Path) -> Result<(), StorageError> {
        if !self.trash_made.load(Ordering::Relaxed) {
            std::fs::create_dir_all(&self.trash).doing(|| format!("creating {}", self.trash.display()))?;
            self.trash_made.store(true, Ordering::Relaxed);
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let to = self.trash.join(format!("{}-{name}", self.next.fetch_add(1, Ordering::Relaxed)));
        match std::fs::rename(path, &to) {
            // The file is gone already (the trash, made once, is there unless someone took it).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !path.exists() => return Ok(()),
            moved => moved.doing(|| format!("moving {} to {}", path.display(), to.display()))?,
        }
        match &self.queue {
            Some(queue) if queue.send(to.clone()).is_ok() => {}
            _ => drop(std::fs::remove_file(&to)),
        }
        Ok(())
    }

    /// Waits until every file handed over is deleted.
    pub fn finish(mut self) {
        self.wait();
    }

    fn wait(&mut self) {
        drop(self.queue.take());
        if let Some(thread) = self.thread.take() {
            thread.join().ok();
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        self.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discarded_files_are_gone_and_a_new_file_of_the_same_name_stays() {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("t003.bits");
        std::fs::write(&table, b"old").unwrap();
        let reaper = Reaper::new(&dir.path().join("trash"));
        reaper.discard(&table).unwrap();
        // The next pass's table of the same name, written before the deletion ran.
        std::fs::write(&table, b"new").unwrap();
        reaper.discard(&dir.path().join("missing.bits")).unwrap();
        reaper.finish();
        assert_eq!(std::fs::read(&table).unwrap(), b"new");
        let left: Vec<_> = std::fs::read_dir(dir.path().join("trash")).unwrap().collect();
        assert!(left.is_empty(), "trash not emptied: {left:?}");
    }

    #[test]
    fn a_killed_runs_trash_is_emptied_by_the_next_reaper() {
        let dir = tempfile::tempdir().unwrap();
        let trash = dir.path().join("trash");
        std::fs::create_dir_all(&trash).unwrap();
        std::fs::write(trash.join("0-d.bits"), b"left behind").unwrap();
        Reaper::new(&trash).finish();
        assert_eq!(std::fs::read_dir(&trash).unwrap().count(), 0);
    }
}
