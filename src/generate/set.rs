//! Sets of tables: every signature of a size (`gen --men 5`), or a list file, built as one
//! job, and the `SHA256SUMS` file written over the set's tables when it is complete.

use super::job_plan::runs_of;
use crate::chess::Material;
use crate::table::version::table_path;
use crate::work::publish::{write_with, Durability};
use anyhow::Context;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Name of the checksum file of a set, in the output folder (`sha256sum -c SHA256SUMS`).
pub const CHECKSUMS: &str = "SHA256SUMS";

/// The signatures of every table of `men` men (3 to 6), optionally only those with `pawns`
/// pawns in all, in build order.
pub fn set_of_size(men: usize, pawns: Option<usize>) -> anyhow::Result<Vec<Material>> {
    anyhow::ensure!(
        (3..=crate::chess::MAX_MEN).contains(&men),
        "--men {men}: sets of 3 to {} men can be built",
        crate::chess::MAX_MEN
    );
    let set: Vec<Material> =
        Material::every_signature(men).into_iter().filter(|m| pawns.is_none_or(|p| m.pawn_count() == p)).collect();
    anyhow::ensure!(!set.is_empty(), "--men {men} --pawns {}: no endgame has that many pawns", pawns.unwrap_or(0));
    Ok(set)
}

/// The signatures of a list file: one per line (`KRPvKR` or `KRPKR`), blank lines and
/// `#` comments ignored. An unknown signature names its line.
pub fn set_from_list(path: &Path) -> anyhow::Result<Vec<Material>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading the list {}", path.display()))?;
    let mut set = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let name = line.split('#').next().unwrap_or("").trim();
        if name.is_empty() {
            continue;
        }
        let m = Material::parse(name).with_context(|| format!("{} line {}", path.display(), i + 1))?;
        if !set.contains(&m) {
            set.push(m);
        }
    }
    anyhow::ensure!(!set.is_empty(), "the list {} names no endgame", path.display());
    Ok(set)
}

/// What [`write_checksums`] wrote: the file, and the tables it covers with their bytes.
pub struct Checksums {
    pub path: PathBuf,
    pub tables: usize,
    pub bytes: u64,
}

/// Writes `out/SHA256SUMS` over every table the set's signatures need (their runs and
/// sub-endgames' runs, by name), crash-safely.
pub fn write_checksums(out: &Path, set: &[Material]) -> anyhow::Result<Checksums> {
    let mut lines = Vec::new();
    let mut names: Vec<(String, PathBuf)> = runs_of(set)
        .iter()
        .map(|m| {
            let path = table_path(out, m);
            (path.file_name().unwrap_or_default().to_string_lossy().into_owned(), path)
        })
        .collect();
    names.sort();
    let mut bytes = 0;
    for (name, path) in &names {
        let (hash, len) = sha256_hex(path)?;
        lines.push(format!("{hash}  {name}\n"));
        bytes += len;
    }
    let target = out.join(CHECKSUMS);
    write_with(&target, lines.concat().as_bytes(), Durability::Durable)?;
    Ok(Checksums { path: target, tables: names.len(), bytes })
}

/// The SHA-256 of a file in lower-case hex, and its length.
fn sha256_hex(path: &Path) -> anyhow::Result<(String, u64)> {
    let mut file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut len = 0;
    loop {
        let n = file.read(&mut buffer).with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        len += n as u64;
    }
    Ok((hasher.finalize().iter().map(|b| format!("{b:02x}")).collect(), len))
}
