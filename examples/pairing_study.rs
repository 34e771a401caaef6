//! What would a pairing coder take for a section's exact stored bytes (issue 28: "a coder for
//! small blocks, canonical Huffman over paired symbols")? Reads the decoded bytes of a
//! section (from `block_dump`), replaces the most frequent adjacent pairs of symbols by new
//! symbols pass after pass (an approximate Re-Pair over the whole section, up to 4096
//! symbols), then counts the bits of a Huffman code of the final symbols (its longest code
//! printed: a decoder would limit it) plus the grammar (3 bytes a rule).
//!
//!   cargo run --release --example pairing_study -- BYTES [PAIRS_PER_PASS] [MAX_SYMBOLS]

const SYMBOLS: usize = 4096;

/// Huffman code lengths of `freq` (zero for unused symbols), by merging the two least
/// frequent nodes until one is left; lengths are not limited.
fn huffman_lengths(freq: &[u64]) -> Vec<u32> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut parent = vec![usize::MAX; 2 * freq.len()];
    let mut n_nodes = freq.len();
    for (s, &f) in freq.iter().enumerate() {
        if f > 0 {
            heap.push(Reverse((f, s)));
        }
    }
    if heap.len() == 1 {
        let mut l = vec![0; freq.len()];
        l[heap.pop().unwrap().0 .1] = 1;
        return l;
    }
    while heap.len() > 1 {
        let Reverse((fa, a)) = heap.pop().unwrap();
        let Reverse((fb, b)) = heap.pop().unwrap();
        parent[a] = n_nodes;
        parent[b] = n_nodes;
        heap.push(Reverse((fa + fb, n_nodes)));
        n_nodes += 1;
    }
    (0..freq.len())
        .map(|s| {
            if freq[s] == 0 {
                return 0;
            }
            let (mut d, mut x) = (0, s);
            while parent[x] != usize::MAX {
                x = parent[x];
                d += 1;
            }
            d
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut data = std::fs::read(&args[1]).expect("the bytes");
    // With a care file beside (`capture_fill_study`'s OUT.care for OUT.values), every
    // position it does not mark takes the value before it.
    if let Ok(care) = std::fs::read(args[1].replace(".values", ".care")) {
        let mut last = data[care.iter().position(|&c| c == 1).unwrap_or(0)];
        for (v, &c) in data.iter_mut().zip(&care) {
            if c == 1 {
                last = *v;
            } else {
                *v = last;
            }
        }
    }
    let per_pass: usize = args.get(2).map_or(64, |s| s.parse().expect("pairs per pass"));
    let max_symbols: usize = args.get(3).map_or(SYMBOLS, |s| s.parse().expect("symbols"));
    let t = std::time::Instant::now();
    let mut syms: Vec<u16> = data.iter().map(|&b| b as u16).collect();
    let mut next = 256usize;
    let mut freq = vec![0u32; SYMBOLS * SYMBOLS];
    let mut passes = 0;
    while next < max_symbols {
        freq.iter_mut().for_each(|f| *f = 0);
        for w in syms.windows(2) {
            freq[w[0] as usize * SYMBOLS + w[1] as usize] += 1;
        }
        let mut top: Vec<(u32, usize)> =
            freq.iter().enumerate().filter(|(_, &f)| f >= 64).map(|(i, &f)| (f, i)).collect();
        top.sort_unstable_by(|a, b| b.cmp(a));
        top.truncate(per_pass.min(max_symbols - next));
        if top.is_empty() {
            break;
        }
        // Replacement table: pair -> new symbol.
        let mut replace = std::collections::HashMap::new();
        for &(_, pair) in &top {
            replace.insert(pair, next as u16);
            next += 1;
        }
        let mut out = Vec::with_capacity(syms.len());
        let mut i = 0;
        while i < syms.len() {
            if i + 1 < syms.len() {
                if let Some(&s) = replace.get(&(syms[i] as usize * SYMBOLS + syms[i + 1] as usize)) {
                    out.push(s);
                    i += 2;
                    continue;
                }
            }
            out.push(syms[i]);
            i += 1;
        }
        syms = out;
        passes += 1;
        if passes % 10 == 0 {
            eprintln!("pass {passes}: {} symbols, {} long, {:.1} s", next, syms.len(), t.elapsed().as_secs_f64());
        }
    }
    let mut counts = vec![0u64; SYMBOLS];
    for &s in &syms {
        counts[s as usize] += 1;
    }
    let lengths = huffman_lengths(&counts);
    let bits: u64 = counts.iter().zip(&lengths).map(|(&c, &l)| c * l as u64).sum();
    let longest = lengths.iter().max().unwrap();
    let grammar = 3 * (next - 256);
    println!(
        "{}: {} bytes -> {} symbols ({} rules, {passes} passes, {:.1} s); Huffman {} bytes (longest code {longest}), grammar {grammar}, total {}",
        args[1],
        data.len(),
        syms.len(),
        next - 256,
        t.elapsed().as_secs_f64(),
        bits / 8,
        bits / 8 + grammar as u64
    );
}
