//! How much would capture don't-cares save in the class sections (issue 28)? Reads a pawnless
//! compact table's class blocks in their stored order; a position is a don't-care when it is
//! illegal or a dropped twin (as the writer has it) and, in the capture variant, when a
//! capture decides its class whatever is stored (a probe that takes the better of the stored
//! class and its captures' finds it): with white to move a win with a capture into a position
//! black loses under the 50-move rule, with black to move a position not won for white with
//! a capture into one that white does not win even without the rule. Each block is filled with the value before its don't-cares and packed as the
//! writer packs it (zstd 8, minimum match 6).
//!
//!   cargo run --release --example class_capture_study -- DIR KRBvKR [STEP]   (every STEP-th block)

use tbstream::file::cache::BlockCache;
use tbstream::file::compact::{pack_block, CompactTable, Part};
use tbstream::file::{position_of_slot, table_path, Class};
use tbstream::{Category, Color, Layout, Material, Tablebase};

/// The packed size of a block of classes (`None`: don't-care), filled with the value before
/// (the first ones with the first kept value), in the writer's two bit planes per word.
fn packed(classes: &[Option<u8>]) -> usize {
    let mut last = classes.iter().flatten().next().copied().unwrap_or(0);
    let filled: Vec<u8> = classes
        .iter()
        .map(|c| {
            last = c.unwrap_or(last);
            last
        })
        .collect();
    let mut bytes = Vec::with_capacity(filled.len() / 4);
    for word in filled.chunks(64) {
        let plane = |bit: u8| word.iter().enumerate().fold(0u64, |p, (b, &v)| p | ((v & bit != 0) as u64) << b);
        bytes.extend_from_slice(&plane(1).to_le_bytes());
        bytes.extend_from_slice(&plane(2).to_le_bytes());
    }
    let constant = filled.iter().all(|&v| v == filled[0]).then_some(filled[0]);
    pack_block(&bytes, constant, 8).expect("zstd").len()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dir, name) = (std::path::Path::new(&args[1]), &args[2]);
    let step: usize = args.get(3).map_or(1, |s| s.parse().expect("a step"));
    let material = Material::parse(name).expect("a material");
    let layout = Layout::new(&material);
    let table = CompactTable::open(&table_path(dir, &material)).expect("the table");
    let tb = Tablebase::open(dir).expect("the tables");
    for (part, stm) in [(Part::WtmWdl, Color::White), (Part::BtmWdl, Color::Black)] {
        let order = table.order(part).cloned();
        let blocks: Vec<usize> = (0..table.n_blocks(part)).step_by(step).collect();
        let totals = std::sync::Mutex::new([0usize; 2]);
        let counts = std::sync::Mutex::new([0u64; 2]);
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    let cache = BlockCache::new(64 << 20).expect("a cache");
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&b) = blocks.get(k) else { break };
                        let first = (b as u64) << 18;
                        let n = (1u64 << 18).min(table.header.n_slots - first);
                        let mut plain = Vec::with_capacity(n as usize);
                        let mut with_captures = Vec::with_capacity(n as usize);
                        let (mut legal, mut dont) = (0u64, 0u64);
                        for p in 0..n {
                            let stored = first + p;
                            let slot = order.as_ref().map_or(stored, |o| o.slot(stored));
                            let pos = match position_of_slot(&layout, slot, stm) {
                                Some(pos) if layout.kept_slot(slot, layout.has_identical_men()) == slot => pos,
                                _ => {
                                    plain.push(None);
                                    with_captures.push(None);
                                    continue;
                                }
                            };
                            legal += 1;
                            let class = table.class(stm, slot, &cache).expect("a class");
                            plain.push(Some(class.bits()));
                            let decided = match (stm, class) {
                                (Color::White, Class::Win) => pos
                                    .legal_moves()
                                    .into_iter()
                                    .filter(|m| m.capture)
                                    .any(|m| tb.category(&pos.play(m)).is_ok_and(|c| c == Some(Category::Loss))),
                                (Color::Black, Class::NotWon) => {
                                    pos.legal_moves().into_iter().filter(|m| m.capture).any(|m| {
                                        tb.category(&pos.play(m)).is_ok_and(|c| c.is_some_and(|c| c <= Category::Draw))
                                    })
                                }
                                _ => false,
                            };
                            if decided {
                                dont += 1;
                                with_captures.push(None);
                            } else {
                                with_captures.push(Some(class.bits()));
                            }
                        }
                        let sizes = [packed(&plain), packed(&with_captures)];
                        let mut t = totals.lock().unwrap();
                        t[0] += sizes[0];
                        t[1] += sizes[1];
                        let mut c = counts.lock().unwrap();
                        c[0] += legal;
                        c[1] += dont;
                    }
                });
            }
        });
        let t = totals.into_inner().unwrap();
        let c = counts.into_inner().unwrap();
        println!(
            "{name} {part:?} (every {step}th block of {}): {} -> {} bytes with capture don't-cares; kept legal {}, decided by a capture {}",
            table.n_blocks(part),
            t[0] * step,
            t[1] * step,
            c[0],
            c[1]
        );
    }
}
