//! A small deterministic generator for the unit tests (xorshift64: shifts 13, 7, 17), one
//! copy instead of one per test module.

/// The generator's state; any seed but 0.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (slightly biased; enough to draw test cases).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
