//! Rank 0's merge of a point: each rank's lossless result moved into the
//! whole job's stream and target numbers, then added up with the same
//! exact, associative merge the workers of one host use (sums, exact
//! histogram merges, series added interval by interval); and the point's
//! rates over three windows, every rank's times taken from its own exit
//! from the barrier that started the point.

use iosurvey_model::document::{PointWindows, RankPoint, Window};
use iosurvey_report::parallel::done_within;
use iosurvey_run::JobResult;
use serde::{Deserialize, Serialize};

/// What a rank sends rank 0 after each point.
#[derive(Debug, Serialize, Deserialize)]
pub struct RankPart {
    /// Its result over its own streams (its local plan's numbering), or
    /// why its point failed.
    pub result: Result<JobResult, String>,
    /// From its barrier exit to the start of its measured phase.
    pub start_ns: u64,
}

/// A rank's numbering in the whole job's: `streams[l]` is the job's
/// stream of its local stream `l`, and `targets[l]` its target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Maps {
    pub streams: Vec<usize>,
    pub targets: Vec<usize>,
}

/// `r`, a rank's result numbered as its local plan, in the job's numbers
/// (`n_streams` streams).
pub fn globalise(mut r: JobResult, maps: &Maps, n_streams: usize) -> JobResult {
    let mut streams = vec![Default::default(); n_streams];
    for (l, s) in std::mem::take(&mut r.streams).into_iter().enumerate() {
        if let Some(&g) = maps.streams.get(l) {
            streams[g] = s;
        }
    }
    r.streams = streams;
    let target = |l: usize| maps.targets.get(l).copied().unwrap_or(l);
    if let Some(f) = &mut r.first_failure {
        f.stream = maps.streams.get(f.stream).copied().unwrap_or(f.stream);
    }
    if let Some(v) = &mut r.verify {
        for f in &mut v.failures {
            f.target = target(f.target);
        }
    }
    for c in &mut r.cached_at_start {
        c.target = target(c.target);
    }
    r
}

/// The ranks' results of one point, in the job's numbers, added up. A
/// stream belongs to one rank: its figures are moved, not merged (merging
/// would walk every bucket of every histogram once per rank).
pub fn merge(parts: Vec<JobResult>, n_streams: usize) -> JobResult {
    let mut out = JobResult {
        streams: vec![Default::default(); n_streams],
        ..Default::default()
    };
    let empty = iosurvey_run::StreamResult::default();
    for (i, mut p) in parts.into_iter().enumerate() {
        if i == 0 {
            // What the first rank's engines used; `merge` keeps what every
            // rank's used.
            out.engine = p.engine;
        }
        for (a, b) in out.streams.iter_mut().zip(std::mem::take(&mut p.streams)) {
            if b == empty {
                continue;
            }
            if *a == empty {
                *a = b;
            } else {
                a.merge(&b);
            }
        }
        out.merge(&p);
        let p = &p;
        if let Some(s) = p.read_sample {
            let o = out.read_sample.get_or_insert_with(Default::default);
            o.blocks += s.blocks;
            o.zero_blocks += s.zero_blocks;
        }
        out.cached_at_start.extend_from_slice(&p.cached_at_start);
        out.compression_check = out.compression_check.or(p.compression_check);
    }
    // The clock of one host means nothing on another.
    out.measure_start_ns = 0;
    out
}

