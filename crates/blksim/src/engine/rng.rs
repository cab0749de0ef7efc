//! Seeded, platform-independent randomness, one stream per component.
//!
//! PCG (rand_pcg's `Pcg64Mcg`) gives the same sequence on every platform. A component's stream
//! is seeded from (run seed, stream id) through SplitMix64, so adding a component never shifts
//! another component's numbers.

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

#[derive(Clone, Debug)]
pub struct Stream(Pcg64Mcg);

/// Stream ids: one range per kind of component.
pub const STREAM_DISK: u64 = 1 << 32;
pub const STREAM_JOB: u64 = 2 << 32;

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Stream {
    pub fn new(seed: u64, stream_id: u64) -> Stream {
        Stream(Pcg64Mcg::seed_from_u64(splitmix64(seed ^ splitmix64(stream_id))))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the tiny bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi);
        lo + self.below(hi - lo + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4).map(|_| Stream::new(7, 1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut s1 = Stream::new(7, 1);
        let mut s2 = Stream::new(7, 2);
        assert_ne!(s1.next_u64(), s2.next_u64());
    }

    #[test]
    fn below_stays_in_range() {
        let mut s = Stream::new(1, 1);
        for n in [1u64, 2, 3, 1000, u64::MAX] {
            for _ in 0..100 {
                assert!(s.below(n) < n);
            }
        }
    }
}
