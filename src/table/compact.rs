//! The compact final table file (format version 3, `docs/FORMAT.md`): per side to move a
//! win/draw/loss class, per white-to-move position a distance code, each section cut into
//! blocks that are compressed on their own (zstd) behind a checksummed block index. Opening
//! a table checks its header and indexes only; a block's checksum is checked the first time
//! it is decoded, so that a probe on a cold cache reads a few kilobytes, never the table.
//!
//! Nothing is stored for illegal positions (they take whatever value compresses best), and
//! black-to-move distances are not stored: they follow from the white-to-move distances by a
//! one-ply search (`docs/FORMAT.md`, "Black-to-move distances"). The black-to-move distance
//! histogram is kept in a small summary section, for `stats`.
//!
//! [`CompactWriter`] writes a table block by block in storage order (it never holds more than
//! the blocks in flight) and resumes an interrupted write from its last complete block.

use super::format::{
    check_header_sum, header_signature, header_version, FormatError, SliceInfo, CODE_CURSED, CODE_EDGE, CODE_ILLEGAL,
    CODE_NONE, HEADER_LEN, MAGIC,
};
use crate::chess::{Color, Material};
use crate::index::Layout;
use crate::work::publish::publish_file;
use crate::work::IoContext;
use byteorder::{ByteOrder, LittleEndian};
use memmap2::Mmap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use xxhash_rust::xxh3::xxh3_64;

/// Format version of compact tables.
pub const VERSION_COMPACT: u16 = 3;
/// Codec id of zstd frames.
pub const CODEC_ZSTD: u8 = 1;
/// Positions per block of a class section, as a power of two (64 KiB decoded).
pub const WDL_BLOCK_BITS: u32 = 18;
/// Positions per block of the distance section, as a power of two (64 KiB decoded).
pub const DTZ_BLOCK_BITS: u32 = 16;
/// Bytes of one block-index entry: the end offset of the block's bytes and their checksum.
pub const INDEX_ENTRY_BYTES: u64 = 16;
/// Bytes of decoded class data per 64-position word: two bit planes.
pub const WDL_WORD_BYTES: usize = 16;
/// Distances in plies run from 0 to 100: the summary holds a count for each.
pub const SUMMARY_DISTANCES: usize = 101;
/// Bytes of the summary section: the counts, then the slot of a longest loss.
pub const SUMMARY_BYTES: u64 = 8 * (SUMMARY_DISTANCES as u64 + 1);
/// Bytes of one level's record in the slice section.
pub const LEVEL_BYTES: u64 = 16;
/// The zstd level of new tables (measured in docs/BENCHMARKS.md: with [`MIN_MATCH`], level 8
/// writes KQRvKR 1% smaller than plain level 9 and 25% faster; within 0.3% on KQRvKQR).
pub const DEFAULT_LEVEL: i32 = 8;
/// zstd's shortest match, set at every level: the tables' repeats are long, and 6 instead of
/// zstd's 4 or 5 gave smaller blocks in less time at levels 3 to 12 (docs/BENCHMARKS.md).
pub const MIN_MATCH: u32 = 6;

/// The code [`CompactTable::read_codes`] gives a black-to-move loss, whose distance is not
/// stored (its histogram is in the summary).
pub const CODE_LOST_UNMEASURED: u8 = 62;

/// Classes of the win/draw/loss sections: what white gets with a fresh 50-move counter.
pub mod class {
    /// Not won for white (a draw, or black wins).
    pub const NONE: u8 = 0;
    /// White wins under the 50-move rule (wtm: white wins; btm: black loses).
    pub const WIN: u8 = 1;
    /// White wins only without the rule: a cursed win (wtm), a blessed loss (btm).
    pub const CURSED: u8 = 2;
    /// Wtm only, in tables converted from files that did not tell them apart: white wins in
    /// exactly 100 plies or, only without the rule, in 101.
    pub const EDGE: u8 = 3;
}

