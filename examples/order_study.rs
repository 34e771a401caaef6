//! Does the order of the men in the stored index change the size of a table? (issue 28.)
//!
//! Reads a pawnless compact table's wtm classes and distances into RAM (a byte per slot),
//! marks the don't-cares (illegal, or not a win), and for each order of the men (a digit of
//! 64 squares each, the black king's triangle code always the slowest) gathers the distances
//! in that order, fills each don't-care with the value before it, and compresses the result
//! in blocks of 2^16 positions as the writer does (zstd 8, minimum match 6).
//!
//!   cargo run --release --example order_study -- DIR KQRvKR [SECTIONS]
//!   cargo run --release --example order_study -- DIR KQRvKQR sample UNIT_BITS COUNT
//!   cargo run --release --example order_study -- DIR KQRvKQR speed
//!   cargo run --release --example order_study -- DIR KQRvKR project
//!
//! `SECTIONS` (comma-separated prefixes, default all): `wtm dtz`, `wtm class`, `btm class`.
//! Every section is tried in [`StoredOrder`]s of units of 2^21 (the layout's), 2^18 and
//! 2^16 positions; `FULL=1` adds every order of whole digits (no units). `sample`
//! measures a few units of a table too big for RAM (see [`sample`]).

use tbstream::file::compact::{class_at, n_blocks, pack_block, BlockData, CompactTable, Part};
use tbstream::file::{table_path, Class, Man, StoredOrder};
use tbstream::{Color, Layout, Material, Piece, Position, Role, Square};

const DONT: u8 = 255;

/// The zstd level of the sizes (the writer's 8 unless set otherwise).
static LEVEL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(8);

fn level() -> i32 {
    LEVEL.load(std::sync::atomic::Ordering::Relaxed)
}

/// Compressed size of `vals` (don't-cares DONT) filled with the previous value, in blocks.
fn packed_size(vals: &[u8], block: usize) -> usize {
    packed_size_filled(vals, block, true)
}

/// Like [`packed_size`]; `fill` false compresses the bytes as they are.
fn packed_size_filled(vals: &[u8], block: usize, fill: bool) -> usize {
    let chunks: Vec<&[u8]> = vals.chunks(block).collect();
    let half = chunks.len() / 2;
    std::thread::scope(|s| {
        let parts: Vec<_> = [&chunks[..half], &chunks[half..]]
            .into_iter()
            .map(|part| {
                s.spawn(move || {
                    let mut total = 0;
                    for c in part {
                        let mut last = c.iter().copied().find(|&v| v != DONT || !fill).unwrap_or(0);
                        let filled: Vec<u8> = c
                            .iter()
                            .map(|&v| {
                                if v != DONT || !fill {
                                    last = v;
                                }
                                last
                            })
                            .collect();
                        let constant = filled.iter().all(|&v| v == filled[0]);
                        total += pack_block(&filled, constant.then_some(filled[0]), level()).expect("zstd").len();
                    }
                    total
                })
            })
            .collect();
        parts.into_iter().map(|h| h.join().expect("thread")).sum()
    })
}

/// Compressed size of 2-bit values (don't-cares DONT) filled with the previous value, as two
/// bit planes per 64 positions (the class sections' decoded bytes), in blocks.
fn packed_planes_size(vals: &[u8], block: usize) -> usize {
    let mut planes = Vec::with_capacity(vals.len() / 4);
    let mut last = 0u8;
    for word in vals.chunks(64) {
        let (mut lo, mut hi) = (0u64, 0u64);
        for (b, &v) in word.iter().enumerate() {
            if v != DONT {
                last = v;
            }
            lo |= ((last & 1) as u64) << b;
            hi |= ((last >> 1) as u64) << b;
        }
        planes.extend_from_slice(&lo.to_le_bytes());
        planes.extend_from_slice(&hi.to_le_bytes());
    }
    packed_size_filled(&planes, block / 4, false)
}

/// A side's values by slot: class (or, for `dtz`, the wtm distance code of a win), DONT for
/// illegal positions (and for `dtz`, positions that are not wins).
fn values(table: &CompactTable, layout: &Layout, stm: Color, dtz: bool) -> Vec<u8> {
    values_in(table, layout, stm, dtz, 0..table.header.n_slots)
}

