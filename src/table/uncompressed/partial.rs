//! A table of the uncompressed format written in place (`verify` expands a compact table
//! into one): each level's slot range of every section, the header last.

use super::header::Header;
use super::sections::{Section, VALUE_WORD_BYTES};
use crate::index::Layout;
use crate::table::error::FormatError;
use crate::work::{open_kept, IoContext};
use std::fs::File;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

/// A table of the uncompressed format being written in place: full length from the start
/// (sparse), each level's slot range of every section written, the header last.
pub struct PartialTable {
    file: File,
    path: PathBuf,
    header: Header,
}

impl PartialTable {
    /// Opens the table of `material` being assembled at `path`, creating it if needed.
    pub fn open(path: &Path, layout: &Layout) -> Result<PartialTable, FormatError> {
        let header = Header::new(layout);
        let (file, len) = open_kept(path)?;
        if len != header.file_len() {
            file.set_len(header.file_len()).doing(|| format!("sizing {}", path.display()))?;
        }
        Ok(PartialTable { file, path: path.to_path_buf(), header })
    }

    /// File offset and length of the bytes of slots `first..first + n` in a section (both
    /// multiples of 64).
    pub fn range(&self, s: Section, first: u64, n: u64) -> (u64, u64) {
        let per_word = if matches!(s, Section::WtmBitbase | Section::BtmBitbase) { 8 } else { VALUE_WORD_BYTES };
        (self.header.sections[s as usize].offset + first / 64 * per_word, n / 64 * per_word)
    }

    /// Writes bytes at a file offset.
    pub fn write_at(&self, offset: u64, bytes: &[u8]) -> Result<(), FormatError> {
        use std::os::unix::fs::FileExt;
        Ok(self
            .file
            .write_all_at(bytes, offset)
            .doing(|| format!("writing {} at offset {offset}", self.path.display()))?)
    }

    /// XXH3 of `len` bytes at `offset`.
    pub fn checksum(&self, offset: u64, len: u64) -> Result<u64, FormatError> {
        use std::os::unix::fs::FileExt;
        let mut hasher = Xxh3::new();
        let mut buf = vec![0u8; (1 << 20).min(len as usize)];
        let mut done = 0;
        while done < len {
            let n = buf.len().min((len - done) as usize);
            self.file
                .read_exact_at(&mut buf[..n], offset + done)
                .doing(|| format!("reading {} at offset {}", self.path.display(), offset + done))?;
            hasher.update(&buf[..n]);
            done += n as u64;
        }
        Ok(hasher.digest())
    }

    /// Writes the header (with the sections' checksums: `sums` if known, else computed from
    /// the file): the table is complete in place, ready to be compacted. Not synced: it is
    /// an intermediate, and a run that resumes checks its ranges against the checksums its
    /// manifest recorded (a sync cost KQRvKR 0.2 s of idle cores waiting for the disk).
    /// `slices` is the slice section of a table with pawns.
    pub fn finish(
        mut self,
        last_step: u8,
        longest_cursed: [u16; 2],
        flags: (bool, bool),
        sums: Option<[u64; 4]>,
        slices: Option<&[u8]>,
    ) -> Result<PathBuf, FormatError> {
        self.header.last_step = last_step;
        self.header.longest_cursed = longest_cursed;
        (self.header.five_valued, self.header.edge_exact) = flags;
        if let (Some(bytes), Some(e)) = (slices, self.header.sections.get(Section::Slices as usize)) {
            if bytes.len() as u64 != e.length {
                return Err(FormatError::Writer(self.path.clone(), "the slice section has the wrong length"));
            }
            self.write_at(e.offset, bytes)?;
        }
        for (i, e) in self.header.sections.clone().iter().enumerate() {
            self.header.sections[i].checksum = match (sums, Section::at(i)) {
                (Some(s), section) if section != Section::Slices => s[i],
                (_, Section::Slices) => xxh3_64(slices.unwrap_or_default()),
                _ => self.checksum(e.offset, e.length)?,
            };
        }
        self.write_at(0, &self.header.encode())?;
        Ok(self.path.clone())
    }
}
