//! A compact table opened for reading: its header and block indexes checked on opening, each
//! block's checksum the first time it is decoded; classes, distance codes, the generator's
//! bitbases and the uncompressed format's value codes read from it.

use super::codec::{decompress, expand_constant, planes_at, BlockData, BYTE_MASKS};
use super::header::CompactHeader;
use super::part::{block_positions, n_blocks, Part, PartEntry, DTZ_BLOCK_BITS, INDEX_ENTRY_BYTES, WDL_BLOCK_BITS};
use super::slices::{decode_keys, decode_levels, LevelEntry};
use super::summary::{Summary, SUMMARY_BYTES};
use crate::chess::square::transpose;
use crate::chess::{Color, Material, Symmetry};
use crate::index::{illegal_word, Layout, StoredMen, StoredOrder};
use crate::table::cache::{block_key, BlockCache, BlockRef, Cached};
use crate::table::error::FormatError;
use crate::table::values::{
    code_to_distance, Class, CODE_CURSED, CODE_EDGE, CODE_ILLEGAL, CODE_LOST_UNMEASURED, CODE_NONE,
};
use crate::table::version::HEADER_LEN;
use crate::work::IoContext;
use byteorder::{ByteOrder, LittleEndian};
use memmap2::Mmap;
use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use xxhash_rust::xxh3::xxh3_64;

/// Source of unique ids, so that blocks of different open tables never share a cache key.
static NEXT_TABLE_ID: AtomicU32 = AtomicU32::new(1);

/// A compact table opened read-only and memory-mapped, its header and indexes checked.
pub struct CompactTable {
    pub path: PathBuf,
    pub header: CompactHeader,
    /// The run's layout: where a dropped twin's kept value lies.
    layout: Layout,
    map: Mmap,
    file: File,
    /// Per block section, one bit per block: its checksum was checked.
    checked: [Vec<AtomicU64>; 3],
    /// Per block section, each block's reference in block caches (constant value or buffer).
    refs: [Box<[BlockRef]>; 3],
    /// This open table's id in block caches.
    pub id: u32,
    /// The spans last put back into slot order, for readers that go through a table in
    /// slot order ([`CompactTable::block_into`]).
    spans: Mutex<VecDeque<(Part, usize, Arc<SpanCell>)>>,
}

/// A span of a section in slot order, decoded once by the first reader that asks for it
/// (the others wait for it).
type SpanCell = Mutex<Option<Arc<Vec<u8>>>>;

/// Spans kept in slot order per section: a reader going through a table in order, with a
/// few workers each a block or two apart, finds its span decoded (at 6 men a span of
/// distances is 128 MiB, of classes 32 MiB).
const KEPT_SPANS: usize = 2;

impl CompactTable {
    /// Opens a table: checks the header, the section table, the length, the block indexes'
    /// checksums and the small sections (not the blocks: each is checked when first decoded).
    pub fn open(path: &Path) -> Result<CompactTable, FormatError> {
        let file = File::open(path).doing(|| format!("opening {}", path.display()))?;
        // SAFETY: tables are published by rename and never modified in place afterwards.
        let map = unsafe { Mmap::map(&file) }.doing(|| format!("mapping {}", path.display()))?;
        // Probes read a few small blocks: a fault should read the pages it needs, not the
        // device's read-ahead around them (8 MiB on some machines); the header and the
        // indexes are asked for as wholes below.
        let _ = map.advise(memmap2::Advice::Random);
        let header_len = map.len().min(HEADER_LEN);
        let _ = map.advise_range(memmap2::Advice::WillNeed, 0, header_len);
        let header = CompactHeader::decode(path, &map[..header_len], map.len() as u64)?;
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
        let refs = std::array::from_fn(|i| {
            (0..n_blocks(Part::BLOCKED[i], header.n_slots)).map(|_| BlockRef::new(0)).collect()
        });
        let id = NEXT_TABLE_ID.fetch_add(1, Ordering::Relaxed);
        let spans = Mutex::new(VecDeque::new());
        let layout = Layout::new(&header.material);
        Ok(CompactTable { path: path.to_path_buf(), header, layout, map, file, checked, refs, id, spans })
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
        let out = decompress(packed, raw_len).map_err(|e| fail(e.to_string()))?;
        if out.len() != raw_len {
            return Err(fail(format!("{} bytes, expected {raw_len}", out.len())));
        }
        Ok(BlockData::Bytes(out))
    }

