//! Work tables on disk: one bit per position in storage order (`<name>.bits`), read and
//! written in whole blocks, each stored compressed in a slot of its own (its all-zero and
//! all-one words, half to two thirds of them, cost two bits each: what a pass reads and
//! writes shrinks as much), each checked against the XXH3 checksum of its words
//! (`<name>.sums`).

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

/// The header of a stored block: `u32` length of what follows, `u32` [`Codec`].
const HEADER: usize = 8;

/// Bytes each block's slot holds beyond the block's own size: room for the header, so that
/// a block that does not compress is stored as it is.
const SLOT_PAD: usize = HEADER;

/// First read of a block: its header and, for the blocks of late steps (mostly all-one or
/// all-zero words), often all of it; the rest, if any, in a second read.
const FIRST_READ: usize = 4096;

/// How a block is stored in its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Codec {
    /// The block's words as they are.
    Raw = 0,
    /// Per group of 64 words: a mask of the all-zero words, a mask of the all-one words,
    /// then the other words in order ([`encode_words`]).
    Words = 1,
    /// One word repeated over the whole block.
    Fill = 2,
}

impl Codec {
    fn of(n: u32) -> Option<Codec> {
        [Codec::Raw, Codec::Words, Codec::Fill].into_iter().find(|c| *c as u32 == n)
    }
}

/// The stored form of a block's words (header word, then payload) into `out`, which is
/// cleared first: one repeated word, the words coded by [`encode_words`], or the words as
/// they are when that is not smaller.
///
/// Why this code and not a general compressor: half to two thirds of the words of a work
/// table are all-zero or all-one (a white king square changes nothing), and the code finds
/// them at a few GB/s; zstd (level -1) stores KQRvKQR's tables in half the bytes again
/// (3.6-5.4x against 1.8-2.6x), but at 0.5 GB/s to compress and 1.6 GB/s to expand per core,
/// which on two cores costs more time than the bytes it spares (`docs/BENCHMARKS.md`,
/// "Compressed work tables").
fn encode_block(words: &[u64], out: &mut Vec<u64>) {
    let header = |codec: Codec, payload_words: usize| {
        let mut h = [0u8; HEADER];
        LittleEndian::write_u32(&mut h[..4], payload_words as u32 * 8);
        LittleEndian::write_u32(&mut h[4..], codec as u32);
        u64::from_ne_bytes(h)
    };
    out.clear();
    if let Some(&first) = words.first().filter(|&&w| words.iter().all(|&x| x == w)) {
        out.extend([header(Codec::Fill, 1), first]);
        return;
    }
    out.push(0);
    encode_words(words, out);
    let n = out.len() - 1;
    if n < words.len() {
        out[0] = header(Codec::Words, n);
    } else {
        out.truncate(1);
        out[0] = header(Codec::Raw, words.len());
        out.extend_from_slice(words);
    }
}

/// Appends the [`Codec::Words`] form of `words` to `out`: for each group of 64 words (the
/// last one may be shorter), a word whose bit `i` says word `i` of the group is 0, a word
/// whose bit `i` says it is all ones, then the group's other words in order.
fn encode_words(words: &[u64], out: &mut Vec<u64>) {
    let start = out.len();
    out.resize(start + words.len() + 2 * words.len().div_ceil(64), 0);
    let mut at = start;
    for g in words.chunks(64) {
        let (mut zero, mut ones) = (0u64, 0u64);
        for (i, &w) in g.iter().enumerate() {
            zero |= ((w == 0) as u64) << i;
            ones |= ((w == !0) as u64) << i;
        }
        out[at] = zero;
        out[at + 1] = ones;
        at += 2;
        match (zero | ones).count_ones() as usize {
            0 => {
                out[at..at + g.len()].copy_from_slice(g);
                at += g.len();
            }
            n if n == g.len() => {}
            _ => {
                // Every word is written; the cursor moves past the literal ones only.
                for &w in g {
                    out[at] = w;
                    at += (w != 0 && w != !0) as usize;
                }
            }
        }
    }
    out.truncate(at);
}