/// Like [`values`], for the slots `range` (whole class blocks), indexed from its start.
fn values_in(table: &CompactTable, layout: &Layout, stm: Color, dtz: bool, range: std::ops::Range<u64>) -> Vec<u8> {
    let n = table.header.n_slots;
    let np = layout.pieces.len();
    let dups = std::env::var("DUPS").is_ok();
    let mut vals = vec![DONT; (range.end - range.start) as usize];
    let mut squares = vec![0u8; np];
    let part = if stm == Color::White { Part::WtmWdl } else { Part::BtmWdl };
    for b in (range.start >> 18) as usize..(range.end >> 18).max((range.start >> 18) + 1) as usize {
        let cls = table.block(part, b).expect("wdl");
        for (k, j) in (b * 4..(b * 4 + 4).min(n_blocks(Part::WtmDtz, n))).enumerate() {
            let codes = if dtz {
                match table.block(Part::WtmDtz, j).expect("dtz") {
                    BlockData::Constant(v) => vec![v; 1 << 16],
                    BlockData::Bytes(v) => v,
                }
            } else {
                vec![0; 1 << 16]
            };
            for (p, &code) in codes.iter().enumerate() {
                let slot = ((j as u64) << 16) + p as u64;
                if slot >= n || slot >= range.end {
                    break;
                }
                let class = match &cls {
                    BlockData::Constant(v) => *v,
                    BlockData::Bytes(c) => class_at(c, ((k as u64) << 16) + p as u64).bits(),
                };
                if dtz && class != Class::Win.bits() {
                    continue;
                }
                let (bk, wk) = layout.decode_into(layout.index_of_slot(slot), &mut squares);
                let mut men = vec![
                    (wk, Piece { color: Color::White, role: Role::King }),
                    (layout.bk_square(bk), Piece { color: Color::Black, role: Role::King }),
                ];
                for (q, pc) in layout.pieces.iter().enumerate() {
                    men.push((squares[q], Piece { color: pc.color, role: pc.role }));
                }
                if Position::from_men(&men, stm).is_ok() && !(dups && duplicate(layout, slot, bk, &squares, wk)) {
                    vals[(slot - range.start) as usize] = if dtz { code } else { class };
                }
            }
        }
    }
    vals
}

/// `vals` (by slot) gathered in a digit order: `order` lists the digits slowest first
/// (0 the white king, 1.. the pieces, `bk` the black king's triangle code).
fn reorder(layout: &Layout, vals: &[u8], order: &[usize], bk_digit: usize) -> Vec<u8> {
    let np = layout.pieces.len();
    let mut out = Vec::with_capacity(vals.len());
    let mut sq = vec![0u8; np];
    let radix = |d: usize| if d == bk_digit { layout.bk_codes() as usize } else { 64 };
    let total: usize = order.iter().map(|&d| radix(d)).product();
    for r in 0..total {
        let mut rest = r;
        let (mut wk, mut bk) = (0u8, 0u8);
        for &d in order.iter().rev() {
            let s = (rest % radix(d)) as u8;
            rest /= radix(d);
            if d == 0 {
                wk = s;
            } else if d == bk_digit {
                bk = s;
            } else {
                sq[d - 1] = s;
            }
        }
        let slot = layout.slot(layout.index(bk, &sq, wk)).expect("a slot");
        out.push(vals[slot as usize]);
    }
    out
}

/// `vals` (slots `first..first + vals.len()`, whole units) in `order`'s stored order, moved
/// a word at a time (the white king fastest).
fn in_order(order: &StoredOrder, first: u64, vals: &[u8]) -> Vec<u8> {
    let mut out = vec![DONT; vals.len()];
    let mut perm = Vec::new();
    for u in (0..vals.len()).step_by(1 << order.unit_bits) {
        order.word_permutation(first + u as u64, &mut perm);
        for (w, &s) in perm.iter().enumerate() {
            let (from, to) = (u + 64 * w, u + 64 * s as usize);
            out[to..to + 64].copy_from_slice(&vals[from..from + 64]);
        }
    }
    out
}

