//! Rank 0's merge of a point, linear in the job's streams: each rank
//! numbers its own streams as the job's and works out its own share of
//! the point's windows, then rank 0 takes the ranks' parts one at a time
//! and adds each straight into the whole job's result with the same
//! exact, associative merge the workers of one host use (sums, exact
//! histogram merges, series added interval by interval). Rank 0 holds the
//! merged result and one rank's part, never every rank's.
//!
//! The point's rates over three windows need every rank's figures at only
//! four instants (the first and last start, the first and last end, each
//! rank's times taken from its own exit from the barrier that started the
//! point): the ranks agree on those with one reduction of four numbers,
//! and each sends what it had done by each.

use iosurvey_model::document::{PointWindows, RankPoint, StreamDetail, Window};
use iosurvey_model::result::{StreamSummary, Summarised};
use iosurvey_report::parallel::done_within;
use iosurvey_run::{JobResult, StreamResult};
use serde::{Deserialize, Serialize};
use std::collections::btree_map::{BTreeMap, Entry};

/// A rank's numbering in the whole job's: `streams[l]` is the job's
/// stream of its local stream `l`, and `targets[l]` its target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Maps {
    pub streams: Vec<usize>,
    pub targets: Vec<usize>,
}

/// The four instants of a point's windows, in nanoseconds from the
/// barrier, over the ranks that ran: the last start, the first end, the
/// first start and the last end (0 each when no rank ran).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Instants(pub [u64; 4]);

impl Instants {
    /// From the largest over the ranks of each of [`RankPart::seen`].
    pub fn from_largest(v: &[u64]) -> Instants {
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        // A rank that did not run sent 0 for each: a smallest of
        // `u64::MAX` means none ran.
        let least = |i: usize| match u64::MAX - at(i) {
            u64::MAX => 0,
            x => x,
        };
        Instants([at(0), least(1), least(2), at(3)])
    }
}

/// What a rank sends rank 0 after each point: a small head (its result
/// but its streams, its figures) and its streams' [`Body`], each encoded
/// before the point's barrier, then what it had done by the point's
/// instants.
#[derive(Debug, Serialize, Deserialize)]
pub struct RankPart {
    /// Its result with its streams taken out (they are in `streams`), or
    /// why its point failed.
    pub result: Result<JobResult, String>,
    /// Each of its streams, with its number in the job: on the rank, all
    /// of them; decoded on rank 0, none (they are in the [`Body`]).
    #[serde(skip)]
    pub streams: Vec<(usize, StreamResult)>,
    /// Its own figures of the point.
    pub figures: RankPoint,
    /// Whether it ran: a result, and a stream of its own.
    pub ran: bool,
    /// Ops and bytes it had done by each of the point's [`Instants`]:
    /// known only after the reduction that follows the point's barrier,
    /// it travels after the part's encoding ([`RankPart::encode`]), which
    /// is made before that barrier.
    #[serde(skip)]
    pub done: [[f64; 2]; 4],
}

/// A rank's streams as they travel, in a compact binary encoding
/// (postcard): each whole, or (`--stream-detail summary`) each one's
/// summary and the exact merge of all of them, so that rank 0 decodes a
/// few numbers per stream and two histograms per rank. A stream that
/// ranks share (matrix's array) travels whole either way: its parts are
/// merged exactly on rank 0.
/// Decoded on rank 0, its summaries are left in their encoding until
/// [`Merger::add`] decodes each straight into its place.
#[derive(Debug, Default, PartialEq)]
pub struct Body {
    pub whole: Vec<(usize, StreamResult)>,
    /// The merge of every stream of the rank (summary only).
    pub total: Option<StreamResult>,
    /// Encoded last ([`Sent`]): [`RankPart::decode`] keeps them in
    /// `encoded`.
    pub summaries: Vec<(usize, StreamSummary)>,
    /// The encoding of more summaries, as postcard encodes `summaries`.
    pub encoded: Vec<u8>,
}

impl Body {
    /// A whole body (each stream whole) as a summarised one: each stream's
    /// summary, but those `shared` says ranks share, kept whole, and the
    /// merge of all.
    pub fn summarised(self, shared: impl Fn(usize) -> bool) -> Body {
        let (summaries, total) = summarise(&self.whole, &shared);
        Body {
            whole: self.whole.into_iter().filter(|(g, _)| shared(*g)).collect(),
            total: Some(total),
            summaries,
            encoded: Vec::new(),
        }
    }
}

