//! The sections of an uncompressed table and where they lie: two bitbases, two value
//! sections of 6-bit codes packed in bit planes, and with pawns the slice section.

use crate::chess::Color;
use crate::index::Layout;
use crate::table::header::SliceInfo;
use byteorder::{ByteOrder, LittleEndian};

/// Bytes of one level's record in the slice section.
pub const LEVEL_RECORD_BYTES: u64 = 48;
/// Bytes of the 6 bit planes of one word of values.
pub const VALUE_WORD_BYTES: u64 = 48;
/// Section alignment in the file.
const ALIGN: u64 = 4096;

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

/// Where a section lies and its checksum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SectionEntry {
    pub offset: u64,
    pub length: u64,
    pub checksum: u64,
}

fn section_lengths(n_slots: u64, slices: Option<&SliceInfo>) -> Vec<u64> {
    let words = n_slots / 64;
    let mut v = vec![words * 8, words * 8, words * VALUE_WORD_BYTES, words * VALUE_WORD_BYTES];
    if let Some(s) = slices {
        v.push(4 * s.n_slices as u64 + LEVEL_RECORD_BYTES * s.n_levels as u64);
    }
    v
}

pub(super) fn layout_sections(n_slots: u64, slices: Option<&SliceInfo>) -> Vec<SectionEntry> {
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