/// `sample UNIT_BITS COUNT`: for a table too big to hold, `COUNT` units spread over the
/// table, each compressed in the layout's order and in every stored order whose fastest man
/// is the white king (the totals over the sample, per section).
fn sample(table: &CompactTable, layout: &Layout, name: &str, unit: u32, count: u64) {
    let n = table.header.n_slots;
    let units = n >> unit;
    let free = StoredOrder::free_men(layout, unit);
    let others: Vec<Man> = free.iter().copied().filter(|&m| m != Man::WhiteKing).collect();
    let mut orders = Vec::new();
    permute(&(0..others.len()).collect::<Vec<_>>(), &mut Vec::new(), &mut orders);
    let orders: Vec<StoredOrder> = orders
        .iter()
        .map(|o| {
            let mut men: Vec<Man> = o.iter().map(|&i| others[i]).collect();
            men.push(Man::WhiteKing);
            StoredOrder::new(layout, unit, &men)
        })
        .collect();
    for (sec, stm, dtz) in [("wtm dtz", Color::White, true), ("btm class", Color::Black, false)] {
        let size = |v: &[u8]| if dtz { packed_size(v, 1 << 16) } else { packed_planes_size(v, 1 << 18) };
        let (mut base, mut totals) = (0usize, vec![0usize; orders.len()]);
        // Spread over the table, off the first and last units, unless `UNITS` lists them.
        let chosen: Vec<u64> = match std::env::var("UNITS") {
            Ok(list) => list.split(',').map(|u| u.parse().expect("a unit number")).collect(),
            Err(_) => (0..count).map(|k| (2 * k + 1) * units / (2 * count)).collect(),
        };
        for &u in &chosen {
            let range = u << unit..(u + 1) << unit;
            let vals = values_in(table, layout, stm, dtz, range.clone());
            base += size(&vals);
            for (o, order) in orders.iter().enumerate() {
                totals[o] += size(&in_order(order, range.start, &vals));
            }
            eprintln!("{name} {sec}: unit {u} sampled");
        }
        let mut ranked: Vec<(usize, usize)> = totals.iter().copied().enumerate().map(|(o, t)| (t, o)).collect();
        ranked.sort();
        println!("{name} {sec}, units {chosen:?} of 2^{unit}: layout order {base} bytes");
        for (t, o) in ranked.iter().take(3) {
            let men: Vec<Man> = orders_men(&others, *o);
            println!("  {men:?} then the white king: {t} ({:.3}x)", *t as f64 / base as f64);
        }
    }
}

/// The men of sampled order `o` (as [`sample`] builds them), the white king left out.
fn orders_men(others: &[Man], o: usize) -> Vec<Man> {
    let mut orders = Vec::new();
    permute(&(0..others.len()).collect::<Vec<_>>(), &mut Vec::new(), &mut orders);
    orders[o].iter().map(|&i| others[i]).collect()
}

/// Bytes an ideal static coder would take for the cared-for values of `v` (don't-cares
/// DONT are skipped: a decoder knows them from legality and the class section), under
/// contexts of the values before them (don't-cares filled with the value before them):
/// none, the previous position's, the previous and the one a white-king digit (64) before,
/// and those two with the one 4096 before.
fn context_entropies(v: &[u8]) -> [f64; 4] {
    let mut filled = Vec::with_capacity(v.len());
    let mut last = 0u8;
    for &x in v {
        if x != DONT {
            last = x;
        }
        filled.push(last);
    }
    let mut counts: [std::collections::HashMap<u64, [u64; 64]>; 4] = Default::default();
    for (p, &x) in v.iter().enumerate() {
        if x == DONT {
            continue;
        }
        let at = |d: usize| if p >= d { filled[p - d] as u64 } else { 64 };
        let ctx = [0, at(1), at(1) << 8 | at(64), at(1) << 16 | at(64) << 8 | at(4096)];
        for (k, c) in ctx.iter().enumerate() {
            counts[k].entry(*c).or_insert([0; 64])[x as usize & 63] += 1;
        }
    }
    std::array::from_fn(|k| {
        let bits: f64 = counts[k]
            .values()
            .map(|h| {
                let n: u64 = h.iter().sum();
                h.iter().filter(|&&c| c > 0).map(|&c| -(c as f64) * (c as f64 / n as f64).log2()).sum::<f64>()
            })
            .sum();
        bits / 8.0
    })
}