/// A point's per-rank figures and its three windows, from each rank's own
/// result (in the job's numbers; `None` for a rank with nothing to run)
/// and its start `starts[r]`: a stream shared by several ranks (matrix's
/// array) is taken rank by rank, each from its own start.
pub fn windows(
    index: usize,
    ranks: &[Option<JobResult>],
    starts: &[u64],
    interval_ns: u64,
) -> (PointWindows, Vec<RankPoint>) {
    let per: Vec<RankPoint> = ranks
        .iter()
        .zip(starts)
        .map(|(res, &start)| {
            let mut p = RankPoint {
                index,
                start_ns: start,
                end_ns: start,
                ..Default::default()
            };
            for s in res.iter().flat_map(|r| &r.streams) {
                p.end_ns = p.end_ns.max(start + s.elapsed_ns);
                p.read_ops += s.read.ops;
                p.read_bytes += s.read.bytes;
                p.write_ops += s.write.ops;
                p.write_bytes += s.write.bytes;
                p.errors += s.read.error_count() + s.write.error_count();
            }
            p
        })
        .collect();
    let running: Vec<&RankPoint> = per
        .iter()
        .zip(ranks)
        .filter_map(|(p, r)| r.as_ref().map(|_| p))
        .collect();
    let first_end = running.iter().map(|p| p.end_ns).min().unwrap_or(0);
    let last_end = running.iter().map(|p| p.end_ns).max().unwrap_or(0);
    let last_start = running.iter().map(|p| p.start_ns).max().unwrap_or(0);
    let first_start = running.iter().map(|p| p.start_ns).min().unwrap_or(0);
    // Ops and bytes of every rank done by `t` from the barrier.
    let by = |t: u64| -> (f64, f64) {
        let mut acc = (0.0, 0.0);
        for (res, &start) in ranks.iter().zip(starts) {
            let local = t as f64 - start as f64;
            for s in res.iter().flat_map(|r| &r.streams) {
                for c in [&s.read, &s.write] {
                    let (o, b) = done_within(&c.series.samples, interval_ns, local, s.elapsed_ns);
                    acc.0 += o;
                    acc.1 += b;
                }
            }
        }
        acc
    };
    let window = |start: u64, end: u64| -> Window {
        let end = end.max(start);
        let (o1, b1) = by(end);
        let (o0, b0) = by(start);
        let (ops, bytes) = ((o1 - o0).max(0.0), (b1 - b0).max(0.0));
        let secs = (end - start) as f64 / 1e9;
        let rate = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
        Window {
            start_ns: start,
            end_ns: end,
            ops,
            bytes,
            iops: rate(ops),
            bytes_per_sec: rate(bytes),
        }
    };
    let w = PointWindows {
        index,
        common: window(last_start, first_end),
        first_done: window(first_start, first_end),
        last_done: window(first_start, last_end),
        ..Default::default()
    };
    (w, per)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosurvey_run::StreamResult;
    use iosurvey_stats::ClassStats;

    /// A stream that moved `per_s` bytes (and one op) in each whole second
    /// for `secs` seconds.
    fn stream(per_s: u64, secs: usize) -> StreamResult {
        let mut s = StreamResult::default();
        for k in 0..secs {
            s.read.record(k, per_s, 1000 + k as u64);
        }
        s.elapsed_ns = secs as u64 * 1_000_000_000;
        s
    }

    #[test]
    fn a_ranks_streams_and_failures_take_the_jobs_numbers() {
        let mut r = JobResult {
            streams: vec![stream(10, 1), stream(20, 1)],
            ..Default::default()
        };
        r.first_failure = Some(iosurvey_run::IoFailure {
            stream: 1,
            op: iosurvey_engine::Op::Read,
            offset: 0,
            errno: 5,
            at_ns: 7,
        });
        let maps = Maps {
            streams: vec![3, 1],
            targets: vec![2, 0],
        };
        let g = globalise(r, &maps, 4);
        assert_eq!(g.streams.len(), 4);
        assert_eq!(g.streams[3].read.bytes, 10);
        assert_eq!(g.streams[1].read.bytes, 20);
        assert_eq!(g.streams[0].read.ops, 0);
        assert_eq!(g.first_failure.unwrap().stream, 1);
    }

    #[test]
    fn merged_histograms_count_every_rank_s_ios_and_take_their_extremes() {
        let mut parts = Vec::new();
        for (rank, lat) in [(0usize, 100u64), (1, 5_000), (2, 90_000)] {
            let mut s = StreamResult::default();
            for _ in 0..(rank + 1) * 10 {
                s.read.record(0, 4096, lat);
            }
            let mut streams = vec![StreamResult::default(); 3];
            streams[rank] = s;
            parts.push(JobResult {
                streams,
                ..Default::default()
            });
        }
        let m = merge(parts, 3);
        let mut all = ClassStats::new();
        for s in &m.streams {
            all.merge(&s.read);
        }
        assert_eq!(all.latency.count(), 10 + 20 + 30);
        assert_eq!(all.latency.min(), 100);
        assert_eq!(all.latency.max(), 90_000);
        // The median of all I/Os, not an average of each rank's.
        assert!(all.latency.percentile(50.0) >= 5_000);
        assert!(all.latency.percentile(50.0) < 90_000);
    }

    /// Rank results in the job's numbers: `streams[r]` is rank r's stream.
    fn by_rank(streams: Vec<Option<StreamResult>>) -> Vec<Option<JobResult>> {
        let n = streams.len();
        streams
            .into_iter()
            .enumerate()
            .map(|(r, s)| {
                s.map(|s| {
                    let mut v = vec![StreamResult::default(); n];
                    v[r] = s;
                    JobResult {
                        streams: v,
                        ..Default::default()
                    }
                })
            })
            .collect()
    }

    #[test]
    fn three_windows_from_each_rank_s_own_start() {
        // Rank 0 runs 4 s from 0, rank 1 runs 2 s from 1 s: every rank
        // runs from 1 s to 3 s.
        let ranks = by_rank(vec![Some(stream(100, 4)), Some(stream(50, 2))]);
        let s = 1_000_000_000u64;
        let (w, per) = windows(0, &ranks, &[0, s], s);
        assert_eq!((w.common.start_ns, w.common.end_ns), (s, 3 * s));
        // Rank 0 moved 200 bytes in [1 s, 3 s), rank 1 all its 100.
        assert!((w.common.bytes - 300.0).abs() < 1e-6, "{w:?}");
        assert!((w.common.bytes_per_sec - 150.0).abs() < 1e-6);
        // By 3 s: rank 0's first 300 and rank 1's 100.
        assert_eq!(w.first_done.end_ns, 3 * s);
        assert!((w.first_done.bytes - 400.0).abs() < 1e-6, "{w:?}");
        assert_eq!(w.last_done.end_ns, 4 * s);
        assert!((w.last_done.bytes - 500.0).abs() < 1e-6);
        assert!((w.last_done.bytes_per_sec - 125.0).abs() < 1e-6);
        assert_eq!((per[1].start_ns, per[1].end_ns), (s, 3 * s));
        assert_eq!(per[0].read_bytes, 400);
    }

    #[test]
    fn first_and_last_done_start_at_the_first_start_not_at_the_barrier() {
        // Both ranks measured from 1 s (after a ramp of 1 s).
        let ranks = by_rank(vec![Some(stream(100, 2)), Some(stream(100, 3))]);
        let s = 1_000_000_000u64;
        let (w, _) = windows(0, &ranks, &[s, s], s);
        assert_eq!((w.first_done.start_ns, w.first_done.end_ns), (s, 3 * s));
        assert!((w.first_done.bytes_per_sec - 200.0).abs() < 1e-6, "{w:?}");
        assert_eq!((w.last_done.start_ns, w.last_done.end_ns), (s, 4 * s));
        assert!((w.last_done.bytes - 500.0).abs() < 1e-6, "{w:?}");
    }

    #[test]
    fn a_rank_with_no_stream_does_not_end_the_common_window() {
        let ranks = by_rank(vec![None, Some(stream(100, 2))]);
        let s = 1_000_000_000u64;
        let (w, per) = windows(0, &ranks, &[5, 0], s);
        assert_eq!(w.common.end_ns, 2 * s);
        assert_eq!(per[0].end_ns, per[0].start_ns);
    }

    #[test]
    fn a_stream_shared_by_ranks_is_taken_from_each_rank_s_start() {
        // Matrix's array: both ranks ran their share of stream 0.
        let one = |st: StreamResult| {
            Some(JobResult {
                streams: vec![st],
                ..Default::default()
            })
        };
        let ranks = vec![one(stream(100, 2)), one(stream(100, 2))];
        let s = 1_000_000_000u64;
        let (w, per) = windows(0, &ranks, &[0, s], s);
        // Both run from 1 s to 2 s: rank 0's second second, rank 1's first.
        assert_eq!((w.common.start_ns, w.common.end_ns), (s, 2 * s));
        assert!((w.common.bytes - 200.0).abs() < 1e-6, "{w:?}");
        assert_eq!(per[1].end_ns, 3 * s);
        let merged = merge(ranks.into_iter().flatten().collect(), 1);
        assert_eq!(merged.streams[0].read.bytes, 400);
        assert_eq!(merged.streams[0].read.latency.count(), 4);
    }

    #[test]
    fn a_rank_part_travels_losslessly() {
        let part = RankPart {
            result: Ok(JobResult {
                streams: vec![stream(4096, 3)],
                elapsed_ns: 3,
                ..Default::default()
            }),
            start_ns: 42,
        };
        let bytes = serde_json::to_vec(&part).unwrap();
        let back: RankPart = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back.start_ns, 42);
        assert_eq!(back.result.unwrap(), part.result.unwrap());
    }
}
