//! The final table file of one white-wins run: a checksummed header and four sections (five
//! with pawns: the fifth lists the run's slices and levels). `docs/FORMAT.md` describes it
//! byte by byte.

use crate::chess::{Color, Material};
use crate::index::Layout;
use crate::work::{IoContext, StorageError};
use byteorder::{ByteOrder, LittleEndian};
use memmap2::Mmap;
use std::fs::File;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

pub const MAGIC: [u8; 8] = *b"TBSTREAM";
/// Format version of pawnless tables.
pub const VERSION: u16 = 1;
/// Format version of tables with pawns.
pub const VERSION_PAWNS: u16 = 2;
pub const HEADER_LEN: usize = 256;
/// Layout id of the Koistinen interleaved index (see `index/mod.rs`).
pub const LAYOUT_KOISTINEN_V1: u8 = 1;
/// Layout id of the index with pawn slices.
pub const LAYOUT_PAWN_SLICES: u8 = 2;
/// Bytes of one level's record in the slice section.
pub const LEVEL_RECORD_BYTES: u64 = 48;
/// Bytes of the 6 bit planes of one word of values.
pub const VALUE_WORD_BYTES: u64 = 48;
/// Section alignment in the file.
const ALIGN: u64 = 4096;
/// File name extension of a run's table.
pub const EXTENSION: &str = "tbs";

/// Value code of an illegal or broken position.
pub const CODE_ILLEGAL: u8 = 63;
/// Value code of a position not won for white.
pub const CODE_NONE: u8 = 0;
/// Value code of a position won for white only without the 50-move rule: a cursed win
/// (wtm), or a loss for black that the rule turns into a draw (btm, a blessed loss).
pub const CODE_CURSED: u8 = 52;
/// Wtm value code of a position first won at step 101 in tables built before the edge was
/// followed: white wins in exactly 100 plies (the last one black's forced zeroing move) or in
/// 101 (a cursed win); see `Header::edge_exact`. Tables built now store 53 or 52 instead.
pub const CODE_EDGE: u8 = 51;
/// Wtm value code of a win in exactly 100 plies, the last one black's forced zeroing move (a
/// position of step 101 that needs one ply less, `docs/CURSED.md`): a win under the rule.
pub const CODE_EXACT_100: u8 = 53;

/// The sections, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// `t99`, one bit per position, wtm.
    WtmBitbase = 0,
    /// `t100`, one bit per position, btm.
    BtmBitbase = 1,
    /// 6-bit wtm values, bit-plane packed.
    WtmValues = 2,
    /// 6-bit btm values, bit-plane packed.
    BtmValues = 3,
    /// With pawns: the slices' keys and the levels' records.
    Slices = 4,
}

impl Section {
    /// The sections every table has, indexed by position.
    pub const ALL: [Section; 4] = [Section::WtmBitbase, Section::BtmBitbase, Section::WtmValues, Section::BtmValues];

    /// The section at a position of the section table.
    pub fn at(i: usize) -> Section {
        [Section::WtmBitbase, Section::BtmBitbase, Section::WtmValues, Section::BtmValues, Section::Slices][i]
    }

    pub fn bitbase(stm: Color) -> Section {
        if stm == Color::White {
            Section::WtmBitbase
        } else {
            Section::BtmBitbase
        }
    }
    pub fn values(stm: Color) -> Section {
        if stm == Color::White {
            Section::WtmValues
        } else {
            Section::BtmValues
        }
    }
}

