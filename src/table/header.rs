//! What the header of every format version holds in the same place: the magic and the
//! version, the run's name, the checksum of the first 248 bytes; and the description of a run's
//! pawn slices that both formats store.

use super::error::FormatError;
use super::version::{HEADER_LEN, MAGIC};
use crate::chess::Material;
use crate::index::Layout;
use byteorder::{ByteOrder, LittleEndian};
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

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
