use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let t = Instant::now();
    let table = tbstream::file::compact::CompactTable::open(std::path::Path::new(&args[1])).unwrap();
    eprintln!("open {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    let tb = tbstream::Tablebase::open(std::path::Path::new(&args[2])).unwrap();
    let pos = tbstream::Position::from_fen(&args[3]).unwrap();
    let p = tb.probe(&pos).unwrap();
    eprintln!("probe {:.1} ms {:?}", t.elapsed().as_secs_f64() * 1e3, p);
    let t = Instant::now();
    let b = tb.best_move(&pos).unwrap();
    eprintln!("best {:.1} ms {:?}", t.elapsed().as_secs_f64() * 1e3, b.map(|x| x.0.to_string()));
    let t = Instant::now();
    let c = tb.category(&pos).unwrap();
    eprintln!("category {:.1} ms {:?}", t.elapsed().as_secs_f64() * 1e3, c);
    drop(table);
}
