//! How small can a final table get? A study for the compact format (issue 13): reads a
//! table's value sections, applies candidate transforms, compresses them block by block with
//! candidate codecs, and prints the sizes (bytes for the whole table, scaled from a sample of
//! blocks for the slow codecs) with the order-0 entropy as a bound for an entropy coder.
//!
//!   cargo run --release --example codec_study -- DIR/KQRvKR.tbs [BLOCK_POSITIONS] [SAMPLE_EVERY]
//!
//! Transforms of the 6-bit codes, one byte per position in storage order:
//! - `raw`: as stored (63 for an illegal or broken slot);
//! - `fill`: an illegal slot takes the code of the slot before it (a don't-care);
//! - `fill+rank`: `fill`, then codes renumbered by frequency (0 = most frequent);
//! - `fill word`: an illegal slot takes the code of the slot one word (64 slots) before;
//! - `fill mode`: an illegal slot takes the most frequent code of its word.
//!
//! Codecs: zstd (levels 3 and 19), brotli (quality 9, 4 MiB window).

use std::io::Write;
use tbstream::file::blocks::{encode_index, BlockReader, BlockWriter};
use tbstream::file::TableFile;
use tbstream::Color;

fn codes(file: &TableFile, stm: Color) -> Vec<u8> {
    let n_words = (file.header.n_slots / 64) as usize;
    let mut out = vec![0u8; n_words * 64];
    for w in 0..n_words {
        let planes = file.value_planes(stm, w);
        for (b, code) in out[64 * w..64 * w + 64].iter_mut().enumerate() {
            *code = (0..6).fold(0u8, |c, j| c | ((((planes[j] >> b) & 1) as u8) << j));
        }
    }
    out
}

fn fill(codes: &[u8]) -> Vec<u8> {
    let mut last = 0;
    codes
        .iter()
        .map(|&c| {
            if c != 63 {
                last = c;
            }
            last
        })
        .collect()
}

/// An illegal slot takes the code of the slot one word before (the same white-king square,
/// the previous configuration of the other men), or of the slot before it.
fn fill_word(codes: &[u8]) -> Vec<u8> {
    let mut out = codes.to_vec();
    for i in 0..out.len() {
        if out[i] == 63 {
            out[i] = if i >= 64 && out[i - 64] != 63 {
                out[i - 64]
            } else if i > 0 {
                out[i - 1]
            } else {
                0
            };
        }
    }
    out
}

/// An illegal slot takes the most frequent legal code of its word (64 white-king squares).
fn fill_mode(codes: &[u8]) -> Vec<u8> {
    let mut out = codes.to_vec();
    for word in out.chunks_mut(64) {
        let mut freq = [0u32; 64];
        for &c in word.iter().filter(|&&c| c != 63) {
            freq[c as usize] += 1;
        }
        let mode = (0..64).max_by_key(|&c| freq[c]).unwrap_or(0) as u8;
        for c in word.iter_mut().filter(|c| **c == 63) {
            *c = mode;
        }
    }
    out
}

fn rank(codes: &[u8]) -> Vec<u8> {
    let mut freq = [0u64; 64];
    for &c in codes {
        freq[c as usize] += 1;
    }
    let mut order: Vec<usize> = (0..64).collect();
    order.sort_by_key(|&c| std::cmp::Reverse(freq[c]));
    let mut map = [0u8; 64];
    for (r, &c) in order.iter().enumerate() {
        map[c] = r as u8;
    }
    codes.iter().map(|&c| map[c as usize]).collect()
}

/// Order-0 entropy of `codes` in bytes (the bound of an adaptive order-0 entropy coder).
fn entropy_bytes(codes: &[u8]) -> f64 {
    let mut freq = [0u64; 256];
    for &c in codes {
        freq[c as usize] += 1;
    }
    let n = codes.len() as f64;
    freq.iter().filter(|&&f| f > 0).map(|&f| -(f as f64) * (f as f64 / n).log2()).sum::<f64>() / 8.0
}

/// Total compressed bytes of `data` in blocks of `block` bytes, compressing every `every`-th
/// block and scaling up.
fn blocks(data: &[u8], block: usize, every: usize, codec: &dyn Fn(&[u8]) -> usize) -> f64 {
    let chunks: Vec<&[u8]> = data.chunks(block).collect();
    let sampled: Vec<&&[u8]> = chunks.iter().step_by(every).collect();
    let bytes: usize = sampled.iter().map(|c| codec(c)).sum();
    bytes as f64 * chunks.len() as f64 / sampled.len() as f64
}