/// Problems with a table file's contents.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("{0}: not a tbstream table (bad magic)")]
    BadMagic(PathBuf),
    #[error("{0}: format version {1} is not supported (this build reads version 3, and converts versions {VERSION} and {VERSION_PAWNS} with `tbstream compact`)")]
    Version(PathBuf, u16),
    #[error("{path}: this table is in the uncompressed format of version {version}, which this build no longer reads; convert the folder with `tbstream compact {}` (no need to regenerate)", path.parent().map_or(".".into(), |p| p.display().to_string()))]
    OldFormat { path: PathBuf, version: u16 },
    #[error("{path}: {}checksum mismatch in section {part:?} (file damaged)", block.map_or(String::new(), |b| format!("block {b}: ")))]
    PartChecksum { path: PathBuf, part: super::compact::Part, block: Option<usize> },
    #[error("{path}: block {block} of section {part:?} does not decode ({reason}); file damaged")]
    BlockDecode { path: PathBuf, part: super::compact::Part, block: usize, reason: String },
    #[error("{path}: block index of section {part:?} damaged: {why}")]
    Index { path: PathBuf, part: super::compact::Part, why: String },
    #[error("{0}: header checksum mismatch (file damaged)")]
    HeaderChecksum(PathBuf),
    #[error("{0}: file is {1} bytes, shorter than the {HEADER_LEN}-byte header: truncated or empty")]
    ShortHeader(PathBuf, u64),
    #[error("{0}: file is {1} bytes, header says {2}: truncated or damaged")]
    Length(PathBuf, u64, u64),
    #[error("{path}: section {section:?} checksum mismatch at offset {offset} (file damaged)")]
    SectionChecksum { path: PathBuf, section: Section, offset: u64 },
    #[error("{0}: header is inconsistent: {1}")]
    Inconsistent(PathBuf, String),
    #[error("{path}: holds the table of {found}, not {expected} (misnamed file)")]
    WrongRun { path: PathBuf, found: Material, expected: Material },
    /// Opening, mapping, writing or publishing the file failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A table was written wrongly (a bug, not a file problem).
    #[error("writing {0}: {1}")]
    Writer(PathBuf, &'static str),
}

/// Where a section lies and its checksum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SectionEntry {
    pub offset: u64,
    pub length: u64,
    pub checksum: u64,
}

/// What the header says of a table with pawns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceInfo {
    pub n_slices: u32,
    /// Index bits inside a slice.
    pub slice_bits: u8,
    pub white_pawns: u8,
    pub black_pawns: u8,
    pub n_levels: u8,
}

/// The decoded header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub material: Material,
    pub n_slots: u64,
    /// Last step that added positions (0..=100).
    pub last_step: u8,
    /// Whether every cursed position of the run is marked: the run went on past step 100,
    /// following conversions into cursed positions, and every sub-endgame's table has the
    /// flag. Otherwise some draws may be cursed results.
    pub five_valued: bool,
    /// Whether every position with `CODE_EDGE` is a cursed win (101 plies): no btm position
    /// of the run has only losing zeroing moves, so no win ends with black's forced zeroing
    /// move and every wtm distance is odd. Otherwise some of them are wins of exactly 100
    /// plies, which the chains do not tell apart.
    pub edge_exact: bool,
    /// The last steps beyond 100 that added positions, wtm (odd) and btm (even); 0 if none:
    /// the longest cursed wins, in plies rounded up to the side to move's parity.
    pub longest_cursed: [u16; 2],
    /// Four sections, five with pawns.
    pub sections: Vec<SectionEntry>,
    pub slices: Option<SliceInfo>,
}

fn section_lengths(n_slots: u64, slices: Option<&SliceInfo>) -> Vec<u64> {
    let words = n_slots / 64;
    let mut v = vec![words * 8, words * 8, words * VALUE_WORD_BYTES, words * VALUE_WORD_BYTES];
    if let Some(s) = slices {
        v.push(4 * s.n_slices as u64 + LEVEL_RECORD_BYTES * s.n_levels as u64);
    }
    v
}

fn layout_sections(n_slots: u64, slices: Option<&SliceInfo>) -> Vec<SectionEntry> {
    let mut off = ALIGN;
    section_lengths(n_slots, slices)
        .into_iter()
        .map(|length| {
            let e = SectionEntry { offset: off, length, checksum: 0 };
            off = (off + length).div_ceil(ALIGN) * ALIGN;
            e
        })
        .collect()
}