/// A [`Body`] but its summaries, as they are decoded.
#[derive(Deserialize)]
struct Front {
    whole: Vec<(usize, StreamResult)>,
    total: Option<StreamResult>,
}

/// A [`Body`] as it is encoded, its whole streams borrowed.
#[derive(Serialize)]
struct Sent<'a> {
    whole: Vec<&'a (usize, StreamResult)>,
    total: Option<StreamResult>,
    summaries: Vec<(usize, StreamSummary)>,
}

/// The summaries of `streams` but those `shared` says ranks share, and
/// the merge of all of them.
fn summarise(
    streams: &[(usize, StreamResult)],
    shared: &impl Fn(usize) -> bool,
) -> (Vec<(usize, StreamSummary)>, StreamResult) {
    let summaries = streams
        .iter()
        .filter(|(g, _)| !shared(*g))
        .map(|(g, s)| (*g, StreamSummary::of(s)))
        .collect();
    (
        summaries,
        Summarised::total_of(streams.iter().map(|(_, s)| s)),
    )
}

/// Each summary of a [`Body`], those it holds and those still `encoded`;
/// an encoding cut short ends them with its error.
fn each_summary(
    held: Vec<(usize, StreamSummary)>,
    encoded: &[u8],
    mut f: impl FnMut(usize, StreamSummary),
) -> Result<(), String> {
    {
        for (g, s) in held {
            f(g, s);
        }
        if encoded.is_empty() {
            return Ok(());
        }
        let e = |e: postcard::Error| format!("its stream summaries: {e}");
        let (n, mut rest) = postcard::take_from_bytes::<usize>(encoded).map_err(e)?;
        for _ in 0..n {
            let ((g, s), r) =
                postcard::take_from_bytes::<(usize, StreamSummary)>(rest).map_err(e)?;
            f(g, s);
            rest = r;
        }
        Ok(())
    }
}

/// Bytes of [`RankPart::done`] after a part's encoding.
const DONE_BYTES: usize = 4 * 2 * 8;

impl RankPart {
    /// A rank's part of point `index`: `result` numbered as its local
    /// plan, `maps` to the job's numbers, `start_ns` from its barrier exit
    /// to the start of its measured phase.
    pub fn new(
        index: usize,
        result: Result<JobResult, String>,
        start_ns: u64,
        maps: &Maps,
    ) -> RankPart {
        let mut figures = RankPoint {
            index,
            start_ns,
            end_ns: start_ns,
            ..Default::default()
        };
        let (result, streams, ran) = match result {
            // A rank with nothing to run adds nothing (not even its
            // engine's features).
            Ok(_) if maps.streams.is_empty() => (Ok(JobResult::default()), Vec::new(), false),
            Ok(mut r) => {
                for s in &r.streams {
                    figures.end_ns = figures.end_ns.max(start_ns + s.elapsed_ns);
                    figures.read_ops += s.read.ops;
                    figures.read_bytes += s.read.bytes;
                    figures.write_ops += s.write.ops;
                    figures.write_bytes += s.write.bytes;
                    figures.errors +=
                        s.read.error_count() + s.write.error_count() + s.trim.error_count();
                }
                let streams = globalise(&mut r, maps);
                (Ok(r), streams, true)
            }
            Err(e) => (Err(e), Vec::new(), false),
        };
        RankPart {
            result,
            streams,
            figures,
            ran,
            done: [[0.0; 2]; 4],
        }
    }

    /// Its streams as they travel, each whole (`Full`): moved out of the
    /// part. Rank 0 takes its own this way, after
    /// [`RankPart::count_done`].
    pub fn take_whole(&mut self) -> Body {
        Body {
            whole: std::mem::take(&mut self.streams),
            ..Body::default()
        }
    }

