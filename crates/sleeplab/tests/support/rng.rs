//! A small xorshift generator: deterministic pseudo-random scripts without dependencies.

/// xorshift64; seed it with any non-zero value.
pub struct Rng(pub u64);

impl Rng {
    /// The next value of the sequence.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
