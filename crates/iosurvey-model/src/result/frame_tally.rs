//! What the frames of a video workload add up to, in memory that does not
//! grow with the number of frames: counts by status, the fastest, slowest
//! and first failed frame, a histogram of frame times, sums and extremes of
//! the open, I/O and close times, bytes per whole second, and the sums of
//! the last ten seconds in 10 ms bins. Exact and mergeable over workers.

use super::{FrameRecord, FrameStatus};
use std::collections::BTreeMap;

const SEC: u64 = 1_000_000_000;
/// Upper edges of the frame-time histogram's buckets; the last bucket is
/// 1 s or more.
pub const FRAME_HISTOGRAM_EDGES_NS: [u64; 13] = [
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    200_000_000,
    500_000_000,
    1_000_000_000,
];
/// Buckets of the frame-time histogram.
pub const FRAME_HISTOGRAM_BUCKETS: usize = FRAME_HISTOGRAM_EDGES_NS.len() + 1;
/// Width of a bin of the tail: bin `k` holds the frames that ended in
/// `(k * TAIL_BIN_NS, (k + 1) * TAIL_BIN_NS]`.
pub const TAIL_BIN_NS: u64 = 10_000_000;
/// How far back from the last frame's end the tail reaches: the longest
/// `Last Ns` window.
pub const TAIL_NS: u64 = 10 * SEC;
/// Per-frame records a job's result keeps: the first ones by start. The
/// tally covers every frame.
pub const MAX_FRAME_RECORDS: usize = 4096;

/// A frame's time: from its start to its end.
pub fn frame_ns(r: &FrameRecord) -> u64 {
    r.end_ns.saturating_sub(r.start_ns)
}

/// The histogram bucket of a frame time: the first upper edge it is below.
pub fn bucket_of(frame_ns: u64) -> usize {
    FRAME_HISTOGRAM_EDGES_NS
        .iter()
        .position(|&e| frame_ns < e)
        .unwrap_or(FRAME_HISTOGRAM_EDGES_NS.len())
}

/// Sums over a set of transferred frames.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct FrameSums {
    pub frames: u64,
    pub bytes: u64,
    pub open_ns: u64,
    pub io_ns: u64,
    pub close_ns: u64,
    pub frame_ns: u64,
}

impl FrameSums {
    pub fn add(&mut self, r: &FrameRecord) {
        self.frames += 1;
        self.bytes += r.bytes;
        self.open_ns += r.open_ns;
        self.io_ns += r.io_ns;
        self.close_ns += r.close_ns;
        self.frame_ns += frame_ns(r);
    }

    pub fn merge(&mut self, o: &FrameSums) {
        self.frames += o.frames;
        self.bytes += o.bytes;
        self.open_ns += o.open_ns;
        self.io_ns += o.io_ns;
        self.close_ns += o.close_ns;
        self.frame_ns += o.frame_ns;
    }
}

/// Shortest and longest of one part of the transferred frames' times.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Extremes {
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Extremes {
    fn add(this: &mut Option<Extremes>, v: u64) {
        *this = Some(match *this {
            None => Extremes {
                min_ns: v,
                max_ns: v,
            },
            Some(e) => Extremes {
                min_ns: e.min_ns.min(v),
                max_ns: e.max_ns.max(v),
            },
        });
    }

    fn merge(this: &mut Option<Extremes>, o: Option<Extremes>) {
        if let Some(o) = o {
            Extremes::add(this, o.min_ns);
            Extremes::add(this, o.max_ns);
        }
    }
}

/// Every frame of a job, added up.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FrameTally {
    pub done: u64,
    pub late: u64,
    pub skipped: u64,
    pub failed: u64,
    /// The failed frame that started first.
    pub first_failed: Option<FrameRecord>,
    /// The transferred frames that took least and most time (the earlier
    /// start on ties).
    pub fastest: Option<FrameRecord>,
    pub slowest: Option<FrameRecord>,
    /// Transferred frames by time, buckets of [`FRAME_HISTOGRAM_EDGES_NS`].
    pub histogram: [u64; FRAME_HISTOGRAM_BUCKETS],
    /// Sums over the transferred frames.
    pub sums: FrameSums,
    /// Extremes of the transferred frames' open, I/O and close times.
    pub open: Option<Extremes>,
    pub io: Option<Extremes>,
    pub close: Option<Extremes>,
    /// Frames and bytes transferred that ended in whole second `k`
    /// (`[k s, (k+1) s)`): one entry per second of the run.
    pub seconds: Vec<[u64; 2]>,
    /// Sums of the transferred frames in the last [`TAIL_NS`], by bin of
    /// [`TAIL_BIN_NS`].
    pub tail: BTreeMap<u64, FrameSums>,
}

