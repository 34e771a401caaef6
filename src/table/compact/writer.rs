//! A compact table being written block by block in storage order, resumable from its last
//! complete block, published when its header is written.

use super::header::{CompactHeader, TableMeta};
use super::part::{align8, n_blocks, Part, PartEntry, INDEX_ENTRY_BYTES};
use super::summary::Summary;
use crate::index::{Layout, StoredOrder};
use crate::table::error::FormatError;
use crate::table::header::SliceInfo;
use crate::table::version::{HEADER_LEN, MAGIC};
use crate::work::publish::publish_file;
use crate::work::{open_kept, IoContext};
use byteorder::{ByteOrder, LittleEndian};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

/// Where a compact table being written stands: the next block to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WritePosition {
    pub part: Part,
    pub block: usize,
}

/// Marks the provisional header of a table being written: the identity of its source (so
/// that an interrupted write resumes only over the same source) at byte 200.
const PROVISIONAL_ID_AT: usize = 200;

/// A compact table being written block by block in storage order, in a work folder. Each
/// block's bytes are written before its index entry, and a resumed write keeps the blocks
/// whose entries and checksums are whole; the header comes last, when the table is published.
pub struct CompactWriter {
    file: File,
    path: PathBuf,
    n_slots: u64,
    /// Start of each block section (known for those begun).
    starts: Vec<u64>,
    /// Next block to write, `None` when every block section is written.
    position: Option<WritePosition>,
    /// Bytes of the current section's blocks written so far.
    data_end: u64,
}

impl CompactWriter {
    /// Opens the table being written at `path` for a run of `n_slots` positions per side,
    /// resuming after its last complete block if it was written from the same `source`
    /// (any number that identifies the input and the settings), else starting afresh.
    pub fn open(path: &Path, n_slots: u64, source: u64) -> Result<CompactWriter, FormatError> {
        let (file, len) = open_kept(path)?;
        let mut w = CompactWriter {
            file,
            path: path.to_path_buf(),
            n_slots,
            starts: vec![HEADER_LEN as u64],
            position: Some(WritePosition { part: Part::WtmWdl, block: 0 }),
            data_end: 0,
        };
        let mut head = [0u8; HEADER_LEN];
        let same = len >= HEADER_LEN as u64
            && w.file.read_exact_at(&mut head, 0).is_ok()
            && head[..8] == MAGIC
            && LittleEndian::read_u64(&head[PROVISIONAL_ID_AT..PROVISIONAL_ID_AT + 8]) == source;
        if same {
            w.resume(len)?;
        } else {
            w.file.set_len(0).doing(|| format!("emptying {}", path.display()))?;
            let mut head = [0u8; HEADER_LEN];
            head[..8].copy_from_slice(&MAGIC);
            LittleEndian::write_u64(&mut head[PROVISIONAL_ID_AT..PROVISIONAL_ID_AT + 8], source);
            w.write_at(0, &head)?;
        }
        Ok(w)
    }

    /// The next block to write, `None` when all are written.
    pub fn position(&self) -> Option<WritePosition> {
        self.position
    }

    fn write_at(&self, offset: u64, bytes: &[u8]) -> Result<(), FormatError> {
        self.file
            .write_all_at(bytes, offset)
            .doing(|| format!("writing {} at offset {offset}", self.path.display()))?;
        Ok(())
    }

    fn index_len(&self, part: Part) -> u64 {
        INDEX_ENTRY_BYTES * n_blocks(part, self.n_slots) as u64
    }

    /// Finds the complete blocks of an interrupted write: a block counts if its index entry
    /// ends after the previous block and the bytes between match the entry's checksum.
    fn resume(&mut self, len: u64) -> Result<(), FormatError> {
        for (k, part) in Part::BLOCKED.into_iter().enumerate() {
            let start = self.starts[k];
            let n = n_blocks(part, self.n_slots);
            let data_at = start + self.index_len(part);
            let mut index = vec![0u8; (INDEX_ENTRY_BYTES as usize) * n];
            let have = len.saturating_sub(start).min(index.len() as u64) as usize;
            self.file
                .read_exact_at(&mut index[..have], start)
                .doing(|| format!("reading {} at offset {start}", self.path.display()))?;
            let mut end = 0u64;
            for i in 0..n {
                let (to, sum) =
                    (LittleEndian::read_u64(&index[16 * i..]), LittleEndian::read_u64(&index[16 * i + 8..]));
                let whole = to > end && data_at + to <= len && {
                    let mut bytes = vec![0u8; (to - end) as usize];
                    self.file.read_exact_at(&mut bytes, data_at + end).is_ok() && xxh3_64(&bytes) == sum
                };
                if !whole {
                    self.position = Some(WritePosition { part, block: i });
                    self.data_end = end;
                    return Ok(());
                }
                end = to;
            }
            self.starts.push(align8(data_at + end));
        }
        self.position = None;
        Ok(())
    }

