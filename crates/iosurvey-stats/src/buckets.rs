//! The bucket layout of the latency histogram: HdrHistogram's, for 1 ns to
//! one hour at 3 significant digits, with every bound a constant so that a
//! value's bucket is a few instructions inline.
//!
//! Values below 2,048 have a bucket each. Above, each power of two is cut
//! into 1,024 buckets, so a bucket is never wider than 1/1,024 of its
//! values: 3 significant digits. The layout, and so the encoding, is the
//! `hdrhistogram` crate's for the same bounds; the tests hold the two equal.

/// Buckets below 2,048 ns: one per nanosecond (2 × 10³ rounded up to a
/// power of two, for 3 significant digits).
const SUB_BITS: u32 = 11;
/// Buckets per power of two above 2,048.
const HALF_BITS: u32 = SUB_BITS - 1;
const HALF: usize = 1 << HALF_BITS;
/// Powers of two covered: 2,048 << 31 is past one hour (2^41.7 ns).
const POWERS: usize = 32;
/// Number of buckets.
pub(crate) const LEN: usize = (POWERS + 1) * HALF;

/// The bucket of value `v` (at most [`crate::histogram::HIGHEST_NS`]):
/// its power of two above 2,048 (0 below) picks a block of 1,024 buckets,
/// and its top 11 bits the bucket inside it.
#[inline(always)]
pub(crate) fn index_of(v: u64) -> usize {
    // How many times v is halved to fit in 11 bits.
    let power = 64 - SUB_BITS - (v | ((1 << SUB_BITS) - 1)).leading_zeros();
    ((power as usize) << HALF_BITS) + (v >> power) as usize
}

/// The power of two of bucket `i`: its width is `1 << power(i)`.
fn power(i: usize) -> u32 {
    (i >> HALF_BITS).saturating_sub(1) as u32
}

/// The smallest value bucket `i` holds.
pub(crate) fn lowest(i: usize) -> u64 {
    let p = power(i);
    let top = if i < 2 * HALF {
        i
    } else {
        (i & (HALF - 1)) + HALF
    };
    (top as u64) << p
}

/// The largest value bucket `i` holds: the value the encoding names it by.
pub(crate) fn highest(i: usize) -> u64 {
    lowest(i) + ((1u64 << power(i)) - 1)
}

/// The middle of bucket `i` (rounded up), which the mean is taken over.
pub(crate) fn median(i: usize) -> u64 {
    lowest(i) + ((1u64 << power(i)) >> 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::{HIGHEST_NS, LOWEST_NS, SIGFIG};
    use proptest::prelude::*;

    fn reference() -> hdrhistogram::Histogram<u64> {
        hdrhistogram::Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGFIG).unwrap()
    }

    #[test]
    fn the_layout_is_hdrhistograms_for_the_same_bounds() {
        let h = reference();
        assert_eq!(h.distinct_values(), LEN);
        // One hour is in the last power of two.
        assert!((LEN - HALF..LEN).contains(&index_of(HIGHEST_NS)));
    }

    /// One value at each edge of every bucket, and either side of it.
    fn edges() -> impl Iterator<Item = u64> {
        (0..LEN).flat_map(|i| {
            let (lo, hi) = (lowest(i), highest(i));
            [
                lo.saturating_sub(1),
                lo,
                lo + 1,
                hi.saturating_sub(1),
                hi,
                hi + 1,
            ]
        })
    }

    #[test]
    fn every_bucket_edge_falls_where_hdrhistogram_puts_it() {
        let h = reference();
        for v in edges().filter(|&v| (LOWEST_NS..=HIGHEST_NS).contains(&v)) {
            let i = index_of(v);
            assert!(lowest(i) <= v && v <= highest(i), "{v} not in bucket {i}");
            assert_eq!(lowest(i), h.lowest_equivalent(v), "{v}");
            assert_eq!(highest(i), h.highest_equivalent(v), "{v}");
            assert_eq!(median(i), h.median_equivalent(v), "{v}");
        }
    }

    #[test]
    fn buckets_tile_the_range_in_order() {
        assert_eq!(lowest(1), 1);
        for i in 1..LEN - 1 {
            assert_eq!(highest(i) + 1, lowest(i + 1), "after bucket {i}");
            assert_eq!(index_of(lowest(i)), i);
            assert_eq!(index_of(highest(i)), i);
        }
    }

    proptest! {
        #[test]
        fn a_value_is_counted_where_hdrhistogram_counts_it(v in LOWEST_NS..=HIGHEST_NS) {
            let mut h = reference();
            h.record(v).unwrap();
            let i = index_of(v);
            prop_assert_eq!(h.count_at(highest(i)), 1);
            prop_assert_eq!(highest(i), h.highest_equivalent(v));
            // Three significant digits.
            prop_assert!((highest(i) - lowest(i)) as f64 <= v as f64 / 1000.0);
        }
    }
}