impl SliceInfo {
    /// The header's description of a layout's slices, if it has pawns.
    pub fn of(layout: &Layout) -> Option<SliceInfo> {
        layout.slices.as_ref().map(|s| SliceInfo {
            n_slices: s.len() as u32,
            slice_bits: layout.total_bits as u8,
            white_pawns: s.n_white as u8,
            black_pawns: s.n_black as u8,
            n_levels: s.levels.len() as u8,
        })
    }
}

/// A level's record in the slice section: its last step and the checksums of its ranges
/// in sections 0 to 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelRecord {
    pub last_step: u8,
    pub range_sums: [u64; 4],
}

/// The bytes of the slice section of a layout with pawns: the slices' keys in storage
/// order, then per level (in solve order) its first slice, slice count, last step, seven
/// zero bytes and its four range checksums.
pub fn slice_section(layout: &Layout, records: &[LevelRecord]) -> Vec<u8> {
    let slices = layout.slices.as_ref().expect("a layout with pawns");
    let mut out = vec![0u8; 4 * slices.len() + LEVEL_RECORD_BYTES as usize * slices.levels.len()];
    LittleEndian::write_u32_into(&slices.keys, &mut out[..4 * slices.len()]);
    for (i, (l, r)) in slices.levels.iter().zip(records).enumerate() {
        let o = 4 * slices.len() + LEVEL_RECORD_BYTES as usize * i;
        LittleEndian::write_u32(&mut out[o..o + 4], l.first);
        LittleEndian::write_u32(&mut out[o + 4..o + 8], l.count);
        out[o + 8] = r.last_step;
        LittleEndian::write_u64_into(&r.range_sums, &mut out[o + 16..o + 48]);
    }
    out
}

impl Header {
    /// The header of a run's table before its checksums and last step are known.
    pub fn new(layout: &Layout) -> Header {
        let slices = SliceInfo::of(layout);
        Header {
            material: layout.material.clone(),
            n_slots: layout.n_slots,
            last_step: 0,
            five_valued: true,
            edge_exact: true,
            longest_cursed: [0, 0],
            sections: layout_sections(layout.n_slots, slices.as_ref()),
            slices,
        }
    }

    fn encode(&self) -> [u8; HEADER_LEN] {
        type Le = LittleEndian;
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        Le::write_u16(&mut h[8..10], if self.slices.is_some() { VERSION_PAWNS } else { VERSION });
        Le::write_u16(&mut h[10..12], HEADER_LEN as u16);
        h[12] = if self.slices.is_some() { LAYOUT_PAWN_SLICES } else { LAYOUT_KOISTINEN_V1 };
        h[13] = self.material.men() as u8;
        h[14] = self.last_step;
        h[15] = self.five_valued as u8 | (self.edge_exact as u8) << 1;
        Le::write_u16(&mut h[240..242], self.longest_cursed[0]);
        Le::write_u16(&mut h[242..244], self.longest_cursed[1]);
        let name = self.material.to_string();
        h[16..16 + name.len()].copy_from_slice(name.as_bytes());
        Le::write_u64(&mut h[32..40], self.n_slots);
        for (i, s) in self.sections.iter().enumerate() {
            let o = 40 + 24 * i;
            Le::write_u64(&mut h[o..o + 8], s.offset);
            Le::write_u64(&mut h[o + 8..o + 16], s.length);
            Le::write_u64(&mut h[o + 16..o + 24], s.checksum);
        }
        if let Some(info) = &self.slices {
            Le::write_u32(&mut h[160..164], info.n_slices);
            h[164] = info.slice_bits;
            h[165] = info.white_pawns;
            h[166] = info.black_pawns;
            h[167] = info.n_levels;
        }
        let sum = xxh3_64(&h[..248]);
        Le::write_u64(&mut h[248..256], sum);
        h
    }