    /// Its streams as they travel when summarised (`Summary`): each one's
    /// summary (but those `shared(g)` says ranks share, copied whole) and
    /// the merge of all. The part keeps its streams, for
    /// [`RankPart::count_done`].
    pub fn summary_body(&self, shared: impl Fn(usize) -> bool) -> Body {
        let (summaries, total) = summarise(&self.streams, &shared);
        Body {
            whole: self
                .streams
                .iter()
                .filter(|(g, _)| shared(*g))
                .cloned()
                .collect(),
            total: Some(total),
            summaries,
            encoded: Vec::new(),
        }
    }

    /// The part's encoding with its streams as [`RankPart::take_whole`]
    /// or [`RankPart::summary_body`] give them (borrowed, not copied), but for its `done` (made before
    /// the point's barrier, so that no rank's encoding is in rank 0's
    /// cost: each rank encodes its own, in parallel): the head's length (4
    /// bytes), the head (JSON), the body (postcard).
    pub fn encode(&self, detail: StreamDetail, shared: impl Fn(usize) -> bool) -> Vec<u8> {
        let head = serde_json::to_vec(self).expect("a result encodes");
        let mut v = Vec::with_capacity(4 + head.len() + 64);
        v.extend_from_slice(&(head.len() as u32).to_le_bytes());
        v.extend_from_slice(&head);
        let body = if detail.is_full() {
            Sent {
                whole: self.streams.iter().collect(),
                total: None,
                summaries: Vec::new(),
            }
        } else {
            let (summaries, total) = summarise(&self.streams, &shared);
            Sent {
                whole: self.streams.iter().filter(|(g, _)| shared(*g)).collect(),
                total: Some(total),
                summaries,
            }
        };
        let mut v = postcard::to_extend(&body, v).expect("streams encode");
        v.reserve_exact(DONE_BYTES);
        v
    }

    /// Adds `done` (counted after the barrier) to an [`RankPart::encode`]d
    /// part.
    pub fn append_done(&self, encoded: &mut Vec<u8>) {
        for x in self.done.iter().flatten() {
            encoded.extend_from_slice(&x.to_le_bytes());
        }
    }

    /// A part and its body from their encoding and the `done` after it.
    pub fn decode(bytes: &[u8]) -> Result<(RankPart, Body), String> {
        let short = || format!("{} bytes, too short", bytes.len());
        let at = bytes.len().checked_sub(DONE_BYTES).ok_or_else(short)?;
        let (len, rest) = bytes[..at].split_first_chunk::<4>().ok_or_else(short)?;
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return Err(short());
        }
        let (head, body) = rest.split_at(len);
        let mut p: RankPart = serde_json::from_slice(head).map_err(|e| e.to_string())?;
        let (front, encoded) =
            postcard::take_from_bytes::<Front>(body).map_err(|e| format!("its streams: {e}"))?;
        let body = Body {
            whole: front.whole,
            total: front.total,
            summaries: Vec::new(),
            encoded: encoded.to_vec(),
        };
        let mut xs = bytes[at..].chunks_exact(8).map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            f64::from_le_bytes(b)
        });
        for d in p.done.iter_mut().flatten() {
            *d = xs.next().unwrap_or(0.0);
        }
        Ok((p, body))
    }

    /// What this rank adds to the reduction of the point's instants:
    /// the largest of each over the ranks is [`Instants::from_largest`]'s
    /// input (the smallest taken as the largest of `u64::MAX - v`).
    pub fn seen(&self) -> [u64; 4] {
        if !self.ran {
            return [0; 4];
        }
        let (s, e) = (self.figures.start_ns, self.figures.end_ns);
        [s, u64::MAX - e, u64::MAX - s, e]
    }

    /// Counts what this rank had done by each instant of `at`, from its
    /// own start (series of `interval_ns`).
    pub fn count_done(&mut self, at: &Instants, interval_ns: u64) {
        if !self.ran {
            return;
        }
        let start = self.figures.start_ns as f64;
        for (d, &t) in self.done.iter_mut().zip(&at.0) {
            let local = t as f64 - start;
            *d = [0.0; 2];
            for (_, s) in &self.streams {
                for c in [&s.read, &s.write, &s.trim] {
                    let (o, b) = done_within(&c.series.samples, interval_ns, local, s.elapsed_ns);
                    d[0] += o;
                    d[1] += b;
                }
            }
        }
    }
}

