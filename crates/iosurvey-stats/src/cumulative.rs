//! A histogram's counts at chosen bounds, cumulative: the buckets of a
//! Prometheus histogram (`le`), to the histogram's resolution.

use crate::buckets;
use crate::histogram::{HIGHEST_NS, LOWEST_NS};
use crate::Histogram;

impl Histogram {
    /// For each of `bounds_ns` (ascending), how many recorded values are
    /// at most it. A value is counted under a bound when the whole of its
    /// bucket is (the bucket's highest value is at most the bound), so a
    /// count is never more than the truth and short of it only by the
    /// values within the histogram's resolution (3 significant digits)
    /// below the bound. Values above one hour are counted as one hour.
    pub fn counts_at_most(&self, bounds_ns: &[u64]) -> Vec<u64> {
        // A bucket's values are all at most `b` when the next bucket starts
        // at `b + 1` or later: the buckets below the one `b + 1` is in.
        let cuts: Vec<usize> = bounds_ns
            .iter()
            .map(|&b| match b.checked_add(1) {
                Some(next) if next <= HIGHEST_NS => buckets::index_of(next.max(LOWEST_NS)),
                _ => buckets::LEN,
            })
            .collect();
        let mut under = self.below_cuts(&cuts);
        // The largest value is known exactly: every value is at most it.
        let (max, total) = (self.max(), self.count());
        for (c, &b) in under.iter_mut().zip(bounds_ns) {
            if total > 0 && b >= max {
                *c = total;
            }
        }
        under
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_cumulative_and_held_by_their_buckets() {
        let mut h = Histogram::new();
        for v in [5_000u64, 9_000, 10_000, 20_000, 40_000, 2_000_000] {
            h.record(v);
        }
        let bounds = [10_000, 25_000, 50_000, 1_000_000];
        let c = h.counts_at_most(&bounds);
        // 10 000 ns itself sits in a bucket reaching past 10 000 when the
        // histogram's largest value is above it: counted under 25 000.
        assert_eq!(c, vec![2, 4, 5, 5]);
        assert!(c.windows(2).all(|w| w[0] <= w[1]));
        assert!(*c.last().unwrap() <= h.count());
    }

    #[test]
    fn every_value_is_counted_merged_decoded_and_out_of_range() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..5000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x % 50_000_000;
            if i % 2 == 0 {
                a.record(v);
            } else {
                b.record(v);
            }
        }
        a.record(0);
        b.record(crate::histogram::HIGHEST_NS * 2);
        a.merge(&b);
        let back = Histogram::from_data(&a.to_data());
        for h in [&a, &back] {
            assert_eq!(h.recorded().map(|(_, n)| n).sum::<u64>(), h.count());
            let top = h.counts_at_most(&[u64::MAX]);
            assert_eq!(top, vec![h.count()]);
        }
    }

    #[test]
    fn a_count_is_never_above_the_truth_nor_short_of_it_beyond_the_resolution() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut values = Vec::new();
        let mut h = Histogram::new();
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // 1 µs to about 1 s, spread over the powers of two.
            let v = 1_000 + (x % 1_000_000) * (1 << ((x >> 60) % 11));
            values.push(v);
            h.record(v);
        }
        let bounds: Vec<u64> = (0..40)
            .map(|k| 1_000 * (1u64 << (k / 2)) * (2 + k % 2))
            .collect();
        let got = h.counts_at_most(&bounds);
        for (b, c) in bounds.iter().zip(&got) {
            let exact = values.iter().filter(|&&v| v <= *b).count() as u64;
            let floor = values.iter().filter(|&&v| v <= b - b / 1000).count() as u64;
            assert!(
                *c <= exact && *c >= floor,
                "at {b}: {c} not in {floor}..={exact}"
            );
        }
    }

    #[test]
    fn the_largest_value_counts_under_its_own_bound() {
        let mut h = Histogram::new();
        h.record(10_000);
        assert_eq!(h.counts_at_most(&[9_999, 10_000]), vec![0, 1]);
        assert_eq!(Histogram::new().counts_at_most(&[1, 2]), vec![0, 0]);
    }
}
