//! The lines of `--live`: for each interval of the measured phase, one
//! JSON line per target and direction (reads, writes) with the point's
//! label, the interval's ops and bytes and their rates, and its mean, p99
//! and largest latency. Each starts `{"live":"interval",` so that `grep`
//! finds them. The interval's latencies are the workers' histograms cut
//! at its ends (3 significant digits); a target that several streams share
//! shows the highest of their p99s. Each point ends with one line per
//! target and direction marked `partial`, cut by the point's end, that
//! carries the rest of the point's totals, so that the lines add up to
//! them (under MPI, the interval lines are rank 0's own I/O and the
//! partial ones carry every other rank's).

use iosurvey_engine::Op;
use iosurvey_run::{IntervalRow, JobResult};
use iosurvey_workload::Point;
use serde::Serialize;
use std::collections::BTreeMap;

/// One line of `--live`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub(crate) struct LiveLine {
    /// Always `"interval"`: the line's kind, first so that `grep` finds it.
    live: &'static str,
    pub point: usize,
    label: String,
    pub interval: u64,
    pub target: String,
    /// `read`, `write` or `trim`.
    pub dir: &'static str,
    /// End of the interval, from the start of the measured phase.
    t_ns: u64,
    /// Its length.
    dt_ns: u64,
    pub ops: u64,
    pub bytes: u64,
    iops: f64,
    bytes_per_sec: f64,
    /// Mean, 99th percentile and largest latency of the interval's ops;
    /// `null` when it had none (or, on a partial line, when they were
    /// another rank's).
    pub lat_mean_ns: Option<u64>,
    pub lat_p99_ns: Option<u64>,
    lat_max_ns: Option<u64>,
    pub partial: bool,
}

/// One target's reads or writes in one interval, its streams added up.
#[derive(Default, Clone, Copy)]
struct Sum {
    ops: u64,
    /// The ops `lat_sum_ns` is over (a partial line's ops may be more).
    timed_ops: u64,
    bytes: u64,
    lat_sum_ns: u64,
    lat_p99_ns: u64,
    lat_max_ns: u64,
}

type Key = (String, &'static str);

/// What a point's lines have carried so far, and its last interval, kept
/// for the partial lines.
#[derive(Default)]
pub(crate) struct LiveLines {
    point: usize,
    label: String,
    interval_ns: u64,
    carried: BTreeMap<Key, (u64, u64)>,
    /// The point's last interval (when the workers were done), and its
    /// sums.
    held: Option<(u64, BTreeMap<Key, Sum>)>,
    /// The end of the last interval written.
    written_to: u64,
}

fn dir(op: Op) -> &'static str {
    op.name()
}

/// The name of the target of the point's stream `stream`.
fn target_of(point: &Point, stream: usize) -> String {
    let job = &point.job;
    job.streams
        .get(stream)
        .and_then(|s| job.targets.get(s.target))
        .map_or_else(|| "?".to_string(), |t| t.path.display().to_string())
}

impl LiveLines {
    pub(crate) fn start(&mut self, point: &Point) {
        *self = LiveLines {
            point: point.index,
            label: point.label.clone(),
            interval_ns: (point.job.interval.as_nanos() as u64).max(1),
            ..LiveLines::default()
        };
    }

    /// The lines of `rows`; with `last`, the rows of the latest interval
    /// among them are the point's last, kept for [`LiveLines::finish`].
    pub(crate) fn rows(
        &mut self,
        point: &Point,
        rows: &[IntervalRow],
        last: bool,
    ) -> Vec<LiveLine> {
        let mut by: BTreeMap<u64, BTreeMap<Key, Sum>> = BTreeMap::new();
        for r in rows {
            let s = by
                .entry(r.interval)
                .or_default()
                .entry((target_of(point, r.stream), dir(r.op)))
                .or_default();
            s.ops += r.sample.ops;
            s.timed_ops += r.sample.ops;
            s.bytes += r.sample.bytes;
            s.lat_sum_ns += r.sample.lat_sum_ns;
            s.lat_p99_ns = s.lat_p99_ns.max(r.sample.lat_p99_ns);
            s.lat_max_ns = s.lat_max_ns.max(r.sample.lat_max_ns);
        }
        if last {
            self.held = by.pop_last();
        }
        let mut out = Vec::new();
        for (interval, sums) in by {
            for (key, s) in sums {
                let end = (interval + 1).saturating_mul(self.interval_ns);
                self.written_to = self.written_to.max(end);
                out.push(self.line(interval, key, s, (end, self.interval_ns), false));
            }
        }
        out
    }

    fn line(
        &mut self,
        interval: u64,
        key: Key,
        s: Sum,
        (t_ns, dt_ns): (u64, u64),
        partial: bool,
    ) -> LiveLine {
        let c = self.carried.entry(key.clone()).or_default();
        c.0 += s.ops;
        c.1 += s.bytes;
        let per_sec = |v: u64| match dt_ns {
            0 => 0.0,
            dt => v as f64 * 1e9 / dt as f64,
        };
        let timed = s.lat_max_ns > 0;
        LiveLine {
            live: "interval",
            point: self.point,
            label: self.label.clone(),
            interval,
            target: key.0,
            dir: key.1,
            t_ns,
            dt_ns,
            ops: s.ops,
            bytes: s.bytes,
            iops: per_sec(s.ops),
            bytes_per_sec: per_sec(s.bytes),
            lat_mean_ns: (timed && s.timed_ops > 0).then(|| s.lat_sum_ns / s.timed_ops),
            lat_p99_ns: (timed && s.lat_p99_ns > 0).then_some(s.lat_p99_ns),
            lat_max_ns: timed.then_some(s.lat_max_ns),
            partial,
        }
    }

