//! The header of an uncompressed table (`docs/FORMAT.md`, Part II): which run, its last
//! step and flags, and where its sections lie with their checksums.

use super::sections::{layout_sections, SectionEntry};
use crate::chess::Material;
use crate::index::Layout;
use crate::table::error::FormatError;
use crate::table::header::{check_header_sum, header_signature, header_version, SliceInfo};
use crate::table::version::{HEADER_LEN, MAGIC, VERSION_UNCOMPRESSED, VERSION_UNCOMPRESSED_PAWNS};
use byteorder::{ByteOrder, LittleEndian};
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// Layout id of the Koistinen interleaved index (see `index/mod.rs`).
pub const LAYOUT_KOISTINEN_V1: u8 = 1;
/// Layout id of the index with pawn slices.
pub const LAYOUT_PAWN_SLICES: u8 = 2;

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

    pub(super) fn encode(&self) -> [u8; HEADER_LEN] {
        type Le = LittleEndian;
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        Le::write_u16(
            &mut h[8..10],
            if self.slices.is_some() { VERSION_UNCOMPRESSED_PAWNS } else { VERSION_UNCOMPRESSED },
        );
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

    pub(super) fn decode(path: &Path, h: &[u8]) -> Result<Header, FormatError> {
        let bad = |why: &str| FormatError::Inconsistent(path.to_path_buf(), why.to_string());
        let version = header_version(path, h)?;
        if version != VERSION_UNCOMPRESSED && version != VERSION_UNCOMPRESSED_PAWNS {
            return Err(FormatError::Version(path.to_path_buf(), version));
        }
        check_header_sum(path, h)?;
        let u64_at = |o: usize| LittleEndian::read_u64(&h[o..o + 8]);
        let layout_id = if version == VERSION_UNCOMPRESSED { LAYOUT_KOISTINEN_V1 } else { LAYOUT_PAWN_SLICES };
        if h[12] != layout_id || LittleEndian::read_u16(&h[10..12]) as usize != HEADER_LEN {
            return Err(bad("unknown layout or header length"));
        }
        let material = header_signature(path, h)?;
        if material.white_bare() || material.has_pawns() != (version == VERSION_UNCOMPRESSED_PAWNS) {
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