    fn decode(path: &Path, h: &[u8]) -> Result<Header, FormatError> {
        let bad = |why: &str| FormatError::Inconsistent(path.to_path_buf(), why.to_string());
        let version = header_version(path, h)?;
        if version != VERSION && version != VERSION_PAWNS {
            return Err(FormatError::Version(path.to_path_buf(), version));
        }
        check_header_sum(path, h)?;
        let u64_at = |o: usize| LittleEndian::read_u64(&h[o..o + 8]);
        let layout_id = if version == VERSION { LAYOUT_KOISTINEN_V1 } else { LAYOUT_PAWN_SLICES };
        if h[12] != layout_id || LittleEndian::read_u16(&h[10..12]) as usize != HEADER_LEN {
            return Err(bad("unknown layout or header length"));
        }
        let material = header_signature(path, h)?;
        if material.white_bare() || material.has_pawns() != (version == VERSION_PAWNS) {
            return Err(bad("signature does not match the format version"));
        }
        let expected = Header::new(&Layout::new(&material));
        if u64_at(32) != expected.n_slots {
            return Err(bad("slot count does not match the signature"));
        }
        let mut sections = expected.sections.clone();
        for (i, s) in sections.iter_mut().enumerate() {
            let o = 40 + 24 * i;
            if (u64_at(o), u64_at(o + 8)) != (s.offset, s.length) {
                return Err(bad("section table"));
            }
            s.checksum = u64_at(o + 16);
        }
        if let Some(info) = &expected.slices {
            let stored = SliceInfo {
                n_slices: LittleEndian::read_u32(&h[160..164]),
                slice_bits: h[164],
                white_pawns: h[165],
                black_pawns: h[166],
                n_levels: h[167],
            };
            if &stored != info {
                return Err(bad("slice description does not match the signature"));
            }
        }
        if h[15] > 3 {
            return Err(bad("unknown flags"));
        }
        let longest_cursed = [LittleEndian::read_u16(&h[240..242]), LittleEndian::read_u16(&h[242..244])];
        Ok(Header {
            last_step: h[14],
            five_valued: h[15] & 1 != 0,
            edge_exact: h[15] & 2 != 0,
            longest_cursed,
            sections,
            ..expected
        })
    }

    /// Total file length.
    pub fn file_len(&self) -> u64 {
        let last = self.sections.last().expect("a table has sections");
        last.offset + last.length
    }
}

/// The format version of a table's header (its first bytes, at least 256 of them): the
/// magic and the length checked first, shared by every version.
pub fn header_version(path: &Path, h: &[u8]) -> Result<u16, FormatError> {
    if !MAGIC.starts_with(&h[..h.len().min(MAGIC.len())]) {
        return Err(FormatError::BadMagic(path.to_path_buf()));
    }
    if h.len() < HEADER_LEN {
        return Err(FormatError::ShortHeader(path.to_path_buf(), h.len() as u64));
    }
    Ok(LittleEndian::read_u16(&h[8..10]))
}

/// Checks a header's checksum: XXH3-64 of bytes 0..248 at byte 248, in every version.
pub fn check_header_sum(path: &Path, h: &[u8]) -> Result<(), FormatError> {
    if xxh3_64(&h[..248]) != LittleEndian::read_u64(&h[248..256]) {
        return Err(FormatError::HeaderChecksum(path.to_path_buf()));
    }
    Ok(())
}

/// The run a header names (bytes 16..32, NUL-padded), in every version.
pub fn header_signature(path: &Path, h: &[u8]) -> Result<Material, FormatError> {
    let bad = |why: &str| FormatError::Inconsistent(path.to_path_buf(), why.to_string());
    let name_end = h[16..32].iter().position(|&b| b == 0).unwrap_or(16);
    let name = std::str::from_utf8(&h[16..16 + name_end]).map_err(|_| bad("signature"))?;
    Material::parse(name).map_err(|e| bad(&e.to_string()))
}

