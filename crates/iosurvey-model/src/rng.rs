//! A small, fast, seeded generator (wyrand) for offsets and op mixes. The
//! same seed gives the same sequence on every machine.

/// wyrand: one add and one 128-bit multiply per value.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        // Spread nearby seeds (seed, seed + 1, ...) apart.
        let mut r = Rng {
            state: seed ^ 0x9e37_79b9_7f4a_7c15,
        };
        r.next_u64();
        r
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.state) * u128::from(self.state ^ 0xe703_7ed1_a0b4_28db);
        (t >> 64) as u64 ^ t as u64
    }

    /// Uniform in `0..n` (n > 0), without modulo bias (Lemire's method).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let a: Vec<u64> = {
            let mut r = Rng::new(5);
            (0..10).map(|_| r.next_u64()).collect()
        };
        let mut r = Rng::new(5);
        assert!(a.iter().all(|&x| x == r.next_u64()));
        let mut other = Rng::new(6);
        assert_ne!(a[0], other.next_u64());
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = Rng::new(1);
        let mut hist = [0u32; 10];
        for _ in 0..100_000 {
            let v = r.below(10);
            hist[v as usize] += 1;
        }
        assert!(
            hist.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{hist:?}"
        );
    }
}