/// The sections of a compact table, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// White to move: class per position (blocks of 2^18 positions, two bit planes per word).
    WtmWdl = 0,
    /// White to move: distance code per position (blocks of 2^16 positions, a byte each).
    WtmDtz = 1,
    /// Black to move: class per position.
    BtmWdl = 2,
    /// Black-to-move distances: a count per distance and a slot of a longest loss.
    Summary = 3,
    /// With pawns: the slices' keys and the levels.
    Slices = 4,
}

impl Part {
    /// Every section, in file order.
    pub const ALL: [Part; 5] = [Part::WtmWdl, Part::WtmDtz, Part::BtmWdl, Part::Summary, Part::Slices];
    /// The sections cut into compressed blocks, in file (and writing) order.
    pub const BLOCKED: [Part; 3] = [Part::WtmWdl, Part::WtmDtz, Part::BtmWdl];

    /// The class section of a side to move.
    pub fn wdl(stm: Color) -> Part {
        if stm == Color::White {
            Part::WtmWdl
        } else {
            Part::BtmWdl
        }
    }

    /// Positions per block, as a power of two (block sections only).
    pub fn block_bits(self) -> u32 {
        if self == Part::WtmDtz {
            DTZ_BLOCK_BITS
        } else {
            WDL_BLOCK_BITS
        }
    }

    /// Decoded bytes of `positions` positions of this block section.
    pub fn raw_bytes(self, positions: u64) -> usize {
        if self == Part::WtmDtz {
            positions as usize
        } else {
            positions as usize / 64 * WDL_WORD_BYTES
        }
    }

    fn is_blocked(self) -> bool {
        (self as usize) < 3
    }
}

/// Where a section lies, and its checksum (of the index, for a block section; of the whole
/// section otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartEntry {
    pub offset: u64,
    pub length: u64,
    pub checksum: u64,
}

/// What the header of a compact table says besides where its sections lie.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableMeta {
    /// The last step up to 100 that added positions (the longest distance stored).
    pub last_step: u8,
    /// Every cursed position is marked (header bit 0).
    pub five_valued: bool,
    /// Every wtm class 3 is a cursed win (header bit 1; new tables have no class 3).
    pub edge_exact: bool,
    /// The last steps beyond 100 that added positions, wtm (odd) and btm (even); 0 if none.
    pub longest_cursed: [u16; 2],
}

/// The decoded header of a compact table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactHeader {
    pub material: Material,
    pub n_slots: u64,
    pub meta: TableMeta,
    pub parts: [PartEntry; 5],
    pub slices: Option<SliceInfo>,
}

/// Number of blocks of a block section of a table of `n_slots` positions per side.
pub fn n_blocks(part: Part, n_slots: u64) -> usize {
    n_slots.div_ceil(1 << part.block_bits()) as usize
}

/// Positions in block `i` of a block section (the last one may be short).
pub fn block_positions(part: Part, n_slots: u64, i: usize) -> u64 {
    let size = 1u64 << part.block_bits();
    size.min(n_slots - i as u64 * size)
}

fn align8(x: u64) -> u64 {
    x.div_ceil(8) * 8
}

fn slices_len(slices: Option<&SliceInfo>) -> u64 {
    slices.map_or(0, |s| 4 * s.n_slices as u64 + LEVEL_BYTES * s.n_levels as u64)
}

