//! The per-pass log of finished chunks: for each chunk, the checksums of the blocks it wrote
//! and where the pass's new positions of each block lie, as gap-encoded streams, in the
//! pass's stream file (`pass-KKK.streams`, written sequentially, never rewritten).
//!
//! A record is `[u64 body length][body][u64 XXH3 of body]`; the body is
//! `u32 chunk, u32 blocks, u32 tables, u32 0, u64 new positions, u64 streams offset,
//! u64 streams length, u64 XXH3 of the streams`, then per block `u32 block id,
//! u32 stream length, u64 checksum per output table`. The block streams follow each other
//! from the streams offset. Positions in a block's stream count from the block's first
//! position. A chunk is finished exactly when a complete record for it is in the log (and its
//! blocks and streams still match).

use super::error::{IoContext, StorageError};
use super::gap::set_positions;
use crate::index::Block;
use byteorder::{ByteOrder, LittleEndian, WriteBytesExt};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

/// One block of a chunk record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    pub id: u32,
    pub stream_len: u32,
    /// Checksum of the block in each output table of the pass.
    pub sums: Vec<u64>,
}

/// A finished chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkRecord {
    pub chunk: u32,
    pub new_count: u64,
    pub blocks: Vec<BlockEntry>,
    /// Offset of the chunk's first stream in the stream file.
    pub streams_offset: u64,
    pub streams_len: u64,
    pub streams_sum: u64,
    /// File offset just past the record.
    pub end: u64,
}

/// Bytes of a record body before its block entries.
const HEAD: usize = 48;

/// Encodes a record: its blocks and (offset, length, checksum) of its streams.
fn encode(chunk: u32, new_count: u64, blocks: &[BlockEntry], streams: (u64, u64, u64)) -> Vec<u8> {
    type Le = LittleEndian;
    let tables = blocks.first().map_or(0, |b| b.sums.len());
    let body_len = HEAD + blocks.len() * (8 + 8 * tables);
    let mut out = Vec::with_capacity(body_len + 16);
    // Writes into a Vec cannot fail.
    let put = |out: &mut Vec<u8>| -> std::io::Result<()> {
        out.write_u64::<Le>(body_len as u64)?;
        out.write_u32::<Le>(chunk)?;
        out.write_u32::<Le>(blocks.len() as u32)?;
        out.write_u32::<Le>(tables as u32)?;
        out.write_u32::<Le>(0)?;
        out.write_u64::<Le>(new_count)?;
        out.write_u64::<Le>(streams.0)?;
        out.write_u64::<Le>(streams.1)?;
        out.write_u64::<Le>(streams.2)?;
        for b in blocks {
            out.write_u32::<Le>(b.id)?;
            out.write_u32::<Le>(b.stream_len)?;
            for &s in &b.sums {
                out.write_u64::<Le>(s)?;
            }
        }
        let sum = xxh3_64(&out[8..]);
        out.write_u64::<Le>(sum)
    };
    put(&mut out).expect("writing to memory");
    out
}

/// The valid records of a log, the length they cover, and a description of the damage found
/// after them (a torn or corrupted record), if any.
pub struct Scan {
    pub records: Vec<ChunkRecord>,
    pub valid_len: u64,
    pub damage: Option<StorageError>,
}

/// Reads a log, keeping its records up to the first damaged one. A missing log is empty.
pub fn scan(path: &Path) -> Result<Scan, StorageError> {
    let mut out = Scan { records: Vec::new(), valid_len: 0, damage: None };
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e).doing(|| format!("opening {}", path.display())),
    };
    let len = file.metadata().doing(|| format!("reading the size of {}", path.display()))?.len();
    let read_at = |buf: &mut [u8], at: u64| file.read_exact_at(buf, at).doing(|| format!("reading {}", path.display()));
    let mut off = 0u64;
    while off < len {
        let damage =
            |why: &str| StorageError::Damaged { path: path.to_path_buf(), what: format!("{why} at offset {off}") };
        let mut head = [0u8; 8];
        if off + 8 > len {
            out.damage = Some(damage("truncated record"));
            break;
        }
        read_at(&mut head, off)?;
        let body_len = LittleEndian::read_u64(&head);
        if body_len < HEAD as u64 || off + 16 + body_len > len {
            out.damage = Some(damage("truncated record"));
            break;
        }
        let mut body = vec![0u8; body_len as usize];
        read_at(&mut body, off + 8)?;
        let mut sum = [0u8; 8];
        read_at(&mut sum, off + 8 + body_len)?;
        if xxh3_64(&body) != LittleEndian::read_u64(&sum) {
            out.damage = Some(damage("checksum mismatch in record"));
            break;
        }
        let u32_at = |o: usize| LittleEndian::read_u32(&body[o..o + 4]);
        let u64_at = |o: usize| LittleEndian::read_u64(&body[o..o + 8]);
        let (chunk, n_blocks, tables) = (u32_at(0), u32_at(4) as usize, u32_at(8) as usize);
        let entries_end = HEAD + n_blocks * (8 + 8 * tables);
        if entries_end != body.len() {
            out.damage = Some(damage("inconsistent record"));
            break;
        }
        let blocks: Vec<BlockEntry> = (0..n_blocks)
            .map(|i| {
                let o = HEAD + i * (8 + 8 * tables);
                BlockEntry {
                    id: u32_at(o),
                    stream_len: u32_at(o + 4),
                    sums: (0..tables).map(|t| u64_at(o + 8 + 8 * t)).collect(),
                }
            })
            .collect();
        let streams_len = u64_at(32);
        if blocks.iter().map(|b| b.stream_len as u64).sum::<u64>() != streams_len {
            out.damage = Some(damage("inconsistent record"));
            break;
        }
        let end = off + 16 + body_len;
        out.records.push(ChunkRecord {
            chunk,
            new_count: u64_at(16),
            blocks,
            streams_offset: u64_at(24),
            streams_len,
            streams_sum: u64_at(40),
            end,
        });
        off += 16 + body_len;
        out.valid_len = off;
    }
    Ok(out)
}

