//! `tbstream compact DIR`: converts the tables of a folder from the uncompressed formats
//! (versions 1 and 2) into the compact one, in place and without regenerating them. Each
//! table is checked against its section checksums first, converted into the folder's work
//! folder (resumable: the same command continues an interrupted conversion), and published
//! over the old file by rename.

use crate::chess::Material;
use crate::progress::Progress;
use crate::table::compact::{CompactTable, VERSION_COMPACT};
use crate::table::convert::{uncompressed_to_compact, CompactTarget};
use crate::table::uncompressed::TableFile;
use crate::table::version::{EXTENSION, MAGIC};
use crate::table::version::{
    VERSION_COMPACT_ORDERS, VERSION_COMPACT_SLOT_ORDER, VERSION_COMPACT_TWINS, VERSION_COMPACT_ZEROING,
};
use crate::work::lock::Lock;
use anyhow::Context;
use byteorder::{ByteOrder, LittleEndian};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What the conversion of a folder did with one table file.
#[derive(Clone, Debug)]
pub enum Conversion {
    /// Converted: the old and new sizes in bytes, and the seconds it took.
    Converted { old_bytes: u64, new_bytes: u64, secs: f64 },
    /// Already compact.
    AlreadyCompact,
}

/// The format version of a table file (from its header), if it is one.
fn version_of(path: &Path) -> anyhow::Result<Option<u16>> {
    let mut head = [0u8; 10];
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    if f.read_exact(&mut head).is_err() || head[..8] != MAGIC {
        return Ok(None);
    }
    Ok(Some(LittleEndian::read_u16(&head[8..10])))
}

/// Converts every uncompressed table of `dir` (files `*.tbs`) into the compact format at
/// `zstd_level` with `threads` workers. Intermediate files go to `work` (created if needed,
/// removed when done); a second `compact` or `gen` on the same work folder is refused.
pub fn convert_folder(
    dir: &Path,
    work: &Path,
    zstd_level: i32,
    threads: usize,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<(PathBuf, Conversion)>> {
    anyhow::ensure!(dir.is_dir(), "table folder {} does not exist", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == EXTENSION))
        .collect();
    files.sort();
    std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
    let lock = Lock::acquire(&work.join("job.lock"), &format!("work folder {}", work.display()))?;
    let mut done = Vec::new();
    for path in files {
        let outcome = match version_of(&path)? {
            // Versions 3 to 6 (older compact tables) are read as they are.
            Some(
                VERSION_COMPACT
                | VERSION_COMPACT_ZEROING
                | VERSION_COMPACT_TWINS
                | VERSION_COMPACT_ORDERS
                | VERSION_COMPACT_SLOT_ORDER,
            ) => {
                let name = path.display();
                CompactTable::open(&path).with_context(|| format!("{name} is compact but does not open"))?;
                Conversion::AlreadyCompact
            }
            Some(_) => convert(&path, work, zstd_level, threads, progress)?,
            None => anyhow::bail!("{} is not a tbstream table (bad magic)", path.display()),
        };
        done.push((path, outcome));
    }
    drop(lock);
    std::fs::remove_file(work.join("job.lock")).ok();
    std::fs::remove_dir(work).ok();
    Ok(done)
}

/// The progress of writing a compact table (`what`: "compaction", "conversion"): a stage of
/// blocks, and a line when it resumes an interrupted write.
pub fn block_progress<'a>(
    progress: &'a dyn Progress,
    material: &'a Material,
    what: &'a str,
) -> impl FnMut(u64, u64) + 'a {
    let mut started = false;
    move |done, total| {
        if !started {
            started = true;
            if done > 1 {
                progress.log(&format!("{material}: {what} resumes after {} of {total} blocks", done - 1));
            }
            progress.start(format!("{material} compact"), total, "blocks");
        }
        progress.set(done);
    }
}

/// Converts one uncompressed table in place.
fn convert(
    path: &Path,
    work: &Path,
    zstd_level: i32,
    threads: usize,
    progress: &dyn Progress,
) -> anyhow::Result<Conversion> {
    let t = Instant::now();
    let src = TableFile::open(path)?;
    let material: Material = src.header.material.clone();
    progress.log(&format!("{material}: checking {} before converting it", path.display()));
    src.verify().with_context(|| format!("{} is damaged: regenerate it instead", path.display()))?;
    let old_bytes = src.header.file_len();
    let partial = work.join(format!("{material}.compact"));
    let mut show = block_progress(progress, &material, "conversion");
    let to = CompactTarget { partial: &partial, target: path, zstd_level, threads };
    let out = uncompressed_to_compact(&src, &to, &mut |done, total| {
        show(done, total);
        Ok(())
    })?;
    progress.finish("written");
    let new_bytes = std::fs::metadata(&out).with_context(|| format!("reading {}", out.display()))?.len();
    progress.log(&format!(
        "{material}: {} -> {} bytes ({:.1}x smaller) in {:.1}s",
        old_bytes,
        new_bytes,
        old_bytes as f64 / new_bytes as f64,
        t.elapsed().as_secs_f64()
    ));
    Ok(Conversion::Converted { old_bytes, new_bytes, secs: t.elapsed().as_secs_f64() })
}