impl CompactHeader {
    fn encode(&self) -> [u8; HEADER_LEN] {
        type Le = LittleEndian;
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        Le::write_u16(&mut h[8..10], VERSION_COMPACT);
        Le::write_u16(&mut h[10..12], HEADER_LEN as u16);
        h[12] = if self.slices.is_some() { 2 } else { 1 };
        h[13] = self.material.men() as u8;
        h[14] = self.meta.last_step;
        h[15] = self.meta.five_valued as u8 | (self.meta.edge_exact as u8) << 1;
        let name = self.material.to_string();
        h[16..16 + name.len()].copy_from_slice(name.as_bytes());
        Le::write_u64(&mut h[32..40], self.n_slots);
        for (i, p) in self.parts.iter().enumerate() {
            let o = 40 + 24 * i;
            Le::write_u64(&mut h[o..o + 8], p.offset);
            Le::write_u64(&mut h[o + 8..o + 16], p.length);
            Le::write_u64(&mut h[o + 16..o + 24], p.checksum);
        }
        h[160] = CODEC_ZSTD;
        h[161] = WDL_BLOCK_BITS as u8;
        h[162] = DTZ_BLOCK_BITS as u8;
        if let Some(s) = &self.slices {
            Le::write_u32(&mut h[164..168], s.n_slices);
            h[168] = s.slice_bits;
            h[169] = s.white_pawns;
            h[170] = s.black_pawns;
            h[171] = s.n_levels;
        }
        Le::write_u16(&mut h[240..242], self.meta.longest_cursed[0]);
        Le::write_u16(&mut h[242..244], self.meta.longest_cursed[1]);
        let sum = xxh3_64(&h[..248]);
        Le::write_u64(&mut h[248..256], sum);
        h
    }

    /// Decodes and checks a header (`h` is the file's first bytes, `file_len` its length).
    pub fn decode(path: &Path, h: &[u8], file_len: u64) -> Result<CompactHeader, FormatError> {
        let bad = |why: &str| FormatError::Inconsistent(path.to_path_buf(), why.to_string());
        let version = header_version(path, h)?;
        if version == super::format::VERSION || version == super::format::VERSION_PAWNS {
            return Err(FormatError::OldFormat { path: path.to_path_buf(), version });
        }
        if version != VERSION_COMPACT {
            return Err(FormatError::Version(path.to_path_buf(), version));
        }
        check_header_sum(path, h)?;
        let material = header_signature(path, h)?;
        if material.white_bare() || h[12] != if material.has_pawns() { 2 } else { 1 } {
            return Err(bad("signature does not match the layout"));
        }
        if LittleEndian::read_u16(&h[10..12]) as usize != HEADER_LEN || h[13] as usize != material.men() {
            return Err(bad("header length or number of men"));
        }
        if (h[160], h[161], h[162]) != (CODEC_ZSTD, WDL_BLOCK_BITS as u8, DTZ_BLOCK_BITS as u8) {
            return Err(bad("unknown codec or block size"));
        }
        if h[15] > 3 {
            return Err(bad("unknown flags"));
        }
        let layout = Layout::new(&material);
        let n_slots = LittleEndian::read_u64(&h[32..40]);
        if n_slots != layout.n_slots {
            return Err(bad("slot count does not match the signature"));
        }
        let slices = SliceInfo::of(&layout);
        if let Some(info) = &slices {
            let stored = SliceInfo {
                n_slices: LittleEndian::read_u32(&h[164..168]),
                slice_bits: h[168],
                white_pawns: h[169],
                black_pawns: h[170],
                n_levels: h[171],
            };
            if &stored != info {
                return Err(bad("slice description does not match the signature"));
            }
        }
        let parts: [PartEntry; 5] = std::array::from_fn(|i| {
            let o = 40 + 24 * i;
            PartEntry {
                offset: LittleEndian::read_u64(&h[o..o + 8]),
                length: LittleEndian::read_u64(&h[o + 8..o + 16]),
                checksum: LittleEndian::read_u64(&h[o + 16..o + 24]),
            }
        });
        // Sections follow the header and each other, each at the next multiple of 8.
        let mut at = HEADER_LEN as u64;
        for (part, e) in Part::ALL.into_iter().zip(&parts) {
            let min_len = match part {
                Part::Summary => SUMMARY_BYTES,
                Part::Slices => slices_len(slices.as_ref()),
                p => INDEX_ENTRY_BYTES * n_blocks(p, n_slots) as u64,
            };
            let exact = matches!(part, Part::Summary | Part::Slices);
            if e.offset != at || e.length < min_len || (exact && e.length != min_len) {
                return Err(bad(&format!("section table ({part:?})")));
            }
            at = align8(e.offset.checked_add(e.length).ok_or_else(|| bad("section length"))?);
        }
        let end = parts[4].offset + parts[4].length;
        if file_len != end {
            return Err(FormatError::Length(path.to_path_buf(), file_len, end));
        }
        let meta = TableMeta {
            last_step: h[14],
            five_valued: h[15] & 1 != 0,
            edge_exact: h[15] & 2 != 0,
            longest_cursed: [LittleEndian::read_u16(&h[240..242]), LittleEndian::read_u16(&h[242..244])],
        };
        Ok(CompactHeader { material, n_slots, meta, parts, slices })
    }
}

