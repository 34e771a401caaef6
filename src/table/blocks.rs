//! Compressed block sections, the building block of the compact format (issue 13,
//! `docs/COMPACT.md`; the version-2 files do not use them yet): a section's bytes cut into
//! blocks, each compressed on its own with zstd, and an index of the blocks. A reader decodes
//! one block at a time and checks a block's checksum the first time it decodes it, so that
//! opening a table never reads it whole.
//!
//! An index entry is 24 bytes, little-endian: u64 offset of the block's compressed bytes
//! from the start of the section's data, u32 compressed length, u32 decoded length, u64
//! XXH3-64 of the compressed bytes. Blocks follow each other without gaps.

use byteorder::{ByteOrder, LittleEndian};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use xxhash_rust::xxh3::xxh3_64;

/// Bytes of one index entry.
pub const ENTRY_BYTES: usize = 24;

/// One compressed block of a section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    /// Offset of its compressed bytes from the start of the section's data.
    pub offset: u64,
    /// Compressed length.
    pub len: u32,
    /// Decoded length.
    pub raw_len: u32,
    /// XXH3-64 of the compressed bytes.
    pub sum: u64,
}

/// What can be wrong with a block section.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BlockError {
    #[error("block index damaged: {0}")]
    Index(String),
    #[error("block {block}: checksum mismatch (file damaged)")]
    Checksum { block: usize },
    #[error("block {block}: does not decode ({reason})")]
    Decode { block: usize, reason: String },
    #[error("block {block} does not exist (the section has {blocks})")]
    NoBlock { block: usize, blocks: usize },
}

/// Compresses blocks one after another into `out`, recording their index entries.
pub struct BlockWriter<W: Write> {
    out: W,
    level: i32,
    at: u64,
    entries: Vec<BlockEntry>,
}

impl<W: Write> BlockWriter<W> {
    /// A writer at zstd `level` (1..=22).
    pub fn new(out: W, level: i32) -> BlockWriter<W> {
        BlockWriter { out, level, at: 0, entries: Vec::new() }
    }

    /// Compresses `raw` as the next block and writes it.
    pub fn push(&mut self, raw: &[u8]) -> std::io::Result<()> {
        let packed = zstd::bulk::compress(raw, self.level)?;
        self.out.write_all(&packed)?;
        let len = u32::try_from(packed.len()).map_err(|_| std::io::Error::other("compressed block over 4 GiB"))?;
        let raw_len = u32::try_from(raw.len()).map_err(|_| std::io::Error::other("block over 4 GiB"))?;
        self.entries.push(BlockEntry { offset: self.at, len, raw_len, sum: xxh3_64(&packed) });
        self.at += packed.len() as u64;
        Ok(())
    }

    /// The output and the index entries of the blocks written.
    pub fn finish(self) -> (W, Vec<BlockEntry>) {
        (self.out, self.entries)
    }
}

/// The index as bytes.
pub fn encode_index(entries: &[BlockEntry]) -> Vec<u8> {
    let mut out = vec![0u8; entries.len() * ENTRY_BYTES];
    for (e, b) in entries.iter().zip(out.chunks_exact_mut(ENTRY_BYTES)) {
        LittleEndian::write_u64(&mut b[0..8], e.offset);
        LittleEndian::write_u32(&mut b[8..12], e.len);
        LittleEndian::write_u32(&mut b[12..16], e.raw_len);
        LittleEndian::write_u64(&mut b[16..24], e.sum);
    }
    out
}

/// Reads an index of blocks whose data takes `data_len` bytes: the entries must follow each
/// other from offset 0 without gaps and end exactly at `data_len`.
pub fn decode_index(bytes: &[u8], data_len: u64) -> Result<Vec<BlockEntry>, BlockError> {
    if !bytes.len().is_multiple_of(ENTRY_BYTES) {
        return Err(BlockError::Index(format!("{} bytes is not a whole number of entries", bytes.len())));
    }
    let mut at = 0u64;
    let mut entries = Vec::with_capacity(bytes.len() / ENTRY_BYTES);
    for (i, b) in bytes.chunks_exact(ENTRY_BYTES).enumerate() {
        let e = BlockEntry {
            offset: LittleEndian::read_u64(&b[0..8]),
            len: LittleEndian::read_u32(&b[8..12]),
            raw_len: LittleEndian::read_u32(&b[12..16]),
            sum: LittleEndian::read_u64(&b[16..24]),
        };
        if e.offset != at {
            return Err(BlockError::Index(format!("block {i} starts at {}, expected {at}", e.offset)));
        }
        at += e.len as u64;
        entries.push(e);
    }
    if at != data_len {
        return Err(BlockError::Index(format!("blocks end at {at}, the data at {data_len}")));
    }
    Ok(entries)
}

/// Decodes the blocks of a section held in memory (typically a mapped file).
pub struct BlockReader<'a> {
    data: &'a [u8],
    entries: Vec<BlockEntry>,
    /// Whether a block's checksum was checked already.
    checked: Vec<AtomicBool>,
}

