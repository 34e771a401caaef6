//! The move kernels on one chunk of random words, one thread: KQRvKQR's chunks as
//! `--mem 2GiB` cuts them (a black chunk of 2^28 positions, a white one of 2^24), and a
//! KRPvKR chunk. The figure of merit of the passes' CPU time.
//!
//! ```sh
//! cargo bench -p tbstream-bench --bench kernels
//! ```

#[path = "../../tests/it/rng.rs"]
mod rng;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rng::Rng;
use tbstream::{Color, KernelBench, Material};

fn kernels(c: &mut Criterion) {
    let cases = [("KQRvKQR", Color::Black, 18), ("KQRvKQR", Color::White, 18), ("KRPvKR", Color::Black, 12)];
    let mut g = c.benchmark_group("kernels");
    g.sample_size(10);
    for (sig, mover, block_bits) in cases {
        // About three quarters of the bits set, as in a chain table's middle steps.
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut chunk =
            KernelBench::new(&Material::parse(sig).unwrap(), mover, block_bits, 5, || rng.next() | rng.next());
        g.throughput(Throughput::Elements(64 * chunk.words() as u64));
        let name = format!("{sig}_{}", if mover == Color::White { "white" } else { "black" });
        g.bench_function(name, |b| b.iter(|| chunk.run()));
    }
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