/// The black-to-move distances of a run: a count of positions per distance in plies
/// (positions counted once up to symmetry, as `stats` counts them), and the slot of a
/// longest loss (the first in storage order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub by_distance: [u64; SUMMARY_DISTANCES],
    pub longest_slot: Option<u64>,
}

impl Summary {
    /// The section's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8; SUMMARY_BYTES as usize];
        LittleEndian::write_u64_into(&self.by_distance, &mut out[..8 * SUMMARY_DISTANCES]);
        LittleEndian::write_u64(&mut out[8 * SUMMARY_DISTANCES..], self.longest_slot.unwrap_or(u64::MAX));
        out
    }

    fn decode(bytes: &[u8]) -> Summary {
        let mut by_distance = [0u64; SUMMARY_DISTANCES];
        LittleEndian::read_u64_into(&bytes[..8 * SUMMARY_DISTANCES], &mut by_distance);
        let slot = LittleEndian::read_u64(&bytes[8 * SUMMARY_DISTANCES..]);
        Summary { by_distance, longest_slot: (slot != u64::MAX).then_some(slot) }
    }
}

/// A level's record in the slice section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelEntry {
    pub first: u32,
    pub count: u32,
    /// The longest distance stored in the level's slots, either side to move.
    pub last_step: u8,
}

/// The bytes of the slice section of a layout with pawns: the slices' keys in storage
/// order, then per level (in solve order) its first slice, slice count and last step.
pub fn slice_bytes(layout: &Layout, last_steps: &[u8]) -> Vec<u8> {
    let Some(slices) = layout.slices.as_ref() else { return Vec::new() };
    let n = slices.len();
    let mut out = vec![0u8; 4 * n + LEVEL_BYTES as usize * slices.levels.len()];
    LittleEndian::write_u32_into(&slices.keys, &mut out[..4 * n]);
    for (i, (l, &last)) in slices.levels.iter().zip(last_steps).enumerate() {
        let o = 4 * n + LEVEL_BYTES as usize * i;
        LittleEndian::write_u32(&mut out[o..o + 4], l.first);
        LittleEndian::write_u32(&mut out[o + 4..o + 8], l.count);
        out[o + 8] = last;
    }
    out
}

/// A decoded block: every position holds one value, or the decoded bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockData {
    Constant(u8),
    Bytes(Vec<u8>),
}

/// Source of unique ids, so that blocks of different open tables never share a cache key.
static NEXT_TABLE_ID: AtomicU32 = AtomicU32::new(1);

/// A compact table opened read-only and memory-mapped, its header and indexes checked.
pub struct CompactTable {
    pub path: PathBuf,
    pub header: CompactHeader,
    map: Mmap,
    file: File,
    /// Per block section, one bit per block: its checksum was checked.
    checked: [Vec<AtomicU64>; 3],
    /// This open table's id in block caches.
    pub id: u32,
}

