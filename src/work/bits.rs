//! Work tables on disk: one bit per position in storage order (`<name>.bits`), read and
//! written in whole blocks, each block checked against its XXH3 checksum (`<name>.sums`).

use super::error::{IoContext, StorageError};
use super::publish::{write_with, Durability};
use crate::index::Block;
use byteorder::{ByteOrder, LittleEndian};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

#[cfg(not(target_endian = "little"))]
compile_error!("work tables are read and written as little-endian words in place");

/// The bytes of words, little-endian (the machine's order).
pub fn as_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: u8 has no alignment or validity requirements; the length covers the words.
    unsafe { std::slice::from_raw_parts(words.as_ptr() as *const u8, words.len() * 8) }
}

fn as_bytes_mut(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: as above; every byte pattern is a valid u64.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr() as *mut u8, words.len() * 8) }
}

/// Checksum of a block's words (as little-endian bytes).
pub fn block_sum(words: &[u64]) -> u64 {
    xxh3_64(as_bytes(words))
}

/// A bit table file of a run.
pub struct BitFile {
    pub path: PathBuf,
    file: File,
    /// Largest single read or write, in bytes.
    io_bytes: usize,
}

impl BitFile {
    /// Opens (creating if needed) a table of `n_words` words.
    pub fn open(path: &Path, n_words: usize, io_bytes: usize) -> Result<BitFile, StorageError> {
        let (file, held) = super::open_kept(path)?;
        let len = n_words as u64 * 8;
        if held != len {
            file.set_len(len).doing(|| format!("sizing {}", path.display()))?;
        }
        // A chunk's blocks lie apart in the file; its reads are whole coalesced runs already.
        super::no_readahead(&file);
        Ok(BitFile { path: path.to_path_buf(), file, io_bytes: io_bytes.max(4096) })
    }

    /// Reads the blocks of a chunk into its local buffer, merging storage-contiguous blocks
    /// into reads of at most the I/O size, and checks each block against `sums`.
    pub fn read_blocks(&self, blocks: &[Block], local: &mut [u64], sums: &[u64]) -> Result<(), StorageError> {
        self.read_blocks_checked(blocks, local, Some(sums))
    }

    /// Reads blocks as [`BitFile::read_blocks`] does, without checking them (a table being
    /// updated in place, whose checksums the caller knows only after).
    pub fn read_blocks_unchecked(&self, blocks: &[Block], local: &mut [u64]) -> Result<(), StorageError> {
        self.read_blocks_checked(blocks, local, None)
    }

    fn read_blocks_checked(
        &self,
        blocks: &[Block],
        local: &mut [u64],
        sums: Option<&[u64]>,
    ) -> Result<(), StorageError> {
        let mut bytes = Vec::new();
        let mut i = 0;
        while i < blocks.len() {
            let mut j = i + 1;
            let mut len = blocks[i].words * 8;
            let local_run = |a: &Block, b: &Block| a.local_word + a.words == b.local_word;
            while j < blocks.len()
                && blocks[j].slot_word == blocks[j - 1].slot_word + blocks[j - 1].words
                && len + blocks[j].words * 8 <= self.io_bytes
            {
                len += blocks[j].words * 8;
                j += 1;
            }
            let offset = blocks[i].slot_word as u64 * 8;
            let read = |buf: &mut [u8]| {
                self.file
                    .read_exact_at(buf, offset)
                    .doing(|| format!("reading {} at offset {offset}", self.path.display()))
            };
            // Straight into the chunk buffer when the run is contiguous there too.
            let direct = blocks[i..j].windows(2).all(|w| local_run(&w[0], &w[1]));
            if direct {
                let start = blocks[i].local_word;
                read(as_bytes_mut(&mut local[start..start + len / 8]))?;
            } else {
                bytes.resize(len, 0);
                read(&mut bytes)?;
                let mut off = 0;
                for b in &blocks[i..j] {
                    as_bytes_mut(&mut local[b.local_word..b.local_word + b.words])
                        .copy_from_slice(&bytes[off..off + b.words * 8]);
                    off += b.words * 8;
                }
            }
            for b in &blocks[i..j] {
                if sums.is_some_and(|s| block_sum(&local[b.local_word..b.local_word + b.words]) != s[b.id]) {
                    return Err(StorageError::ChecksumMismatch {
                        path: self.path.clone(),
                        block: b.id,
                        offset: b.slot_word as u64 * 8,
                    });
                }
            }
            i = j;
        }
        Ok(())
    }

