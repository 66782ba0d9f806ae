//! Everything measured for one class of I/O (say, the reads of one stream).

use crate::{Histogram, Series};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The error kind of a short transfer: an I/O that moved fewer bytes than
/// it asked for (none included) without an errno, as at the end of a file
/// truncated under a run. Every errno is positive, so it is counted beside
/// them in [`ClassStats::errors`].
pub const SHORT_TRANSFER: i32 = 0;

/// Ops, bytes, errors, latency and the interval series of one class.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassStats {
    pub ops: u64,
    pub bytes: u64,
    /// Failed ops by errno, short transfers under [`SHORT_TRANSFER`]. A
    /// failed op is not in `ops` nor in the bytes or the latency.
    pub errors: BTreeMap<i32, u64>,
    pub latency: Histogram,
    pub series: Series,
}

/// The first failed I/O of a class, kept so that a report can say where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FirstError {
    pub errno: i32,
    pub offset: u64,
}

impl ClassStats {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one completed op.
    #[inline]
    pub fn record(&mut self, interval: usize, bytes: u64, lat_ns: u64) {
        self.record_n(interval, 1, bytes, lat_ns);
    }

    /// Records `n` completed ops of `bytes` bytes in all that share one
    /// latency: the I/Os of one batch reaped together.
    #[inline]
    pub fn record_n(&mut self, interval: usize, n: u64, bytes: u64, lat_ns: u64) {
        self.ops += n;
        self.bytes += bytes;
        self.latency.record_n(lat_ns, n);
        self.series.record_n(interval, n, bytes, lat_ns);
    }

    /// Records the latency of `n` completed ops that share it, without
    /// counting them: the ops of one batch reaped together, when more of
    /// the class's ops were reaped with them ([`ClassStats::record_count`]
    /// counts them all at once).
    #[inline]
    pub fn record_latency(&mut self, interval: usize, n: u64, lat_ns: u64) {
        self.latency.record_n(lat_ns, n);
        self.series.record_latency(interval, n, lat_ns);
    }

    /// Counts `n` completed ops of `bytes` bytes in all, whose latencies
    /// [`ClassStats::record_latency`] recorded.
    #[inline]
    pub fn record_count(&mut self, interval: usize, n: u64, bytes: u64) {
        self.ops += n;
        self.bytes += bytes;
        self.series.record_count(interval, n, bytes);
    }

    /// Records one failed op: its errno, or [`SHORT_TRANSFER`].
    pub fn record_error(&mut self, errno: i32) {
        *self.errors.entry(errno).or_insert(0) += 1;
    }

    /// Total failed ops.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Adds `other` into `self`. Exact and associative.
    pub fn merge(&mut self, other: &ClassStats) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        for (e, n) in &other.errors {
            *self.errors.entry(*e).or_insert(0) += n;
        }
        self.latency.merge(&other.latency);
        self.series.merge(&other.series);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_counted_by_errno_and_merged() {
        let mut a = ClassStats::new();
        a.record_error(5);
        a.record_error(28);
        let mut b = ClassStats::new();
        b.record_error(5);
        b.record(0, 512, 100);
        a.merge(&b);
        assert_eq!(a.errors[&5], 2);
        assert_eq!(a.errors[&28], 1);
        assert_eq!(a.error_count(), 3);
        assert_eq!(a.ops, 1);
        assert_eq!(a.latency.count(), 1);
    }

    #[test]
    fn latencies_and_counts_recorded_apart_are_what_one_record_gives() {
        let mut whole = ClassStats::new();
        whole.record_n(2, 3, 3 * 4096, 700);
        whole.record_n(2, 2, 2 * 4096, 900);
        let mut apart = ClassStats::new();
        apart.record_latency(2, 3, 700);
        apart.record_latency(2, 2, 900);
        apart.record_count(2, 5, 5 * 4096);
        assert_eq!(apart, whole);
        assert_eq!(apart.ops, 5);
        assert_eq!(apart.latency.count(), 5);
        assert_eq!(apart.series.samples[2].lat_max_ns, 900);
    }

    #[test]
    fn short_transfers_are_their_own_kind_beside_errnos() {
        let mut a = ClassStats::new();
        a.record_error(SHORT_TRANSFER);
        a.record_error(5);
        let mut b = ClassStats::new();
        b.record_error(SHORT_TRANSFER);
        a.merge(&b);
        assert_eq!(a.errors[&SHORT_TRANSFER], 2);
        assert_eq!(a.errors[&5], 1);
        assert_eq!((a.ops, a.bytes, a.latency.count()), (0, 0, 0));
    }
}
