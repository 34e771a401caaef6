//! Crash-safe publishing of a file: every artifact (manifests, block checksums, final tables)
//! is written to a temporary file in its target folder and renamed over the target, so that a
//! reader sees either the old file or the whole new one, whenever the process is killed. A
//! kill before the rename leaves only a temporary file, `.NAME.XXXXXX.tmp`, which readers
//! ignore and [`remove_stale`] deletes.
//!
//! [`Durability::Durable`] also syncs the file and the folder, so that the new file survives
//! a power loss too: final tables and the manifest entries that finish a level. The work
//! folder's per-pass files are only [`Durability::Atomic`]: after a power loss a resume
//! finds any lost or torn data by its checksums and recomputes it.

use super::error::{IoContext, StorageError};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// Whether a publish waits for the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Rename only: atomic for a killed process.
    Atomic,
    /// Sync the file, rename, sync the folder: atomic and durable.
    Durable,
}

/// Suffix of the temporary files of unfinished publishes.
const TMP_SUFFIX: &str = ".tmp";

/// The folder of a path (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// A file being written for publishing at `target`. Dropped without [`Publisher::persist`],
/// its temporary file is removed.
pub struct Publisher {
    tmp: NamedTempFile,
    target: PathBuf,
}

impl Publisher {
    /// Starts a temporary file `.NAME.XXXXXX.tmp` beside `target`.
    pub fn create(target: &Path) -> Result<Publisher, StorageError> {
        let dir = folder_of(target);
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{}.", file_name(target)))
            .suffix(TMP_SUFFIX)
            .tempfile_in(dir)
            .doing(|| format!("creating a temporary file for {} in {}", target.display(), dir.display()))?;
        Ok(Publisher { tmp, target: target.to_path_buf() })
    }

    /// The temporary file's path.
    pub fn tmp_path(&self) -> &Path {
        self.tmp.path()
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// Syncs the file, renames it over the target, and syncs the folder.
    pub fn persist(self) -> Result<PathBuf, StorageError> {
        self.persist_with(Durability::Durable)
    }

    /// Renames the file over the target, syncing file and folder if `durability` asks.
    pub fn persist_with(self, durability: Durability) -> Result<PathBuf, StorageError> {
        let tmp_path = self.tmp.path().to_path_buf();
        if durability == Durability::Durable {
            self.tmp.as_file().sync_all().doing(|| format!("syncing {}", tmp_path.display()))?;
        }
        self.tmp
            .persist(&self.target)
            .map_err(|e| e.error)
            .doing(|| format!("renaming {} into place", self.target.display()))?;
        if durability == Durability::Durable {
            sync_dir(folder_of(&self.target))?;
        }
        Ok(self.target)
    }
}

impl Write for Publisher {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.as_file_mut().write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.as_file_mut().flush()
    }
}

/// Publishes a finished file (written and synced elsewhere, e.g. in a work folder) as
/// `target`: renamed into place when both are on one file system, else copied through a
/// temporary file beside the target (and the original removed). The folder is synced.
pub fn publish_file(from: &Path, target: &Path) -> Result<PathBuf, StorageError> {
    let tmp = tempfile::TempPath::try_from_path(from).doing(|| format!("publishing {}", from.display()))?;
    match tmp.persist(target) {
        Ok(()) => {
            sync_dir(folder_of(target))?;
            Ok(target.to_path_buf())
        }
        Err(e) if e.error.raw_os_error() == Some(libc::EXDEV) => {
            // Not deleted: the copy below reads it.
            let from = e.path.keep().map_err(|e| e.error).doing(|| format!("keeping {}", from.display()))?;
            remove_stale(target)?;
            let mut p = Publisher::create(target)?;
            let tmp = p.tmp_path().to_path_buf();
            let mut src = File::open(&from).doing(|| format!("opening {}", from.display()))?;
            std::io::copy(&mut src, p.file()).doing(|| format!("copying {} to {}", from.display(), tmp.display()))?;
            let perms = src.metadata().doing(|| format!("reading {}", from.display()))?.permissions();
            p.file().set_permissions(perms).doing(|| format!("setting the permissions of {}", tmp.display()))?;
            let path = p.persist()?;
            std::fs::remove_file(&from).doing(|| format!("removing {}", from.display()))?;
            Ok(path)
        }
        Err(e) => {
            e.path.keep().ok();
            Err(e.error).doing(|| format!("renaming {} to {}", from.display(), target.display()))
        }
    }
}

