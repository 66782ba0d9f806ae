//! The latency of each interval, per stream and op: at each interval
//! boundary (the cold path a worker takes once per interval, as its first
//! completion past it comes in) the worker cuts what its histograms
//! recorded since the last boundary; the runner adds the workers' cuts of
//! an interval once every worker is past it, and takes the interval's
//! percentiles from the sum, to the histogram's 3 significant digits.
//! Nothing is added per I/O.

use crate::result::JobResult;
use iosurvey_engine::Op;
use iosurvey_stats::{Histogram, IntervalSample, Mark};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// One interval of one stream's reads or writes, over every worker:
/// its counts, and its latency percentiles (`lat_p50_ns`, `lat_p99_ns`,
/// `lat_p999_ns`) set.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalRow {
    /// The job's stream.
    pub stream: usize,
    pub op: Op,
    /// Interval of the measured phase.
    pub interval: u64,
    pub sample: IntervalSample,
}

/// What a worker recorded in one class since its last cut: all in one
/// interval, as a cut is made when the first completion of the next comes
/// in.
struct Cut {
    stream: usize,
    op: Op,
    interval: u64,
    latency: Histogram,
    sample: IntervalSample,
}

#[derive(Default)]
struct SlotState {
    /// Each class's histogram as of the last cut, by stream and op.
    marks: Vec<Mark>,
    cuts: Vec<Cut>,
    /// Intervals the worker is past.
    passed: u64,
    done: bool,
}

/// Where one worker puts its cuts for the runner.
#[derive(Default)]
pub(crate) struct IntervalSlot(Mutex<SlotState>);

impl IntervalSlot {
    /// Cuts what `r` recorded since the last cut, which is all in
    /// `interval`; the worker is past every interval before `passed`.
    #[cold]
    pub(crate) fn cut(&self, r: &JobResult, interval: usize, passed: u64) {
        let Ok(mut s) = self.0.lock() else { return };
        let s = &mut *s;
        s.marks.resize_with(r.streams.len() * 3, Mark::new);
        for (stream, sr) in r.streams.iter().enumerate() {
            for (k, op) in [Op::Read, Op::Write, Op::Trim].into_iter().enumerate() {
                let c = sr.class(op);
                let mark = &mut s.marks[stream * 3 + k];
                let before: u64 = mark.iter().map(|&(_, n)| n).sum();
                if c.latency.count() == before {
                    continue;
                }
                let sample = c.series.samples.get(interval).copied().unwrap_or_default();
                let latency = c.latency.since(mark, sample.lat_max_ns);
                s.cuts.push(Cut {
                    stream,
                    op,
                    interval: interval as u64,
                    latency,
                    sample,
                });
            }
        }
        s.passed = s.passed.max(passed);
    }

    /// The worker's last cut: it is done.
    pub(crate) fn close(&self, r: &JobResult, interval: usize) {
        self.cut(r, interval, 0);
        if let Ok(mut s) = self.0.lock() {
            s.done = true;
        }
    }
}

/// The runner's side: the cuts of the intervals some worker is not past
/// yet, and the percentiles of those done, kept for the point's result.
#[derive(Default)]
pub(crate) struct IntervalCollector {
    pending: BTreeMap<u64, Vec<Cut>>,
    done: Vec<IntervalRow>,
}

impl IntervalCollector {
    /// Takes the workers' cuts; returns the rows of the intervals every
    /// worker is now past, in order of interval. Once every worker is done,
    /// the rest (the point's last interval, cut by its end) is left for
    /// the call with `finished`, after the workers are joined.
    pub(crate) fn collect(&mut self, slots: &[IntervalSlot], finished: bool) -> Vec<IntervalRow> {
        let mut past = u64::MAX;
        for slot in slots {
            let Ok(mut s) = slot.0.lock() else { continue };
            for c in s.cuts.drain(..) {
                self.pending.entry(c.interval).or_default().push(c);
            }
            if !s.done {
                past = past.min(s.passed);
            }
        }
        let later = match (past, finished) {
            (_, true) => BTreeMap::new(),
            (u64::MAX, false) => return Vec::new(),
            (p, false) => self.pending.split_off(&p),
        };
        let ready = std::mem::replace(&mut self.pending, later);
        let mut rows = Vec::new();
        for (interval, cuts) in ready {
            rows.extend(rows_of(interval, cuts));
        }
        self.done.extend(rows.iter().cloned());
        rows
    }

