//! Job and run manifests: small checksummed JSON files, replaced atomically, that record
//! what a job builds and which passes of a run are finished.

use crate::store::write_atomic;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// Version of the manifest files.
pub const MANIFEST_FORMAT: u32 = 1;

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
    /// -1 = init (white chunks), 0 = init (black chunks, `t0`), k = step k.
    pub pass: i32,
    /// New positions of the pass.
    pub new: u64,
    pub secs: f64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Bytes of the pass's gap-encoded streams (all chunks, also those of an earlier process).
    #[serde(default)]
    pub stream_bytes: u64,
}

/// Progress of one run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunManifest {
    pub format: u32,
    pub run: String,
    /// log2 of the positions of a storage block; fixed for the whole run.
    pub block_bits: u32,
    pub passes: Vec<PassDone>,
}

/// Writes a manifest as `JSON\nxxh3:<hex>\n`, atomically.
pub fn save<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(value)?;
    let text = format!("{json}\nxxh3:{:016x}\n", xxh3_64(json.as_bytes()));
    write_atomic(path, text.as_bytes())
}

/// Reads a manifest written by [`save`]; `None` if the file does not exist.
pub fn load<T: for<'de> Deserialize<'de>>(path: &Path) -> anyhow::Result<Option<T>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let damaged = || anyhow::anyhow!("{}: manifest is damaged (checksum mismatch)", path.display());
    let (json, tail) = text.trim_end().rsplit_once('\n').ok_or_else(damaged)?;
    let sum = tail.strip_prefix("xxh3:").and_then(|h| u64::from_str_radix(h, 16).ok()).ok_or_else(damaged)?;
    if xxh3_64(json.as_bytes()) != sum {
        return Err(damaged());
    }
    let v: serde_json::Value = serde_json::from_str(json).with_context(|| format!("parsing {}", path.display()))?;
    let format = v.get("format").and_then(|f| f.as_u64()).unwrap_or(0);
    anyhow::ensure!(
        format == MANIFEST_FORMAT as u64,
        "{}: manifest format {format} is not supported (this build writes {MANIFEST_FORMAT})",
        path.display()
    );
    Ok(Some(serde_json::from_value(v).with_context(|| format!("parsing {}", path.display()))?))
}
