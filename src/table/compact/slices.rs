//! The slice section of a compact table of a run with pawns: the slices' keys in storage
//! order, then a record per level.

use crate::index::Layout;
use byteorder::{ByteOrder, LittleEndian};

/// Bytes of one level's record in the slice section.
pub const LEVEL_BYTES: u64 = 16;

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

/// The level records of a slice section's bytes (`n_slices` keys, then `n_levels` records).
pub fn decode_levels(bytes: &[u8], n_slices: usize, n_levels: usize) -> Vec<LevelEntry> {
    let at = 4 * n_slices;
    (0..n_levels)
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

/// The slices' keys of a slice section's bytes.
pub fn decode_keys(bytes: &[u8], n_slices: usize) -> Vec<u32> {
    bytes[..4 * n_slices].chunks_exact(4).map(LittleEndian::read_u32).collect()
}