/// Takes `r`'s streams out, each with its number in the job, and gives its
/// other figures the job's numbers.
fn globalise(r: &mut JobResult, maps: &Maps) -> Vec<(usize, StreamResult)> {
    let streams = std::mem::take(&mut r.streams)
        .into_iter()
        .enumerate()
        .filter_map(|(l, s)| maps.streams.get(l).map(|&g| (g, s)))
        .collect();
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
    streams
}

/// The whole job's point on rank 0, each rank's part added as it comes,
/// in rank order.
pub struct Merger {
    out: JobResult,
    /// Whether `out.streams[g]` holds a stream yet.
    filled: Vec<bool>,
    /// Summary: each stream's summary (an empty one until its rank's part
    /// comes), and the merge of the ranks' totals (`out.streams` is then
    /// empty).
    summary: Option<Summarised>,
    /// Summary: the streams ranks share, whole, by number.
    shared: BTreeMap<usize, StreamResult>,
    any: bool,
    done: [[f64; 2]; 4],
    per_rank: Vec<RankPoint>,
    index: usize,
}

impl Merger {
    /// For point `index` of `n_streams` streams, each kept as `detail`
    /// says.
    pub fn new(index: usize, n_streams: usize, detail: StreamDetail) -> Merger {
        let summary = (!detail.is_full()).then(|| Summarised {
            streams: vec![StreamSummary::default(); n_streams],
            total: StreamResult::default(),
        });
        let whole = if summary.is_some() { 0 } else { n_streams };
        Merger {
            out: JobResult {
                streams: vec![Default::default(); whole],
                ..Default::default()
            },
            filled: vec![false; whole],
            summary,
            shared: BTreeMap::new(),
            any: false,
            done: [[0.0; 2]; 4],
            per_rank: Vec::new(),
            index,
        }
    }

    /// Adds the next rank's part and its streams. A stream belongs to one
    /// rank (but matrix's array, whose parts are merged): its figures are
    /// moved, not merged.
    /// A part whose summaries do not decode adds what came before them,
    /// and is the error.
    pub fn add(&mut self, part: RankPart, body: Body) -> Result<(), String> {
        self.per_rank.push(part.figures);
        let (Ok(p), true) = (part.result, part.ran) else {
            return Ok(());
        };
        let Body {
            whole,
            total,
            summaries,
            encoded,
        } = body;
        let mut cut = Ok(());
        for (g, s) in whole {
            if self.summary.is_some() {
                match self.shared.entry(g) {
                    Entry::Occupied(mut o) => o.get_mut().merge(&s),
                    Entry::Vacant(v) => {
                        v.insert(s);
                    }
                }
                continue;
            }
            let (Some(a), Some(f)) = (self.out.streams.get_mut(g), self.filled.get_mut(g)) else {
                continue;
            };
            if *f {
                a.merge(&s);
            } else {
                *a = s;
                *f = true;
            }
        }
        if let Some(sum) = &mut self.summary {
            if let Some(t) = &total {
                sum.total.merge(t);
            }
            let slots = &mut sum.streams;
            cut = each_summary(summaries, &encoded, |g, s| {
                if let Some(slot) = slots.get_mut(g) {
                    *slot = s;
                }
            });
        }
        for (d, x) in self.done.iter_mut().zip(part.done) {
            d[0] += x[0];
            d[1] += x[1];
        }
        if !self.any {
            // What the first rank's engines used; `merge` keeps what
            // every rank's used.
            self.out.engine = p.engine;
            self.any = true;
        }
        let out = &mut self.out;
        out.merge(&p);
        if let Some(s) = p.read_sample {
            let o = out.read_sample.get_or_insert_with(Default::default);
            o.blocks += s.blocks;
            o.zero_blocks += s.zero_blocks;
        }
        out.cached_at_start.extend_from_slice(&p.cached_at_start);
        out.compression_check = out.compression_check.or(p.compression_check);
        cut
    }

    /// Adds a rank whose part did not decode: nothing it measured.
    pub fn add_lost(&mut self) {
        self.per_rank.push(RankPoint {
            index: self.index,
            ..Default::default()
        });
    }

