//! What a histogram recorded since a mark: the latencies of one interval,
//! as the difference of the histogram between the interval's two ends.
//! Taken once per interval (a walk over the filled buckets), never per
//! I/O, it keeps the histogram's 3 significant digits.

use crate::buckets;
use crate::Histogram;

/// A histogram's filled buckets as of a moment, (bucket, count) ascending:
/// what [`Histogram::since`] takes the difference from.
pub type Mark = Vec<(u32, u64)>;

impl Histogram {
    /// The values recorded since `mark` was taken, as a histogram of the
    /// same buckets (kept sparse), whose largest value is `max_ns` (the
    /// interval's, known exactly; 0: its last bucket's highest) and smallest its first bucket's lowest
    /// value; `mark` moves to now. The buckets only grow, so every count of
    /// `mark` is in `self` too.
    pub fn since(&self, mark: &mut Mark, max_ns: u64) -> Histogram {
        let now: Mark = self.recorded().map(|(i, n)| (i as u32, n)).collect();
        let mut earlier = mark.iter().peekable();
        let mut out = Histogram::new();
        for &(i, n) in &now {
            while earlier.next_if(|&&(j, _)| j < i).is_some() {}
            let before = earlier.next_if(|&&(j, _)| j == i).map_or(0, |&(_, m)| m);
            if n > before {
                out.sparse.push((i, n - before));
                out.total += n - before;
            }
        }
        if let (Some(&(first, _)), Some(&(last, _))) = (out.sparse.first(), out.sparse.last()) {
            out.min = buckets::lowest(first as usize);
            out.max = match max_ns {
                0 => buckets::highest(last as usize),
                m => m.max(out.min),
            };
        }
        *mark = now;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_is_what_was_recorded_since_its_start() {
        let mut h = Histogram::new();
        let mut mark = Mark::new();
        for v in [1_000u64, 2_000, 3_000] {
            h.record(v);
        }
        let first = h.since(&mut mark, 3_000);
        assert_eq!(first.count(), 3);
        assert_eq!(first.percentile(50.0), h.percentile(50.0));
        let mut second = Histogram::new();
        for v in (0..100u64).map(|k| 50_000 + k * 1_000) {
            h.record(v);
            second.record(v);
        }
        let d = h.since(&mut mark, 149_000);
        assert_eq!(d.count(), 100);
        for p in [50.0, 99.0, 99.9] {
            assert_eq!(d.percentile(p), second.percentile(p), "p{p}");
        }
        assert_eq!(d.max(), 149_000);
        assert!(d.min() >= 49_000 && d.min() <= 50_000, "{}", d.min());
        let none = h.since(&mut mark, 0);
        assert_eq!(none.count(), 0);
        assert_eq!(none.percentile(99.0), 0);
    }
}
