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

use anyhow::Context;
use std::fs::{File, OpenOptions};
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
pub fn encode(chunk: u32, new_count: u64, blocks: &[BlockEntry], streams: (u64, u64, u64)) -> Vec<u8> {
    let tables = blocks.first().map_or(0, |b| b.sums.len());
    let mut body = Vec::with_capacity(HEAD + blocks.len() * (8 + 8 * tables));
    body.extend_from_slice(&chunk.to_le_bytes());
    body.extend_from_slice(&(blocks.len() as u32).to_le_bytes());
    body.extend_from_slice(&(tables as u32).to_le_bytes());
    body.extend_from_slice(&0u32.to_le_bytes());
    body.extend_from_slice(&new_count.to_le_bytes());
    body.extend_from_slice(&streams.0.to_le_bytes());
    body.extend_from_slice(&streams.1.to_le_bytes());
    body.extend_from_slice(&streams.2.to_le_bytes());
    for b in blocks {
        body.extend_from_slice(&b.id.to_le_bytes());
        body.extend_from_slice(&b.stream_len.to_le_bytes());
        for s in &b.sums {
            body.extend_from_slice(&s.to_le_bytes());
        }
    }
    let mut out = Vec::with_capacity(body.len() + 16);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&xxh3_64(&body).to_le_bytes());
    out
}

/// An append-only log file.
pub struct DeltaLog {
    pub path: PathBuf,
    file: File,
    len: u64,
}

impl DeltaLog {
    /// Opens a log for appending after its first `valid_len` bytes (the rest is cut off).
    pub fn open(path: &Path, valid_len: u64) -> anyhow::Result<DeltaLog> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.set_len(valid_len).with_context(|| format!("truncating {}", path.display()))?;
        Ok(DeltaLog { path: path.to_path_buf(), file, len: valid_len })
    }

    /// Appends an encoded record.
    pub fn append(&mut self, record: &[u8]) -> anyhow::Result<()> {
        self.file.write_all_at(record, self.len).with_context(|| format!("writing {}", self.path.display()))?;
        self.len += record.len() as u64;
        Ok(())
    }

    /// Flushes the log to disk.
    pub fn sync(&mut self) -> anyhow::Result<()> {
        self.file.flush()?;
        self.file.sync_data().with_context(|| format!("syncing {}", self.path.display()))
    }
}

/// The valid records of a log, the length they cover, and a description of the damage found
/// after them (a torn or corrupted record), if any.
pub struct Scan {
    pub records: Vec<ChunkRecord>,
    pub valid_len: u64,
    pub damage: Option<String>,
}

/// Reads a log, keeping its records up to the first damaged one. A missing log is empty.
pub fn scan(path: &Path) -> anyhow::Result<Scan> {
    let mut out = Scan { records: Vec::new(), valid_len: 0, damage: None };
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    };
    let len = file.metadata()?.len();
    let mut off = 0u64;
    while off < len {
        let damage = |why: &str| format!("{}: {why} at offset {off}", path.display());
        let mut head = [0u8; 8];
        if off + 8 > len {
            out.damage = Some(damage("truncated record"));
            break;
        }
        file.read_exact_at(&mut head, off)?;
        let body_len = u64::from_le_bytes(head);
        if body_len < HEAD as u64 || off + 16 + body_len > len {
            out.damage = Some(damage("truncated record"));
            break;
        }
        let mut body = vec![0u8; body_len as usize];
        file.read_exact_at(&mut body, off + 8)?;
        let mut sum = [0u8; 8];
        file.read_exact_at(&mut sum, off + 8 + body_len)?;
        if xxh3_64(&body) != u64::from_le_bytes(sum) {
            out.damage = Some(damage("checksum mismatch in record"));
            break;
        }
        let u32_at = |o: usize| u32::from_le_bytes(body[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(body[o..o + 8].try_into().unwrap());
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
pub fn read_at(file: &File, path: &Path, offset: u64, len: usize) -> anyhow::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, offset).with_context(|| format!("reading {} at offset {offset}", path.display()))?;
    Ok(buf)
}

/// Path of the stream file that goes with a log.
pub fn streams_path(log: &Path) -> PathBuf {
    log.with_extension("streams")
}

/// The sequential writer of a pass's stream file.
pub struct StreamWriter {
    pub path: PathBuf,
    file: std::io::BufWriter<File>,
    pos: u64,
}

impl StreamWriter {
    /// Opens the stream file for appending after its first `valid_len` bytes.
    pub fn open(path: &Path, valid_len: u64) -> anyhow::Result<StreamWriter> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.set_len(valid_len).with_context(|| format!("truncating {}", path.display()))?;
        let mut file = std::io::BufWriter::with_capacity(1 << 16, file);
        use std::io::Seek;
        file.seek(std::io::SeekFrom::Start(valid_len))?;
        Ok(StreamWriter { path: path.to_path_buf(), file, pos: valid_len })
    }

    /// Current end of the file.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Appends bytes.
    pub fn write(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        self.file.write_all(bytes).with_context(|| format!("writing {}", self.path.display()))?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Pushes buffered bytes to the file (before a record that points at them).
    pub fn flush(&mut self) -> anyhow::Result<()> {
        self.file.flush().with_context(|| format!("writing {}", self.path.display()))
    }

    /// Flushes and syncs to disk.
    pub fn sync(&mut self) -> anyhow::Result<()> {
        self.flush()?;
        self.file.get_ref().sync_data().with_context(|| format!("syncing {}", self.path.display()))
    }
}

/// Checks that a record's streams are intact in the stream file.
pub fn check_streams(file: &File, path: &Path, rec: &ChunkRecord) -> anyhow::Result<()> {
    let bytes = read_at(file, path, rec.streams_offset, rec.streams_len as usize)?;
    anyhow::ensure!(
        xxh3_64(&bytes) == rec.streams_sum,
        "{}: checksum mismatch in the streams of chunk {} at offset {}",
        path.display(),
        rec.chunk,
        rec.streams_offset
    );
    Ok(())
}