impl<'a> BlockReader<'a> {
    /// A reader of `data` (the blocks' bytes) with its index bytes, checked for shape.
    pub fn new(data: &'a [u8], index: &[u8]) -> Result<BlockReader<'a>, BlockError> {
        let entries = decode_index(index, data.len() as u64)?;
        let checked = entries.iter().map(|_| AtomicBool::new(false)).collect();
        Ok(BlockReader { data, entries, checked })
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no block.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Decodes block `i`, checking its checksum the first time.
    pub fn block(&self, i: usize) -> Result<Vec<u8>, BlockError> {
        let e = self.entries.get(i).ok_or(BlockError::NoBlock { block: i, blocks: self.entries.len() })?;
        let packed = &self.data[e.offset as usize..(e.offset + e.len as u64) as usize];
        if !self.checked[i].load(Ordering::Relaxed) {
            if xxh3_64(packed) != e.sum {
                return Err(BlockError::Checksum { block: i });
            }
            self.checked[i].store(true, Ordering::Relaxed);
        }
        let raw = zstd::bulk::decompress(packed, e.raw_len as usize)
            .map_err(|err| BlockError::Decode { block: i, reason: err.to_string() })?;
        if raw.len() != e.raw_len as usize {
            let reason = format!("{} bytes, the index says {}", raw.len(), e.raw_len);
            return Err(BlockError::Decode { block: i, reason });
        }
        Ok(raw)
    }

    /// Checks every block's checksum and decoding (what `verify` does); the first damaged
    /// block is the error.
    pub fn check_all(&self) -> Result<(), BlockError> {
        (0..self.len()).try_for_each(|i| self.block(i).map(|_| ()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of varied compressibility: runs, a ramp, and noise.
    fn sample_blocks() -> Vec<Vec<u8>> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut noise = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        };
        vec![vec![7u8; 65536], (0..65536u32).map(|i| (i / 300) as u8).collect(), noise(4096), Vec::new(), noise(1)]
    }

    fn written(blocks: &[Vec<u8>]) -> (Vec<u8>, Vec<u8>) {
        let mut w = BlockWriter::new(Vec::new(), 19);
        for b in blocks {
            w.push(b).unwrap();
        }
        let (data, entries) = w.finish();
        (data, encode_index(&entries))
    }

    #[test]
    fn blocks_round_trip_one_at_a_time() {
        let blocks = sample_blocks();
        let (data, index) = written(&blocks);
        assert!(data.len() < 70_000, "runs and ramps compress: {} bytes", data.len());
        let r = BlockReader::new(&data, &index).unwrap();
        assert_eq!(r.len(), blocks.len());
        for (i, b) in blocks.iter().enumerate().rev() {
            assert_eq!(&r.block(i).unwrap(), b);
        }
        assert_eq!(r.block(9), Err(BlockError::NoBlock { block: 9, blocks: 5 }));
        r.check_all().unwrap();
    }

    #[test]
    fn a_flipped_byte_is_reported_by_the_block_that_holds_it() {
        let blocks = sample_blocks();
        let (data, index) = written(&blocks);
        let entries = decode_index(&index, data.len() as u64).unwrap();
        for (i, e) in entries.iter().enumerate().filter(|(_, e)| e.len > 0) {
            let mut bad = data.clone();
            bad[(e.offset + e.len as u64 / 2) as usize] ^= 0x10;
            let r = BlockReader::new(&bad, &index).unwrap();
            assert_eq!(r.block(i), Err(BlockError::Checksum { block: i }));
            assert_eq!(r.check_all(), Err(BlockError::Checksum { block: i }));
            // The other blocks still read.
            for j in (0..r.len()).filter(|&j| j != i) {
                assert_eq!(r.block(j).unwrap(), blocks[j]);
            }
        }
    }

    #[test]
    fn a_damaged_or_truncated_index_is_refused() {
        let (data, index) = written(&sample_blocks());
        assert!(matches!(BlockReader::new(&data, &index[..index.len() - 1]), Err(BlockError::Index(_))));
        assert!(matches!(BlockReader::new(&data, &index[..index.len() - ENTRY_BYTES]), Err(BlockError::Index(_))));
        assert!(matches!(BlockReader::new(&data[..data.len() - 1], &index), Err(BlockError::Index(_))));
        let mut moved = index.clone();
        moved[ENTRY_BYTES] ^= 1; // block 1's offset
        assert!(matches!(BlockReader::new(&data, &moved), Err(BlockError::Index(_))));
        // A wrong decoded length is caught when the block is read.
        let mut longer = index.clone();
        longer[12] ^= 1; // block 0's decoded length
        let r = BlockReader::new(&data, &longer).unwrap();
        assert!(matches!(r.block(0), Err(BlockError::Decode { block: 0, .. })));
    }
}
