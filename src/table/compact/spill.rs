//! Packed blocks set aside beside a compact table being written, pushed into it later in
//! order: the white-to-move distance blocks, computed with the class blocks that cover the
//! same positions (so that white's values are read or decoded once, not once per section),
//! while the table's file still has the class section to write before them.
//!
//! The file is a run of entries, each `u32` length, `u64` XXH3-64 of the bytes, the bytes
//! (little-endian; `docs/WORKFILES.md`). It is never trusted beyond its checked entries: an
//! entry that is torn or does not match its checksum ends it.

use crate::table::error::FormatError;
use crate::work::{open_kept, IoContext};
use byteorder::{ByteOrder, LittleEndian};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use xxhash_rust::xxh3::xxh3_64;

/// Bytes before an entry's packed bytes: its length and checksum.
const ENTRY_HEAD: u64 = 12;

/// A spill file open for appending and reading; shared by the workers that read it and the
/// writer that appends.
pub struct Spill {
    file: File,
    path: PathBuf,
    /// Where each entry starts, and where the next one will.
    starts: Mutex<Vec<u64>>,
}

impl Spill {
    /// Opens (or creates) the spill at `path`, keeping at most its first `keep` whole entries
    /// (the file is cut after them).
    pub fn open(path: &Path, keep: usize) -> Result<Spill, FormatError> {
        let (file, len) = open_kept(path)?;
        let mut starts = vec![0u64];
        let mut at = 0u64;
        while starts.len() <= keep && at + ENTRY_HEAD <= len {
            let mut head = [0u8; ENTRY_HEAD as usize];
            file.read_exact_at(&mut head, at).doing(|| format!("reading {} at offset {at}", path.display()))?;
            let (n, sum) = (LittleEndian::read_u32(&head) as u64, LittleEndian::read_u64(&head[4..]));
            if at + ENTRY_HEAD + n > len {
                break;
            }
            let mut bytes = vec![0u8; n as usize];
            file.read_exact_at(&mut bytes, at + ENTRY_HEAD)
                .doing(|| format!("reading {} at offset {}", path.display(), at + ENTRY_HEAD))?;
            if xxh3_64(&bytes) != sum {
                break;
            }
            at += ENTRY_HEAD + n;
            starts.push(at);
        }
        file.set_len(at).doing(|| format!("cutting {}", path.display()))?;
        Ok(Spill { file, path: path.to_path_buf(), starts: Mutex::new(starts) })
    }

    /// Entries held.
    pub fn entries(&self) -> usize {
        self.starts.lock().expect("spill lock").len() - 1
    }

    /// Appends an entry.
    pub fn append(&self, packed: &[u8]) -> Result<(), FormatError> {
        let mut starts = self.starts.lock().expect("spill lock");
        let at = *starts.last().expect("a start");
        let mut bytes = Vec::with_capacity(ENTRY_HEAD as usize + packed.len());
        let mut head = [0u8; ENTRY_HEAD as usize];
        LittleEndian::write_u32(&mut head, packed.len() as u32);
        LittleEndian::write_u64(&mut head[4..], xxh3_64(packed));
        bytes.extend_from_slice(&head);
        bytes.extend_from_slice(packed);
        self.file.write_all_at(&bytes, at).doing(|| format!("writing {} at offset {at}", self.path.display()))?;
        starts.push(at + bytes.len() as u64);
        Ok(())
    }

    /// Entry `i`'s bytes, checked against their checksum.
    pub fn read(&self, i: usize) -> Result<Vec<u8>, FormatError> {
        let (from, to) = {
            let starts = self.starts.lock().expect("spill lock");
            match (starts.get(i), starts.get(i + 1)) {
                (Some(&a), Some(&b)) => (a, b),
                _ => return Err(FormatError::Writer(self.path.clone(), "a spilled block past the last one")),
            }
        };
        let mut bytes = vec![0u8; (to - from) as usize];
        self.file
            .read_exact_at(&mut bytes, from)
            .doing(|| format!("reading {} at offset {from}", self.path.display()))?;
        let sum = LittleEndian::read_u64(&bytes[4..ENTRY_HEAD as usize]);
        let packed = bytes.split_off(ENTRY_HEAD as usize);
        if xxh3_64(&packed) != sum {
            return Err(FormatError::Writer(self.path.clone(), "a spilled block does not match its checksum"));
        }
        Ok(packed)
    }

    /// Deletes the file.
    pub fn remove(self) -> Result<(), FormatError> {
        drop(self.file);
        std::fs::remove_file(&self.path).doing(|| format!("removing {}", self.path.display()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_a_torn_or_damaged_one_ends_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("table.dtz");
        let spill = Spill::open(&path, usize::MAX).unwrap();
        for i in 0..5u8 {
            spill.append(&vec![i; 10 + i as usize]).unwrap();
        }
        assert_eq!(spill.read(3).unwrap(), vec![3u8; 13]);
        assert!(spill.read(5).is_err());
        drop(spill);
        // Kept: at most the entries asked for.
        assert_eq!(Spill::open(&path, 2).unwrap().entries(), 2);
        let spill = Spill::open(&path, usize::MAX).unwrap();
        assert_eq!(spill.entries(), 2);
        for i in 2..5u8 {
            spill.append(&vec![i; 10 + i as usize]).unwrap();
        }
        drop(spill);
        // A flipped byte in entry 3 ends the file there; a torn last entry is dropped.
        let mut bytes = std::fs::read(&path).unwrap();
        let at = (0..3).map(|i| 12 + 10 + i).sum::<usize>() + 12;
        bytes[at] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(Spill::open(&path, usize::MAX).unwrap().entries(), 3);
        let len = std::fs::metadata(&path).unwrap().len();
        assert_eq!(len as usize, at - 12);
        std::fs::write(&path, &bytes[..at + 2]).unwrap();
        assert_eq!(Spill::open(&path, usize::MAX).unwrap().entries(), 3);
    }
}
