//! The header of a compact table (`docs/FORMAT.md`, Part I): the run, its last step and
//! flags, the codec and block sizes, and where its five sections lie with their checksums.

use super::part::{align8, n_blocks, Part, PartEntry, DTZ_BLOCK_BITS, INDEX_ENTRY_BYTES, WDL_BLOCK_BITS};
use super::slices::LEVEL_BYTES;
use super::summary::summary_bytes;
use crate::chess::Material;
use crate::index::{Layout, StoredOrder, ORDER_RECORD_BYTES};
use crate::table::error::FormatError;
use crate::table::header::{check_header_sum, header_signature, header_version, SliceInfo};
use crate::table::version::{
    HEADER_LEN, MAGIC, VERSION_COMPACT, VERSION_COMPACT_ORDERS, VERSION_COMPACT_SLOT_ORDER, VERSION_COMPACT_TWINS,
    VERSION_COMPACT_ZEROING, VERSION_UNCOMPRESSED, VERSION_UNCOMPRESSED_PAWNS,
};
use byteorder::{ByteOrder, LittleEndian};
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// Codec id of zstd frames.
pub const CODEC_ZSTD: u8 = 1;

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
    /// Per block section, its stored order (`None`: slot order, as in every version 3 table).
    pub orders: [Option<StoredOrder>; 3],
    /// The larger slot of each pair of transposed twins is a don't-care (versions 5 to 7,
    /// runs without pawns): readers go to the smaller (`Layout::kept_slot`).
    pub twins_dropped: bool,
    /// The distance section may hold anything at a won position whose side to move has a
    /// winning zeroing move (versions 6 and 7): its distance is 1 ply, found by searching those
    /// moves into the sub-endgames (and, with pawns, this run's other slices). The summary
    /// holds white's distance histogram too.
    pub zeroing_dont_cares: bool,
    /// Slots whose identical men have H digits out of order are don't-cares (version 7, runs
    /// with identical pieces): readers go to the slot with them sorted
    /// (`Layout::identical_partner`).
    pub identical_dropped: bool,
}

/// Where the block sections' order records lie in the header (version 4).
const ORDERS_AT: usize = 172;

fn slices_len(slices: Option<&SliceInfo>) -> u64 {
    slices.map_or(0, |s| 4 * s.n_slices as u64 + LEVEL_BYTES * s.n_levels as u64)
}

impl CompactHeader {
    pub(super) fn encode(&self) -> [u8; HEADER_LEN] {
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
        for (k, order) in self.orders.iter().enumerate() {
            h[ORDERS_AT + ORDER_RECORD_BYTES * k..][..ORDER_RECORD_BYTES]
                .copy_from_slice(&StoredOrder::record(order.as_ref()));
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
        if version == VERSION_UNCOMPRESSED || version == VERSION_UNCOMPRESSED_PAWNS {
            return Err(FormatError::OldFormat { path: path.to_path_buf(), version });
        }
        if ![
            VERSION_COMPACT,
            VERSION_COMPACT_ZEROING,
            VERSION_COMPACT_TWINS,
            VERSION_COMPACT_ORDERS,
            VERSION_COMPACT_SLOT_ORDER,
        ]
        .contains(&version)
        {
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
                Part::Summary => summary_bytes(version >= VERSION_COMPACT_ZEROING),
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
        let mut orders = [None, None, None];
        if version != VERSION_COMPACT_SLOT_ORDER {
            for (k, part) in Part::BLOCKED.into_iter().enumerate() {
                let record =
                    h[ORDERS_AT + ORDER_RECORD_BYTES * k..][..ORDER_RECORD_BYTES].try_into().expect("a record");
                orders[k] = StoredOrder::from_record(&layout, &record)
                    .map_err(|why| bad(&format!("order of {part:?}: {why}")))?;
            }
        }
        let twins_dropped = version >= VERSION_COMPACT_TWINS && !material.has_pawns();
        let zeroing_dont_cares = version >= VERSION_COMPACT_ZEROING;
        let identical_dropped = version >= VERSION_COMPACT && layout.has_identical_men();
        Ok(CompactHeader {
            material,
            n_slots,
            meta,
            parts,
            slices,
            orders,
            twins_dropped,
            zeroing_dont_cares,
            identical_dropped,
        })
    }
}