/// Path of a run's table in a folder.
pub fn table_path(dir: &Path, material: &Material) -> PathBuf {
    dir.join(format!("{material}.{EXTENSION}"))
}

/// A run's table being assembled in place (in the run's work folder): full length from the
/// start (sparse), each level of the run writes its slot range of every section, and the
/// header comes last, when the table is published.
pub struct PartialTable {
    file: File,
    path: PathBuf,
    header: Header,
}

impl PartialTable {
    /// Opens the table of `material` being assembled at `path`, creating it if needed.
    pub fn open(path: &Path, layout: &Layout) -> Result<PartialTable, FormatError> {
        let header = Header::new(layout);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .doing(|| format!("opening {}", path.display()))?;
        let len = file.metadata().doing(|| format!("reading the size of {}", path.display()))?.len();
        if len != header.file_len() {
            file.set_len(header.file_len()).doing(|| format!("sizing {}", path.display()))?;
        }
        Ok(PartialTable { file, path: path.to_path_buf(), header })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
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

    /// Reads bytes at a file offset.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), FormatError> {
        use std::os::unix::fs::FileExt;
        Ok(self
            .file
            .read_exact_at(buf, offset)
            .doing(|| format!("reading {} at offset {offset}", self.path.display()))?)
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

/// A table file opened read-only and memory-mapped.
pub struct TableFile {
    pub path: PathBuf,
    pub header: Header,
    map: Mmap,
    file: File,
}

impl TableFile {
    /// Opens and checks the header and the length (not the section checksums).
    pub fn open(path: &Path) -> Result<TableFile, FormatError> {
        let file = File::open(path).doing(|| format!("opening {}", path.display()))?;
        // SAFETY: tables are published by rename and never modified in place afterwards.
        let map = unsafe { Mmap::map(&file) }.doing(|| format!("mapping {}", path.display()))?;
        let header = Header::decode(path, &map[..map.len().min(HEADER_LEN)])?;
        if map.len() as u64 != header.file_len() {
            return Err(FormatError::Length(path.to_path_buf(), map.len() as u64, header.file_len()));
        }
        Ok(TableFile { path: path.to_path_buf(), header, map, file })
    }

    /// Opens the table of run `material` and checks it: the header must name that run (a
    /// file of another run under its name is refused, even one of the same size), and every
    /// section's checksum must match.
    pub fn open_run(path: &Path, material: &Material) -> Result<TableFile, FormatError> {
        let file = TableFile::open_run_unchecked(path, material)?;
        file.verify()?;
        Ok(file)
    }

    /// Like [`TableFile::open_run`] without the section checksums (for a table checked
    /// moments ago by the same process).
    pub fn open_run_unchecked(path: &Path, material: &Material) -> Result<TableFile, FormatError> {
        let file = TableFile::open(path)?;
        if &file.header.material != material {
            return Err(FormatError::WrongRun {
                path: path.to_path_buf(),
                found: file.header.material.clone(),
                expected: material.clone(),
            });
        }
        Ok(file)
    }

    /// Checks every section's checksum. The file is read, not touched through the map, so
    /// that checking a large table does not make it resident in this process.
    pub fn verify(&self) -> Result<(), FormatError> {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; 1 << 20];
        for (i, s) in self.header.sections.iter().enumerate() {
            let mut hasher = Xxh3::new();
            let mut done = 0;
            while done < s.length {
                let n = buf.len().min((s.length - done) as usize);
                let at = s.offset + done;
                self.file
                    .read_exact_at(&mut buf[..n], at)
                    .doing(|| format!("reading {} at offset {at}", self.path.display()))?;
                hasher.update(&buf[..n]);
                done += n as u64;
            }
            if hasher.digest() != s.checksum {
                return Err(FormatError::SectionChecksum {
                    path: self.path.clone(),
                    section: Section::at(i),
                    offset: s.offset,
                });
            }
        }
        Ok(())
    }

    /// The header's bytes (which hold every section's checksum: an identity of the table).
    pub fn header_bytes(&self) -> &[u8] {
        &self.map[..HEADER_LEN]
    }

    /// Bytes of a section.
    pub fn section(&self, s: Section) -> &[u8] {
        let e = self.header.sections[s as usize];
        &self.map[e.offset as usize..(e.offset + e.length) as usize]
    }

    /// The bitbase word of storage word `w`.
    #[inline]
    pub fn bitbase_word(&self, stm: Color, w: usize) -> u64 {
        let b = self.section(Section::bitbase(stm));
        LittleEndian::read_u64(&b[w * 8..w * 8 + 8])
    }

    /// The value planes of words `first..first + n` of a side to move, read from the file (not
    /// through the map, so that going through a large table does not make it resident in
    /// this process).
    pub fn read_planes(&self, stm: Color, first: usize, n: usize, out: &mut Vec<[u64; 6]>) -> Result<(), FormatError> {
        use std::os::unix::fs::FileExt;
        let e = self.header.sections[Section::values(stm) as usize];
        let per_word = VALUE_WORD_BYTES as usize;
        let mut bytes = vec![0u8; n * per_word];
        let at = e.offset + (first * per_word) as u64;
        self.file.read_exact_at(&mut bytes, at).doing(|| format!("reading {} at offset {at}", self.path.display()))?;
        out.clear();
        out.extend(
            bytes.chunks_exact(per_word).map(|b| std::array::from_fn(|j| LittleEndian::read_u64(&b[8 * j..8 * j + 8]))),
        );
        Ok(())
    }

    /// The value codes of words `first..first + n` of a side to move, 64 per word (read as
    /// [`TableFile::read_planes`]).
    pub fn read_codes(&self, stm: Color, first: usize, n: usize, out: &mut Vec<[u8; 64]>) -> Result<(), FormatError> {
        let mut planes = Vec::with_capacity(n);
        self.read_planes(stm, first, n, &mut planes)?;
        out.clear();
        out.extend(planes.iter().map(codes_of_planes));
        Ok(())
    }

    /// The 6-bit value code of a storage slot.
    #[inline]
    pub fn value_code(&self, stm: Color, slot: u64) -> u8 {
        let e = self.header.sections[Section::values(stm) as usize];
        let base = (e.offset + (slot >> 6) * VALUE_WORD_BYTES) as usize;
        let bit = slot & 63;
        let mut code = 0u8;
        for j in 0..6 {
            let o = base + 8 * j;
            let plane = LittleEndian::read_u64(&self.map[o..o + 8]);
            code |= (((plane >> bit) & 1) as u8) << j;
        }
        code
    }
}

/// `SPREAD[b]` has bit `i` of `b` in bit 0 of byte `i`: eight positions of a plane spread
/// over eight bytes.
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b] |= ((b as u64 >> i) & 1) << (8 * i);
            i += 1;
        }
        b += 1;
    }
    t
};