/// `speed`: what a stored order costs its users: a probe's stored position from its men
/// (`StoredOrder::stored_of_men`, 10 million positions drawn in advance) and a unit's word
/// permutation (`StoredOrder::word_permutation`, 16 units), the white king fastest.
fn speed(layout: &Layout, name: &str) {
    let unit = StoredOrder::default_unit_bits(layout);
    let mut men = StoredOrder::free_men(layout, unit);
    men.retain(|&m| m != Man::WhiteKing);
    men.push(Man::WhiteKing);
    let order = StoredOrder::new(layout, unit, &men);
    let n = layout.n_slots;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let np = layout.pieces.len();
    let drawn: Vec<(u64, Vec<Square>, Square, Square)> = (0..10_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let slot = x % n;
            let mut pieces = vec![0; np];
            let (bk, wk) = layout.decode_into(layout.index_of_slot(slot), &mut pieces);
            (slot, pieces, wk, layout.bk_square(bk))
        })
        .collect();
    let t = std::time::Instant::now();
    let mut sum = 0u64;
    for (slot, pieces, wk, bk) in &drawn {
        sum = sum.wrapping_add(order.stored_of_men(*slot, pieces, *wk, *bk));
    }
    let per_probe = t.elapsed().as_secs_f64() / drawn.len() as f64 * 1e9;
    let mut perm = Vec::new();
    let t = std::time::Instant::now();
    for k in 0..16u64 {
        order.word_permutation((k * (n >> unit) / 16) << unit, &mut perm);
        sum = sum.wrapping_add(perm[perm.len() / 3] as u64);
    }
    let per_unit = t.elapsed().as_secs_f64() / 16.0 * 1e3;
    println!(
        "{name}: stored_of_men {per_probe:.1} ns; word_permutation {per_unit:.2} ms per unit of 2^{unit} positions ({:.3} ns per position) [{sum}]",
        per_unit * 1e6 / (1u64 << unit) as f64
    );
}

/// `project`: what format 4's first step would store, section by section: each section's
/// order chosen as a writer would (the layout's or a stored order with the white king
/// fastest, by the compressed size of 8 units spread over the table), then the whole
/// section compressed in that order.
fn project(table: &CompactTable, layout: &Layout, name: &str) {
    let unit = StoredOrder::default_unit_bits(layout);
    let units = table.header.n_slots >> unit;
    let mut others = StoredOrder::free_men(layout, unit);
    others.retain(|&m| m != Man::WhiteKing);
    let mut perms = Vec::new();
    permute(&(0..others.len()).collect::<Vec<_>>(), &mut Vec::new(), &mut perms);
    let candidates: Vec<Option<StoredOrder>> = std::iter::once(None)
        .chain(perms.iter().map(|p| {
            let mut men: Vec<Man> = p.iter().map(|&i| others[i]).collect();
            men.push(Man::WhiteKing);
            Some(StoredOrder::new(layout, unit, &men))
        }))
        .collect();
    let arrange = |vals: &[u8], order: &Option<StoredOrder>, range: std::ops::Range<u64>| -> Vec<u8> {
        let part = &vals[range.start as usize..range.end as usize];
        order.as_ref().map_or_else(|| part.to_vec(), |o| in_order(o, range.start, part))
    };
    let (mut before, mut after) = (0usize, 0usize);
    for (sec, stm, dtz) in [
        ("wtm classes", Color::White, false),
        ("wtm distances", Color::White, true),
        ("btm classes", Color::Black, false),
    ] {
        let vals = values(table, layout, stm, dtz);
        let size = |v: &[u8]| if dtz { packed_size(v, 1 << 16) } else { packed_planes_size(v, 1 << 18) };
        let sample: Vec<u64> = (0..8.min(units)).map(|k| (2 * k + 1) * units / (2 * 8.min(units))).collect();
        let trial = |o: &Option<StoredOrder>| -> usize {
            sample.iter().map(|&u| size(&arrange(&vals, o, u << unit..(u + 1) << unit))).sum()
        };
        let (best, _) =
            candidates.iter().enumerate().map(|(i, o)| (i, trial(o))).min_by_key(|&(_, t)| t).expect("a candidate");
        let whole = |o: &Option<StoredOrder>| size(&arrange(&vals, o, 0..table.header.n_slots));
        let (layout_size, chosen_size) = (whole(&None), whole(&candidates[best]));
        let which = if best == 0 {
            "the layout's".to_string()
        } else {
            format!("{:?} then the white king", perms[best - 1].iter().map(|&i| others[i]).collect::<Vec<_>>())
        };
        println!(
            "{name} {sec}: {layout_size} -> {chosen_size} ({:.3}x), order {which}",
            chosen_size as f64 / layout_size as f64
        );
        before += layout_size;
        after += chosen_size;
    }
    println!("{name} block sections: {before} -> {after} ({:.3}x)", after as f64 / before as f64);
}

