//! The work folder: everything a run keeps on disk between passes, and how each file is
//! written and checked. `docs/WORKFILES.md` describes every file byte by byte.
//!
//! - [`bits`]: one-bit work tables in checksummed blocks, and their `.sums` files;
//! - [`deltalog`]: per-pass logs of finished chunks and their gap-coded streams;
//! - [`gap`]: Koistinen's gap code of a step's new positions;
//! - [`manifest`]: the job's and each run's manifest;
//! - [`publish`]: crash-safe publishing (temporary file, sync, rename, sync the folder);
//! - [`lock`]: one job per work folder, one builder per table;
//! - [`reaper`]: work files deleted in the background.
//!
//! This layer stores and checks; it never decides. Damage comes back as a
//! [`StorageError`], and the generate layer chooses to rebuild a block or restart a run.
//!
//! Owns: the bytes of the work folder. May import `chess`, `index` and `solve` (the names of
//! passes and tables); never `table`, `generate` or `cli`.

pub mod bits;
pub mod deltalog;
mod error;
pub mod gap;
pub mod lock;
pub mod manifest;
pub mod publish;
pub mod reaper;

pub use error::{IoContext, StorageError};

use crate::solve::{Pass, WorkTable};
use std::path::{Path, PathBuf};

/// Opens `path` for reading and writing, created if missing and kept as it is otherwise (a
/// file that a resume goes on writing), with its length.
pub fn open_kept(path: &Path) -> Result<(std::fs::File, u64), StorageError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .doing(|| format!("opening {}", path.display()))?;
    let len = file.metadata().doing(|| format!("reading the size of {}", path.display()))?.len();
    Ok((file, len))
}

/// Gives the file at `from` a second name `to`, replacing a file there: a hard link, which
/// copies nothing and allocates no inode (creating a file is what costs on a file system
/// that reuses inodes slowly); a copy where the file system has no hard links.
pub fn link_or_copy(from: &Path, to: &Path) -> Result<(), StorageError> {
    match std::fs::remove_file(to) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
    .doing(|| format!("removing {}", to.display()))?;
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).doing(|| format!("copying {} to {}", from.display(), to.display()))?;
    }
    Ok(())
}

/// Reserves `len` bytes of disk for `file` (Linux `fallocate`; a file system without it
/// allocates as blocks are written, as it would without the call). The bit tables are
/// stored compressed, so that without the reservation a table would take a share of the
/// disk that depends on its data, and a full disk would show in the middle of a pass.
pub(crate) fn reserve(file: &std::fs::File, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid open descriptor; mode 0 allocates the range and changes no data.
    let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len as libc::off_t) };
    match r {
        0 => Ok(()),
        _ => match std::io::Error::last_os_error() {
            e if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS)) => Ok(()),
            e => Err(e),
        },
    }
}

/// Tells the kernel not to read ahead of `file`'s reads. The work files are read in pieces
/// that lie apart (a chunk's blocks, a block's delta stream): readahead around each fetches
/// neighbours needed much later, and when RAM and page cache are short those are evicted
/// first and read again (KQRvKR in a 64 MiB cgroup read 6.4 GiB from the device for 1.5 GiB
/// asked; `scripts/bench-diskbound.sh`).
pub(crate) fn no_readahead(file: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid open descriptor; the call only sets an access-pattern hint, whose
    // failure changes nothing but speed.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
}

/// The work folder of one run (`WORK/<RUN>/`): its manifest, the compact table being written,
/// and a folder per level.
#[derive(Clone, Debug)]
pub struct RunFolder {
    path: PathBuf,
}

impl RunFolder {
    pub fn new(path: &Path) -> RunFolder {
        RunFolder { path: path.to_path_buf() }
    }

    /// The folder itself.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The run's manifest, `run.json`.
    pub fn manifest(&self) -> PathBuf {
        self.path.join("run.json")
    }

    /// The compact table being written from the levels' streams, `table.compact`.
    pub fn compact_table(&self) -> PathBuf {
        self.path.join("table.compact")
    }

    /// The folder of a level, `level-LL/`.
    pub fn level(&self, number: u8) -> LevelFolder {
        LevelFolder { path: self.path.join(format!("level-{number:02}")) }
    }
}

/// The folder of one level of a run: its work tables, block checksums, pass logs and
/// streams, and, once the level is solved, its final bitbases for the levels below.
#[derive(Clone, Debug)]
pub struct LevelFolder {
    path: PathBuf,
}

impl LevelFolder {
    /// The folder itself.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Files being deleted in the background, `trash/` (see [`reaper`]).
    pub fn trash(&self) -> PathBuf {
        self.path.join("trash")
    }

    /// A work table's bits, `NAME.bits`.
    pub fn bits(&self, table: WorkTable) -> PathBuf {
        self.path.join(format!("{}.bits", table.name()))
    }

    /// A work table's block checksums, `NAME.sums`.
    pub fn sums(&self, table: WorkTable) -> PathBuf {
        self.path.join(format!("{}.sums", table.name()))
    }

    /// A pass's log of finished chunks: `pass-init.log` for `InitWhite`, `pass-000.log` for
    /// `InitBlack`, `pass-KKK.log` for step `k`.
    pub fn log(&self, pass: Pass) -> PathBuf {
        match pass {
            Pass::InitWhite => self.path.join("pass-init.log"),
            p => self.path.join(format!("pass-{:03}.log", p.number())),
        }
    }

    /// The stream file that goes with a pass's log.
    pub fn streams(&self, pass: Pass) -> PathBuf {
        deltalog::streams_path(&self.log(pass))
    }

    /// The wins of exactly 100 plies of a solved level with pawns (`E_101`), `exact-100.log`
    /// (with `exact-100.streams`): a pass log of one record, empty when there are none.
    pub fn exact_100_log(&self) -> PathBuf {
        self.path.join("exact-100.log")
    }

    /// Whether a solved level with pawns keeps the file `name` until its run's compaction:
    /// what its values are decoded from (the pass logs and streams, the illegal tables, the
    /// wins of exactly 100 plies), `c` (the wins by a zeroing move, which the distance
    /// section leaves out) and its final bitbases, which the levels below read.
    pub fn solved_keeps(name: &str) -> bool {
        let kept = ["pass-", "exact-100.", "illegal-wtm.", "illegal-btm.", "c.", "final-"];
        kept.iter().any(|k| name.starts_with(k)) && !name.ends_with(".tmp")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_name_replaces_a_file_there_and_shares_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("pass-040.log"), dir.path().join("pass-042.log"));
        std::fs::write(&a, b"records").unwrap();
        // A name left by an interrupted skip is replaced.
        std::fs::write(&b, b"stale").unwrap();
        link_or_copy(&a, &b).unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), b"records");
        link_or_copy(&a, &b).unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), b"records");
        // The old name can go; the new one keeps the bytes.
        std::fs::remove_file(&a).unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), b"records");
        assert!(link_or_copy(&a, &dir.path().join("c")).is_err(), "a missing file has no second name");
    }
}