fn zstd_level(level: i32) -> impl Fn(&[u8]) -> usize {
    move |b| zstd::bulk::compress(b, level).expect("zstd").len()
}

fn brotli_q9(b: &[u8]) -> usize {
    let mut out = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 1 << 16, 9, 22);
        w.write_all(b).expect("brotli");
    }
    out.len()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: codec_study TABLE.tbs [BLOCK_POSITIONS] [SAMPLE_EVERY]");
    let block: usize = args.get(2).map_or(1 << 18, |s| s.parse().expect("block positions"));
    let every: usize = args.get(3).map_or(8, |s| s.parse().expect("sample every"));
    let file = TableFile::open(std::path::Path::new(path)).expect("a table");
    println!(
        "{path}: {} slots per side, blocks of {block} positions, slow codecs on 1 block in {every}",
        file.header.n_slots
    );
    println!("| side | transform | order-0 entropy | zstd 3 | zstd 19 (sampled) | brotli 9 (sampled) |");
    println!("|---|---|---|---|---|---|");
    let mut totals = [0f64; 4];
    for stm in [Color::White, Color::Black] {
        let raw = codes(&file, stm);
        let filled = fill(&raw);
        let ranked = rank(&filled);
        // Win/draw/loss only (0 not won, 1 won under the rule, 2 won only without it): what a
        // side needs if its distances are searched one ply deep from the other side's.
        let wdl: Vec<u8> = filled
            .iter()
            .map(|&c| match c {
                0 => 0,
                51 if stm == Color::White => 2,
                52 => 2,
                _ => 1,
            })
            .collect();
        let (moded, worded) = (fill_mode(&raw), fill_word(&raw));
        let named = [
            ("raw", &raw),
            ("fill", &filled),
            ("fill+rank", &ranked),
            ("fill word", &worded),
            ("fill mode", &moded),
            ("wdl (fill)", &wdl),
        ];
        for (name, data) in named {
            let sizes = [
                entropy_bytes(data),
                blocks(data, block, 1, &zstd_level(3)),
                blocks(data, block, every, &zstd_level(19)),
                blocks(data, block, every, &brotli_q9),
            ];
            if name == "fill" {
                // The same through the block container, with its index.
                let mut w = BlockWriter::new(Vec::new(), 3);
                for b in data.chunks(block) {
                    w.push(b).expect("compressing");
                }
                let (bytes, entries) = w.finish();
                let index = encode_index(&entries);
                // Decoding speed: every block once (a cold probe decodes one).
                let reader = BlockReader::new(&bytes, &index).expect("index");
                let t = std::time::Instant::now();
                for i in 0..reader.len() {
                    reader.block(i).expect("block");
                }
                let per_block = t.elapsed().as_secs_f64() / reader.len().max(1) as f64;
                println!(
                    "  (container, zstd 3: {} bytes of blocks + {} of index; {:.0} us to decode a block)",
                    bytes.len(),
                    index.len(),
                    per_block * 1e6
                );
            }
            if name == "fill+rank" {
                for (t, s) in totals.iter_mut().zip(sizes) {
                    *t += s;
                }
            }
            let mb = |b: f64| format!("{:.2} MB", b / 1e6);
            println!(
                "| {} | {name} | {} | {} | {} | {} |",
                if stm == Color::White { "wtm" } else { "btm" },
                mb(sizes[0]),
                mb(sizes[1]),
                mb(sizes[2]),
                mb(sizes[3])
            );
        }
    }
    // The final bitbases (won for white, wtm; lost for black, btm), illegal slots as stored:
    // what a table needs beside one side's distances if the other side's are searched.
    for stm in [Color::White, Color::Black] {
        let words = file.bitbase_words(stm).expect("bitbase");
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        println!(
            "{} bitbase: zstd 19 {:.2} MB (of {:.2} MB)",
            if stm == Color::White { "wtm" } else { "btm" },
            blocks(&bytes, block / 8, every, &zstd_level(19)) / 1e6,
            bytes.len() as f64 / 1e6
        );
    }
    println!(
        "both sides, fill+rank: entropy {:.2} MB, zstd 3 {:.2} MB, zstd 19 {:.2} MB, brotli 9 {:.2} MB",
        totals[0] / 1e6,
        totals[1] / 1e6,
        totals[2] / 1e6,
        totals[3] / 1e6
    );
}
