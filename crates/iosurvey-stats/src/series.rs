//! A non-cumulative series: what happened in each interval of a job.

use serde::{Deserialize, Serialize};

/// What completed within one interval. Values are sums over the interval,
/// not running totals.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct IntervalSample {
    pub ops: u64,
    pub bytes: u64,
    /// Sum of the latencies of the ops that completed in the interval.
    pub lat_sum_ns: u64,
    /// Largest latency of an op that completed in the interval.
    pub lat_max_ns: u64,
    /// The median latency of the interval's ops, from the difference of
    /// the latency histogram between the interval's ends (3 significant
    /// digits); 0 when not known (an older report, or no ops).
    #[serde(default)]
    pub lat_p50_ns: u64,
    /// The interval's 99th percentile of latency, as `lat_p50_ns`.
    #[serde(default)]
    pub lat_p99_ns: u64,
    /// The interval's 99.9th percentile of latency, as `lat_p50_ns`.
    #[serde(default)]
    pub lat_p999_ns: u64,
}

impl IntervalSample {
    fn merge(&mut self, o: &IntervalSample) {
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.lat_sum_ns += o.lat_sum_ns;
        self.lat_max_ns = self.lat_max_ns.max(o.lat_max_ns);
        // Percentiles do not add: the runner sets them exactly over its
        // workers; over several ranks the higher is kept (never below the
        // merged figure, as a mixture's percentile is at most its parts'
        // highest).
        self.lat_p50_ns = self.lat_p50_ns.max(o.lat_p50_ns);
        self.lat_p99_ns = self.lat_p99_ns.max(o.lat_p99_ns);
        self.lat_p999_ns = self.lat_p999_ns.max(o.lat_p999_ns);
    }
}

/// Samples indexed by interval number from the start of the measured phase.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Series {
    pub samples: Vec<IntervalSample>,
}

impl Series {
    /// Adds one completed op to interval `index`.
    #[inline]
    pub fn record(&mut self, index: usize, bytes: u64, lat_ns: u64) {
        self.record_n(index, 1, bytes, lat_ns);
    }

    /// Adds `n` completed ops of `bytes` bytes in all, each of latency
    /// `lat_ns`, to interval `index`.
    #[inline]
    pub fn record_n(&mut self, index: usize, n: u64, bytes: u64, lat_ns: u64) {
        let s = self.at(index);
        s.ops += n;
        s.bytes += bytes;
        s.lat_sum_ns += lat_ns * n;
        s.lat_max_ns = s.lat_max_ns.max(lat_ns);
    }

    /// Adds the latency of `n` completed ops of `lat_ns` each to interval
    /// `index`, without counting the ops ([`Series::record_count`] does).
    #[inline]
    pub fn record_latency(&mut self, index: usize, n: u64, lat_ns: u64) {
        let s = self.at(index);
        s.lat_sum_ns += lat_ns * n;
        s.lat_max_ns = s.lat_max_ns.max(lat_ns);
    }

    /// Counts `n` completed ops of `bytes` bytes in all in interval
    /// `index`, whose latencies [`Series::record_latency`] added.
    #[inline]
    pub fn record_count(&mut self, index: usize, n: u64, bytes: u64) {
        let s = self.at(index);
        s.ops += n;
        s.bytes += bytes;
    }

    /// The sample of interval `index`, the series extended to hold it
    /// first if need be (one bounds check).
    #[inline(always)]
    fn at(&mut self, index: usize) -> &mut IntervalSample {
        if index < self.samples.len() {
            &mut self.samples[index]
        } else {
            self.grow(index)
        }
    }

    /// Extends the series to hold interval `index`, and returns its
    /// sample: once per interval.
    #[cold]
    fn grow(&mut self, index: usize) -> &mut IntervalSample {
        self.samples.resize(index + 1, IntervalSample::default());
        &mut self.samples[index]
    }

    /// Sums `other` into `self`, interval by interval.
    pub fn merge(&mut self, other: &Series) {
        if other.samples.len() > self.samples.len() {
            self.samples
                .resize(other.samples.len(), IntervalSample::default());
        }
        for (a, b) in self.samples.iter_mut().zip(&other.samples) {
            a.merge(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_is_per_interval_not_cumulative() {
        let mut s = Series::default();
        s.record(0, 10, 5);
        s.record(2, 20, 7);
        s.record(2, 20, 3);
        assert_eq!(s.samples.len(), 3);
        assert_eq!(s.samples[1], IntervalSample::default());
        assert_eq!(s.samples[2].ops, 2);
        assert_eq!(s.samples[2].bytes, 40);
        assert_eq!(s.samples[2].lat_max_ns, 7);
    }

    #[test]
    fn n_ops_at_once_are_n_records() {
        let mut one_by_one = Series::default();
        let mut at_once = Series::default();
        for _ in 0..5 {
            one_by_one.record(1, 4096, 300);
        }
        one_by_one.record(1, 4096, 900);
        at_once.record_n(1, 5, 5 * 4096, 300);
        at_once.record_n(1, 1, 4096, 900);
        assert_eq!(at_once, one_by_one);
        assert_eq!(at_once.samples[1].lat_sum_ns, 5 * 300 + 900);
    }

    #[test]
    fn merge_extends_the_shorter_series() {
        let mut a = Series::default();
        a.record(0, 1, 1);
        let mut b = Series::default();
        b.record(3, 2, 9);
        a.merge(&b);
        assert_eq!(a.samples.len(), 4);
        assert_eq!(a.samples[0].ops + a.samples[3].ops, 2);
    }
}
