//! Job and run manifests: small checksummed JSON files, replaced atomically, that record
//! what a job builds and which passes of a run are finished.

use super::error::{IoContext, StorageError};
use super::publish::{write_with, Durability};
use crate::solve::Pass;
use serde::{Deserialize, Serialize};
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// Version of the manifest files (2: runs are solved level by level; 3: the even chain
/// holds `t(k) | !d` and every other step defers its table, so that the tables of a
/// format-2 folder cannot be resumed; 4: the bit tables' blocks are stored compressed, each
/// in a slot of its own).
pub const MANIFEST_FORMAT: u32 = 4;

/// The job a work folder belongs to.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct JobManifest {
    pub format: u32,
    /// The signatures given to `gen` (normalised, sorted).
    pub signatures: Vec<String>,
    /// Output folder of the job.
    pub out: String,
}

/// One finished pass of a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PassDone {
    /// Written as a number: -1 = init (white chunks), 0 = init (black chunks, `t0`), k = step k.
    pub pass: Pass,
    /// New positions of the pass.
    pub new: u64,
    pub secs: f64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Bytes of the pass's gap-encoded streams (all chunks, also those of an earlier process).
    #[serde(default)]
    pub stream_bytes: u64,
}

/// A solved level of a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LevelDone {
    pub level: u8,
    /// Its passes.
    pub passes: Vec<PassDone>,
    /// Seconds, bytes read and bytes written of its merge.
    pub merge_secs: f64,
    pub merge_bytes_read: u64,
    pub merge_bytes_written: u64,
}

/// Progress of one run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunManifest {
    pub format: u32,
    pub run: String,
    /// log2 of the positions of a storage block; fixed for the whole run.
    pub block_bits: u32,
    /// The most fixed bits of a chunk key, when the job limited them (fewer, larger
    /// chunks); fixed for the whole run. Absent: as many as the index allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_fixed_bits: Option<u32>,
    /// The levels solved, in order.
    pub levels: Vec<LevelDone>,
    /// The finished passes of the level in progress (the first level not in `levels`).
    pub passes: Vec<PassDone>,
    /// Whether the level in progress is eventual (its conversions reach cursed positions:
    /// its chains go on at least to step 104); recorded for `status`.
    #[serde(default)]
    pub eventual: bool,
}

/// The new positions of each finished pass, as the chain logic wants them.
pub fn new_per_pass(passes: &[PassDone]) -> Vec<(Pass, u64)> {
    passes.iter().map(|p| (p.pass, p.new)).collect()
}

/// Writes a manifest as `JSON\nxxh3:<hex>\n`, atomically and durably.
pub fn save<T: Serialize>(path: &Path, value: &T) -> Result<(), StorageError> {
    save_with(path, value, Durability::Durable)
}

/// Writes a manifest, durably if `durability` asks (after every pass it need not be: a resume
/// checks the passes' files).
pub fn save_with<T: Serialize>(path: &Path, value: &T, durability: Durability) -> Result<(), StorageError> {
    let json = serde_json::to_string_pretty(value).expect("manifests serialise");
    let text = format!("{json}\nxxh3:{:016x}\n", xxh3_64(json.as_bytes()));
    write_with(path, text.as_bytes(), durability)
}

/// Reads a manifest written by [`save`]; `None` if the file does not exist.
pub fn load<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, StorageError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).doing(|| format!("reading {}", path.display())),
    };
    let damaged =
        || StorageError::Damaged { path: path.to_path_buf(), what: "manifest is damaged (checksum mismatch)".into() };
    let (json, tail) = text.trim_end().rsplit_once('\n').ok_or_else(damaged)?;
    let sum = tail.strip_prefix("xxh3:").and_then(|h| u64::from_str_radix(h, 16).ok()).ok_or_else(damaged)?;
    if xxh3_64(json.as_bytes()) != sum {
        return Err(damaged());
    }
    let parse = |cause| StorageError::Parse { path: path.to_path_buf(), cause };
    let v: serde_json::Value = serde_json::from_str(json).map_err(parse)?;
    let format = v.get("format").and_then(|f| f.as_u64()).unwrap_or(0);
    if format != MANIFEST_FORMAT as u64 {
        return Err(StorageError::Damaged {
            path: path.to_path_buf(),
            what: format!("manifest format {format} is not supported (this build writes {MANIFEST_FORMAT})"),
        });
    }
    Ok(Some(serde_json::from_value(v).map_err(parse)?))
}