    /// Writes the blocks of a chunk from its local buffer (coalescing contiguous blocks) and
    /// returns each block's checksum.
    pub fn write_blocks(&self, blocks: &[Block], local: &[u64]) -> Result<Vec<u64>, StorageError> {
        self.put_blocks(blocks, local)?;
        Ok(blocks.iter().map(|b| block_sum(&local[b.local_word..b.local_word + b.words])).collect())
    }

    /// Writes blocks as [`BitFile::write_blocks`] does, without computing their checksums
    /// (the caller has them already).
    pub fn put_blocks(&self, blocks: &[Block], local: &[u64]) -> Result<(), StorageError> {
        let mut bytes = Vec::new();
        let mut i = 0;
        while i < blocks.len() {
            let mut j = i + 1;
            let mut len = blocks[i].words * 8;
            while j < blocks.len()
                && blocks[j].slot_word == blocks[j - 1].slot_word + blocks[j - 1].words
                && len + blocks[j].words * 8 <= self.io_bytes
            {
                len += blocks[j].words * 8;
                j += 1;
            }
            let direct = blocks[i..j].windows(2).all(|w| w[0].local_word + w[0].words == w[1].local_word);
            let data: &[u8] = if direct {
                as_bytes(&local[blocks[i].local_word..blocks[i].local_word + len / 8])
            } else {
                bytes.clear();
                for b in &blocks[i..j] {
                    bytes.extend_from_slice(as_bytes(&local[b.local_word..b.local_word + b.words]));
                }
                &bytes
            };
            let offset = blocks[i].slot_word as u64 * 8;
            self.file
                .write_all_at(data, offset)
                .doing(|| format!("writing {} at offset {offset}", self.path.display()))?;
            i = j;
        }
        Ok(())
    }

    /// Reads whole storage blocks `first..first+n` (checked) as words.
    pub fn read_range(
        &self,
        first: usize,
        n: usize,
        block_words: usize,
        sums: &[u64],
    ) -> Result<Vec<u64>, StorageError> {
        let blocks = Block::run_of(first, n, block_words);
        let mut out = vec![0u64; n * block_words];
        self.read_blocks(&blocks, &mut out, sums)?;
        Ok(out)
    }

    /// Flushes the file's data to disk.
    pub fn sync(&self) -> Result<(), StorageError> {
        self.file.sync_data().doing(|| format!("syncing {}", self.path.display()))
    }
}

/// Saves the block checksums of a finished table (`<table>.sums`), checksummed itself:
/// `u64 n`, `n` block checksums, then the XXH3 of everything before it, all little-endian.
pub fn save_sums(path: &Path, sums: &[u64]) -> Result<(), StorageError> {
    let mut bytes = vec![0u8; 16 + 8 * sums.len()];
    LittleEndian::write_u64(&mut bytes[..8], sums.len() as u64);
    LittleEndian::write_u64_into(sums, &mut bytes[8..8 + 8 * sums.len()]);
    let end = bytes.len() - 8;
    let sum = xxh3_64(&bytes[..end]);
    LittleEndian::write_u64(&mut bytes[end..], sum);
    // A resume checks every table against the pass logs anyway.
    write_with(path, &bytes, Durability::Atomic)
}

