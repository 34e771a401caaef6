//! Which zstd settings write a compact table's blocks smallest and fastest? Decodes every
//! block of a compact table's sections (blocks stored as one byte, whose positions hold one
//! value, are skipped: the writer never compresses them), compresses them again with each
//! candidate setting on one thread, and prints bytes and seconds per section.
//!
//!   cargo run --release --features codec-study --example zstd_params -- DIR/KQRvKR.tbs [EVERY]
//!
//! `EVERY` takes one block in so many (default: all). `ZSTD_PARAMS` replaces the list of
//! settings by variations of the tables' own (level 8, minimum match 6), `;`-separated, each
//! a `,`-separated list of `hash=`, `chain=`, `search=`, `target=`, `window=` (numbers) or
//! `strategy=` (greedy, lazy, lazy2, btlazy2), e.g. `ZSTD_PARAMS="search=4;hash=14;strategy=lazy"`.

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
    // (level, minimum match, extra parameters), the extra ones from ZSTD_PARAMS (`;`-separated
    // settings of `name=value,...` over level 8 with minimum match 6) when set.
    let extra: Vec<(String, Vec<CParameter>)> = std::env::var("ZSTD_PARAMS")
        .map(|v| {
            v.split(';')
                .map(|set| {
                    let params = set
                        .split(',')
                        .filter(|p| !p.is_empty())
                        .map(|p| {
                            let (k, x) = p.split_once('=').expect("name=value");
                            if k == "strategy" {
                                return CParameter::Strategy(match x {
                                    "greedy" => zstd::zstd_safe::Strategy::ZSTD_greedy,
                                    "lazy" => zstd::zstd_safe::Strategy::ZSTD_lazy,
                                    "lazy2" => zstd::zstd_safe::Strategy::ZSTD_lazy2,
                                    "btlazy2" => zstd::zstd_safe::Strategy::ZSTD_btlazy2,
                                    other => panic!("unknown strategy {other} (greedy, lazy, lazy2, btlazy2)"),
                                });
                            }
                            let x: u32 = x.parse().expect("a number");
                            match k {
                                "hash" => CParameter::HashLog(x),
                                "chain" => CParameter::ChainLog(x),
                                "search" => CParameter::SearchLog(x),
                                "target" => CParameter::TargetLength(x),
                                "window" => CParameter::WindowLog(x),
                                other => panic!("unknown parameter {other}"),
                            }
                        })
                        .collect();
                    (set.to_string(), params)
                })
                .collect()
        })
        .unwrap_or_default();
    let settings: Vec<(i32, Option<u32>, String, Vec<CParameter>)> = if extra.is_empty() {
        [(3, None), (3, Some(6)), (5, None), (5, Some(6)), (7, None), (7, Some(6)), (8, None)]
            .into_iter()
            .chain([(8, Some(6)), (8, Some(7)), (9, None), (9, Some(6)), (12, None), (12, Some(6))])
            .map(|(l, m)| (l, m, String::new(), Vec::new()))
            .collect()
    } else {
        extra.into_iter().map(|(name, p)| (8, Some(6), name, p)).collect()
    };
    for (level, min_match, extra_name, params) in settings {
        let mut c = zstd::bulk::Compressor::new(level).expect("a zstd context");
        if let Some(m) = min_match {
            c.set_parameter(CParameter::MinMatch(m)).expect("a minimum match");
        }
        for p in params {
            c.set_parameter(p).expect("a parameter");
        }
        let name =
            format!("level {level}{} {extra_name}", min_match.map_or(String::new(), |m| format!(", min match {m}")));
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
