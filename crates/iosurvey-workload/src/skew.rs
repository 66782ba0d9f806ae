//! Skewed random offsets (`run --dist`, fio's `random_distribution`): a
//! block's rank drawn from a zipf or pareto law, then scattered over the
//! area by a bijection, so that the hot blocks are spread as fio's are
//! and every block keeps exactly one rank.
//!
//! Zipf is drawn by rejection-inversion (Hörmann and Derflinger, "Rejection-
//! inversion to generate variates from monotone discrete distributions",
//! 1996): exact, constant time per draw (a few logarithms and
//! exponentials, rarely a second round), and nothing kept per block, so a
//! device of any size costs the same. Pareto is fio's formula.

use crate::rng::Rng;
use iosurvey_model::Dist;

/// Draws block indices in `0..blocks` with a skewed distribution.
#[derive(Clone, Copy, Debug)]
pub struct Skew {
    law: Law,
    blocks: u64,
    /// Rank r (0-based, hottest first) is block (r * stride + shift) mod
    /// blocks; `stride` is coprime with `blocks`, so this is a bijection.
    stride: u64,
    shift: u64,
}

#[derive(Clone, Copy, Debug)]
enum Law {
    Zipf(Zipf),
    /// u^pow scaled to the last rank.
    Pareto {
        pow: f64,
    },
}

impl Skew {
    /// A skewed draw over `blocks` blocks (> 0) by `dist`; `None` for the
    /// uniform one, which the plain draw serves. `seed` places the hot
    /// blocks.
    pub fn new(dist: Dist, blocks: u64, seed: u64) -> Option<Self> {
        let law = match dist {
            Dist::Uniform => return None,
            Dist::Zipf { theta } => Law::Zipf(Zipf::new(blocks, theta)),
            Dist::Pareto { h } => Law::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
        };
        let blocks = blocks.max(1);
        // A stride near the golden section of the area, moved up to the
        // next value coprime with it: neighbouring ranks land far apart.
        let mut stride = ((blocks as f64 * 0.618_033_988_749_895) as u64).max(1);
        while gcd(stride, blocks) != 1 {
            stride += 1;
        }
        let shift = Rng::new(seed ^ 0x5eed_d157).below(blocks);
        Some(Skew {
            law,
            blocks,
            stride,
            shift,
        })
    }

    /// The rank of the next I/O's block: 0 is the hottest.
    #[inline]
    pub fn rank(&self, rng: &mut Rng) -> u64 {
        let r = match &self.law {
            Law::Zipf(z) => z.sample(rng) - 1,
            Law::Pareto { pow } => ((self.blocks - 1) as f64 * unit(rng).powf(*pow)) as u64,
        };
        r.min(self.blocks - 1)
    }

    /// The block of rank `rank`.
    #[inline]
    pub fn block_of(&self, rank: u64) -> u64 {
        ((u128::from(rank) * u128::from(self.stride) + u128::from(self.shift))
            % u128::from(self.blocks)) as u64
    }

    /// The next I/O's block, in `0..blocks`.
    #[inline]
    pub fn block(&self, rng: &mut Rng) -> u64 {
        self.block_of(self.rank(rng))
    }
}

/// Uniform in [0, 1), 53 bits.
#[inline]
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Zipf over ranks 1..=n with exponent s: P(k) proportional to k^-s.
#[derive(Clone, Copy, Debug)]
struct Zipf {
    n: f64,
    s: f64,
    /// H(1.5) - 1: the top of the inverted range.
    h_x1: f64,
    /// H(n + 0.5): its bottom.
    h_n: f64,
    /// Below this distance from x, k is accepted without the test.
    squeeze: f64,
}

impl Zipf {
    fn new(n: u64, s: f64) -> Self {
        let mut z = Zipf {
            n: n as f64,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            squeeze: 0.0,
        };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(z.n + 0.5);
        z.squeeze = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    #[inline]
    fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + unit(rng) * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.squeeze || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    /// The hat: x^-s.
    #[inline]
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// Its integral, (x^(1-s) - 1) / (1 - s), continuous at s = 1 (ln x).
    #[inline]
    fn big_h(&self, x: f64) -> f64 {
        let lx = x.ln();
        expm1_over((1.0 - self.s) * lx) * lx
    }

    /// The inverse of [`Zipf::big_h`].
    #[inline]
    fn big_h_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (ln1p_over(t) * x).exp()
    }
}

/// ln(1 + x) / x, 1 at 0.
#[inline]
fn ln1p_over(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, 1 at 0.
#[inline]
fn expm1_over(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Share of `draws` draws that fell on the hottest `share` of the
    /// blocks, by the blocks' own counts.
    fn hottest_drawn(dist: Dist, blocks: u64, draws: u32, share: f64) -> f64 {
        let skew = Skew::new(dist, blocks, 7).unwrap();
        let mut rng = Rng::new(3);
        let mut hits = vec![0u32; blocks as usize];
        for _ in 0..draws {
            hits[skew.block(&mut rng) as usize] += 1;
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
        let hot = (blocks as f64 * share) as usize;
        hits[..hot].iter().map(|&h| f64::from(h)).sum::<f64>() / f64::from(draws)
    }

    #[test]
    fn zipf_ranks_follow_their_law() {
        for theta in [0.6, 1.0, 1.2, 2.0] {
            let d = Dist::Zipf { theta };
            let z = Zipf::new(1000, theta);
            let mut rng = Rng::new(1);
            let mut ones = 0u32;
            for _ in 0..200_000 {
                ones += u32::from(z.sample(&mut rng) == 1);
            }
            // P(rank 1) = 1 / sum k^-theta.
            let p1: f64 = 1.0 / (1..=1000).map(|k| f64::from(k).powf(-theta)).sum::<f64>();
            let got = f64::from(ones) / 200_000.0;
            assert!((got - p1).abs() < 0.01, "theta {theta}: {got} vs {p1}");
            let top = hottest_drawn(d, 1000, 200_000, 0.1);
            let want = d.hottest_share(0.1, 1000);
            assert!((top - want).abs() < 0.02, "theta {theta}: {top} vs {want}");
        }
    }

    #[test]
    fn pareto_gives_the_hottest_share_its_law() {
        let d = Dist::Pareto { h: 0.2 };
        let top = hottest_drawn(d, 5000, 200_000, 0.2);
        assert!((top - d.hottest_share(0.2, 5000)).abs() < 0.02, "{top}");
    }

    #[test]
    fn scatter_is_a_bijection_over_the_area() {
        for blocks in [1u64, 2, 10, 97, 1024, 1000] {
            let s = Skew::new(Dist::Pareto { h: 0.3 }, blocks, 5).unwrap();
            let mut seen: Vec<u64> = (0..blocks).map(|r| s.block_of(r)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..blocks).collect::<Vec<_>>());
        }
    }

    #[test]
    fn one_block_is_always_block_zero() {
        let s = Skew::new(Dist::Zipf { theta: 1.2 }, 1, 0).unwrap();
        let mut rng = Rng::new(0);
        assert!((0..100).all(|_| s.block(&mut rng) == 0));
        assert!(Skew::new(Dist::Uniform, 10, 0).is_none());
    }
}
