//! Probe-rate benchmarks (filled in by the probe-API work).
fn main() {}