/// The tail bin of an end time.
fn tail_bin(end_ns: u64) -> u64 {
    end_ns.saturating_sub(1) / TAIL_BIN_NS
}

/// Bins the tail keeps behind the last one.
const TAIL_BINS: u64 = TAIL_NS / TAIL_BIN_NS + 1;

/// Whether `a` is an earlier choice than `b` on ties: the earlier start,
/// then the lower frame number.
fn earlier(a: &FrameRecord, b: &FrameRecord) -> bool {
    (a.start_ns, a.frame) < (b.start_ns, b.frame)
}

impl FrameTally {
    /// Frames recorded: every status.
    pub fn recorded(&self) -> u64 {
        self.done + self.late + self.skipped + self.failed
    }

    /// The tally of `records`, in any order.
    pub fn from_records(records: &[FrameRecord]) -> Self {
        let mut t = FrameTally::default();
        records.iter().for_each(|r| t.add(r));
        t
    }

    fn keep_first_failed(&mut self, r: FrameRecord) {
        if self.first_failed.is_none_or(|f| earlier(&r, &f)) {
            self.first_failed = Some(r);
        }
    }

    fn keep_extremes(&mut self, r: FrameRecord) {
        let ns = frame_ns(&r);
        if self
            .fastest
            .is_none_or(|b| ns < frame_ns(&b) || ns == frame_ns(&b) && earlier(&r, &b))
        {
            self.fastest = Some(r);
        }
        if self
            .slowest
            .is_none_or(|b| ns > frame_ns(&b) || ns == frame_ns(&b) && earlier(&r, &b))
        {
            self.slowest = Some(r);
        }
    }

    fn prune_tail(&mut self) {
        while let (Some((&first, _)), Some((&last, _))) =
            (self.tail.first_key_value(), self.tail.last_key_value())
        {
            if first + TAIL_BINS > last {
                break;
            }
            self.tail.remove(&first);
        }
    }

    /// Adds one frame.
    pub fn add(&mut self, r: &FrameRecord) {
        match r.status {
            FrameStatus::Done => self.done += 1,
            FrameStatus::Late => self.late += 1,
            FrameStatus::Skipped => self.skipped += 1,
            FrameStatus::Failed => {
                self.failed += 1;
                self.keep_first_failed(*r);
            }
        }
        if !r.transferred() {
            return;
        }
        self.keep_extremes(*r);
        self.histogram[bucket_of(frame_ns(r))] += 1;
        self.sums.add(r);
        Extremes::add(&mut self.open, r.open_ns);
        Extremes::add(&mut self.io, r.io_ns);
        Extremes::add(&mut self.close, r.close_ns);
        let s = (r.end_ns / SEC) as usize;
        if self.seconds.len() <= s {
            self.seconds.resize(s + 1, [0, 0]);
        }
        self.seconds[s][0] += 1;
        self.seconds[s][1] += r.bytes;
        self.tail.entry(tail_bin(r.end_ns)).or_default().add(r);
        self.prune_tail();
    }

    /// Adds another part of the same job (another worker). Exact and
    /// associative.
    pub fn merge(&mut self, o: &FrameTally) {
        self.done += o.done;
        self.late += o.late;
        self.skipped += o.skipped;
        self.failed += o.failed;
        if let Some(f) = o.first_failed {
            self.keep_first_failed(f);
        }
        for r in [o.fastest, o.slowest].into_iter().flatten() {
            self.keep_extremes(r);
        }
        for (a, b) in self.histogram.iter_mut().zip(&o.histogram) {
            *a += b;
        }
        self.sums.merge(&o.sums);
        Extremes::merge(&mut self.open, o.open);
        Extremes::merge(&mut self.io, o.io);
        Extremes::merge(&mut self.close, o.close);
        if self.seconds.len() < o.seconds.len() {
            self.seconds.resize(o.seconds.len(), [0, 0]);
        }
        for (a, b) in self.seconds.iter_mut().zip(&o.seconds) {
            a[0] += b[0];
            a[1] += b[1];
        }
        for (k, v) in &o.tail {
            self.tail.entry(*k).or_default().merge(v);
        }
        self.prune_tail();
    }

