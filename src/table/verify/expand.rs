//! Compact tables expanded for the verifier: the verifier reads values at random (every
//! successor of every position), so a compact table is first decoded, block by block, into
//! an uncompressed table of the older format (`docs/FORMAT.md`, versions 1 and 2) in an
//! unnamed temporary file, which the checks then read through a map. Illegal positions get
//! code 63 and the bitbases their encodings (found from the position, as the init passes do).
//!
//! Black-to-move distances are not stored: a shallow expansion marks black's losses with the
//! placeholder [`CODE_LOST_UNMEASURED`](crate::table::values::CODE_LOST_UNMEASURED) (enough for a sub-endgame, whose black-to-move
//! positions are read for their class only); the run being verified then gets every
//! distance derived from its successors ([`fill_btm_codes`]), and each derived class must be the
//! stored one.
//!
//! In version 6 white's wins by a zeroing move hold a don't-care distance: the expansion
//! keeps every stored byte as its code ([`CompactTable::read_stored_wtm`], not the reader's codes, which
//! give a don't-care holding no win's code as 1) and takes white's bitbase from the classes
//! (class 1 set), not from the codes; the run being verified then gets code 1 at each win by
//! a zeroing move ([`resolve_zeroing_wins`]) before black's distances are derived from
//! white's codes.

use crate::chess::{Color, Material};
use crate::index::{illegal_word, Layout};
use crate::pipeline::{self, Order};
use crate::table::codes::{CodeSource, BATCH_WORDS};
use crate::table::compact::CompactTable;
use crate::table::error::TableError;
use crate::table::uncompressed::{
    code_mask, planes_of_codes, slice_section, LevelRecord, PartialTable, Section, TableFile,
};
use crate::table::values::{is_rule_win, Class, CODE_ILLEGAL};
use std::path::Path;
use tempfile::TempPath;

/// A compact table decoded into an uncompressed one, in a temporary file deleted on drop.
pub struct Expanded {
    pub file: TableFile,
    _path: TempPath,
}

/// Decodes `table` into an uncompressed table in a temporary file beside `near` (or in the
/// system's temporary folder if that folder is not writable), with `threads` workers.
pub fn expand(table: &CompactTable, near: &Path, threads: usize) -> Result<Expanded, TableError> {
    let tmp = tempfile::Builder::new()
        .prefix(".expand-")
        .tempfile_in(near)
        .or_else(|_| tempfile::NamedTempFile::new())
        .map_err(|e| TableError::Wrong(format!("creating a temporary file to expand {}: {e}", table.path.display())))?;
    let path = tmp.into_temp_path();
    let material = &table.header.material;
    let layout = Layout::new(material);
    let partial = PartialTable::open(&path, &layout)?;
    let n_words = (table.header.n_slots / 64) as usize;
    let source = CodeSource::Compact(table, &layout);
    for stm in [Color::White, Color::Black] {
        let (bitbase, _) = partial.range(Section::bitbase(stm), 0, table.header.n_slots);
        let (values, _) = partial.range(Section::values(stm), 0, table.header.n_slots);
        // Version 6: white's bytes as stored, its bitbase from the classes (a win's byte may
        // be a don't-care).
        let stored = stm == Color::White && table.header.zeroing_dont_cares;
        pipeline::run(
            n_words.div_ceil(BATCH_WORDS),
            threads,
            Order::Sequence { window: 2 * threads.max(1) },
            |b| Ok::<_, TableError>(b * BATCH_WORDS),
            |_, first| {
                let n = BATCH_WORDS.min(n_words - first);
                let (mut codes, mut wins) = (Vec::new(), Vec::new());
                if stored {
                    table.read_stored_wtm(&layout, first, n, &mut codes, &mut wins)?;
                } else {
                    source.read(stm, first, n, &mut codes)?;
                }
                let mut words = Vec::with_capacity(8 * codes.len());
                let mut planes = Vec::with_capacity(48 * codes.len());
                for (w, c) in codes.iter().enumerate() {
                    let p = planes_of_codes(c);
                    // The bitbases: won under the rule; illegal wtm 1, illegal btm 0.
                    let illegal = c.iter().enumerate().fold(0u64, |m, (b, &c)| m | ((c == CODE_ILLEGAL) as u64) << b);
                    let won = match stored {
                        true => wins[w],
                        false => c.iter().enumerate().fold(0u64, |m, (b, &c)| m | (is_rule_win(stm, c) as u64) << b),
                    };
                    let word = if stm == Color::White { won | illegal } else { won };
                    words.extend_from_slice(&word.to_le_bytes());
                    for plane in p {
                        planes.extend_from_slice(&plane.to_le_bytes());
                    }
                }
                Ok((first, words, planes))
            },
            |_, (first, words, planes)| {
                partial.write_at(bitbase + 8 * first as u64, &words)?;
                partial.write_at(values + 48 * first as u64, &planes)?;
                Ok(())
            },
        )?;
    }
    let meta = &table.header.meta;
    let slices = layout.has_pawns().then(|| {
        let records: Vec<LevelRecord> =
            table.levels().iter().map(|l| LevelRecord { last_step: l.last_step, range_sums: [0; 4] }).collect();
        slice_section(&layout, &records)
    });
    // Section checksums are not computed: the file is read in this process only.
    partial.finish(
        meta.last_step,
        meta.longest_cursed,
        (meta.five_valued, meta.edge_exact),
        Some([0; 4]),
        slices.as_deref(),
    )?;
    let file = TableFile::open_run_unchecked(&path, material)?;
    Ok(Expanded { file, _path: path })
}

