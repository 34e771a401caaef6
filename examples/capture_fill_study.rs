//! How much do capture don't-cares save in the wtm distance section (issue 28)? A won wtm
//! position with a capture into a lost btm position of a sub-endgame wins in one ply (its
//! code is 1) whatever the table says, if a probe searches the captures first: its stored distance is
//! a don't-care. This reads a pawnless compact table's distance blocks in their stored
//! order; a position must keep its value when it is legal (`Position::from_men`), kept (not
//! a dropped twin) and won (its class, which a compact table fills arbitrarily at illegal
//! slots, so legality is tested first), and, in the capture variant, not won by a capture.
//! Each block is filled with the value before its don't-cares (as the writer fills) and packed
//! as the writer packs it (zstd 8, minimum match 6).
//!
//!   cargo run --release --example capture_fill_study -- DIR KQRvKR [STEP [OUT]]
//!
//! STEP: every STEP-th block. With OUT, writes the blocks' bytes as stored to `OUT.values`
//! and a byte per position, 1 where it must keep its value in the capture variant, to
//! `OUT.care` (for `pairing_study`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tbstream::file::cache::BlockCache;
use tbstream::file::compact::{pack_block, BlockData, CompactTable, Part};
use tbstream::file::{position_of_slot, table_path, Class};
use tbstream::{Color, Layout, Material, Tablebase, Wdl};

/// Fills the don't-cares (clear bits of `care`) with the value before them (the first ones
/// with the first kept value), then packs the block.
fn packed_after_fill(values: &[u8], care: &[u64]) -> usize {
    let cares = |i: usize| care[i >> 6] >> (i & 63) & 1 != 0;
    let mut last = (0..values.len()).find(|&i| cares(i)).map_or(0, |i| values[i]);
    let filled: Vec<u8> = (0..values.len())
        .map(|i| {
            if cares(i) {
                last = values[i];
            }
            last
        })
        .collect();
    let constant = filled.iter().all(|&v| v == filled[0]).then_some(filled[0]);
    pack_block(&filled, constant, 8).expect("zstd").len()
}

#[derive(Default)]
struct Totals {
    plain: usize,
    captures: usize,
    wins: u64,
    code1: u64,
    capture_wins: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dir, name) = (std::path::Path::new(&args[1]), &args[2]);
    let step: usize = args.get(3).map_or(1, |s| s.parse().expect("a step"));
    let out = args.get(4);
    let material = Material::parse(name).expect("a material");
    let layout = Layout::new(&material);
    let table = CompactTable::open(&table_path(dir, &material)).expect("the table");
    let tb = Tablebase::open(dir).expect("the tables");
    let order = table.order(Part::WtmDtz).cloned();
    let blocks: Vec<usize> = (0..table.n_blocks(Part::WtmDtz)).step_by(step).collect();
    let totals = Mutex::new(Totals::default());
    let dumped = Mutex::new(vec![None; blocks.len()]);
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let cache = BlockCache::new(64 << 20).expect("a cache");
                while let Some(&b) = blocks.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let first = (b as u64) << 16;
                    let bytes = match table.block(Part::WtmDtz, b).expect("a distance block") {
                        BlockData::Constant(v) => vec![v; 1 << 16],
                        BlockData::Bytes(v) => v,
                    };
                    let n = bytes.len();
                    let (mut plain, mut care) = (vec![0u64; n / 64], vec![0u64; n / 64]);
                    let mut t = Totals::default();
                    for (p, &code) in bytes.iter().enumerate() {
                        let stored = first + p as u64;
                        let slot = order.as_ref().map_or(stored, |o| o.slot(stored));
                        if layout.kept_slot(slot, layout.has_identical_men()) != slot {
                            continue;
                        }
                        let Some(pos) = position_of_slot(&layout, slot, Color::White) else { continue };
                        if table.class(Color::White, slot, &cache).expect("a class") != Class::Win {
                            continue;
                        }
                        t.wins += 1;
                        plain[p >> 6] |= 1 << (p & 63);
                        let won_by_capture = code == 1 && {
                            t.code1 += 1;
                            pos.legal_moves()
                                .into_iter()
                                .filter(|m| m.capture)
                                .any(|m| tb.probe_wdl(&pos.play(m)).is_ok_and(|w| w == Wdl::Loss))
                        };
                        if won_by_capture {
                            t.capture_wins += 1;
                        } else {
                            care[p >> 6] |= 1 << (p & 63);
                        }
                    }
                    t.plain = packed_after_fill(&bytes, &plain);
                    t.captures = packed_after_fill(&bytes, &care);
                    if out.is_some() {
                        let care_bytes: Vec<u8> = (0..n).map(|p| (care[p >> 6] >> (p & 63) & 1) as u8).collect();
                        let k = blocks.binary_search(&b).expect("a sampled block");
                        dumped.lock().unwrap()[k] = Some((bytes, care_bytes));
                    }
                    let mut all = totals.lock().unwrap();
                    all.plain += t.plain;
                    all.captures += t.captures;
                    all.wins += t.wins;
                    all.code1 += t.code1;
                    all.capture_wins += t.capture_wins;
                }
            });
        }
    });
    if let Some(out) = out {
        let (mut values, mut cares) = (Vec::new(), Vec::new());
        for (v, c) in dumped.into_inner().unwrap().into_iter().flatten() {
            values.extend_from_slice(&v);
            cares.extend_from_slice(&c);
        }
        std::fs::write(format!("{out}.values"), values).expect("writing the values");
        std::fs::write(format!("{out}.care"), cares).expect("writing the care bytes");
    }
    let t = totals.into_inner().unwrap();
    println!(
        "{name}, every {step}th of {} distance blocks: {} -> {} bytes with capture don't-cares; legal kept wins {}, code 1 {}, won by a capture {}",
        table.n_blocks(Part::WtmDtz),
        t.plain,
        t.captures,
        t.wins,
        t.code1,
        t.capture_wins
    );
}