/// Whether a pawnless slot stores a copy of another slot's position (`DUPS=1` makes these
/// don't-cares): identical men out of square order, or, with the black king on the a1-d4
/// diagonal, a position whose mirror image in that diagonal has the smaller slot.
fn duplicate(layout: &Layout, slot: u64, bk_code: u8, squares: &[Square], wk: Square) -> bool {
    if !layout.identical_in_order(squares) {
        return true;
    }
    let bk = layout.bk_square(bk_code);
    if !bk.is_multiple_of(9) {
        return false;
    }
    let flip = |sq: Square| (sq & 7) << 3 | sq >> 3;
    let mut t: Vec<Square> = squares.iter().map(|&s| flip(s)).collect();
    layout.sort_identical(&mut t);
    let other = layout.slot(layout.index(bk_code, &t, flip(wk))).expect("a slot");
    other < slot
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dir, name) = (std::path::Path::new(&args[1]), &args[2]);
    let material = Material::parse(name).expect("a material");
    let layout = Layout::new(&material);
    let table = CompactTable::open(&table_path(dir, &material)).expect("the table");
    if args.get(3).map(String::as_str) == Some("project") {
        return project(&table, &layout, name);
    }
    if args.get(3).map(String::as_str) == Some("speed") {
        return speed(&layout, name);
    }
    if args.get(3).map(String::as_str) == Some("sample") {
        let unit: u32 = args[4].parse().expect("unit bits");
        let count: u64 = args[5].parse().expect("units");
        return sample(&table, &layout, name, unit, count);
    }
    let np = layout.pieces.len();
    let bk_digit = np + 1;
    let label = |d: usize| -> String {
        if d == 0 {
            "K".into()
        } else if d == bk_digit {
            "k".into()
        } else {
            let p = &layout.pieces[d - 1];
            let c = format!("{:?}", p.role).chars().next().unwrap_or('?');
            if p.color == Color::White {
                c.to_string()
            } else {
                c.to_ascii_lowercase().to_string()
            }
        }
    };
    let sections: [(&str, Color, bool); 3] =
        [("wtm dtz", Color::White, true), ("wtm class", Color::White, false), ("btm class", Color::Black, false)];
    let which: Vec<String> = args.get(3).map_or(vec!["all".into()], |s| s.split(',').map(String::from).collect());
    for (sec, stm, dtz) in sections {
        if !which.iter().any(|w| w == "all" || sec.starts_with(w.as_str())) {
            continue;
        }
        let vals = values(&table, &layout, stm, dtz);
        let size = |v: &[u8], block: usize| if dtz { packed_size(v, block) } else { packed_planes_size(v, block * 4) };
        println!("{name} {sec}: stored order {} bytes (2^18 blocks: {})", size(&vals, 1 << 16), size(&vals, 1 << 18));

        // The same through the library's StoredOrder, units of 2^21 (if the layout's) and 2^18.
        let units: &[u32] = if std::env::var("QUICK").is_ok() { &[0] } else { &[0, 18, 16] };
        for unit in units.iter().map(|&u| if u == 0 { StoredOrder::default_unit_bits(&layout) } else { u }) {
            let free = StoredOrder::free_men(&layout, unit);
            let mut orders = Vec::new();
            permute(&(0..free.len()).collect::<Vec<_>>(), &mut Vec::new(), &mut orders);
            let mut sized: Vec<(usize, Vec<Man>)> = orders
                .iter()
                .map(|o| {
                    let men: Vec<Man> = o.iter().map(|&i| free[i]).collect();
                    let order = StoredOrder::new(&layout, unit, &men);
                    let mut v = vec![DONT; vals.len()];
                    for (slot, &x) in vals.iter().enumerate() {
                        v[order.stored(slot as u64) as usize] = x;
                    }
                    (size(&v, 1 << 16), men)
                })
                .collect();
            sized.sort_by_key(|(s, _)| *s);
            for (s, men) in sized.iter().take(3) {
                println!("  StoredOrder unit 2^{unit} {men:?}: {s}");
            }
            if unit == StoredOrder::default_unit_bits(&layout) {
                let order = StoredOrder::new(&layout, unit, &sized[0].1);
                let mut v = vec![DONT; vals.len()];
                for (slot, &x) in vals.iter().enumerate() {
                    v[order.stored(slot as u64) as usize] = x;
                }
                let sizes: Vec<String> = [16, 18, 20].iter().map(|&b| format!("2^{b}: {}", size(&v, 1 << b))).collect();
                println!("  that order, blocks of {}", sizes.join(", "));
                if dtz {
                    let at19 = |b: u32| {
                        LEVEL.store(19, std::sync::atomic::Ordering::Relaxed);
                        let n = packed_size(&v, 1 << b);
                        LEVEL.store(8, std::sync::atomic::Ordering::Relaxed);
                        n
                    };
                    println!("  that order at zstd 19, blocks of 2^16: {}, 2^20: {}", at19(16), at19(20));
                }
                if dtz {
                    let [h0, h1, h2, h3] = context_entropies(&v);
                    println!("  that order, ideal static coder of the wins only: order 0 {h0:.0}, previous {h1:.0}, previous and a king row up {h2:.0}, and a digit further {h3:.0} bytes");
                    let [h0, h1, h2, h3] = context_entropies(&vals);
                    println!("  the layout's order, the same: {h0:.0}, {h1:.0}, {h2:.0}, {h3:.0} bytes");
                }
            }
        }
        if std::env::var("FULL").is_err() {
            continue;
        }
        let digits: Vec<usize> = (0..=np).collect();
        let mut orders = Vec::new();
        permute(&digits, &mut Vec::new(), &mut orders);
        let mut results = Vec::new();
        for order in orders {
            // The black king slowest, then each other place for the best few below.
            let full: Vec<usize> = std::iter::once(bk_digit).chain(order.iter().copied()).collect();
            let s = size(&reorder(&layout, &vals, &full, bk_digit), 1 << 16);
            results.push((s, full));
        }
        results.sort();
        for (s, o) in results.iter().take(4) {
            println!("  {}: {s}", o.iter().map(|&d| label(d)).collect::<String>());
        }
        let best = results[0].1.clone();
        for at in 1..best.len() {
            let mut o: Vec<usize> = best[1..].to_vec();
            o.insert(at, bk_digit);
            let s = size(&reorder(&layout, &vals, &o, bk_digit), 1 << 16);
            println!("  {}: {s}", o.iter().map(|&d| label(d)).collect::<String>());
        }
        let v = reorder(&layout, &vals, &best, bk_digit);
        println!("  best, 2^18 blocks: {}", size(&v, 1 << 18));
    }
}

fn permute(rest: &[usize], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if rest.is_empty() {
        out.push(prefix.clone());
        return;
    }
    for i in 0..rest.len() {
        prefix.push(rest[i]);
        let others: Vec<usize> = rest.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &v)| v).collect();
        permute(&others, prefix, out);
        prefix.pop();
    }
}