/// The 64 codes of a word of values given as its six bit planes.
#[inline]
pub fn codes_of_planes(planes: &[u64; 6]) -> [u8; 64] {
    let mut out = [0u8; 64];
    for (k, chunk) in out.chunks_exact_mut(8).enumerate() {
        let v = (0..6).fold(0u64, |v, j| v | SPREAD[((planes[j] >> (8 * k)) & 0xff) as usize] << j);
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    out
}

/// The six bit planes of a word of 64 codes (inverse of [`codes_of_planes`]).
#[inline]
pub fn planes_of_codes(codes: &[u8; 64]) -> [u64; 6] {
    std::array::from_fn(|j| codes.iter().enumerate().fold(0u64, |p, (b, &c)| p | (((c >> j) & 1) as u64) << b))
}

/// The positions of a word of values (its six bit planes) that hold `code`.
#[inline]
pub fn code_mask(planes: &[u64; 6], code: u8) -> u64 {
    (0..6).fold(!0u64, |m, j| m & if code >> j & 1 == 1 { planes[j] } else { !planes[j] })
}

/// Distance (plies, chain parity; exactly 100 for code 53) of a value code; `None` for "not
/// won", cursed and illegal.
pub fn code_to_distance(stm: Color, code: u8) -> Option<u8> {
    match (stm, code) {
        (Color::White, c @ 1..=50) => Some(2 * c - 1),
        (Color::White, CODE_EXACT_100) => Some(100),
        (Color::Black, c @ 1..=51) => Some(2 * (c - 1)),
        _ => None,
    }
}

/// Whether a value code marks a position white wins only without the 50-move rule, or (wtm
/// code 51) perhaps in exactly 100 plies.
pub fn is_beyond_rule(stm: Color, code: u8) -> bool {
    code == CODE_CURSED || (stm == Color::White && code == CODE_EDGE)
}

/// The positions of a word of values (its six bit planes) that white wins only without the
/// 50-move rule, or (wtm code 51) perhaps in exactly 100 plies: with a table's bitbase, the
/// positions white wins with or without the rule.
pub fn beyond_rule_mask(stm: Color, planes: &[u64; 6]) -> u64 {
    let is = |code: u8| code_mask(planes, code);
    match stm {
        Color::White => is(CODE_CURSED) | is(CODE_EDGE),
        Color::Black => is(CODE_CURSED),
    }
}

/// Value code of step `k`'s new positions (odd k: wtm, even k: btm); beyond step 100,
/// cursed (the merge gives step 101's wins of exactly 100 plies [`CODE_EXACT_100`]).
pub fn step_code(k: u16) -> u8 {
    let k = match u8::try_from(k) {
        Ok(k) if k <= 100 => k,
        _ => return CODE_CURSED,
    };
    if k % 2 == 1 {
        k.div_ceil(2)
    } else {
        k / 2 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_codes_and_distances() {
        assert_eq!(step_code(1), 1);
        assert_eq!(step_code(99), 50);
        assert_eq!(step_code(0), 1);
        assert_eq!(step_code(100), 51);
        // Past 100: cursed; step 101's wins of exactly 100 plies get 53 in the merge.
        assert_eq!(step_code(101), CODE_CURSED);
        assert_eq!(step_code(131), CODE_CURSED);
        assert_eq!(code_to_distance(Color::White, 50), Some(99));
        assert_eq!(code_to_distance(Color::White, CODE_EXACT_100), Some(100));
        assert_eq!(code_to_distance(Color::White, CODE_EDGE), None);
        assert_eq!(code_to_distance(Color::Black, 51), Some(100));
        assert_eq!(code_to_distance(Color::Black, CODE_CURSED), None);
        assert_eq!(code_to_distance(Color::Black, CODE_EXACT_100), None);
        // Eventual wins: the cursed codes of the side to move.
        let planes = |code: u8| -> [u64; 6] { std::array::from_fn(|j| if code >> j & 1 == 1 { 1 << 5 } else { 0 }) };
        assert_eq!(beyond_rule_mask(Color::White, &planes(CODE_CURSED)), 1 << 5);
        assert_eq!(beyond_rule_mask(Color::White, &planes(CODE_EDGE)), 1 << 5);
        assert_eq!(beyond_rule_mask(Color::White, &planes(CODE_EXACT_100)), 0);
        assert_eq!(beyond_rule_mask(Color::Black, &planes(CODE_EDGE)), 0);
        assert_eq!(beyond_rule_mask(Color::Black, &planes(CODE_CURSED)), 1 << 5);
    }

    /// Assembles a table of `KQvK`'s size in two levels (two halves of every section) with
    /// recognisable bytes, completes it and moves it into `dir` as `KQvK.tbs`.
    fn write_sample(dir: &Path) -> PathBuf {
        let m = Material::parse("KQvK").unwrap();
        let n_slots = crate::index::Layout::new(&m).n_slots;
        let partial = PartialTable::open(&dir.join("table.partial"), &crate::index::Layout::new(&m)).unwrap();
        for (first, n) in [(n_slots / 2, n_slots / 2), (0, n_slots / 2)] {
            for (i, s) in Section::ALL.into_iter().enumerate() {
                let (off, len) = partial.range(s, first, n);
                let bytes: Vec<u8> =
                    (off..off + len).map(|b| (b as u8).wrapping_mul(31).wrapping_add(i as u8)).collect();
                partial.write_at(off, &bytes).unwrap();
            }
        }
        let done = partial.finish(7, [0, 0], (true, true), None, None).unwrap();
        let path = table_path(dir, &m);
        std::fs::rename(done, &path).unwrap();
        path
    }

    fn flip(path: &Path, at: u64) {
        let mut bytes = std::fs::read(path).unwrap();
        bytes[at as usize] ^= 0x20;
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn an_assembled_table_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let m = Material::parse("KQvK").unwrap();
        let path = write_sample(dir.path());
        assert!(!dir.path().join("table.partial").exists());
        let file = TableFile::open_run(&path, &m).unwrap();
        assert_eq!(file.header.last_step, 7);
        let e = file.header.sections[Section::BtmValues as usize];
        let b = file.section(Section::BtmValues);
        assert_eq!(b[100], ((e.offset + 100) as u8).wrapping_mul(31).wrapping_add(3));
    }

    #[test]
    fn a_flipped_byte_in_each_section_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let m = Material::parse("KQvK").unwrap();
        let path = write_sample(dir.path());
        let file = TableFile::open_run(&path, &m).unwrap();
        let sections = file.header.sections.clone();
        drop(file);
        for (i, e) in sections.iter().enumerate() {
            for at in [e.offset, e.offset + e.length / 2, e.offset + e.length - 1] {
                flip(&path, at);
                let err = TableFile::open_run(&path, &m).err().expect("damage found");
                let text = err.to_string();
                assert!(
                    matches!(err, FormatError::SectionChecksum { section, .. } if section == Section::ALL[i]),
                    "{text}"
                );
                assert!(text.contains(&format!("{:?}", Section::ALL[i])) && text.contains("KQvK.tbs"), "{text}");
                flip(&path, at);
            }
        }
        TableFile::open_run(&path, &m).unwrap();
        // The header: its checksum, or the checksum itself.
        for at in [9, 20, 40, 100, 250] {
            flip(&path, at);
            let err = TableFile::open_run(&path, &m).err().expect("damage found");
            assert!(matches!(err, FormatError::HeaderChecksum(_) | FormatError::Version(..)), "byte {at}: {err}");
            flip(&path, at);
        }
    }

    #[test]
    fn an_unfinished_table_is_never_published() {
        let dir = tempfile::tempdir().unwrap();
        let m = Material::parse("KQvK").unwrap();
        // A kill while the table is assembled: the work folder holds it, the output folder
        // nothing; opening it again keeps what was written.
        let partial_path = dir.path().join("table.partial");
        let partial = PartialTable::open(&partial_path, &crate::index::Layout::new(&m)).unwrap();
        let (off, _) = partial.range(Section::WtmValues, 0, 64);
        partial.write_at(off, &[7; 48]).unwrap();
        drop(partial);
        assert!(!table_path(dir.path(), &m).exists());
        let partial = PartialTable::open(&partial_path, &crate::index::Layout::new(&m)).unwrap();
        assert_eq!(partial.checksum(off, 48).unwrap(), xxh3_64(&[7; 48]));
        assert!(TableFile::open(&partial_path).is_err(), "no header yet: not a table");
    }
}