    /// Decodes stored block `i` into `out` (constant blocks expanded), read from the file, not
    /// through the map.
    fn stored_block_into(&self, part: Part, i: usize, out: &mut Vec<u8>) -> Result<(), FormatError> {
        let raw_len = part.raw_bytes(block_positions(part, self.header.n_slots, i));
        let mut buf = Vec::new();
        match self.decode(part, i, self.read_packed(part, i, &mut buf)?)? {
            BlockData::Bytes(b) => *out = b,
            BlockData::Constant(v) => expand_constant(part, v, raw_len, out),
        }
        Ok(())
    }

    /// The stored order of a block section (`None`: slot order).
    pub fn order(&self, part: Part) -> Option<&StoredOrder> {
        self.header.orders[part as usize].as_ref()
    }

    /// Whether readers in slot order go through spans: the section has a stored order, or
    /// dropped twins or identical men out of order to fill from their kept slots.
    fn by_spans(&self, part: Part) -> bool {
        self.order(part).is_some() || self.header.twins_dropped || self.header.identical_dropped
    }

    /// Positions of a span, as a power of two: the unit of the section's order or a block,
    /// whichever is larger, and with dropped twins at least the layout's largest unit, which
    /// holds both twins of each pair (a span is whole blocks and whole units).
    fn span_bits(&self, part: Part) -> u32 {
        let unit = self.order(part).map_or(0, |o| o.unit_bits);
        let twins = if self.header.twins_dropped { StoredOrder::max_unit_bits(&self.layout) } else { 0 };
        unit.max(twins).max(part.block_bits())
    }

    /// The decoded bytes of block `i` of a block section as if it were stored in slot order
    /// (constant blocks expanded), into `out`: for readers that go through a table in slot
    /// order, every dropped twin holding its kept twin's value. With a stored order or dropped
    /// twins, the span of the block is decoded, put back into slot order and its twins filled
    /// once, and kept while its neighbours are read.
    pub fn block_into(&self, part: Part, i: usize, out: &mut Vec<u8>) -> Result<(), FormatError> {
        if !self.by_spans(part) {
            return self.stored_block_into(part, i, out);
        }
        let (block_bits, span_bits) = (part.block_bits(), self.span_bits(part));
        let span = ((i as u64) << block_bits >> span_bits) as usize;
        let cell = {
            let mut spans = self.spans.lock().expect("span cache");
            match spans.iter().find(|(p, s, _)| *p == part && *s == span) {
                Some((_, _, cell)) => cell.clone(),
                None => {
                    let cell = Arc::new(SpanCell::default());
                    if spans.iter().filter(|(p, _, _)| *p == part).count() == KEPT_SPANS {
                        let oldest = spans.iter().position(|(p, _, _)| *p == part).expect("a span of the section");
                        spans.remove(oldest);
                    }
                    spans.push_back((part, span, cell.clone()));
                    cell
                }
            }
        };
        let bytes = {
            let mut slot = cell.lock().expect("span");
            match &*slot {
                Some(bytes) => bytes.clone(),
                None => {
                    let bytes = Arc::new(self.span_in_slot_order(part, span)?);
                    *slot = Some(bytes.clone());
                    bytes
                }
            }
        };
        let from = part.raw_bytes(((i as u64) << block_bits) - ((span as u64) << span_bits));
        let len = part.raw_bytes(block_positions(part, self.header.n_slots, i));
        out.clear();
        out.extend_from_slice(&bytes[from..from + len]);
        Ok(())
    }

    /// Span `span` of a block section, decoded and put back into slot order a block at a
    /// time (whole 64-position words move: the orders put the white king fastest), then its
    /// dropped twins filled from their kept twins.
    fn span_in_slot_order(&self, part: Part, span: usize) -> Result<Vec<u8>, FormatError> {
        let (block_bits, span_bits) = (part.block_bits(), self.span_bits(part));
        let first_slot = (span as u64) << span_bits;
        let positions = (1u64 << span_bits).min(self.header.n_slots - first_slot);
        let n_words = (positions / 64) as usize;
        let first_block = (first_slot >> block_bits) as usize;
        let end_block = (first_slot + positions).div_ceil(1 << block_bits) as usize;
        let slot_word = self.order(part).map(|o| o.slot_words(first_slot, n_words));
        let word_bytes = part.raw_bytes(64);
        let mut out = vec![0u8; part.raw_bytes(positions)];
        let mut block = Vec::new();
        let mut stored_word = 0;
        for j in first_block..end_block {
            self.stored_block_into(part, j, &mut block)?;
            for word in block.chunks_exact(word_bytes) {
                let to = word_bytes * slot_word.as_ref().map_or(stored_word, |s| s[stored_word] as usize);
                out[to..to + word_bytes].copy_from_slice(word);
                stored_word += 1;
            }
        }
        if self.header.twins_dropped {
            fill_twins(&self.layout, part, first_slot / 64, &mut out);
        }
        if self.header.identical_dropped {
            self.fill_identical(part, first_slot / 64, &mut out)?;
        }
        Ok(out)
    }

