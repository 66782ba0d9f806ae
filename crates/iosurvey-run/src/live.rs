//! What the workers publish for live metrics while a point runs (`--metrics-file`,
//! `--metrics-push`): each class's totals so far and its latencies counted at
//! the bounds of a Prometheus histogram. A worker publishes once per interval
//! of the measured phase, as its first completion past the boundary comes in,
//! so its hot path pays nothing between; the runner adds the workers' up at
//! its tick for the observer.

use crate::result::JobResult;
use iosurvey_engine::Op;
use std::sync::Mutex;

/// The latency bounds of the live histogram, in nanoseconds: 1 µs to 10 s
/// in steps of 1, 2.5 and 5, from zram and NVMe to a busy disk array.
pub const LIVE_BOUNDS_NS: [u64; 22] = [
    1_000,
    2_500,
    5_000,
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
];

/// One class (a stream's reads or writes) so far in the measured phase.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveClass {
    /// The job's stream.
    pub stream: usize,
    pub op: Op,
    pub ops: u64,
    pub bytes: u64,
    /// Failed I/Os.
    pub errors: u64,
    /// The latencies of `ops`, summed, exactly.
    pub lat_sum_ns: u64,
    /// For each of [`LIVE_BOUNDS_NS`], the I/Os of latency at most it.
    pub at_most: Vec<u64>,
}

/// Every class of a worker, or of the whole point, as of the end of an
/// interval (or of the point).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveSnapshot {
    /// Intervals of the measured phase ended when it was taken.
    pub intervals: u64,
    pub classes: Vec<LiveClass>,
}

impl LiveSnapshot {
    /// The classes of `r` that did anything, as of `intervals` ended.
    pub fn of(r: &JobResult, intervals: u64) -> LiveSnapshot {
        LiveSnapshot::summed(r, intervals, &mut Vec::new())
    }

    /// [`LiveSnapshot::of`], the latencies of each class's intervals
    /// summed on from where `sums` left them (per stream and op: the
    /// intervals summed, their sum), so that a publish costs what the
    /// intervals since the last one hold, not the whole series.
    fn summed(r: &JobResult, intervals: u64, sums: &mut Vec<[u64; 2]>) -> LiveSnapshot {
        sums.resize(r.streams.len() * 3, [0, 0]);
        let mut classes = Vec::new();
        for (stream, s) in r.streams.iter().enumerate() {
            for (k, op) in [Op::Read, Op::Write, Op::Trim].into_iter().enumerate() {
                let c = s.class(op);
                let sum = &mut sums[stream * 3 + k];
                // Every interval but the one running is over: summed once.
                let over = c.series.samples.len().saturating_sub(1);
                let from = (sum[0] as usize).min(over);
                sum[1] += c.series.samples[from..over]
                    .iter()
                    .map(|x| x.lat_sum_ns)
                    .sum::<u64>();
                sum[0] = over as u64;
                let running = c.series.samples.get(over).map_or(0, |x| x.lat_sum_ns);
                let errors = c.error_count();
                if c.ops == 0 && errors == 0 {
                    continue;
                }
                classes.push(LiveClass {
                    stream,
                    op,
                    ops: c.ops,
                    bytes: c.bytes,
                    errors,
                    lat_sum_ns: sum[1] + running,
                    at_most: c.latency.counts_at_most(&LIVE_BOUNDS_NS),
                });
            }
        }
        LiveSnapshot { intervals, classes }
    }

    /// Adds `other` (another worker's) in, class by class.
    pub fn add(&mut self, other: &LiveSnapshot) {
        self.intervals = self.intervals.max(other.intervals);
        for o in &other.classes {
            let same = |c: &&mut LiveClass| c.stream == o.stream && c.op == o.op;
            match self.classes.iter_mut().find(same) {
                Some(c) => {
                    c.ops += o.ops;
                    c.bytes += o.bytes;
                    c.errors += o.errors;
                    c.lat_sum_ns += o.lat_sum_ns;
                    for (a, b) in c.at_most.iter_mut().zip(&o.at_most) {
                        *a += b;
                    }
                }
                None => self.classes.push(o.clone()),
            }
        }
    }
}

/// Where one worker's snapshot is put for the runner, with the worker's
/// running sums of its classes' latencies.
#[derive(Default)]
pub(crate) struct LiveSlot(Mutex<(LiveSnapshot, Vec<[u64; 2]>)>);

impl LiveSlot {
    /// Puts the worker's classes of `r` as of `intervals` ended.
    #[cold]
    pub(crate) fn publish(&self, r: &JobResult, intervals: u64) {
        if let Ok(mut s) = self.0.lock() {
            let (snap, sums) = &mut *s;
            *snap = LiveSnapshot::summed(r, intervals, sums);
        }
    }

    /// The last snapshot put.
    pub(crate) fn read(&self) -> Option<LiveSnapshot> {
        self.0.lock().ok().map(|s| s.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::StreamResult;

    #[test]
    fn workers_add_up_class_by_class() {
        let mut r = JobResult::default();
        r.streams.resize(2, StreamResult::default());
        r.streams[0].read.record(0, 4096, 20_000);
        r.streams[1].write.record(0, 8192, 3_000_000);
        let one = LiveSnapshot::of(&r, 1);
        assert_eq!(one.classes.len(), 2, "the empty classes are left out");
        assert_eq!(one.classes[0].at_most[4], 1, "20 µs is at most 25 µs");
        assert_eq!(one.classes[0].at_most[3], 0, "and more than 10 µs");
        let mut all = one.clone();
        all.add(&LiveSnapshot::of(&r, 2));
        assert_eq!(all.intervals, 2);
        assert_eq!(all.classes[1].ops, 2);
        assert_eq!(all.classes[1].bytes, 16384);
        assert_eq!(all.classes[1].lat_sum_ns, 6_000_000);
        assert_eq!(all.classes[1].at_most.last(), Some(&2));
    }

    #[test]
    fn running_sums_of_latency_equal_the_whole_series() {
        let mut r = JobResult::default();
        r.streams.resize(1, StreamResult::default());
        let slot = LiveSlot::default();
        let mut whole = 0;
        for i in 0..50usize {
            r.streams[0].read.record(i, 4096, 1_000 + i as u64);
            whole += 1_000 + i as u64;
            // Published at the start of interval i + 1, before its I/O.
            if i % 3 == 0 {
                slot.publish(&r, i as u64);
                assert_eq!(slot.read().unwrap().classes[0].lat_sum_ns, whole);
            }
        }
    }
}
