//! Writes every decoded block of a compact table's section to stdout in stored order, a
//! constant block expanded (for studies of other coders on the exact bytes stored: 64 KiB a
//! block, a byte per position of distances, two bit planes per 64 positions of classes).
//!
//!   cargo run --release --example block_dump -- DIR KQRvKR PART > blocks   (PART 0, 1 or 2)

use std::io::Write;
use tbstream::file::compact::{n_blocks, BlockData, CompactTable, Part, DTZ_BLOCK_BITS, WDL_BLOCK_BITS};
use tbstream::file::table_path;
use tbstream::Material;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dir, name) = (std::path::Path::new(&args[1]), &args[2]);
    let part = [Part::WtmWdl, Part::WtmDtz, Part::BtmWdl][args[3].parse::<usize>().expect("a part")];
    let material = Material::parse(name).expect("a material");
    let table = CompactTable::open(&table_path(dir, &material)).expect("the table");
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for b in 0..n_blocks(part, table.header.n_slots) {
        let bytes = match table.block(part, b).expect("a block") {
            BlockData::Constant(v) if part == Part::WtmDtz => vec![v; 1 << DTZ_BLOCK_BITS],
            BlockData::Constant(v) => {
                let plane = |bit: u8| if v & bit != 0 { [0xffu8; 8] } else { [0u8; 8] };
                [plane(1), plane(2)].concat().repeat(1 << (WDL_BLOCK_BITS - 6))
            }
            BlockData::Bytes(v) => v,
        };
        out.write_all(&bytes).expect("stdout");
    }
}
