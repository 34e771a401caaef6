//! The summary section of a compact table: the black-to-move distances, which the class
//! section does not store, as a histogram and the slot of a longest loss; in version 6 the
//! white-to-move distances the same way after them (the distance section does not store a
//! win by a zeroing move).

use crate::table::values::MAX_DISTANCE;
use byteorder::{ByteOrder, LittleEndian};

/// Distances in plies run from 0 to [`MAX_DISTANCE`]: the summary holds a count for each.
pub const SUMMARY_DISTANCES: usize = MAX_DISTANCE + 1;
/// Bytes of one side to move's summary: the counts, then the slot of a longest distance.
pub const SUMMARY_BYTES: u64 = 8 * (SUMMARY_DISTANCES as u64 + 1);

/// Bytes of the summary section: black's, and `with_wtm` (version 6) white's after it.
pub fn summary_bytes(with_wtm: bool) -> u64 {
    if with_wtm {
        2 * SUMMARY_BYTES
    } else {
        SUMMARY_BYTES
    }
}

/// The distances of one side to move of a run: a count of positions per distance in plies
/// (positions counted once up to symmetry, as `stats` counts them), and the slot of a
/// longest one (the first counted in storage order).
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

    /// The longest distance with a count, in plies (0 if none).
    pub fn longest_distance(&self) -> u8 {
        self.by_distance.iter().rposition(|&n| n > 0).unwrap_or(0) as u8
    }

    /// A side's summary from its [`SUMMARY_BYTES`] bytes.
    pub(super) fn decode(bytes: &[u8]) -> Summary {
        let mut by_distance = [0u64; SUMMARY_DISTANCES];
        LittleEndian::read_u64_into(&bytes[..8 * SUMMARY_DISTANCES], &mut by_distance);
        let slot = LittleEndian::read_u64(&bytes[8 * SUMMARY_DISTANCES..]);
        Summary { by_distance, longest_slot: (slot != u64::MAX).then_some(slot) }
    }
}
