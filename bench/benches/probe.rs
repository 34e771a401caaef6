//! Probe rates on one thread: WDL and distance probes of random legal 5-men positions
//! (KQRvKR and its colour swap), tables mapped, the page cache and the block cache warm.
//!
//! The tables are built once into `target/bench-tables` (about 30 s on two cores) and reused;
//! `TBSTREAM_BENCH_TABLES=DIR` points at another folder holding KQRvKR.
//!
//! ```sh
//! cargo bench -p tbstream-bench
//! ```

#[path = "../../tests/it/rng.rs"]
mod rng;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::path::PathBuf;
use tbstream::file::table_path;
use tbstream::Piece;
use tbstream::Role;
use tbstream::SilentProgress;
use tbstream::{generate, GenOptions};
use tbstream::{Color, Material, Position, Tablebase};

/// Positions probed per iteration.
const POSITIONS: usize = 4096;

/// The folder of the 5-men tables, built on first use.
fn tables() -> PathBuf {
    let dir = std::env::var_os("TBSTREAM_BENCH_TABLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-tables"));
    let m = Material::parse("KQRvKR").unwrap();
    if !table_path(&dir, &m).exists() || !table_path(&dir, &m.swapped()).exists() {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        eprintln!("building KQRvKR and its sub-endgames into {} ...", dir.display());
        generate(&[m], &GenOptions::new(&dir, threads), &SilentProgress).expect("building the bench tables");
    }
    dir
}

/// Random legal KQRvKR positions (either colour holding the queen, either side to move),
/// from a fixed seed: random placements, illegal ones rejected.
fn random_positions(n: usize, halfmove: u32) -> Vec<Position> {
    let mut rng = rng::Rng(0x2545_f491_4f6c_dd1du64);
    let mut next = move || rng.next();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let (strong, weak) = if next() % 2 == 0 { (Color::White, Color::Black) } else { (Color::Black, Color::White) };
        let men: Vec<(u8, Piece)> =
            [(strong, Role::King), (strong, Role::Queen), (strong, Role::Rook), (weak, Role::King), (weak, Role::Rook)]
                .iter()
                .map(|&(color, role)| ((next() % 64) as u8, Piece { color, role }))
                .collect();
        let turn = if next() % 2 == 0 { Color::White } else { Color::Black };
        if let Ok(mut pos) = Position::from_men(&men, turn) {
            pos.halfmove = halfmove;
            out.push(pos);
        }
    }
    out
}

fn probes(c: &mut Criterion) {
    let tb = Tablebase::open(&tables()).unwrap();
    let fresh = random_positions(POSITIONS, 0);
    let later = random_positions(POSITIONS, 20);
    // Opens the runs and fills the block cache with the blocks the sample reads.
    let mut counts = [0usize; 3];
    for pos in fresh.iter().chain(&later) {
        counts[(tb.probe(pos).unwrap().wdl + 1) as usize] += 1;
        tb.probe_wdl(pos).unwrap();
    }
    eprintln!("sample of {} positions: {} losses, {} draws, {} wins", 2 * POSITIONS, counts[0], counts[1], counts[2]);

    let mut g = c.benchmark_group("probe_kqrvkr");
    g.throughput(Throughput::Elements(POSITIONS as u64));
    g.bench_function("wdl_clock0_classes", |b| {
        b.iter(|| fresh.iter().map(|p| tb.probe_wdl(black_box(p)).unwrap().as_i8() as i64).sum::<i64>())
    });
    g.bench_function("wdl_clock20_distances", |b| {
        b.iter(|| later.iter().map(|p| tb.probe_wdl(black_box(p)).unwrap().as_i8() as i64).sum::<i64>())
    });
    g.bench_function("distance", |b| {
        b.iter(|| fresh.iter().map(|p| tb.probe(black_box(p)).unwrap().dtz as i64).sum::<i64>())
    });
    g.finish();

    // Best move (a probe per legal move) and the principal line, for scale.
    let mut g = c.benchmark_group("search_kqrvkr");
    let few = &fresh[..256];
    g.throughput(Throughput::Elements(few.len() as u64));
    g.sample_size(10);
    g.bench_function("best_move", |b| {
        b.iter(|| few.iter().filter(|p| tb.best_move(black_box(p)).unwrap().is_some()).count())
    });
    g.finish();
}

criterion_group!(benches, probes);
criterion_main!(benches);