/// Writes `bytes` to `path` crash-safely, durably if `durability` asks.
pub fn write_with(path: &Path, bytes: &[u8], durability: Durability) -> Result<(), StorageError> {
    let mut p = Publisher::create(path)?;
    let tmp = p.tmp_path().to_path_buf();
    p.file().write_all(bytes).doing(|| format!("writing {}", tmp.display()))?;
    p.persist_with(durability).map(|_| ())
}

/// Fsyncs a folder so that a rename in it is durable.
pub fn sync_dir(dir: &Path) -> Result<(), StorageError> {
    File::open(dir).and_then(|d| d.sync_all()).doing(|| format!("syncing folder {}", dir.display()))
}

/// Removes the temporary files that unfinished publishes of `target` left behind (a kill
/// between creating and renaming). Returns how many were removed.
pub fn remove_stale(target: &Path) -> Result<usize, StorageError> {
    let dir = folder_of(target);
    let prefix = format!(".{}.", file_name(target));
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e).doing(|| format!("listing {}", dir.display())),
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && name.ends_with(TMP_SUFFIX) {
            let path = entry.path();
            std::fs::remove_file(&path).doing(|| format!("removing {}", path.display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_replaces_the_target_whole() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("run.json");
        write_with(&target, b"first", Durability::Durable).unwrap();
        write_with(&target, b"second", Durability::Atomic).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["run.json"], "no temporary file is left");
    }

    #[test]
    fn an_interrupted_publish_leaves_the_old_file_and_a_temp_that_is_cleaned_up() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t001.sums");
        write_with(&target, b"old", Durability::Durable).unwrap();
        // A kill after writing and before the rename: the temporary file stays behind.
        let mut p = Publisher::create(&target).unwrap();
        p.file().write_all(b"new but unfinished").unwrap();
        let (_, tmp) = p.tmp.keep().unwrap();
        assert!(tmp.exists());
        assert_eq!(std::fs::read(&target).unwrap(), b"old", "the target is untouched");
        // Another file's temporaries are not touched.
        let other = dir.path().join("t002.sums");
        let (_, other_tmp) = Publisher::create(&other).unwrap().tmp.keep().unwrap();
        assert_eq!(remove_stale(&target).unwrap(), 1);
        assert!(!tmp.exists() && other_tmp.exists());
        assert_eq!(remove_stale(&target).unwrap(), 0);
    }

    #[test]
    fn a_finished_file_is_published_by_rename() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("work").join("table.partial");
        std::fs::create_dir(dir.path().join("work")).unwrap();
        std::fs::write(&from, b"table").unwrap();
        let target = dir.path().join("KQvK.tbs");
        assert_eq!(publish_file(&from, &target).unwrap(), target);
        assert_eq!(std::fs::read(&target).unwrap(), b"table");
        assert!(!from.exists());
        // A missing source is an error, and nothing appears.
        let err = publish_file(&from, &dir.path().join("KRvK.tbs")).unwrap_err();
        assert!(err.to_string().contains("table.partial"), "{err}");
        assert!(!dir.path().join("KRvK.tbs").exists());
    }

    #[test]
    fn a_dropped_publisher_removes_its_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("x.tbs");
        let p = Publisher::create(&target).unwrap();
        let tmp = p.tmp_path().to_path_buf();
        drop(p);
        assert!(!tmp.exists() && !target.exists());
    }
}