    /// Puts every interval's percentiles into `result`'s series (whose
    /// counts are the workers' own, merged).
    pub(crate) fn fill(&self, result: &mut JobResult) {
        for row in &self.done {
            let Some(sr) = result.streams.get_mut(row.stream) else {
                continue;
            };
            let series = &mut sr.class_mut(row.op).series.samples;
            if let Some(s) = series.get_mut(row.interval as usize) {
                s.lat_p50_ns = row.sample.lat_p50_ns;
                s.lat_p99_ns = row.sample.lat_p99_ns;
                s.lat_p999_ns = row.sample.lat_p999_ns;
            }
        }
    }
}

/// The rows of one interval: the workers' cuts of each class added up.
fn rows_of(interval: u64, cuts: Vec<Cut>) -> Vec<IntervalRow> {
    let mut by_class: BTreeMap<(usize, u8), (Histogram, IntervalSample)> = BTreeMap::new();
    for c in cuts {
        let (h, s) = by_class
            .entry((c.stream, c.op as u8))
            .or_insert_with(|| (Histogram::new(), IntervalSample::default()));
        h.merge(&c.latency);
        s.ops += c.sample.ops;
        s.bytes += c.sample.bytes;
        s.lat_sum_ns += c.sample.lat_sum_ns;
        s.lat_max_ns = s.lat_max_ns.max(c.sample.lat_max_ns);
    }
    by_class
        .into_iter()
        .map(|((stream, op), (h, mut sample))| {
            sample.lat_p50_ns = h.percentile(50.0);
            sample.lat_p99_ns = h.percentile(99.0);
            sample.lat_p999_ns = h.percentile(99.9);
            IntervalRow {
                stream,
                op: [Op::Read, Op::Write, Op::Trim][op as usize],
                interval,
                sample,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::StreamResult;

    fn one_stream() -> JobResult {
        let mut r = JobResult::default();
        r.streams.resize(1, StreamResult::default());
        r
    }

    #[test]
    fn an_interval_is_ready_once_every_worker_is_past_it() {
        let slots = [IntervalSlot::default(), IntervalSlot::default()];
        let (mut a, mut b) = (one_stream(), one_stream());
        let mut all = Histogram::new();
        for k in 0..100u64 {
            a.streams[0].read.record(0, 4096, 1_000 + k * 10);
            all.record(1_000 + k * 10);
        }
        for k in 0..100u64 {
            b.streams[0].read.record(0, 4096, 500_000 + k * 1_000);
            all.record(500_000 + k * 1_000);
        }
        let mut c = IntervalCollector::default();
        slots[0].cut(&a, 0, 1);
        assert!(
            c.collect(&slots, false).is_empty(),
            "worker 1 is not past 0 yet"
        );
        slots[1].cut(&b, 0, 1);
        let rows = c.collect(&slots, false);
        assert_eq!(rows.len(), 1);
        let s = rows[0].sample;
        assert_eq!(s.ops, 200);
        assert_eq!(s.lat_p50_ns, all.percentile(50.0), "over both workers");
        assert_eq!(s.lat_p99_ns, all.percentile(99.0));
        assert!(s.lat_p50_ns <= s.lat_p99_ns && s.lat_p999_ns <= s.lat_max_ns);
        assert_eq!(s.lat_max_ns, 599_000);
        // Interval 1: only what came after the cut.
        a.streams[0].read.record(1, 4096, 7_000);
        slots[0].close(&a, 1);
        slots[1].close(&b, 1);
        assert!(
            c.collect(&slots, false).is_empty(),
            "the last is left for the end"
        );
        let rows = c.collect(&slots, true);
        assert_eq!(rows.len(), 1, "worker 1 did nothing in interval 1");
        assert_eq!((rows[0].interval, rows[0].sample.ops), (1, 1));
        assert_eq!(rows[0].sample.lat_p99_ns, 7_000);
        let mut merged = a.clone();
        merged.merge(&b);
        c.fill(&mut merged);
        let series = &merged.streams[0].read.series.samples;
        assert_eq!(series[0].lat_p99_ns, all.percentile(99.0));
        assert_eq!(series[1].lat_p50_ns, 7_000);
    }
}