/// The words of a [`Codec::Words`] payload; `None` if it is not the code of exactly
/// `words.len()` words.
fn decode_words(payload: &[u64], words: &mut [u64]) -> Option<()> {
    let mut at = 0;
    for g in words.chunks_mut(64) {
        let (zero, ones) = (*payload.get(at)?, *payload.get(at + 1)?);
        at += 2;
        let unused = if g.len() == 64 { 0 } else { !0u64 << g.len() };
        if zero & ones != 0 || (zero | ones) & unused != 0 {
            return None;
        }
        let n = g.len() - (zero | ones).count_ones() as usize;
        let literal = payload.get(at..at + n)?;
        at += n;
        if n == g.len() {
            g.copy_from_slice(literal);
        } else {
            // The constant words first (a loop without branches), then the literals over
            // their places.
            for (i, w) in g.iter_mut().enumerate() {
                *w = 0u64.wrapping_sub(ones >> i & 1);
            }
            let mut places = !(zero | ones) & !unused;
            for &w in literal {
                g[places.trailing_zeros() as usize] = w;
                places &= places - 1;
            }
        }
    }
    (at == payload.len()).then_some(())
}

/// The words of a stored block from its payload; `None` if the header or the payload is
/// not that of a block of `words.len()` words (a torn or damaged slot).
fn decode_block(codec: u32, payload: &[u64], words: &mut [u64]) -> Option<()> {
    match Codec::of(codec)? {
        Codec::Raw if payload.len() == words.len() => words.copy_from_slice(payload),
        Codec::Fill if payload.len() == 1 => words.fill(payload[0]),
        Codec::Words => decode_words(payload, words)?,
        _ => return None,
    }
    Some(())
}

/// A bit table file of a run: block `i` (of `w` words, first storage word `s`) in its slot
/// of `8 w + SLOT_PAD` bytes at offset `8 s + i * SLOT_PAD`, stored compressed
/// (`docs/WORKFILES.md`, "`NAME.bits`: work tables"). What a pass moves is the stored bytes.
pub struct BitFile {
    pub path: PathBuf,
    file: File,
    /// Whether this open created the table: its slots all read as zeros until written.
    fresh: bool,
}