    /// Gives every word of `words` (a span in slot order from storage word `first_word`, its
    /// twins filled) whose identical men are out of order the values of its kept word
    /// ([`Layout::identical_partner`]: the same white-king lanes). A kept word inside the
    /// span is copied as filled; one outside it (another unit) is read from its stored
    /// block, a block decoded once for all the words it holds, and then the lanes that are
    /// its own dropped transposed twins are taken from the copy of its twin word, which is
    /// the twin word of the word filled (swapping men and transposing commute).
    fn fill_identical(&self, part: Part, first_word: u64, words: &mut [u8]) -> Result<(), FormatError> {
        let word_bytes = part.raw_bytes(64);
        let n_words = words.len() / word_bytes;
        let span = first_word..first_word + n_words as u64;
        // (stored word of the kept word, word filled, kept word) of kept words outside.
        let mut outside = Vec::new();
        let mut inside = Vec::new();
        self.layout.for_each_identical(first_word, n_words, |w, kept| {
            if span.contains(&kept) {
                inside.push((w, (kept - first_word) as usize));
            } else {
                outside.push((self.stored(part, kept * 64, None) / 64, w, kept));
            }
        });
        for (w, from) in inside {
            words.copy_within(from * word_bytes..(from + 1) * word_bytes, w * word_bytes);
        }
        outside.sort_unstable();
        let block_word_bits = part.block_bits() - 6;
        let (mut block, mut decoded) = (Vec::new(), None);
        for &(stored_word, w, _) in &outside {
            let b = (stored_word >> block_word_bits) as usize;
            if decoded != Some(b) {
                self.stored_block_into(part, b, &mut block)?;
                decoded = Some(b);
            }
            let from = (stored_word & ((1 << block_word_bits) - 1)) as usize * word_bytes;
            words[w * word_bytes..(w + 1) * word_bytes].copy_from_slice(&block[from..from + word_bytes]);
        }
        for &(_, w, kept) in &outside {
            if let Some(twin) = self.layout.transposed_twin(kept).filter(|t| t.dropped != 0) {
                let own_twin = self.layout.transposed_twin(first_word + w as u64).expect("the same black king");
                fill_twin_lanes(part, words, w, (own_twin.word - first_word) as usize, twin.dropped);
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

    /// The words of a side's final bitbases as the generator's conversions read them, in
    /// storage order, `each(rule, eventual)` per word: with white to move, positions white
    /// wins (under the 50-move rule; eventually: with or without it) and every illegal one;
    /// with black to move, positions black loses (under the rule; eventually), illegal ones
    /// clear. One decoding serves both bitbases (a cursed sub-endgame's conversions read
    /// both). Illegal positions are found from the layout (`index::illegal_word`), as the
    /// init passes mark them.
    pub fn bitbase_words(
        &self,
        stm: Color,
        each: &mut dyn FnMut(u64, u64) -> std::io::Result<()>,
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
                let illegal = illegal_word(&layout, first + w, stm);
                let (rule, eventual) = match stm {
                    Color::White => ((lo & !hi) | illegal, lo | hi | illegal),
                    Color::Black => (lo & !hi & !illegal, (lo | hi) & !illegal),
                };
                each(rule, eventual).doing(|| format!("storing the bitbase of {}", self.path.display()))?;
            }
        }
        Ok(())
    }

    /// The black-to-move summary.
    pub fn summary(&self) -> Summary {
        Summary::decode(self.part_bytes(Part::Summary))
    }

    /// The white-to-move summary (version 6, whose distance section does not store every
    /// win's distance); `None` before.
    pub fn wtm_summary(&self) -> Option<Summary> {
        let at = SUMMARY_BYTES as usize;
        self.header.zeroing_dont_cares.then(|| Summary::decode(&self.part_bytes(Part::Summary)[at..]))
    }

    /// The slice section's level records (empty without pawns).
    pub fn levels(&self) -> Vec<LevelEntry> {
        let Some(info) = &self.header.slices else { return Vec::new() };
        decode_levels(self.part_bytes(Part::Slices), info.n_slices as usize, info.n_levels as usize)
    }

    /// The slices' keys (empty without pawns).
    pub fn slice_keys(&self) -> Vec<u32> {
        let Some(info) = &self.header.slices else { return Vec::new() };
        decode_keys(self.part_bytes(Part::Slices), info.n_slices as usize)
    }

    /// The value codes of words `first..first + n` of a side to move, 64 per word, in the
    /// codes of the uncompressed format (`docs/FORMAT.md`, versions 1 and 2): 63 for an
    /// illegal position (found from `layout`, this table's; with `None`, illegal positions
    /// keep the code of their stored class, for readers that never read one), a wtm win's
    /// distance code, 52 (51) for a cursed class, 0 otherwise, and
    /// [`CODE_LOST_UNMEASURED`] for a btm loss, whose distance is not stored. The words must
    /// lie in one block of the class section. In version 6 a wtm win by a zeroing move (1
    /// ply) reads as whatever win's code its byte holds, or 1 where it holds none: the
    /// distances of those need a search (`stats` takes them from the summary, `verify`
    /// derives them from the bytes as stored: [`CompactTable::read_stored_wtm`]).
    pub fn read_codes(
        &self,
        layout: Option<&Layout>,
        stm: Color,
        first: usize,
        n: usize,
        out: &mut Vec<[u8; 64]>,
    ) -> Result<(), FormatError> {
        self.read_codes_into(layout, stm, first, n, out, None)
    }

    /// White's codes of words `first..first + n` as [`CompactTable::read_codes`] gives them,
    /// but every win's byte as stored (in version 6 a don't-care at a win by a zeroing move),
    /// and into `wins` (cleared first) each word's legal lanes of class 1, which those bytes
    /// cannot tell.
    pub fn read_stored_wtm(
        &self,
        layout: &Layout,
        first: usize,
        n: usize,
        out: &mut Vec<[u8; 64]>,
        wins: &mut Vec<u64>,
    ) -> Result<(), FormatError> {
        self.read_codes_into(Some(layout), Color::White, first, n, out, Some(wins))
    }

    /// [`CompactTable::read_codes`]; with `wins`, the stored bytes and the class-1 lanes
    /// ([`CompactTable::read_stored_wtm`]).
    fn read_codes_into(
        &self,
        layout: Option<&Layout>,
        stm: Color,
        first: usize,
        n: usize,
        out: &mut Vec<[u8; 64]>,
        mut wins_out: Option<&mut Vec<u64>>,
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
        out.reserve(n);
        let lost = [CODE_LOST_UNMEASURED; 64];
        let mut resolved = [0u8; 64];
        if let Some(w) = wins_out.as_deref_mut() {
            w.clear();
        }
        for w in 0..n {
            let illegal = layout.map_or(0, |layout| illegal_word(layout, (first + w) as u64, stm));
            let [lo, hi] = planes_at(&classes, first % per_wdl + w);
            let wins: &[u8; 64] = match stm {
                Color::White => dtz[64 * (dtz_first + w)..][..64].try_into().expect("64 codes"),
                Color::Black => &lost,
            };
            if let Some(w) = wins_out.as_deref_mut() {
                w.push(lo & !hi & !illegal);
            }
            let wins = if stm == Color::White && self.header.zeroing_dont_cares && wins_out.is_none() {
                for (r, &c) in resolved.iter_mut().zip(wins) {
                    *r = if code_to_distance(Color::White, c).is_some_and(|d| d > 0) { c } else { 1 };
                }
                &resolved
            } else {
                wins
            };
            out.push(word_codes(lo, hi, illegal, wins));
        }
        Ok(())
    }

    /// Words `first..first + N` of block `i` of a section (8 bytes each, little-endian), or
    /// the value of a constant block, through `cache`.
    #[inline]
    pub fn cached_block<const N: usize>(
        &self,
        part: Part,
        i: usize,
        first: usize,
        cache: &BlockCache,
    ) -> Result<Cached<N>, FormatError> {
        cache.words(block_key(self.id, part, i), &self.refs[part as usize][i], first, || self.block(part, i))
    }

    /// The class of a slot, through `cache` (constant blocks need none).
    #[inline]
    pub fn class(&self, stm: Color, slot: u64, cache: &BlockCache) -> Result<Class, FormatError> {
        self.class_of_kept(stm, self.kept(slot), None, cache)
    }

    /// The slot that holds a slot's value: its kept twin in a format 5 table, of the slot with
    /// its identical men sorted in format 7.
    #[inline]
    fn kept(&self, slot: u64) -> u64 {
        if self.header.twins_dropped || self.header.identical_dropped {
            self.layout.kept_slot(slot, self.header.identical_dropped)
        } else {
            slot
        }
    }

    /// Where a slot lies in a section's stored order; `men` are its men as the slot holds
    /// them, if the caller has them (a probe: the order need not decode the slot).
    #[inline]
    fn stored(&self, part: Part, slot: u64, men: Option<&StoredMen>) -> u64 {
        match (self.order(part), men) {
            (None, _) => slot,
            (Some(o), Some(m)) => o.stored_of_men(slot, &m.pieces, m.wk, m.bk),
            (Some(o), None) => o.stored(slot),
        }
    }

    /// [`CompactTable::class`] of a slot known to be kept (probes find it from the men:
    /// [`Layout::kept_canonical_men`]), whose men are `men` if given.
    #[inline]
    pub fn class_of_kept(
        &self,
        stm: Color,
        slot: u64,
        men: Option<&StoredMen>,
        cache: &BlockCache,
    ) -> Result<Class, FormatError> {
        let part = Part::wdl(stm);
        let slot = self.stored(part, slot, men);
        let (i, p) = ((slot >> WDL_BLOCK_BITS) as usize, slot & ((1 << WDL_BLOCK_BITS) - 1));
        Ok(match self.cached_block::<2>(part, i, 2 * (p >> 6) as usize, cache)? {
            Cached::Constant(v) => Class::from_bits(v),
            Cached::Words([lo, hi]) => Class::of_planes(lo, hi, p & 63),
        })
    }

    /// The wtm distance code of a slot (meaningful where its class is a win), through `cache`.
    #[inline]
    pub fn dtz_code(&self, slot: u64, cache: &BlockCache) -> Result<u8, FormatError> {
        self.dtz_code_of_kept(self.kept(slot), None, cache)
    }

    /// Where a kept slot's distance code lies in the distance section's stored order (`men`:
    /// its men, if the caller has them): what [`CompactTable::dtz_code_at`] and
    /// [`CompactTable::prefetch_dtz`] take.
    #[inline]
    pub fn dtz_stored(&self, slot: u64, men: Option<&StoredMen>) -> u64 {
        self.stored(Part::WtmDtz, slot, men)
    }

    /// Fetches the word holding the distance code at stored position `stored` into the
    /// processor's caches, if its block is in `cache` (a hint: see [`BlockCache::prefetch`]).
    #[inline]
    pub fn prefetch_dtz(&self, stored: u64, cache: &BlockCache) {
        let (i, p) = dtz_block_of(stored);
        cache.prefetch(&self.refs[Part::WtmDtz as usize][i], (p >> 3) as usize);
    }

    /// The distance code at stored position `stored` ([`CompactTable::dtz_stored`]), through
    /// `cache`.
    #[inline]
    pub fn dtz_code_at(&self, stored: u64, cache: &BlockCache) -> Result<u8, FormatError> {
        let (i, p) = dtz_block_of(stored);
        Ok(match self.cached_block::<1>(Part::WtmDtz, i, (p >> 3) as usize, cache)? {
            Cached::Constant(v) => v,
            Cached::Words([w]) => (w >> (8 * (p & 7))) as u8,
        })
    }

    /// [`CompactTable::dtz_code`] of a slot known to be kept, whose men are `men` if given.
    #[inline]
    pub fn dtz_code_of_kept(&self, slot: u64, men: Option<&StoredMen>, cache: &BlockCache) -> Result<u8, FormatError> {
        self.dtz_code_at(self.dtz_stored(slot, men), cache)
    }
}

/// The distance block holding stored position `stored`, and the position within it.
#[inline]
fn dtz_block_of(stored: u64) -> (usize, u64) {
    ((stored >> DTZ_BLOCK_BITS) as usize, stored & ((1 << DTZ_BLOCK_BITS) - 1))
}

/// Gives every dropped transposed twin of `words` (a section's decoded bytes in slot order,
/// whole units from storage word `first_word`) its kept twin's value. Kept twins are never
/// dropped ones, so the words are filled in place.
fn fill_twins(layout: &Layout, part: Part, first_word: u64, words: &mut [u8]) {
    layout.for_each_twin(first_word, words.len() / part.raw_bytes(64), |w, twin| {
        if twin.dropped != 0 {
            fill_twin_lanes(part, words, w, (twin.word - first_word) as usize, twin.dropped);
        }
    });
}

/// Gives lanes `dropped` of word `at` of `words` (a section's decoded bytes) the values of
/// their transposed lanes in word `from`.
fn fill_twin_lanes(part: Part, words: &mut [u8], at: usize, from: usize, dropped: u64) {
    let word_bytes = part.raw_bytes(64);
    let (at, from) = (at * word_bytes, from * word_bytes);
    if part == Part::WtmDtz {
        for lane in (0..64u8).filter(|l| dropped >> l & 1 != 0) {
            words[at + lane as usize] = words[from + Symmetry::TRANSPOSE.apply(lane) as usize];
        }
        return;
    }
    for plane in 0..2 {
        let (at, from) = (at + 8 * plane, from + 8 * plane);
        let image = transpose(LittleEndian::read_u64(&words[from..from + 8]));
        let own = LittleEndian::read_u64(&words[at..at + 8]);
        LittleEndian::write_u64(&mut words[at..at + 8], own & !dropped | image & dropped);
    }
}

/// The 64 codes of one word: `wins[b]` where lane `b` is a win, [`CODE_CURSED`] or
/// [`CODE_EDGE`] for those classes, [`CODE_NONE`] otherwise, and [`CODE_ILLEGAL`] wherever
/// `illegal` has a bit. Eight lanes at a time through byte masks: no branch per lane (the
/// verifier decodes every stored position this way).
#[inline]
fn word_codes(lo: u64, hi: u64, illegal: u64, wins: &[u8; 64]) -> [u8; 64] {
    let (win, cursed, edge) = (lo & !hi, !lo & hi, lo & hi);
    let splat = |code: u8| u64::from_ne_bytes([code; 8]);
    let mut out = [0u8; 64];
    for (g, (dst, src)) in out.chunks_exact_mut(8).zip(wins.chunks_exact(8)).enumerate() {
        let lanes = |mask: u64| BYTE_MASKS[(mask >> (8 * g)) as u8 as usize];
        let stored = u64::from_ne_bytes(src.try_into().expect("8 codes"));
        // Lanes of no class keep 0, which is CODE_NONE.
        let codes = (stored & lanes(win)) | (splat(CODE_CURSED) & lanes(cursed)) | (splat(CODE_EDGE) & lanes(edge));
        let illegal = lanes(illegal);
        dst.copy_from_slice(&((codes & !illegal) | (splat(CODE_ILLEGAL) & illegal)).to_ne_bytes());
    }
    out
}

const _: () = assert!(CODE_NONE == 0, "word_codes leaves the lanes of no class at 0");

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-mask assembly gives each lane the code its class and legality say.
    #[test]
    fn word_codes_match_the_lane_by_lane_codes() {
        let mut rng = crate::test_rng::Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng.next();
        for _ in 0..2000 {
            let (lo, hi, illegal) = (next(), next(), next() & next());
            let wins: [u8; 64] = std::array::from_fn(|b| (next() % 51) as u8 + (b % 2) as u8);
            let codes = word_codes(lo, hi, illegal, &wins);
            for b in 0..64 {
                let expected = if illegal >> b & 1 != 0 {
                    CODE_ILLEGAL
                } else {
                    match Class::of_planes(lo, hi, b as u64) {
                        Class::NotWon => CODE_NONE,
                        Class::Win => wins[b],
                        Class::Cursed => CODE_CURSED,
                        Class::Edge => CODE_EDGE,
                    }
                };
                assert_eq!(codes[b], expected, "lane {b} of lo {lo:#x} hi {hi:#x} illegal {illegal:#x}");
            }
        }
    }
}
