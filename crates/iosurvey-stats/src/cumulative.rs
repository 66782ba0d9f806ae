//! A histogram's counts at chosen bounds, cumulative: the buckets of a
//! Prometheus histogram (`le`), to the histogram's resolution.

use crate::buckets;
use crate::Histogram;

impl Histogram {
    /// For each of `bounds_ns` (ascending), how many recorded values are
    /// at most it. A value is counted under a bound when the whole of its
    /// bucket is (the bucket's highest value is at most the bound), so a
    /// count is never more than the truth and short of it only by the
    /// values within the histogram's resolution (3 significant digits)
    /// below the bound. Values above one hour are counted as one hour.
    pub fn counts_at_most(&self, bounds_ns: &[u64]) -> Vec<u64> {
        let mut under = vec![0u64; bounds_ns.len()];
        for (i, n) in self.recorded() {
            let top = buckets::highest(i).min(self.max().max(1));
            // The first bound that holds the bucket, and every one after.
            let first = bounds_ns.partition_point(|&b| b < top);
            if let Some(c) = under.get_mut(first) {
                *c += n;
            }
        }
        let mut sum = 0;
        for c in &mut under {
            sum += *c;
            *c = sum;
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
    fn the_largest_value_counts_under_its_own_bound() {
        let mut h = Histogram::new();
        h.record(10_000);
        assert_eq!(h.counts_at_most(&[9_999, 10_000]), vec![0, 1]);
        assert_eq!(Histogram::new().counts_at_most(&[1, 2]), vec![0, 0]);
    }
}