/// Reads `len` bytes of a log at `offset`.
pub fn read_at(file: &File, path: &Path, offset: u64, len: usize) -> Result<Vec<u8>, StorageError> {
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, offset).doing(|| format!("reading {} at offset {offset}", path.display()))?;
    Ok(buf)
}

/// Path of the stream file that goes with a log.
pub fn streams_path(log: &Path) -> PathBuf {
    log.with_extension("streams")
}

/// The writer of a pass's log and stream file: each finished chunk's streams, then its
/// record (which points at them and carries its blocks' checksums). A chunk counts as
/// finished once its record is whole in the log, so the streams go first.
pub struct PassLog {
    log_path: PathBuf,
    log: File,
    log_len: u64,
    streams_path: PathBuf,
    streams: std::io::BufWriter<File>,
    streams_len: u64,
}

impl PassLog {
    /// Opens a pass's log `log` and its stream file for appending after their first
    /// `log_len` and `streams_len` bytes (what finished chunks cover; the rest is cut off).
    pub fn open(log: &Path, log_len: u64, streams_len: u64) -> Result<PassLog, StorageError> {
        let open = |path: &Path, len: u64| -> Result<File, StorageError> {
            let (file, _) = super::open_kept(path)?;
            file.set_len(len).doing(|| format!("truncating {}", path.display()))?;
            Ok(file)
        };
        let streams_path = streams_path(log);
        let mut streams = std::io::BufWriter::with_capacity(1 << 16, open(&streams_path, streams_len)?);
        use std::io::Seek;
        streams
            .seek(std::io::SeekFrom::Start(streams_len))
            .doing(|| format!("seeking in {}", streams_path.display()))?;
        Ok(PassLog {
            log_path: log.to_path_buf(),
            log: open(log, log_len)?,
            log_len,
            streams_path,
            streams,
            streams_len,
        })
    }

    /// Appends a finished chunk: its blocks' `streams` (one per entry of `blocks`, whose
    /// stream lengths are filled in here), then its record. Returns the bytes of the record
    /// and of the streams.
    pub fn append_chunk(
        &mut self,
        chunk: u32,
        new_count: u64,
        mut blocks: Vec<BlockEntry>,
        streams: &[Vec<u8>],
    ) -> Result<(u64, u64), StorageError> {
        let first = self.streams_len;
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for (bytes, entry) in streams.iter().zip(blocks.iter_mut()) {
            hasher.update(bytes);
            self.streams.write_all(bytes).doing(|| format!("writing {}", self.streams_path.display()))?;
            self.streams_len += bytes.len() as u64;
            entry.stream_len = bytes.len() as u32;
        }
        self.flush()?;
        let streams_len = self.streams_len - first;
        let record = encode(chunk, new_count, &blocks, (first, streams_len, hasher.digest()));
        self.log.write_all_at(&record, self.log_len).doing(|| format!("writing {}", self.log_path.display()))?;
        self.log_len += record.len() as u64;
        Ok((record.len() as u64, streams_len))
    }

    /// Pushes buffered stream bytes to the file: flushed, not synced (a kill loses nothing
    /// the page cache holds, and after a power loss the resume checks every record and
    /// stream against its checksum).
    pub fn flush(&mut self) -> Result<(), StorageError> {
        self.streams.flush().doing(|| format!("writing {}", self.streams_path.display()))
    }
}

/// Checks that a record's streams are intact in the stream file.
pub fn check_streams(file: &File, path: &Path, rec: &ChunkRecord) -> Result<(), StorageError> {
    checked_streams(file, path, rec).map(drop)
}