/// Loads the block checksums saved by [`save_sums`].
pub fn load_sums(path: &Path, n_blocks: usize) -> Result<Vec<u64>, StorageError> {
    let bytes = std::fs::read(path).doing(|| format!("reading {}", path.display()))?;
    let ok = bytes.len() == 16 + 8 * n_blocks
        && LittleEndian::read_u64(&bytes[..8]) == n_blocks as u64
        && xxh3_64(&bytes[..bytes.len() - 8]) == LittleEndian::read_u64(&bytes[bytes.len() - 8..]);
    if !ok {
        return Err(StorageError::Damaged { path: path.to_path_buf(), what: "block checksum file is damaged".into() });
    }
    let mut sums = vec![0u64; n_blocks];
    LittleEndian::read_u64_into(&bytes[8..bytes.len() - 8], &mut sums);
    Ok(sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of `words` words laid out one after the other, locally and in storage.
    fn blocks(n: usize, words: usize) -> Vec<Block> {
        (0..n).map(|i| Block { id: i, local_word: i * words, slot_word: i * words, words }).collect()
    }

    #[test]
    fn sums_round_trip_and_damage_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t003.sums");
        let sums: Vec<u64> = (0..10).map(|i| i * 0x9e37_79b9_7f4a_7c15).collect();
        save_sums(&path, &sums).unwrap();
        assert_eq!(load_sums(&path, 10).unwrap(), sums);
        let good = std::fs::read(&path).unwrap();
        // A flipped byte anywhere, a truncated file, a file of another block count.
        for at in [0, 7, 8, 40, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 4;
            std::fs::write(&path, &bad).unwrap();
            let err = load_sums(&path, 10).unwrap_err();
            assert!(matches!(&err, StorageError::Damaged { path: p, .. } if p == &path), "byte {at}: {err}");
        }
        std::fs::write(&path, &good[..good.len() - 8]).unwrap();
        assert!(load_sums(&path, 10).is_err());
        std::fs::write(&path, &good).unwrap();
        assert!(load_sums(&path, 9).is_err());
    }

    #[test]
    fn a_partly_written_chunk_is_found_block_by_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t004.bits");
        let words = 8;
        let file = BitFile::open(&path, 4 * words, 4096).unwrap();
        let bl = blocks(4, words);
        let data: Vec<u64> = (0..4 * words as u64).map(|i| i.wrapping_mul(0x2545_f491_4f6c_dd1d)).collect();
        let sums = file.write_blocks(&bl, &data).unwrap();
        let mut back = vec![0u64; 4 * words];
        file.read_blocks(&bl, &mut back, &sums).unwrap();
        assert_eq!(back, data);
        // A kill while the chunk's blocks were being rewritten: block 2 holds half old data.
        let mut torn = data.clone();
        for w in &mut torn[2 * words..2 * words + 3] {
            *w = !*w;
        }
        file.write_blocks(&bl[2..3], &torn).unwrap();
        let err = file.read_blocks(&bl, &mut back, &sums).unwrap_err();
        match err {
            StorageError::ChecksumMismatch { path: p, block, offset } => {
                assert_eq!((p, block, offset), (path.clone(), 2, 2 * words as u64 * 8));
            }
            e => panic!("expected a checksum mismatch, got {e}"),
        }
        let text = file.read_range(2, 1, words, &sums).unwrap_err().to_string();
        assert!(text.contains("t004.bits") && text.contains("block 2"), "{text}");
        // The other blocks still read.
        file.read_range(3, 1, words, &sums).unwrap();
        // A file cut short by the kill is sized back and its missing blocks are damage, not EOF.
        drop(file);
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(8 * words as u64 + 5).unwrap();
        let file = BitFile::open(&path, 4 * words, 4096).unwrap();
        file.read_range(0, 1, words, &sums).unwrap();
        assert!(matches!(file.read_range(1, 1, words, &sums), Err(StorageError::ChecksumMismatch { block: 1, .. })));
    }
}