    /// Writes the next block's stored bytes (from [`pack_block`]).
    pub fn push(&mut self, packed: &[u8]) -> Result<(), FormatError> {
        let Some(WritePosition { part, block }) = self.position else {
            return Err(FormatError::Writer(self.path.clone(), "a block past the last one"));
        };
        let k = part as usize;
        let start = self.starts[k];
        let data_at = start + self.index_len(part);
        self.write_at(data_at + self.data_end, packed)?;
        self.data_end += packed.len() as u64;
        let mut entry = [0u8; INDEX_ENTRY_BYTES as usize];
        LittleEndian::write_u64(&mut entry[..8], self.data_end);
        LittleEndian::write_u64(&mut entry[8..], xxh3_64(packed));
        self.write_at(start + INDEX_ENTRY_BYTES * block as u64, &entry)?;
        self.position = if block + 1 < n_blocks(part, self.n_slots) {
            Some(WritePosition { part, block: block + 1 })
        } else {
            self.starts.push(align8(data_at + self.data_end));
            self.data_end = 0;
            Part::BLOCKED.get(k + 1).map(|&part| WritePosition { part, block: 0 })
        };
        Ok(())
    }

    /// Writes the summary section (black's `summary`, then white's `wtm_summary`) and the
    /// slice section and the header (with the block sections' `orders`), syncs, and
    /// publishes the table as `target`. Every block must be written.
    #[allow(clippy::too_many_arguments)]
    pub fn finish(
        self,
        layout: &Layout,
        meta: TableMeta,
        orders: [Option<StoredOrder>; 3],
        summary: &Summary,
        wtm_summary: &Summary,
        slices: &[u8],
        target: &Path,
    ) -> Result<PathBuf, FormatError> {
        if self.position.is_some() || self.starts.len() != 4 {
            return Err(FormatError::Writer(self.path.clone(), "finished before every block was written"));
        }
        let mut parts = [PartEntry::default(); 5];
        for (k, part) in Part::BLOCKED.into_iter().enumerate() {
            let offset = self.starts[k];
            let index_len = self.index_len(part);
            let mut index = vec![0u8; index_len as usize];
            self.file
                .read_exact_at(&mut index, offset)
                .doing(|| format!("reading {} at offset {offset}", self.path.display()))?;
            let data_len = LittleEndian::read_u64(&index[index.len() - 16..]);
            parts[k] = PartEntry { offset, length: index_len + data_len, checksum: xxh3_64(&index) };
        }
        let summary = [summary.encode(), wtm_summary.encode()].concat();
        let mut at = self.starts[3];
        for (k, bytes) in [(3, &summary[..]), (4, slices)] {
            parts[k] = PartEntry { offset: at, length: bytes.len() as u64, checksum: xxh3_64(bytes) };
            self.write_at(at, bytes)?;
            at = align8(at + bytes.len() as u64);
        }
        let end = parts[4].offset + parts[4].length;
        self.file.set_len(end).doing(|| format!("sizing {}", self.path.display()))?;
        let header = CompactHeader {
            material: layout.material.clone(),
            n_slots: self.n_slots,
            meta,
            parts,
            slices: SliceInfo::of(layout),
            orders,
            twins_dropped: !layout.material.has_pawns(),
            zeroing_dont_cares: true,
            identical_dropped: layout.has_identical_men(),
        };
        self.write_at(0, &header.encode())?;
        use std::os::unix::fs::PermissionsExt;
        self.file
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .doing(|| format!("setting the permissions of {}", self.path.display()))?;
        self.file.sync_all().doing(|| format!("syncing {}", self.path.display()))?;
        let path = self.path.clone();
        drop(self.file);
        Ok(publish_file(&path, target)?)
    }
}