/// A record's streams, one per block in the record's order, checked against its checksum.
pub fn read_streams(file: &File, path: &Path, rec: &ChunkRecord) -> Result<Vec<Vec<u8>>, StorageError> {
    let bytes = checked_streams(file, path, rec)?;
    let mut at = 0;
    Ok(rec
        .blocks
        .iter()
        .map(|e| {
            let end = (at + e.stream_len as usize).min(bytes.len());
            let out = bytes[at..end].to_vec();
            at = end;
            out
        })
        .collect())
}

/// The bytes of a record's streams, checked against its checksum.
fn checked_streams(file: &File, path: &Path, rec: &ChunkRecord) -> Result<Vec<u8>, StorageError> {
    let bytes = read_at(file, path, rec.streams_offset, rec.streams_len as usize)?;
    if xxh3_64(&bytes) != rec.streams_sum {
        return Err(StorageError::StreamsMismatch {
            path: path.to_path_buf(),
            chunk: rec.chunk,
            offset: rec.streams_offset,
        });
    }
    Ok(bytes)
}

/// The streams of a finished pass, indexed by block: where each block's gap-coded new
/// positions lie, and the block checksums of the pass's output tables.
pub struct PassStreams {
    pub path: PathBuf,
    file: File,
    /// Per block id: (offset, length) in the stream file; length 0 = no new positions.
    at: Vec<(u64, u32)>,
    /// Per output table, per block id: the block's checksum.
    pub sums: Vec<Vec<u64>>,
}

impl PassStreams {
    /// Reads a finished pass's log: every record must be intact, its streams must match, and
    /// together they must cover all `n_blocks` blocks.
    pub fn open(log: &Path, n_blocks: usize) -> Result<PassStreams, StorageError> {
        PassStreams::from_scan(log, scan(log)?, n_blocks)
    }

    /// [`PassStreams::open`] from a scan of the log already read.
    pub fn from_scan(log: &Path, scan: Scan, n_blocks: usize) -> Result<PassStreams, StorageError> {
        if let Some(damage) = scan.damage {
            return Err(damage);
        }
        let path = streams_path(log);
        let file = File::open(&path).doing(|| format!("opening {}", path.display()))?;
        // The merge reads a block's stream of every step: small pieces all over the file.
        super::no_readahead(&file);
        let mut at = vec![(0u64, 0u32); n_blocks];
        let tables = scan.records.first().and_then(|r| r.blocks.first()).map_or(0, |b| b.sums.len());
        let mut sums = vec![vec![0u64; n_blocks]; tables];
        let mut covered = 0;
        for rec in &scan.records {
            check_streams(&file, &path, rec)?;
            let mut off = rec.streams_offset;
            for e in &rec.blocks {
                let slot = at.get_mut(e.id as usize).filter(|_| e.sums.len() == tables);
                let slot = slot.ok_or_else(|| StorageError::Damaged {
                    path: log.to_path_buf(),
                    what: format!("record of chunk {} does not fit the run", rec.chunk),
                })?;
                *slot = (off, e.stream_len);
                off += e.stream_len as u64;
                for (o, &sum) in e.sums.iter().enumerate() {
                    sums[o][e.id as usize] = sum;
                }
                covered += 1;
            }
        }
        if covered != n_blocks {
            let what = format!("the log of a finished pass covers {covered} of {n_blocks} blocks");
            return Err(StorageError::Damaged { path: log.to_path_buf(), what });
        }
        Ok(PassStreams { path, file, at, sums })
    }

    /// Whether the pass found new positions in a block.
    pub fn has(&self, block: usize) -> bool {
        self.at[block].1 > 0
    }

    /// ORs the new positions of some blocks into `words`, each block at its `local_word`;
    /// returns the bytes of streams read. (Readers of a table whose step deferred it, and
    /// passes that move from a step's new positions.)
    pub fn or_into(&self, blocks: &[Block], words: &mut [u64]) -> Result<u64, StorageError> {
        let mut read = 0;
        for b in blocks.iter().filter(|b| self.has(b.id)) {
            let bytes = self.block(b.id)?;
            read += bytes.len() as u64;
            set_positions(&mut words[b.local_word..b.local_word + b.words], &bytes).map_err(|e| {
                StorageError::Damaged { path: self.path.clone(), what: format!("stream of block {}: {e}", b.id) }
            })?;
        }
        Ok(read)
    }

