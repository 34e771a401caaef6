//! How small can a compact table get, and how fast does it decode? Reads a compact table's
//! block sections, decodes every block (exactly the bytes the format compresses: two bit
//! planes per word of classes, a byte per position of distance codes, don't-cares already
//! filled), and compresses them again, block by block, with candidate codecs:
//!
//! - zstd at levels 3, 6, 9 (the generator's default), 12 and 19;
//! - zstd 9 with a dictionary trained on 1 block in 16 of the section (dictionary included);
//! - brotli at quality 9 (4 MiB window);
//! - the order-0 entropy of the bytes (the bound of an adaptive order-0 entropy coder).
//!
//! It prints the sizes (slow codecs on 1 block in SAMPLE_EVERY, scaled), the compression
//! speed, and the time to decode one block with zstd 9.
//!
//!   cargo run --release --example codec_study -- DIR/KQRvKR.tbs [SAMPLE_EVERY]

use std::io::Write;
use std::time::Instant;
use tbstream::file::compact::{CompactTable, Part};

/// Order-0 entropy of `bytes`, in bytes.
fn entropy_bytes(bytes: &[u8]) -> f64 {
    let mut freq = [0u64; 256];
    for &c in bytes {
        freq[c as usize] += 1;
    }
    let n = bytes.len() as f64;
    freq.iter().filter(|&&f| f > 0).map(|&f| -(f as f64) * (f as f64 / n).log2()).sum::<f64>() / 8.0
}

fn brotli_q9(b: &[u8]) -> usize {
    let mut out = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 1 << 16, 9, 22);
        w.write_all(b).expect("brotli");
    }
    out.len()
}

/// Bytes of every `every`-th block with `codec`, scaled to all blocks, and MB/s of input.
fn sampled(blocks: &[Vec<u8>], every: usize, codec: &dyn Fn(&[u8]) -> usize) -> (f64, f64) {
    let t = Instant::now();
    let (mut bytes, mut input, mut n) = (0usize, 0usize, 0usize);
    for b in blocks.iter().step_by(every) {
        bytes += codec(b);
        input += b.len();
        n += 1;
    }
    let secs = t.elapsed().as_secs_f64().max(1e-9);
    (bytes as f64 * blocks.len() as f64 / n.max(1) as f64, input as f64 / secs / 1e6)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: codec_study TABLE.tbs [SAMPLE_EVERY]");
    let every: usize = args.get(2).map_or(4, |s| s.parse().expect("sample every"));
    let table = CompactTable::open(std::path::Path::new(path)).expect("a compact table");
    println!("{path}: {} positions per side, slow codecs on 1 block in {every}", table.header.n_slots);
    println!(
        "| section | stored | entropy | zstd 3 | zstd 6 | zstd 9 | zstd 12 | zstd 19 | zstd 9 + dict | brotli 9 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for part in Part::BLOCKED {
        let n = table.n_blocks(part);
        let mut blocks = Vec::with_capacity(n);
        for i in 0..n {
            let mut b = Vec::new();
            table.block_into(part, i, &mut b).expect("a block");
            blocks.push(b);
        }
        let stored = table.header.parts[part as usize].length as f64;
        let all: Vec<u8> = blocks.concat();
        let zstd = |level: i32| move |b: &[u8]| zstd::bulk::compress(b, level).expect("zstd").len();
        let mut cells = vec![stored, entropy_bytes(&all)];
        let mut speeds = Vec::new();
        for level in [3, 6, 9, 12, 19] {
            let (bytes, speed) = sampled(&blocks, if level >= 12 { every } else { 1 }, &zstd(level));
            cells.push(bytes);
            speeds.push(format!("zstd {level}: {speed:.0} MB/s"));
        }
        let samples: Vec<&[u8]> = blocks.iter().step_by(16).map(|b| &b[..]).collect();
        let dict = zstd::dict::from_samples(&samples, 110 << 10).unwrap_or_default();
        let with_dict = |b: &[u8]| {
            let mut c = zstd::bulk::Compressor::with_dictionary(9, &dict).expect("zstd dictionary");
            c.compress(b).expect("zstd").len()
        };
        let (bytes, _) = sampled(&blocks, 1, &with_dict);
        cells.push(bytes + dict.len() as f64);
        let (bytes, speed) = sampled(&blocks, every, &brotli_q9);
        cells.push(bytes);
        speeds.push(format!("brotli 9: {speed:.0} MB/s"));
        let mb: Vec<String> = cells.iter().map(|b| format!("{:.2} MB", b / 1e6)).collect();
        println!("| {part:?} | {} |", mb.join(" | "));
        // Decoding one block (what a probe pays on a miss).
        let packed: Vec<Vec<u8>> = blocks.iter().map(|b| zstd::bulk::compress(b, 9).expect("zstd")).collect();
        let t = Instant::now();
        for (p, b) in packed.iter().zip(&blocks) {
            zstd::bulk::decompress(p, b.len()).expect("zstd");
        }
        let per_block = t.elapsed().as_secs_f64() / n.max(1) as f64;
        // And with brotli, on the sampled blocks.
        let sample: Vec<&Vec<u8>> = blocks.iter().step_by(every).collect();
        let packed: Vec<Vec<u8>> = sample
            .iter()
            .map(|b| {
                let mut out = Vec::new();
                brotli::CompressorWriter::new(&mut out, 1 << 16, 9, 22).write_all(b).expect("brotli");
                out
            })
            .collect();
        let t = Instant::now();
        for p in &packed {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut brotli::Decompressor::new(&p[..], 1 << 16), &mut out).expect("brotli");
        }
        let brotli_block = t.elapsed().as_secs_f64() / packed.len().max(1) as f64;
        eprintln!(
            "{part:?}: {}; decoding a block: zstd 9 {:.0} us, brotli 9 {:.0} us",
            speeds.join(", "),
            per_block * 1e6,
            brotli_block * 1e6
        );
    }
}