    /// The job's result, its three windows over `at`, and each rank's
    /// figures in rank order.
    pub fn finish(self, at: &Instants) -> (JobResult, PointWindows, Vec<RankPoint>) {
        let [last_start, first_end, first_start, last_end] = at.0;
        let done = |t: u64| -> [f64; 2] {
            let k = at.0.iter().position(|&x| x == t).unwrap_or(0);
            self.done[k]
        };
        let window = |start: u64, end: u64| -> Window {
            let end = end.max(start);
            let ([o1, b1], [o0, b0]) = (done(end), done(start));
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
            index: self.index,
            common: window(last_start, first_end),
            first_done: window(first_start, first_end),
            last_done: window(first_start, last_end),
            ..Default::default()
        };
        let mut out = self.out;
        if let Some(mut sum) = self.summary {
            // The streams ranks share, merged whole, summarised last.
            for (g, s) in &self.shared {
                if let Some(slot) = sum.streams.get_mut(*g) {
                    *slot = StreamSummary::of(s);
                }
            }
            out.summarised = Some(Box::new(sum));
        }
        // The clock of one host means nothing on another.
        out.measure_start_ns = 0;
        (out, w, self.per_rank)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// What `gather_point` does over ranks, in one process: each rank's
    /// (local result, its maps, its start) in rank order, a point of
    /// `n` streams with series of 1 s, every stream whole. A part that is
    /// encoded and decoded, as it travels.
    fn point(
        ranks: Vec<(Option<JobResult>, Maps, u64)>,
        n: usize,
    ) -> (JobResult, PointWindows, Vec<RankPoint>) {
        point_as(ranks, n, StreamDetail::Full, |_| false)
    }

    /// [`point`], each stream kept as `detail` says, the streams that
    /// `shared` says ranks share whole.
    fn point_as(
        ranks: Vec<(Option<JobResult>, Maps, u64)>,
        n: usize,
        detail: StreamDetail,
        shared: fn(usize) -> bool,
    ) -> (JobResult, PointWindows, Vec<RankPoint>) {
        let parts: Vec<RankPart> = ranks
            .into_iter()
            .map(|(r, m, start)| RankPart::new(0, r.ok_or_else(|| "failed".into()), start, &m))
            .collect();
        let mut largest = [0u64; 4];
        for p in &parts {
            for (l, v) in largest.iter_mut().zip(p.seen()) {
                *l = (*l).max(v);
            }
        }
        let at = Instants::from_largest(&largest);
        let mut m = Merger::new(0, n, detail);
        for mut p in parts {
            let mut bytes = p.encode(detail, shared);
            p.count_done(&at, 1_000_000_000);
            p.append_done(&mut bytes);
            let (p, body) = RankPart::decode(&bytes).unwrap();
            m.add(p, body).unwrap();
        }
        m.finish(&at)
    }

    /// Rank r runs job stream r alone (of `n`), as its local stream 0.
    fn own(s: StreamResult, r: usize) -> (Option<JobResult>, Maps) {
        let res = JobResult {
            streams: vec![s],
            ..Default::default()
        };
        let maps = Maps {
            streams: vec![r],
            targets: vec![r],
        };
        (Some(res), maps)
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
        let (m, _, _) = point(vec![(Some(r), maps, 0)], 4);
        assert_eq!(m.streams.len(), 4);
        assert_eq!(m.streams[3].read.bytes, 10);
        assert_eq!(m.streams[1].read.bytes, 20);
        assert_eq!(m.streams[0].read.ops, 0);
        assert_eq!(m.first_failure.unwrap().stream, 1);
    }

    #[test]
    fn a_part_holds_only_its_own_streams_whatever_the_job_s_size() {
        let (r, maps) = own(stream(10, 1), 999_999);
        let p = RankPart::new(0, Ok(r.unwrap()), 0, &maps);
        assert_eq!(p.streams.len(), 1);
        assert_eq!(p.streams[0].0, 999_999);
    }

    #[test]
    fn merged_histograms_count_every_rank_s_ios_and_take_their_extremes() {
        let mut ranks = Vec::new();
        for (rank, lat) in [(0usize, 100u64), (1, 5_000), (2, 90_000)] {
            let mut s = StreamResult::default();
            for _ in 0..(rank + 1) * 10 {
                s.read.record(0, 4096, lat);
            }
            let (r, m) = own(s, rank);
            ranks.push((r, m, 0));
        }
        let (m, _, _) = point(ranks, 3);
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

    #[test]
    fn three_windows_from_each_rank_s_own_start() {
        // Rank 0 runs 4 s from 0, rank 1 runs 2 s from 1 s: every rank
        // runs from 1 s to 3 s.
        let s = 1_000_000_000u64;
        let (a, am) = own(stream(100, 4), 0);
        let (b, bm) = own(stream(50, 2), 1);
        let (_, w, per) = point(vec![(a, am, 0), (b, bm, s)], 2);
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
        let s = 1_000_000_000u64;
        let (a, am) = own(stream(100, 2), 0);
        let (b, bm) = own(stream(100, 3), 1);
        let (_, w, _) = point(vec![(a, am, s), (b, bm, s)], 2);
        assert_eq!((w.first_done.start_ns, w.first_done.end_ns), (s, 3 * s));
        assert!((w.first_done.bytes_per_sec - 200.0).abs() < 1e-6, "{w:?}");
        assert_eq!((w.last_done.start_ns, w.last_done.end_ns), (s, 4 * s));
        assert!((w.last_done.bytes - 500.0).abs() < 1e-6, "{w:?}");
    }

    #[test]
    fn a_rank_with_no_stream_does_not_end_the_common_window() {
        let s = 1_000_000_000u64;
        let (b, bm) = own(stream(100, 2), 1);
        let idle = (Some(JobResult::default()), Maps::default(), 5);
        let (_, w, per) = point(vec![idle, (b, bm, 0)], 2);
        assert_eq!(w.common.end_ns, 2 * s);
        assert_eq!(per[0].end_ns, per[0].start_ns);
        assert_eq!(per[0].start_ns, 5);
    }

    #[test]
    fn a_failed_rank_counts_in_no_window() {
        let s = 1_000_000_000u64;
        let (b, bm) = own(stream(100, 2), 1);
        let (_, w, per) = point(vec![(None, Maps::default(), 0), (b, bm, s)], 2);
        assert_eq!((w.common.start_ns, w.common.end_ns), (s, 3 * s));
        assert!((w.common.bytes - 200.0).abs() < 1e-6, "{w:?}");
        assert_eq!(per.len(), 2);
    }

    #[test]
    fn a_part_cut_short_does_not_decode() {
        let part = RankPart::new(0, Err("x".into()), 0, &Maps::default());
        let bytes = part.encode(StreamDetail::Full, |_| false);
        assert!(RankPart::decode(&bytes).is_err());
        assert!(RankPart::decode(&bytes[..3]).is_err());
    }

    #[test]
    fn no_rank_ran_no_window() {
        let (_, w, _) = point(vec![(None, Maps::default(), 0)], 0);
        assert_eq!(w.last_done, Window::default());
    }

    #[test]
    fn a_stream_shared_by_ranks_is_taken_from_each_rank_s_start() {
        // Matrix's array: both ranks ran their share of stream 0.
        let s = 1_000_000_000u64;
        let (a, am) = own(stream(100, 2), 0);
        let (b, bm) = own(stream(100, 2), 0);
        let (merged, w, per) = point(vec![(a, am, 0), (b, bm, s)], 1);
        // Both run from 1 s to 2 s: rank 0's second second, rank 1's first.
        assert_eq!((w.common.start_ns, w.common.end_ns), (s, 2 * s));
        assert!((w.common.bytes - 200.0).abs() < 1e-6, "{w:?}");
        assert_eq!(per[1].end_ns, 3 * s);
        assert_eq!(merged.streams[0].read.bytes, 400);
        assert_eq!(merged.streams[0].read.latency.count(), 4);
    }

    #[test]
    fn a_rank_part_travels_losslessly() {
        let (r, maps) = own(stream(4096, 3), 0);
        let mut part = RankPart::new(0, Ok(r.unwrap()), 42, &maps);
        for detail in [StreamDetail::Full, StreamDetail::Summary] {
            let body = match detail {
                StreamDetail::Full => Body {
                    whole: part.streams.clone(),
                    ..Body::default()
                },
                StreamDetail::Summary => part.summary_body(|_| false),
            };
            let mut bytes = part.encode(detail, |_| false);
            part.done = [[1.5, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.25]];
            part.append_done(&mut bytes);
            let (back, back_body) = RankPart::decode(&bytes).unwrap();
            assert_eq!(back.done, part.done);
            assert_eq!(back.figures, part.figures);
            assert_eq!(
                (&back_body.whole, &back_body.total),
                (&body.whole, &body.total)
            );
            let mut got = Vec::new();
            each_summary(back_body.summaries, &back_body.encoded, |g, s| {
                got.push((g, s))
            })
            .unwrap();
            assert_eq!(got, body.summaries);
            assert_eq!(back.result.unwrap(), *part.result.as_ref().unwrap());
        }
        let sum = part.summary_body(|_| false);
        assert!(sum.whole.is_empty());
        assert_eq!(sum.summaries[0].1, StreamSummary::of(&part.streams[0].1));
        let streams = part.streams.clone();
        assert_eq!(part.take_whole().whole, streams);
        assert!(part.streams.is_empty());
    }

    /// Three ranks of two streams each, every I/O's latency its own.
    fn six_streams() -> Vec<(Option<JobResult>, Maps, u64)> {
        (0..3)
            .map(|r| {
                let mut res = JobResult::default();
                for k in 0..2u64 {
                    let mut s = StreamResult::default();
                    for i in 0..50 + 10 * (r as u64 * 2 + k) {
                        s.read
                            .record((i % 2) as usize, 4096, 1_000 + i * 997 * (k + 1));
                    }
                    if k == 1 {
                        s.write.record_error(5);
                    }
                    s.elapsed_ns = 2_000_000_000;
                    res.streams.push(s);
                }
                let maps = Maps {
                    streams: vec![2 * r, 2 * r + 1],
                    targets: vec![r],
                };
                (Some(res), maps, 0)
            })
            .collect()
    }

    #[test]
    fn summarised_ranks_give_each_stream_s_figures_and_the_exact_totals() {
        let (full, fw, fper) = point(six_streams(), 6);
        let (sum, sw, sper) = point_as(six_streams(), 6, StreamDetail::Summary, |_| false);
        assert!(sum.streams.is_empty());
        let s = sum.summarised.as_ref().expect("summarised");
        assert_eq!(s.streams.len(), 6);
        for (a, b) in full.streams.iter().zip(&s.streams) {
            assert_eq!(&StreamSummary::of(a), b);
        }
        // The totals are the exact merge, histograms and series included.
        for op in [iosurvey_engine::Op::Read, iosurvey_engine::Op::Write] {
            assert_eq!(full.total(op), sum.total(op));
        }
        assert_eq!(
            full.total(iosurvey_engine::Op::Read).latency.count(),
            6 * 50 + 150
        );
        assert_eq!(sum.error_count(), 3);
        assert_eq!((fw, fper), (sw, sper));
    }

    #[test]
    fn a_shared_stream_is_merged_whole_when_the_others_are_summarised() {
        let (a, am) = own(stream(100, 2), 0);
        let (b, bm) = own(stream(100, 2), 0);
        let (c, cm) = own(stream(7, 2), 1);
        let ranks = vec![(a, am, 0), (b, bm, 0), (c, cm, 0)];
        let (sum, _, _) = point_as(ranks, 2, StreamDetail::Summary, |g| g == 0);
        let s = sum.summarised.as_ref().unwrap();
        assert_eq!(s.streams[0].read.bytes, 400);
        assert_eq!(s.streams[0].read.ops, 4);
        assert_eq!(s.streams[1].read.bytes, 14);
        assert_eq!(s.total.read.bytes, 414);
    }

    #[test]
    fn summaries_cut_short_are_an_error_not_a_point_without_them() {
        let (r, maps) = own(stream(4096, 3), 0);
        let part = RankPart::new(0, Ok(r.unwrap()), 0, &maps);
        let mut bytes = part.encode(StreamDetail::Summary, |_| false);
        // The last summary's last byte gone.
        bytes.pop();
        part.append_done(&mut bytes);
        let (p, body) = RankPart::decode(&bytes).unwrap();
        let mut m = Merger::new(0, 1, StreamDetail::Summary);
        assert!(m.add(p, body).unwrap_err().contains("summaries"));
    }
}