thread_local! {
    /// Each thread's buffer for a block's stored form, kept between calls (not zeroed for
    /// each chunk).
    static SLOT: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Where block `b`'s slot starts, and its size.
fn slot_of(b: &Block) -> (u64, usize) {
    (b.slot_word as u64 * 8 + (b.id * SLOT_PAD) as u64, b.words * 8 + SLOT_PAD)
}

impl BitFile {
    /// Opens (creating if needed) a table of `n_words` words in blocks of `block_words`,
    /// its disk space reserved whole: a full disk shows when a table is created, not in the
    /// middle of a pass.
    pub fn open(path: &Path, n_words: usize, block_words: usize) -> Result<BitFile, StorageError> {
        let (file, held) = super::open_kept(path)?;
        let len = (n_words * 8 + n_words.div_ceil(block_words.max(1)) * SLOT_PAD) as u64;
        if held != len {
            file.set_len(len).doing(|| format!("sizing {}", path.display()))?;
            super::reserve(&file, len).doing(|| format!("reserving {len} bytes for {}", path.display()))?;
        }
        // A chunk's blocks lie apart in the file; its reads are whole blocks already.
        super::no_readahead(&file);
        Ok(BitFile { path: path.to_path_buf(), file, fresh: held == 0 })
    }

    /// Reads the blocks of a chunk into its local buffer and checks each against `sums`;
    /// returns the bytes read.
    pub fn read_blocks(&self, blocks: &[Block], local: &mut [u64], sums: &[u64]) -> Result<u64, StorageError> {
        self.read_blocks_checked(blocks, local, Some(sums))
    }

    /// Reads blocks as [`BitFile::read_blocks`] does, without checking them (a table being
    /// updated in place, whose checksums the caller knows only after); a block whose stored
    /// form is torn reads as zeros, which its checksum then refuses.
    pub fn read_blocks_unchecked(&self, blocks: &[Block], local: &mut [u64]) -> Result<u64, StorageError> {
        self.read_blocks_checked(blocks, local, None)
    }

    fn read_blocks_checked(
        &self,
        blocks: &[Block],
        local: &mut [u64],
        sums: Option<&[u64]>,
    ) -> Result<u64, StorageError> {
        SLOT.with(|slot| self.read_blocks_into(blocks, local, sums, &mut slot.borrow_mut()))
    }

    fn read_blocks_into(
        &self,
        blocks: &[Block],
        local: &mut [u64],
        sums: Option<&[u64]>,
        slot: &mut Vec<u64>,
    ) -> Result<u64, StorageError> {
        let mut total = 0u64;
        for b in blocks {
            let (offset, cap) = slot_of(b);
            let read = |buf: &mut [u8], at: u64| {
                self.file.read_exact_at(buf, at).doing(|| format!("reading {} at offset {at}", self.path.display()))
            };
            let first = FIRST_READ.min(cap);
            if slot.len() < cap / 8 {
                slot.resize(cap / 8, 0);
            }
            read(&mut as_bytes_mut(slot)[..first], offset)?;
            let header = &as_bytes(slot)[..HEADER];
            let (len, codec) = (LittleEndian::read_u32(&header[..4]) as usize, LittleEndian::read_u32(&header[4..]));
            let stored = HEADER + len;
            let words = &mut local[b.local_word..b.local_word + b.words];
            let decoded = match stored <= cap && len % 8 == 0 {
                true => {
                    if stored > first {
                        read(&mut as_bytes_mut(slot)[first..stored], offset + first as u64)?;
                    }
                    total += stored.max(first) as u64;
                    decode_block(codec, &slot[1..stored / 8], words)
                }
                false => {
                    total += first as u64;
                    None
                }
            };
            let damaged = || StorageError::ChecksumMismatch { path: self.path.clone(), block: b.id, offset };
            match sums {
                Some(s) if decoded.is_none() || block_sum(words) != s[b.id] => return Err(damaged()),
                None if decoded.is_none() => words.fill(0),
                _ => {}
            }
        }
        Ok(total)
    }

    /// Writes the blocks of a chunk from its local buffer, each once in the pass that writes
    /// the table whole; returns each block's checksum and the bytes written. In a table this
    /// open created, each slot is written whole, its tail zeros: a slot written in part
    /// leaves the rest of its reserved space an extent of its own, which splits the file
    /// into two extents per block, slows every later write into it and takes the file
    /// system seconds per table to free (`docs/WORKFILES.md`); written whole once, the file
    /// stays a few extents however its blocks are rewritten.
    pub fn write_blocks(&self, blocks: &[Block], local: &[u64]) -> Result<(Vec<u64>, u64), StorageError> {
        let sums = blocks.iter().map(|b| block_sum(&local[b.local_word..b.local_word + b.words])).collect();
        let written = SLOT.with(|slot| self.put_blocks_from(blocks, local, &mut slot.borrow_mut(), self.fresh))?;
        Ok((sums, written))
    }

    /// Writes blocks as [`BitFile::write_blocks`] does, without computing their checksums
    /// (the caller has them already); returns the bytes written.
    pub fn put_blocks(&self, blocks: &[Block], local: &[u64]) -> Result<u64, StorageError> {
        SLOT.with(|slot| self.put_blocks_from(blocks, local, &mut slot.borrow_mut(), false))
    }

    /// Writes blocks in their stored form, each padded with zeros to its whole slot if
    /// `whole`; returns the bytes written.
    fn put_blocks_from(
        &self,
        blocks: &[Block],
        local: &[u64],
        stored: &mut Vec<u64>,
        whole: bool,
    ) -> Result<u64, StorageError> {
        let mut total = 0u64;
        for b in blocks {
            encode_block(&local[b.local_word..b.local_word + b.words], stored);
            let (offset, cap) = slot_of(b);
            if whole {
                stored.resize(cap / 8, 0);
            }
            self.file
                .write_all_at(as_bytes(stored), offset)
                .doing(|| format!("writing {} at offset {offset}", self.path.display()))?;
            total += stored.len() as u64 * 8;
        }
        Ok(total)
    }

    /// Reads whole storage blocks `first..first+n` (checked) as words; returns them and the
    /// bytes read.
    pub fn read_range(
        &self,
        first: usize,
        n: usize,
        block_words: usize,
        sums: &[u64],
    ) -> Result<(Vec<u64>, u64), StorageError> {
        let blocks = Block::run_of(first, n, block_words);
        let mut out = vec![0u64; n * block_words];
        let bytes = self.read_blocks(&blocks, &mut out, sums)?;
        Ok((out, bytes))
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

    /// A new table `name` of four blocks of `words` words in a temporary folder, and its
    /// blocks laid out from local word 0.
    fn four_blocks(name: &str, words: usize) -> (tempfile::TempDir, std::path::PathBuf, BitFile, Vec<Block>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        let file = BitFile::open(&path, 4 * words, words).unwrap();
        (dir, path, file, blocks(4, words))
    }

    #[test]
    fn blocks_round_trip_in_every_stored_form() {
        let words = 512;
        let (_dir, path, new, bl) = four_blocks("t005.bits", words);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 4 * (8 * words + SLOT_PAD) as u64);
        drop(new);
        // Opened again, as a recycled table: only the blocks' stored forms are written.
        let file = BitFile::open(&path, 4 * words, words).unwrap();
        // All ones (fill), sparse (words), random (raw), one word set in zeros (words).
        let mut data = vec![!0u64; words];
        data.extend((0..words as u64).map(|i| if i % 37 == 0 { 1 << (i % 64) } else { 0 }));
        data.extend((0..words as u64).map(|i| (i + 1).wrapping_mul(0x2545_f491_4f6c_dd1d).rotate_left(17) ^ i));
        data.extend((0..words).map(|i| if i == 300 { 5 } else { 0 }));
        let (sums, written) = file.write_blocks(&bl, &data).unwrap();
        let mut codecs = Vec::new();
        let mut stored = 0;
        for b in &bl {
            let mut out = Vec::new();
            encode_block(&data[b.local_word..b.local_word + b.words], &mut out);
            codecs.push(LittleEndian::read_u32(&as_bytes(&out)[4..8]));
            stored += out.len() as u64 * 8;
        }
        assert_eq!(codecs, [Codec::Fill as u32, Codec::Words as u32, Codec::Raw as u32, Codec::Words as u32]);
        assert_eq!(written, stored);
        assert!(written < 8 * 4 * words as u64 / 2 + 8 * words as u64, "{written}");
        let mut back = vec![0u64; 4 * words];
        let read = file.read_blocks(&bl, &mut back, &sums).unwrap();
        assert_eq!(back, data);
        // Each slot's first page, and the rest of the raw block's payload.
        assert_eq!(read, 3 * FIRST_READ as u64 + (HEADER + 8 * words) as u64);
        // Written again smaller (a fill over the raw block), it reads back as the new block.
        let ones = vec![!0u64; 4 * words];
        let (sums, _) = file.write_blocks(&bl[2..3], &ones).unwrap();
        let (again, _) = file.read_range(2, 1, words, &[0, 0, sums[0]]).unwrap();
        assert_eq!(again, vec![!0u64; words]);
    }

    #[test]
    fn a_new_tables_slots_are_written_whole_and_rewrites_only_their_stored_form() {
        let words = 512;
        let (_dir, path, file, bl) = four_blocks("forced-zeroing.bits", words);
        // Blocks 0 and 2 all zeros, 1 and 3 a few positions.
        let data: Vec<u64> =
            (0..4 * words).map(|i| if (i / words) % 2 == 1 && i % 97 == 0 { 1 << (i % 64) } else { 0 }).collect();
        let (sums, written) = file.write_blocks(&bl, &data).unwrap();
        let slot = (8 * words + SLOT_PAD) as u64;
        assert_eq!(written, 4 * slot);
        let mut back = vec![7u64; 4 * words];
        file.read_blocks(&bl, &mut back, &sums).unwrap();
        assert_eq!(back, data);
        // Opened again (a resume, a recycled table), only the stored forms are written: a
        // fill over the sparse blocks, and the tails of the slots are left as they are.
        let again = BitFile::open(&path, 4 * words, words).unwrap();
        let zeros = vec![0u64; 4 * words];
        let (zero_sums, written) = again.write_blocks(&bl, &zeros).unwrap();
        assert_eq!(written, 4 * 16);
        again.read_blocks(&bl, &mut back, &zero_sums).unwrap();
        assert_eq!(back, zeros);
        // A slot of zeros (never written) is damage, not a block of zeros.
        let fresh = BitFile::open(&path.with_file_name("t009.bits"), 4 * words, words).unwrap();
        let err = fresh.read_range(2, 1, words, &zero_sums).unwrap_err();
        assert!(matches!(err, StorageError::ChecksumMismatch { block: 2, .. }), "{err}");
    }

    #[test]
    fn a_partly_written_chunk_is_found_block_by_block() {
        let words = 512;
        let (_dir, path, file, bl) = four_blocks("t004.bits", words);
        let data: Vec<u64> = (0..4 * words as u64).map(|i| if i % 7 == 0 { i } else { 0 }).collect();
        let (sums, _) = file.write_blocks(&bl, &data).unwrap();
        let mut back = vec![0u64; 4 * words];
        file.read_blocks(&bl, &mut back, &sums).unwrap();
        assert_eq!(back, data);
        // A kill while the chunk's blocks were being rewritten: block 2's slot holds the new
        // header and half its payload over the old one.
        let mut torn = data.clone();
        torn[2 * words + 3] ^= 0xff00;
        let mut stored = Vec::new();
        encode_block(&torn[2 * words..3 * words], &mut stored);
        let (offset, _) = slot_of(&bl[2]);
        file.file.write_all_at(&as_bytes(&stored)[..stored.len() * 4], offset).unwrap();
        let err = file.read_blocks(&bl, &mut back, &sums).unwrap_err();
        match err {
            StorageError::ChecksumMismatch { path: p, block, offset: at } => {
                assert_eq!((p, block, at), (path.clone(), 2, offset));
            }
            e => panic!("expected a checksum mismatch, got {e}"),
        }
        let text = file.read_range(2, 1, words, &sums).unwrap_err().to_string();
        assert!(text.contains("t004.bits") && text.contains("block 2"), "{text}");
        // Unchecked, the torn block reads as zeros (its checksum then refuses it).
        let mut torn_back = vec![7u64; words];
        file.read_blocks_unchecked(&[Block { local_word: 0, ..bl[2] }], &mut torn_back).unwrap();
        assert!(torn_back.iter().all(|&w| w == 0));
        // The other blocks still read.
        file.read_range(3, 1, words, &sums).unwrap();
        // A flipped byte in a payload, and a header naming an unknown codec or a length past
        // the slot, are damage.
        let (offset3, cap) = slot_of(&bl[3]);
        for (at, value) in [(offset3 + HEADER as u64 + 2, None), (offset3 + 4, Some(9u32)), (offset3, Some(cap as u32))]
        {
            let mut b = [0u8; 4];
            file.file.read_exact_at(&mut b, at).unwrap();
            let bad = value.map_or([b[0] ^ 0x5a, b[1], b[2], b[3]], |v| v.to_le_bytes());
            file.file.write_all_at(&bad, at).unwrap();
            assert!(matches!(
                file.read_range(3, 1, words, &sums),
                Err(StorageError::ChecksumMismatch { block: 3, .. })
            ));
            file.file.write_all_at(&b, at).unwrap();
            file.read_range(3, 1, words, &sums).unwrap();
        }
        // A file cut short by the kill is sized back and its missing blocks are damage, not EOF.
        drop(file);
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(offset3 + 5).unwrap();
        let file = BitFile::open(&path, 4 * words, words).unwrap();
        file.read_range(0, 1, words, &sums).unwrap();
        assert!(matches!(file.read_range(3, 1, words, &sums), Err(StorageError::ChecksumMismatch { block: 3, .. })));
    }

    proptest::proptest! {
        /// Any mix of all-zero, all-one and other words, of any length, decodes to itself;
        /// the code cut short or lengthened by a word is refused.
        #[test]
        fn words_code_round_trips(kinds in proptest::collection::vec((0u8..4, proptest::prelude::any::<u64>()), 1..300)) {
            let words: Vec<u64> = kinds.iter().map(|&(k, w)| match k { 0 => 0, 1 => !0, _ => w }).collect();
            let mut code = Vec::new();
            encode_words(&words, &mut code);
            let literal = words.iter().filter(|&&w| w != 0 && w != !0).count();
            proptest::prop_assert_eq!(code.len(), literal + 2 * words.len().div_ceil(64));
            let mut back = vec![7u64; words.len()];
            proptest::prop_assert!(decode_words(&code, &mut back).is_some());
            proptest::prop_assert_eq!(&back, &words);
            proptest::prop_assert!(decode_words(&code[..code.len() - 1], &mut back).is_none());
            code.push(3);
            proptest::prop_assert!(decode_words(&code, &mut back).is_none());
        }
    }
}