    /// The point's last lines: one per target and direction that moved
    /// anything, carrying what the earlier lines did not of `result`
    /// (the whole job's under MPI), with the last interval's latencies.
    pub(crate) fn finish(&mut self, point: &Point, result: &JobResult) -> Vec<LiveLine> {
        let mut totals: BTreeMap<Key, (u64, u64)> = BTreeMap::new();
        match &result.summarised {
            // Streams summed into one: the point's directions, all targets.
            Some(s) => {
                for op in [Op::Read, Op::Write, Op::Trim] {
                    let c = s.total.class(op);
                    totals.insert(("*".to_string(), dir(op)), (c.ops, c.bytes));
                }
            }
            None => {
                for (i, sr) in result.streams.iter().enumerate() {
                    for op in [Op::Read, Op::Write, Op::Trim] {
                        let c = sr.class(op);
                        let t = totals.entry((target_of(point, i), dir(op))).or_default();
                        t.0 += c.ops;
                        t.1 += c.bytes;
                    }
                }
            }
        }
        let (interval, held) = self.held.take().unwrap_or_default();
        let start = match held.is_empty() {
            true => self.written_to,
            false => interval.saturating_mul(self.interval_ns),
        };
        let end = result.elapsed_ns.max(start);
        let mut out = Vec::new();
        for (key, (ops, bytes)) in totals {
            let before = self.carried.get(&key).copied().unwrap_or_default();
            if ops == 0 && before.0 == 0 {
                continue;
            }
            let mut s = held.get(&key).copied().unwrap_or_default();
            s.ops = ops.saturating_sub(before.0);
            s.bytes = bytes.saturating_sub(before.1);
            let line_interval = match held.is_empty() {
                true => start / self.interval_ns,
                false => interval,
            };
            out.push(self.line(line_interval, key, s, (end, end - start), true));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosurvey_run::StreamResult;
    use iosurvey_stats::IntervalSample;
    use iosurvey_workload::modes::run::{expand, RunSpec};

    fn row(stream: usize, op: Op, interval: u64, ops: u64, p99: u64) -> IntervalRow {
        IntervalRow {
            stream,
            op,
            interval,
            sample: IntervalSample {
                ops,
                bytes: ops * 4096,
                lat_sum_ns: ops * 1000,
                lat_max_ns: p99 + 1,
                lat_p50_ns: 1000,
                lat_p99_ns: p99,
                lat_p999_ns: p99,
            },
        }
    }

    #[test]
    fn lines_per_target_and_direction_end_with_partial_ones_that_add_up() {
        let mut spec = RunSpec::new(vec!["/t/a".into(), "/t/b".into()]);
        spec.size = Some(1 << 20);
        let plan = expand(&spec).unwrap();
        let point = &plan.points[0];
        let mut lines = LiveLines::default();
        lines.start(point);
        let first = lines.rows(
            point,
            &[
                row(0, Op::Read, 0, 10, 5000),
                row(1, Op::Write, 0, 20, 9000),
            ],
            false,
        );
        assert_eq!(first.len(), 2);
        assert_eq!((first[0].target.as_str(), first[0].dir), ("/t/a", "read"));
        assert_eq!((first[1].target.as_str(), first[1].dir), ("/t/b", "write"));
        assert_eq!(first[1].lat_p99_ns, Some(9000));
        assert_eq!(first[1].lat_mean_ns, Some(1000));
        // The workers are done: interval 2 is the point's last, held.
        let rest = lines.rows(
            point,
            &[row(0, Op::Read, 1, 7, 4000), row(0, Op::Read, 2, 3, 6000)],
            true,
        );
        assert_eq!(rest.len(), 1);
        assert_eq!((rest[0].interval, rest[0].ops), (1, 7));
        // The merged result holds 2 more reads of a than the lines (another
        // rank's): the partial line carries them with the last interval's.
        let mut result = JobResult::default();
        result.streams.resize(2, StreamResult::default());
        for _ in 0..22 {
            result.streams[0].read.record(0, 4096, 1000);
        }
        for _ in 0..20 {
            result.streams[1].write.record(0, 4096, 1000);
        }
        let last = lines.finish(point, &result);
        assert_eq!(last.len(), 2, "one per target and direction that moved");
        assert!(last.iter().all(|l| l.partial));
        assert_eq!((last[0].target.as_str(), last[0].ops), ("/t/a", 5));
        assert_eq!(last[0].lat_p99_ns, Some(6000));
        assert_eq!(last[0].lat_mean_ns, Some(1000), "over the I/Os timed here");
        assert_eq!((last[1].target.as_str(), last[1].ops), ("/t/b", 0));
        assert_eq!(last[1].lat_p99_ns, None);
        let all = first.iter().chain(&rest).chain(&last);
        let a_reads: u64 = all
            .filter(|l| l.target == "/t/a" && l.dir == "read")
            .map(|l| l.ops)
            .sum();
        assert_eq!(a_reads, 22, "the lines add up to the result");
    }
}
