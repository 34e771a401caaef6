//! How much do capture don't-cares save in the wtm distance section? (issue 28, step 1.)
//!
//! A won wtm position with a capture into a lost btm position of a sub-endgame wins in one
//! ply (code 1) whatever the table says, if a probe searches the captures first: its stored
//! distance is a don't-care. This reads a pawnless compact table's wtm class and distance
//! blocks, finds those positions by probing every capture of every code-1 position, fills
//! them (and every position that is not a win, as the writer does) with the value before
//! them, and compresses the blocks again as the writer does (zstd level 8, minimum match 6).
//!
//!   cargo run --release --example dontcare_study -- DIR KQRvKR

use tbstream::file::compact::{block_positions, class_at, n_blocks, pack_block, BlockData, CompactTable, Part};
use tbstream::file::{table_path, Class};
use tbstream::{Color, Layout, Material, Piece, Position, Role, Tablebase};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dir, name) = (std::path::Path::new(&args[1]), &args[2]);
    let material = Material::parse(name).expect("a material");
    let layout = Layout::new(&material);
    let table = CompactTable::open(&table_path(dir, &material)).expect("the table");
    let tb = Tablebase::open(dir).expect("the tables");
    let n = table.header.n_slots;
    let wdl_bits = 18;
    let mut cls = Vec::new();
    let mut cur_wdl = usize::MAX;
    let (mut before, mut after, mut code1, mut dont) = (0usize, 0usize, 0u64, 0u64);
    let mut squares = vec![0u8; layout.pieces.len()];
    let mut last = 1u8;
    let t = std::time::Instant::now();
    for b in 0..n_blocks(Part::WtmDtz, n) {
        let first = (b as u64) << 16;
        let np = block_positions(Part::WtmDtz, n, b);
        let mut bytes = match table.block(Part::WtmDtz, b).expect("dtz block") {
            BlockData::Constant(v) => vec![v; np as usize],
            BlockData::Bytes(v) => v,
        };
        before += pack_block(&bytes, None, 8).expect("zstd").len();
        for p in 0..np {
            let slot = first + p;
            let wb = (slot >> wdl_bits) as usize;
            if wb != cur_wdl {
                cls = match table.block(Part::WtmWdl, wb).expect("wdl block") {
                    BlockData::Constant(v) => vec![v; 1],
                    BlockData::Bytes(v) => v,
                };
                cur_wdl = wb;
            }
            let class = if cls.len() == 1 {
                match cls[0] {
                    1 => Class::Win,
                    _ => Class::NotWon,
                }
            } else {
                class_at(&cls, slot & ((1 << wdl_bits) - 1))
            };
            let mut care = class == Class::Win;
            if care && bytes[p as usize] == 1 {
                code1 += 1;
                let (bk, wk) = layout.decode_into(layout.index_of_slot(slot), &mut squares);
                let mut men = vec![
                    (wk, Piece { color: Color::White, role: Role::King }),
                    (layout.bk_square(bk), Piece { color: Color::Black, role: Role::King }),
                ];
                for (k, pc) in layout.pieces.iter().enumerate() {
                    men.push((squares[k], Piece { color: pc.color, role: pc.role }));
                }
                if let Ok(pos) = Position::from_men(&men, Color::White) {
                    let wins = pos.legal_moves().into_iter().filter(|m| m.capture).any(|m| {
                        let child = pos.play(m);
                        tb.probe_wdl(&child).map(|w| w.as_i8() == -1).unwrap_or(false)
                    });
                    if wins {
                        care = false;
                        dont += 1;
                    }
                }
            }
            if care {
                last = bytes[p as usize];
            } else {
                bytes[p as usize] = last;
            }
        }
        let constant = bytes.iter().all(|&v| v == bytes[0]);
        after += pack_block(&bytes, constant.then_some(bytes[0]), 8).expect("zstd").len();
        if b % 256 == 0 {
            eprintln!("block {b}: {before} -> {after} bytes, {:.0} s", t.elapsed().as_secs_f64());
        }
    }
    println!("{name}: wtm distance section {before} -> {after} bytes; code-1 wins {code1}, capture don't-cares {dont}");
}
