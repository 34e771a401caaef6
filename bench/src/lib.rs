//! Empty: the benchmarks are in `benches/` (`cargo bench -p tbstream-bench`).
