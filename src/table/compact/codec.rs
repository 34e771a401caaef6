//! The stored bytes of a block and what they decode to: one byte for a block whose positions
//! all hold one value, else a zstd frame; decoded class data is two bit planes per word.

use super::part::{Part, WDL_WORD_BYTES};
use crate::table::values::Class;
use byteorder::{ByteOrder, LittleEndian};

/// The zstd compression level of new tables (measured in docs/BENCHMARKS.md: with
/// [`MIN_MATCH`], level 8 writes KQRvKR 1% smaller than plain level 9 and 25% faster; within
/// 0.3% on KQRvKQR).
pub const DEFAULT_ZSTD_LEVEL: i32 = 8;
/// zstd's shortest match, set at every level: the tables' repeats are long, and 6 instead of
/// zstd's 4 or 5 gave smaller blocks in less time at levels 3 to 12 (docs/BENCHMARKS.md).
pub const MIN_MATCH: u32 = 6;

/// A decoded block: every position holds one value, or the decoded bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockData {
    Constant(u8),
    Bytes(Vec<u8>),
}

thread_local! {
    /// One zstd decoding context per thread, reused by every block it decodes.
    static DECOMPRESSOR: std::cell::RefCell<zstd::bulk::Decompressor<'static>> =
        std::cell::RefCell::new(zstd::bulk::Decompressor::new().expect("a zstd decoding context"));
}

/// Decodes a zstd frame of at most `raw_len` bytes (into fresh capacity, not zeroed first).
pub fn decompress(packed: &[u8], raw_len: usize) -> std::io::Result<Vec<u8>> {
    DECOMPRESSOR.with(|d| d.borrow_mut().decompress(packed, raw_len))
}

/// The `raw_len` decoded bytes of a constant block of `part` whose positions all hold `value`
/// (a distance code, or a class spread over the two bit planes), into `out`.
pub fn expand_constant(part: Part, value: u8, raw_len: usize, out: &mut Vec<u8>) {
    out.clear();
    if part == Part::WtmDtz {
        out.resize(raw_len, value);
        return;
    }
    let all_if = |bit: u8| if value & bit != 0 { !0u64 } else { 0 };
    let planes = [all_if(1), all_if(2)];
    out.reserve(raw_len);
    for _ in 0..raw_len / WDL_WORD_BYTES {
        out.extend_from_slice(&planes[0].to_le_bytes());
        out.extend_from_slice(&planes[1].to_le_bytes());
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
pub fn class_at(data: &[u8], p: u64) -> Class {
    let [lo, hi] = planes_at(data, (p >> 6) as usize);
    Class::of_planes(lo, hi, p & 63)
}

thread_local! {
    /// One zstd encoding context per thread and level, reused by every block it compresses.
    static COMPRESSOR: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
}

/// The stored bytes of one block: one byte for a block whose positions all hold one value,
/// else a zstd frame of its decoded bytes (`zstd_level` 1 to 22).
pub fn pack_block(decoded: &[u8], constant: Option<u8>, zstd_level: i32) -> std::io::Result<Vec<u8>> {
    if let Some(v) = constant {
        return Ok(vec![v]);
    }
    COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|(l, _)| *l != zstd_level) {
            let mut compressor = zstd::bulk::Compressor::new(zstd_level)?;
            compressor.set_parameter(zstd::zstd_safe::CParameter::MinMatch(MIN_MATCH))?;
            *c = Some((zstd_level, compressor));
        }
        c.as_mut().expect("a compressor").1.compress(decoded)
    })
}

/// For each byte value, the eight bytes that are 0xff where it has a bit (bit `i` to the
/// byte at memory offset `i`, native order).
pub static BYTE_MASKS: [u64; 256] = {
    let mut masks = [0u64; 256];
    let mut v = 0;
    while v < 256 {
        let mut bytes = [0u8; 8];
        let mut i = 0;
        while i < 8 {
            if v >> i & 1 != 0 {
                bytes[i] = 0xff;
            }
            i += 1;
        }
        masks[v] = u64::from_ne_bytes(bytes);
        v += 1;
    }
    masks
};
