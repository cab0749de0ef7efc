//! The soak's seeded generator: SplitMix64, so that a case is its seed on every platform
//! (no dependency on a PRNG crate's stream staying the same across versions).

pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo;
        if span == u64::MAX {
            return self.u64();
        }
        lo + self.u64() % (span + 1)
    }

    /// True with probability `pct`%.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.range(0, 99) < pct
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.range(0, xs.len() as u64 - 1) as usize]
    }

    /// A value near the edges of `lo..=hi` more often than a uniform draw gives.
    pub fn edgy(&mut self, lo: u64, hi: u64) -> u64 {
        match self.range(0, 5) {
            0 => lo,
            1 => hi,
            2 => lo.saturating_add(self.range(0, 3)).min(hi),
            3 => hi.saturating_sub(self.range(0, 3)).max(lo),
            _ => self.range(lo, hi),
        }
    }

    /// Up to `len_max` random bytes as text (invalid UTF-8 replaced, as a browser would pass it).
    pub fn junk(&mut self, len_max: u64) -> String {
        let len = self.range(0, len_max);
        let bytes: Vec<u8> = (0..len).map(|_| self.u64() as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}