impl CompactTable {
    /// Opens a table: checks the header, the section table, the length, the block indexes'
    /// checksums and the small sections (not the blocks: each is checked when first decoded).
    pub fn open(path: &Path) -> Result<CompactTable, FormatError> {
        let file = File::open(path).doing(|| format!("opening {}", path.display()))?;
        // SAFETY: tables are published by rename and never modified in place afterwards.
        let map = unsafe { Mmap::map(&file) }.doing(|| format!("mapping {}", path.display()))?;
        let header = CompactHeader::decode(path, &map[..map.len().min(HEADER_LEN)], map.len() as u64)?;
        let covered = |part: Part, e: &PartEntry| {
            if part.is_blocked() {
                INDEX_ENTRY_BYTES * n_blocks(part, header.n_slots) as u64
            } else {
                e.length
            }
        };
        // Read ahead in large requests: a 6-men table's indexes take a few megabytes, which
        // page faults alone would read 128 KiB at a time.
        for (part, e) in Part::ALL.into_iter().zip(&header.parts) {
            let _ = map.advise_range(memmap2::Advice::WillNeed, e.offset as usize, covered(part, e) as usize);
        }
        // Blocks are read where probes fall: a fault should read the block's pages, not the
        // 128 KiB around them.
        let data = header.parts[0].offset + covered(Part::WtmWdl, &header.parts[0]);
        let _ = map.advise_range(memmap2::Advice::Random, data as usize, map.len() - data as usize);
        for (part, e) in Part::ALL.into_iter().zip(&header.parts) {
            let bytes = &map[e.offset as usize..(e.offset + covered(part, e)) as usize];
            if xxh3_64(bytes) != e.checksum {
                return Err(FormatError::PartChecksum { path: path.to_path_buf(), part, block: None });
            }
        }
        let checked = std::array::from_fn(|i| {
            let n = n_blocks(Part::BLOCKED[i], header.n_slots);
            (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect()
        });
        let id = NEXT_TABLE_ID.fetch_add(1, Ordering::Relaxed);
        Ok(CompactTable { path: path.to_path_buf(), header, map, file, checked, id })
    }

    /// Opens the table of run `material`, refusing a file that holds another run's table.
    pub fn open_run(path: &Path, material: &Material) -> Result<CompactTable, FormatError> {
        let table = CompactTable::open(path)?;
        if &table.header.material != material {
            return Err(FormatError::WrongRun {
                path: path.to_path_buf(),
                found: table.header.material.clone(),
                expected: material.clone(),
            });
        }
        Ok(table)
    }

    /// The bytes of a section.
    fn part_bytes(&self, part: Part) -> &[u8] {
        let e = self.header.parts[part as usize];
        &self.map[e.offset as usize..(e.offset + e.length) as usize]
    }

    /// Number of blocks of a block section.
    pub fn n_blocks(&self, part: Part) -> usize {
        n_blocks(part, self.header.n_slots)
    }

    /// Where block `i`'s stored bytes lie in the file (bounds checked against the section).
    fn block_span(&self, part: Part, i: usize) -> Result<(usize, usize), FormatError> {
        let bytes = self.part_bytes(part);
        let n = self.n_blocks(part);
        let index_len = INDEX_ENTRY_BYTES as usize * n;
        let end_of = |j: usize| LittleEndian::read_u64(&bytes[16 * j..16 * j + 8]);
        let start = if i == 0 { 0 } else { end_of(i - 1) };
        let end = end_of(i);
        let data_len = (bytes.len() - index_len) as u64;
        if start >= end || end > data_len || (i + 1 == n && end != data_len) {
            let why = format!("block {i} lies at {start}..{end} of {data_len} bytes");
            return Err(FormatError::Index { path: self.path.clone(), part, why });
        }
        let at = self.header.parts[part as usize].offset as usize + index_len + start as usize;
        Ok((at, (end - start) as usize))
    }

    /// The stored bytes of block `i`, through the map.
    fn packed(&self, part: Part, i: usize) -> Result<&[u8], FormatError> {
        let (at, len) = self.block_span(part, i)?;
        Ok(&self.map[at..at + len])
    }

    /// The stored bytes of block `i`, read from the file into `buf` (for readers that go
    /// through the table in order: the kernel reads ahead, and the map's pages do not pile
    /// up in this process).
    fn read_packed<'b>(&self, part: Part, i: usize, buf: &'b mut Vec<u8>) -> Result<&'b [u8], FormatError> {
        let (at, len) = self.block_span(part, i)?;
        buf.resize(len, 0);
        self.file.read_exact_at(buf, at as u64).doing(|| format!("reading {} at offset {at}", self.path.display()))?;
        Ok(buf)
    }

    /// Checks block `i`'s checksum the first time (damage is reported with table and block).
    fn check(&self, part: Part, i: usize, packed: &[u8]) -> Result<(), FormatError> {
        let (word, bit) = (&self.checked[part as usize][i / 64], 1u64 << (i % 64));
        if word.load(Ordering::Relaxed) & bit != 0 {
            return Ok(());
        }
        let bytes = self.part_bytes(part);
        if xxh3_64(packed) != LittleEndian::read_u64(&bytes[16 * i + 8..16 * i + 16]) {
            return Err(FormatError::PartChecksum { path: self.path.clone(), part, block: Some(i) });
        }
        word.fetch_or(bit, Ordering::Relaxed);
        Ok(())
    }

    /// The value of a constant block (stored as one byte), or `None`.
    #[inline]
    pub fn constant(&self, part: Part, i: usize) -> Result<Option<u8>, FormatError> {
        let packed = self.packed(part, i)?;
        if packed.len() != 1 {
            return Ok(None);
        }
        self.check(part, i, packed)?;
        Ok(Some(packed[0]))
    }

    /// Decodes block `i` of a block section.
    pub fn block(&self, part: Part, i: usize) -> Result<BlockData, FormatError> {
        self.decode(part, i, self.packed(part, i)?)
    }

    /// Checks and decodes block `i` from its stored bytes.
    fn decode(&self, part: Part, i: usize, packed: &[u8]) -> Result<BlockData, FormatError> {
        self.check(part, i, packed)?;
        if packed.len() == 1 {
            return Ok(BlockData::Constant(packed[0]));
        }
        let raw_len = part.raw_bytes(block_positions(part, self.header.n_slots, i));
        let fail = |reason: String| FormatError::BlockDecode { path: self.path.clone(), part, block: i, reason };
        // Decoded into fresh capacity (not zeroed first): at most `raw_len` bytes.
        let out = DECOMPRESSOR.with(|d| d.borrow_mut().decompress(packed, raw_len)).map_err(|e| fail(e.to_string()))?;
        if out.len() != raw_len {
            return Err(fail(format!("{} bytes, expected {raw_len}", out.len())));
        }
        Ok(BlockData::Bytes(out))
    }

    /// Decodes block `i` into `out` (constant blocks expanded), for readers that go through
    /// a table in order: read from the file, not through the map.
    pub fn block_into(&self, part: Part, i: usize, out: &mut Vec<u8>) -> Result<(), FormatError> {
        let raw_len = part.raw_bytes(block_positions(part, self.header.n_slots, i));
        let mut buf = Vec::new();
        match self.decode(part, i, self.read_packed(part, i, &mut buf)?)? {
            BlockData::Bytes(b) => *out = b,
            BlockData::Constant(v) => {
                out.clear();
                if part == Part::WtmDtz {
                    out.resize(raw_len, v);
                } else {
                    let planes = [all_if(v & 1 != 0), all_if(v & 2 != 0)];
                    out.reserve(raw_len);
                    for _ in 0..raw_len / WDL_WORD_BYTES {
                        out.extend_from_slice(&planes[0].to_le_bytes());
                        out.extend_from_slice(&planes[1].to_le_bytes());
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks every block's checksum without decoding it (the generator's check of an
    /// existing table); the first damaged block is the error.
    pub fn check_sums(&self) -> Result<(), FormatError> {
        let mut buf = Vec::new();
        for part in Part::BLOCKED {
            for i in 0..self.n_blocks(part) {
                self.check(part, i, self.read_packed(part, i, &mut buf)?)?;
            }
        }
        Ok(())
    }

    /// The words of a final bitbase as the generator's conversions read them, in storage
    /// order: with white to move, positions white wins (`eventual`: with or without the
    /// 50-move rule) and every illegal one; with black to move, positions black loses
    /// (`eventual`: with or without the rule), illegal ones clear. Illegal positions are
    /// found from the layout (`index::illegal_word`), as the init passes mark them.
    pub fn bitbase_words(
        &self,
        stm: Color,
        eventual: bool,
        each: &mut dyn FnMut(u64) -> std::io::Result<()>,
    ) -> Result<(), FormatError> {
        let layout = Layout::new(&self.header.material);
        let part = Part::wdl(stm);
        let per_block = 1u64 << (WDL_BLOCK_BITS - 6);
        let n_words = self.header.n_slots / 64;
        let mut data = Vec::new();
        for i in 0..self.n_blocks(part) {
            self.block_into(part, i, &mut data)?;
            let first = i as u64 * per_block;
            for w in 0..per_block.min(n_words - first) {
                let [lo, hi] = planes_at(&data, w as usize);
                let won = if eventual { lo | hi } else { lo & !hi };
                let (ill_w, ill_b) = crate::index::illegal_word(&layout, first + w);
                let word = if stm == Color::White { won | ill_w } else { won & !ill_b };
                each(word).doing(|| format!("storing the bitbase of {}", self.path.display()))?;
            }
        }
        Ok(())
    }

    /// The black-to-move summary.
    pub fn summary(&self) -> Summary {
        Summary::decode(self.part_bytes(Part::Summary))
    }

    /// The slice section's level records (empty without pawns).
    pub fn levels(&self) -> Vec<LevelEntry> {
        let Some(info) = &self.header.slices else { return Vec::new() };
        let bytes = self.part_bytes(Part::Slices);
        let at = 4 * info.n_slices as usize;
        (0..info.n_levels as usize)
            .map(|i| {
                let r = &bytes[at + LEVEL_BYTES as usize * i..];
                LevelEntry {
                    first: LittleEndian::read_u32(&r[0..4]),
                    count: LittleEndian::read_u32(&r[4..8]),
                    last_step: r[8],
                }
            })
            .collect()
    }

    /// The slices' keys (empty without pawns).
    pub fn slice_keys(&self) -> Vec<u32> {
        let Some(info) = &self.header.slices else { return Vec::new() };
        let bytes = &self.part_bytes(Part::Slices)[..4 * info.n_slices as usize];
        bytes.chunks_exact(4).map(LittleEndian::read_u32).collect()
    }

    /// The value codes of words `first..first + n` of a side to move, 64 per word, in the
    /// codes of the uncompressed format (`docs/FORMAT.md`, versions 1 and 2): 63 for an
    /// illegal position (found from `layout`, this table's), a wtm win's distance code, 52
    /// (51) for a cursed class, 0 otherwise, and [`CODE_LOST_UNMEASURED`] for a btm loss,
    /// whose distance is not stored. The words must lie in one block of the class section.
    pub fn read_codes(
        &self,
        layout: &Layout,
        stm: Color,
        first: usize,
        n: usize,
        out: &mut Vec<[u8; 64]>,
    ) -> Result<(), FormatError> {
        let per_wdl = 1usize << (WDL_BLOCK_BITS - 6);
        assert!(first / per_wdl == (first + n - 1) / per_wdl, "words of one block");
        let mut classes = Vec::new();
        self.block_into(Part::wdl(stm), first / per_wdl, &mut classes)?;
        let mut dtz = Vec::new();
        if stm == Color::White {
            let per_block = 1usize << (DTZ_BLOCK_BITS - 6);
            let mut block = Vec::new();
            for i in first / per_block..(first + n).div_ceil(per_block) {
                self.block_into(Part::WtmDtz, i, &mut block)?;
                dtz.extend_from_slice(&block);
            }
        }
        let dtz_first = first % (1 << (DTZ_BLOCK_BITS - 6));
        out.clear();
        for w in 0..n {
            let (ill_w, ill_b) = crate::index::illegal_word(layout, (first + w) as u64);
            let illegal = if stm == Color::White { ill_w } else { ill_b };
            let [lo, hi] = planes_at(&classes, first % per_wdl + w);
            out.push(std::array::from_fn(|b| {
                if illegal >> b & 1 != 0 {
                    return CODE_ILLEGAL;
                }
                match ((lo >> b) & 1 | ((hi >> b) & 1) << 1) as u8 {
                    class::NONE => CODE_NONE,
                    class::WIN if stm == Color::White => dtz[64 * (dtz_first + w) + b],
                    class::WIN => CODE_LOST_UNMEASURED,
                    class::CURSED => CODE_CURSED,
                    _ => CODE_EDGE,
                }
            }));
        }
        Ok(())
    }

    /// The class of a slot, through `cache` (constant blocks need none).
    #[inline]
    pub fn class(&self, stm: Color, slot: u64, cache: &super::cache::BlockCache) -> Result<u8, FormatError> {
        let part = Part::wdl(stm);
        let i = (slot >> WDL_BLOCK_BITS) as usize;
        if let Some(v) = self.constant(part, i)? {
            return Ok(v);
        }
        let block = cache.get(self, part, i)?;
        Ok(class_at(&block, slot & ((1 << WDL_BLOCK_BITS) - 1)))
    }

    /// The wtm distance code of a slot (meaningful where its class is a win), through `cache`.
    #[inline]
    pub fn dtz_code(&self, slot: u64, cache: &super::cache::BlockCache) -> Result<u8, FormatError> {
        let i = (slot >> DTZ_BLOCK_BITS) as usize;
        if let Some(v) = self.constant(Part::WtmDtz, i)? {
            return Ok(v);
        }
        let block = cache.get(self, Part::WtmDtz, i)?;
        Ok(block[(slot & ((1 << DTZ_BLOCK_BITS) - 1)) as usize])
    }
}

thread_local! {
    /// One zstd decoding context per thread, reused by every block it decodes.
    static DECOMPRESSOR: std::cell::RefCell<zstd::bulk::Decompressor<'static>> =
        std::cell::RefCell::new(zstd::bulk::Decompressor::new().expect("a zstd decoding context"));
}

#[inline]
fn all_if(cond: bool) -> u64 {
    if cond {
        !0
    } else {
        0
    }
}

/// The two bit planes of word `w` of decoded class data.
#[inline]
pub fn planes_at(data: &[u8], w: usize) -> [u64; 2] {
    let o = WDL_WORD_BYTES * w;
    [LittleEndian::read_u64(&data[o..o + 8]), LittleEndian::read_u64(&data[o + 8..o + 16])]
}

/// The class of position `p` (counted from the block's start) in decoded class data.
#[inline]
pub fn class_at(data: &[u8], p: u64) -> u8 {
    let [lo, hi] = planes_at(data, (p >> 6) as usize);
    let b = p & 63;
    (((lo >> b) & 1) | ((hi >> b) & 1) << 1) as u8
}

thread_local! {
    /// One zstd encoding context per thread and level, reused by every block it compresses.
    static COMPRESSOR: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
}

/// The stored bytes of one block: one byte for a block whose positions all hold one value,
/// else a zstd frame of its decoded bytes (`level` 1 to 22).
pub fn pack_block(decoded: &[u8], constant: Option<u8>, level: i32) -> std::io::Result<Vec<u8>> {
    if let Some(v) = constant {
        return Ok(vec![v]);
    }
    COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|(l, _)| *l != level) {
            let mut compressor = zstd::bulk::Compressor::new(level)?;
            compressor.set_parameter(zstd::zstd_safe::CParameter::MinMatch(MIN_MATCH))?;
            *c = Some((level, compressor));
        }
        c.as_mut().expect("a compressor").1.compress(decoded)
    })
}

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
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .doing(|| format!("opening {}", path.display()))?;
        let len = file.metadata().doing(|| format!("reading the size of {}", path.display()))?.len();
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

    /// Writes the summary and slice sections and the header, syncs, and publishes the table
    /// as `target`. Every block must be written.
    pub fn finish(
        self,
        layout: &Layout,
        meta: TableMeta,
        summary: &Summary,
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
        let summary = summary.encode();
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