    /// The transferred frames that ended after `from_ns`, to the tail's
    /// 10 ms bins: whole bins that start at or after it.
    pub fn ended_after(&self, from_ns: u64) -> FrameSums {
        let mut s = FrameSums::default();
        for (k, v) in self.tail.range(from_ns.div_ceil(TAIL_BIN_NS)..) {
            debug_assert!(k * TAIL_BIN_NS >= from_ns);
            s.merge(v);
        }
        s
    }

    /// The fewest bytes transferred in any whole second `[k s, (k+1) s)`
    /// of a run of `elapsed_ns`; `None` when it spans fewer than two.
    pub fn slowest_second(&self, elapsed_ns: u64) -> Option<u64> {
        let whole = (elapsed_ns / SEC) as usize;
        if whole < 2 {
            return None;
        }
        (0..whole)
            .map(|k| self.seconds.get(k).map_or(0, |s| s[1]))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(frame: u64, start: u64, end: u64, status: FrameStatus) -> FrameRecord {
        FrameRecord {
            frame,
            thread: 0,
            start_ns: start,
            end_ns: end,
            open_ns: 1,
            io_ns: end - start - 2,
            close_ns: 1,
            bytes: if matches!(status, FrameStatus::Done | FrameStatus::Late) {
                100
            } else {
                0
            },
            status,
            errno: (status == FrameStatus::Failed).then_some(28),
        }
    }

    /// Frames ending every 7 ms over 30 s, a few late, skipped or failed.
    fn frames() -> Vec<FrameRecord> {
        (0..4000u64)
            .map(|i| {
                let end = (i + 1) * 7_000_000;
                let status = match i % 50 {
                    7 => FrameStatus::Late,
                    8 => FrameStatus::Skipped,
                    9 => FrameStatus::Failed,
                    _ => FrameStatus::Done,
                };
                rec(i, end - 3_000_000 - (i % 13) * 100_000, end, status)
            })
            .collect()
    }

    #[test]
    fn merging_parts_equals_tallying_the_whole() {
        let all = frames();
        let whole = FrameTally::from_records(&all);
        let (a, rest) = all.split_at(1234);
        let (b, c) = rest.split_at(1500);
        let (ta, tb, tc) = (
            FrameTally::from_records(a),
            FrameTally::from_records(b),
            FrameTally::from_records(c),
        );
        let mut left = ta.clone();
        left.merge(&tb);
        left.merge(&tc);
        let mut bc = tb.clone();
        bc.merge(&tc);
        let mut right = ta.clone();
        right.merge(&bc);
        assert_eq!(left, whole);
        assert_eq!(right, whole);
        assert_eq!(whole.recorded(), 4000);
        assert_eq!((whole.late, whole.skipped, whole.failed), (80, 80, 80));
        assert_eq!(whole.sums.frames, whole.done + whole.late);
        assert_eq!(whole.first_failed.unwrap().frame, 9);
    }

    #[test]
    fn the_tail_keeps_ten_seconds_and_the_last_windows_are_exact_on_bin_edges() {
        let all = frames();
        let t = FrameTally::from_records(&all);
        assert!(t.tail.len() as u64 <= TAIL_BINS, "{}", t.tail.len());
        let elapsed = 28_000_000_000;
        for w in [1, 5, 10] {
            let from = elapsed - w * SEC;
            let want: Vec<&FrameRecord> = all
                .iter()
                .filter(|r| r.transferred() && r.end_ns > from)
                .collect();
            let got = t.ended_after(from);
            assert_eq!(got.frames, want.len() as u64, "last {w} s");
            assert_eq!(got.io_ns, want.iter().map(|r| r.io_ns).sum::<u64>());
        }
        // Whole seconds: 1000 / 7 ms frames end in each, less the ones
        // skipped or failed.
        let slowest = t.slowest_second(elapsed).unwrap();
        assert!((13_600..=14_300).contains(&slowest), "{slowest}");
        assert_eq!(t.slowest_second(1_999_999_999), None);
    }
}
