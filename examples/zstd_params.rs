//! Which zstd settings write a compact table's blocks smallest and fastest? Decodes every
//! block of a compact table's sections (blocks stored as one byte, whose positions hold one
//! value, are skipped: the writer never compresses them), compresses them again with each
//! candidate setting on one thread, and prints bytes and seconds per section.
//!
//!   cargo run --release --features codec-study --example zstd_params -- DIR/KQRvKR.tbs [EVERY]
//!
//! `EVERY` takes one block in so many (default: all).

use std::time::Instant;
use tbstream::file::compact::{CompactTable, Part};
use zstd::zstd_safe::CParameter;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: zstd_params TABLE.tbs [EVERY]");
    let every: usize = args.get(2).map_or(1, |s| s.parse().expect("EVERY is a number"));
    let table = CompactTable::open(std::path::Path::new(path)).expect("a compact table");
    let mut sections = Vec::new();
    for part in Part::BLOCKED {
        let mut blocks = Vec::new();
        for i in (0..table.n_blocks(part)).step_by(every) {
            let mut b = Vec::new();
            table.block_into(part, i, &mut b).expect("a block");
            if b.iter().any(|&x| x != b[0]) {
                blocks.push(b);
            }
        }
        sections.push((part, blocks));
    }
    // (level, minimum match; None = zstd's own for the level)
    let settings = [(3, None), (3, Some(6)), (5, None), (5, Some(6)), (7, None), (7, Some(6)), (8, None)]
        .into_iter()
        .chain([(8, Some(6)), (8, Some(7)), (9, None), (9, Some(6)), (12, None), (12, Some(6))]);
    for (level, min_match) in settings {
        let mut c = zstd::bulk::Compressor::new(level).expect("a zstd context");
        if let Some(m) = min_match {
            c.set_parameter(CParameter::MinMatch(m)).expect("a minimum match");
        }
        let name = format!("level {level}{}", min_match.map_or(String::new(), |m| format!(", min match {m}")));
        let mut line = format!("{name:22}");
        let (mut secs, mut bytes) = (0.0, 0usize);
        for (part, blocks) in &sections {
            let t = Instant::now();
            let b: usize = blocks.iter().map(|b| c.compress(b).expect("zstd").len()).sum();
            let s = t.elapsed().as_secs_f64();
            (secs, bytes) = (secs + s, bytes + b);
            line += &format!(" | {part:?} {:.3} MB {s:.2} s", b as f64 / 1e6);
        }
        println!("{line} | all {:.3} MB {secs:.2} s", bytes as f64 / 1e6);
    }
}
