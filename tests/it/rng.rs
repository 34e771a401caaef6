//! The tests' deterministic generator. `bench/benches/probe.rs` draws its positions from it too (it
//! includes this file by path and uses `next` only; `below` is in `util.rs`).

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}