    /// The gap-coded stream of a block (empty when the pass found nothing new there).
    pub fn block(&self, block: usize) -> Result<Vec<u8>, StorageError> {
        let (off, len) = self.at[block];
        if len == 0 {
            return Ok(Vec::new());
        }
        read_at(&self.file, &self.path, off, len as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of `n` records for chunks 0..n (two blocks, two output tables each), with their
    /// streams; returns the log's path and each record's end offset.
    fn sample_log(dir: &Path, n: u32) -> (PathBuf, Vec<u64>) {
        let log_path = dir.join("pass-007.log");
        let mut log = PassLog::open(&log_path, 0, 0).unwrap();
        let mut ends = Vec::new();
        for chunk in 0..n {
            let bytes = vec![chunk as u8 + 1; 3 + chunk as usize];
            let blocks = vec![
                BlockEntry { id: 2 * chunk, stream_len: 0, sums: vec![11, 12] },
                BlockEntry { id: 2 * chunk + 1, stream_len: 0, sums: vec![13, 14] },
            ];
            let (record, streams) = log.append_chunk(chunk, 5, blocks, &[bytes.clone(), Vec::new()]).unwrap();
            assert_eq!(streams, bytes.len() as u64);
            ends.push(ends.last().copied().unwrap_or(0) + record);
        }
        drop(log);
        (log_path, ends)
    }

    #[test]
    fn records_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let (path, ends) = sample_log(dir.path(), 4);
        let s = scan(&path).unwrap();
        assert!(s.damage.is_none());
        assert_eq!(s.records.len(), 4);
        assert_eq!(s.valid_len, ends[3]);
        let r = &s.records[2];
        assert_eq!((r.chunk, r.new_count, r.end), (2, 5, ends[2]));
        assert_eq!(r.blocks[0], BlockEntry { id: 4, stream_len: 5, sums: vec![11, 12] });
        let file = File::open(streams_path(&path)).unwrap();
        for r in &s.records {
            check_streams(&file, &streams_path(&path), r).unwrap();
        }
    }

    #[test]
    fn a_torn_last_record_is_cut_off_and_the_earlier_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (path, ends) = sample_log(dir.path(), 3);
        // A kill in the middle of appending the third record.
        for cut in [ends[1] + 1, ends[1] + 8, ends[1] + 20, ends[2] - 1] {
            std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(cut).unwrap();
            let s = scan(&path).unwrap();
            assert_eq!(s.records.len(), 2, "cut at {cut}");
            assert_eq!(s.valid_len, ends[1]);
            let damage = s.damage.expect("the torn record is reported").to_string();
            assert!(damage.contains("truncated record") && damage.contains(&format!("offset {}", ends[1])), "{damage}");
            // Appending resumes after the last good record.
            let log = PassLog::open(&path, s.valid_len, 0).unwrap();
            assert_eq!(log.log_len, ends[1]);
            assert_eq!(std::fs::metadata(&path).unwrap().len(), ends[1]);
        }
    }

    #[test]
    fn a_corrupted_record_stops_the_scan() {
        let dir = tempfile::tempdir().unwrap();
        let (path, ends) = sample_log(dir.path(), 3);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[ends[0] as usize + 20] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        let s = scan(&path).unwrap();
        assert_eq!(s.records.len(), 1);
        assert!(s.damage.unwrap().to_string().contains("checksum mismatch in record"));
    }

    #[test]
    fn damaged_streams_are_named_with_their_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = sample_log(dir.path(), 3);
        let streams = streams_path(&path);
        let mut bytes = std::fs::read(&streams).unwrap();
        bytes[4] ^= 1; // inside chunk 1's stream (chunk 0 has 3 bytes)
        std::fs::write(&streams, &bytes).unwrap();
        let s = scan(&path).unwrap();
        let file = File::open(&streams).unwrap();
        check_streams(&file, &streams, &s.records[0]).unwrap();
        let err = check_streams(&file, &streams, &s.records[1]).unwrap_err();
        assert!(matches!(err, StorageError::StreamsMismatch { chunk: 1, offset: 3, .. }), "{err}");
    }

    #[test]
    fn streams_are_or_ed_into_their_blocks_words() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = sample_log(dir.path(), 4);
        let streams = PassStreams::open(&path, 8).unwrap();
        // Chunk c's first block (2c) holds 3 + c positions c + 1 apart; its second none.
        let at = |id, local_word| Block { id, local_word, slot_word: 0, words: 1 };
        let mut words = [0u64, 1 << 63, 0];
        let read = streams.or_into(&[at(2, 0), at(3, 1), at(0, 2)], &mut words).unwrap();
        assert_eq!(read, 4 + 3);
        assert_eq!(words, [0b1010_1010, 1 << 63, 0b111]);
        let short = Block { words: 0, ..at(2, 0) };
        let err = streams.or_into(&[short], &mut words).unwrap_err();
        assert!(matches!(&err, StorageError::Damaged { path: p, .. } if p == &streams_path(&path)), "{err}");
    }

    #[test]
    fn a_missing_log_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let s = scan(&dir.path().join("pass-001.log")).unwrap();
        assert!(s.records.is_empty() && s.damage.is_none() && s.valid_len == 0);
    }
}