/// Version 6: gives code 1 to every legal white-to-move position of the expanded table
/// whose bitbase bit is set (class 1) and whose side to move wins by a zeroing move
/// (`wins(slot)`), whatever its stored distance (a don't-care there). `progress(done)` counts
/// slots.
pub fn resolve_zeroing_wins(
    layout: &Layout,
    expanded: &Expanded,
    threads: usize,
    wins: &(dyn Fn(u64) -> bool + Sync),
    progress: &mut dyn FnMut(u64),
) -> Result<(), TableError> {
    let file = &expanded.file;
    let values = file.header.sections[Section::WtmValues as usize].offset;
    let n_words = (file.header.n_slots / 64) as usize;
    let mut done = 0;
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&file.path)
        .map_err(|e| TableError::Wrong(format!("opening {}: {e}", file.path.display())))?;
    pipeline::run(
        n_words.div_ceil(BATCH_WORDS),
        threads,
        Order::Sequence { window: 2 * threads.max(1) },
        |b| Ok::<_, TableError>(b * BATCH_WORDS),
        |_, first| {
            let n = BATCH_WORDS.min(n_words - first);
            let mut planes = Vec::new();
            file.read_planes(Color::White, first, n, &mut planes)?;
            let mut changed = false;
            for (w, p) in planes.iter_mut().enumerate() {
                let word = first + w;
                let pending = file.bitbase_word(Color::White, word)
                    & !illegal_word(layout, word as u64, Color::White)
                    & !code_mask(p, 1);
                let mut won = 0u64;
                let mut lanes = pending;
                while lanes != 0 {
                    let l = lanes.trailing_zeros() as u64;
                    lanes &= lanes - 1;
                    if wins(64 * word as u64 + l) {
                        won |= 1 << l;
                    }
                }
                if won != 0 {
                    // Code 1: plane 0 set, the others clear.
                    p[0] |= won;
                    for plane in &mut p[1..] {
                        *plane &= !won;
                    }
                    changed = true;
                }
            }
            let bytes: Vec<u8> = match changed {
                true => planes.iter().flatten().flat_map(|plane| plane.to_le_bytes()).collect(),
                false => Vec::new(),
            };
            Ok((first, n, bytes))
        },
        |_, (first, n, bytes): (usize, usize, Vec<u8>)| {
            use std::os::unix::fs::FileExt;
            if !bytes.is_empty() {
                writer
                    .write_all_at(&bytes, values + 48 * first as u64)
                    .map_err(|e| TableError::Wrong(format!("writing {}: {e}", file.path.display())))?;
            }
            done += 64 * n as u64;
            progress(done);
            Ok(())
        },
    )?;
    Ok(())
}

/// Derives the black-to-move code of every legal position of `range` with `derive` (`None`
/// for an illegal slot), checks its class against the compact table's, and writes the codes
/// into the expanded table's black-to-move values. `progress(done)` counts slots.
pub fn fill_btm_codes(
    table: &CompactTable,
    expanded: &Expanded,
    range: std::ops::Range<u64>,
    threads: usize,
    derive: &(dyn Fn(u64) -> Option<u8> + Sync),
    describe: &(dyn Fn(u64) -> String + Sync),
    progress: &mut dyn FnMut(u64),
) -> Result<(), TableError> {
    let material: &Material = &table.header.material;
    let values = expanded.file.header.sections[Section::BtmValues as usize].offset;
    let (first_word, n_words) = ((range.start / 64) as usize, ((range.end - range.start) / 64) as usize);
    let mut done = 0;
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&expanded.file.path)
        .map_err(|e| TableError::Wrong(format!("opening {}: {e}", expanded.file.path.display())))?;
    pipeline::run(
        n_words.div_ceil(BATCH_WORDS),
        threads,
        Order::Sequence { window: 2 * threads.max(1) },
        |b| Ok::<_, TableError>(first_word + b * BATCH_WORDS),
        |_, first| {
            let n = BATCH_WORDS.min(first_word + n_words - first);
            let mut stored = Vec::new();
            CodeSource::Compact(table, &Layout::new(material)).read(Color::Black, first, n, &mut stored)?;
            let mut planes = Vec::with_capacity(48 * n);
            for (w, stored) in stored.iter().enumerate() {
                let mut codes = [CODE_ILLEGAL; 64];
                for (b, code) in codes.iter_mut().enumerate() {
                    let slot = 64 * (first + w) as u64 + b as u64;
                    let Some(derived) = derive(slot) else { continue };
                    let class_of = |c: u8| Class::of_code(Color::Black, c);
                    if stored[b] == CODE_ILLEGAL || class_of(derived) != class_of(stored[b]) {
                        let s = if stored[b] == CODE_ILLEGAL { "illegal" } else { class_of(stored[b]).btm_name() };
                        return Err(TableError::Wrong(format!(
                            "{}: black to move is stored as {s}, but its moves make it {} (code {derived})",
                            describe(slot),
                            class_of(derived).btm_name()
                        )));
                    }
                    *code = derived;
                }
                for plane in planes_of_codes(&codes) {
                    planes.extend_from_slice(&plane.to_le_bytes());
                }
            }
            Ok((first, n, planes))
        },
        |_, (first, n, planes)| {
            use std::os::unix::fs::FileExt;
            writer
                .write_all_at(&planes, values + 48 * first as u64)
                .map_err(|e| TableError::Wrong(format!("writing {}: {e}", expanded.file.path.display())))?;
            done += 64 * n as u64;
            progress(done);
            Ok(())
        },
    )?;
    Ok(())
}
