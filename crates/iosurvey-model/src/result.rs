//! What a job measured: per stream and class, merged exactly over workers.

use crate::{EngineFeatures, Op};
use iosurvey_stats::{ClassStats, LatencySummary, PERCENTILES};

mod frame_tally;
pub use frame_tally::*;

/// The reads, writes and discards of one stream class.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StreamResult {
    pub read: ClassStats,
    pub write: ClassStats,
    /// Discards (`run --rw trim`, `--trim PCT`); empty for every other
    /// stream.
    #[serde(default)]
    pub trim: ClassStats,
    /// From the start of the measured phase to this stream's last
    /// completion on any worker; its rates are taken over this.
    pub elapsed_ns: u64,
    /// `(offset, latency ns)` of the first measured I/Os of a traced
    /// stream ([`crate::plan::StreamClass::trace`]), in completion order.
    #[serde(default)]
    pub samples: Vec<[u64; 2]>,
    /// With a block-size split: the measured I/Os of each of its sizes
    /// that completed whole, in the split's order.
    #[serde(default)]
    pub sizes: Vec<u64>,
}

impl StreamResult {
    pub fn class(&self, op: Op) -> &ClassStats {
        match op {
            Op::Read => &self.read,
            Op::Write => &self.write,
            Op::Trim => &self.trim,
        }
    }

    pub fn class_mut(&mut self, op: Op) -> &mut ClassStats {
        match op {
            Op::Read => &mut self.read,
            Op::Write => &mut self.write,
            Op::Trim => &mut self.trim,
        }
    }

    pub fn merge(&mut self, other: &StreamResult) {
        self.read.merge(&other.read);
        self.write.merge(&other.write);
        self.trim.merge(&other.trim);
        self.elapsed_ns = self.elapsed_ns.max(other.elapsed_ns);
        self.samples.extend_from_slice(&other.samples);
        if self.sizes.len() < other.sizes.len() {
            self.sizes.resize(other.sizes.len(), 0);
        }
        for (a, b) in self.sizes.iter_mut().zip(&other.sizes) {
            *a += b;
        }
    }
}

/// A stream's figures without its lossless histograms and series: what a
/// report keeps of each stream when it summarises them (`--stream-detail
/// summary`, and a distributed job of many streams), so that rank 0
/// receives and holds a few numbers per stream, not two histograms.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StreamSummary {
    pub elapsed_ns: u64,
    pub read: ClassSummary,
    pub write: ClassSummary,
    #[serde(default)]
    pub trim: ClassSummary,
    /// With a block-size split: [`StreamResult::sizes`].
    #[serde(default)]
    pub sizes: Vec<u64>,
}

/// One class's figures of a [`StreamSummary`]: its latency summarised
/// where it was measured (each rank its own streams'). The default is an
/// empty class's.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClassSummary {
    pub ops: u64,
    pub bytes: u64,
    /// Failed ops by errno, ascending.
    pub errors: Vec<(i32, u64)>,
    pub latency: LatencyFigures,
}

/// A latency summary in fixed room (nothing to allocate as it travels):
/// nanoseconds, `at[i]` the value at [`PERCENTILES`]`[i]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencyFigures {
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub max_ns: u64,
    pub at: [u64; PERCENTILES.len()],
}

impl LatencyFigures {
    pub fn of(s: &LatencySummary) -> Self {
        let mut at = [0; PERCENTILES.len()];
        for (a, &(_, ns)) in at.iter_mut().zip(&s.percentiles_ns) {
            *a = ns;
        }
        LatencyFigures {
            min_ns: s.min_ns,
            mean_ns: s.mean_ns,
            stdev_ns: s.stdev_ns,
            max_ns: s.max_ns,
            at,
        }
    }

    /// The summary it was made from.
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            min_ns: self.min_ns,
            mean_ns: self.mean_ns,
            stdev_ns: self.stdev_ns,
            max_ns: self.max_ns,
            percentiles_ns: PERCENTILES.into_iter().zip(self.at).collect(),
        }
    }
}

impl ClassSummary {
    pub fn of(c: &ClassStats) -> Self {
        ClassSummary {
            ops: c.ops,
            bytes: c.bytes,
            errors: c.errors.iter().map(|(&e, &n)| (e, n)).collect(),
            latency: LatencyFigures::of(&c.latency.summary()),
        }
    }

    /// Failed ops, short transfers included.
    pub fn error_count(&self) -> u64 {
        self.errors.iter().map(|&(_, n)| n).sum()
    }
}

impl StreamSummary {
    pub fn of(s: &StreamResult) -> Self {
        StreamSummary {
            elapsed_ns: s.elapsed_ns,
            read: ClassSummary::of(&s.read),
            write: ClassSummary::of(&s.write),
            trim: ClassSummary::of(&s.trim),
            sizes: s.sizes.clone(),
        }
    }
}

/// A job's streams summarised: each stream's [`StreamSummary`], in the
/// job's order, and the exact merge of all of them (histograms and
/// series), which the report's totals are made from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summarised {
    pub streams: Vec<StreamSummary>,
    pub total: StreamResult,
}

impl Summarised {
    /// `streams` summarised, and their merge.
    pub fn of(streams: &[StreamResult]) -> Self {
        Summarised {
            streams: streams.iter().map(StreamSummary::of).collect(),
            total: Summarised::total_of(streams),
        }
    }

    /// The exact merge of `streams`' reads and writes (histograms and
    /// series) over the longest's elapsed time; not their traced samples.
    pub fn total_of<'a>(streams: impl IntoIterator<Item = &'a StreamResult>) -> StreamResult {
        let mut total = StreamResult::default();
        for s in streams {
            total.read.merge(&s.read);
            total.write.merge(&s.write);
            total.trim.merge(&s.trim);
            total.elapsed_ns = total.elapsed_ns.max(s.elapsed_ns);
        }
        total
    }
}

/// The first I/O that failed: where and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IoFailure {
    pub stream: usize,
    pub op: Op,
    pub offset: u64,
    pub errno: i32,
    /// Nanoseconds from the start of the measured phase.
    pub at_ns: u64,
}

/// CPU time spent while the job ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CpuTime {
    /// Process user time: the exact process CPU time, split into user and
    /// system as the kernel's 10 ms ticks split it.
    pub user_ns: u64,
    /// Process system time (see `user_ns`).
    pub system_ns: u64,
    /// Sum of the workers' own thread CPU time (nanosecond resolution).
    pub workers_ns: u64,
}

/// How one frame of a video workload ended.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FrameStatus {
    /// Transferred in time (or unpaced).
    Done,
    /// Transferred, but after its deadline: dropped for real-time use.
    Late,
    /// Not started before its deadline: dropped without any I/O.
    Skipped,
    /// An open, I/O, sync or close failed (`errno`).
    Failed,
}

/// One frame: when it started and ended, and how long its open, I/O and
/// close took. Times are nanoseconds, starts and ends from the start of the
/// measured phase.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct FrameRecord {
    /// The frame's number (its place in the stream or its file name).
    pub frame: u64,
    /// The worker thread that moved it.
    pub thread: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Opening (creating, for writes) the frame's file; 0 in stream mode.
    pub open_ns: u64,
    /// Reading or writing the frame, and syncing it when buffered.
    pub io_ns: u64,
    /// Closing the frame's file; 0 in stream mode.
    pub close_ns: u64,
    /// Bytes transferred.
    pub bytes: u64,
    pub status: FrameStatus,
    /// Set when `status` is `failed`.
    pub errno: Option<i32>,
}

impl FrameStatus {
    /// The status as the reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            FrameStatus::Done => "done",
            FrameStatus::Late => "late",
            FrameStatus::Skipped => "skipped",
            FrameStatus::Failed => "failed",
        }
    }
}

impl FrameRecord {
    /// Frame `frame`, taken by worker `thread` at `at_ns`: nothing moved
    /// yet, and skipped unless it goes on to be moved.
    pub fn started(frame: u64, thread: u32, at_ns: u64) -> Self {
        FrameRecord {
            frame,
            thread,
            start_ns: at_ns,
            end_ns: at_ns,
            open_ns: 0,
            io_ns: 0,
            close_ns: 0,
            bytes: 0,
            status: FrameStatus::Skipped,
            errno: None,
        }
    }

    /// Whether the frame's data was transferred (in time or late).
    pub fn transferred(&self) -> bool {
        matches!(self.status, FrameStatus::Done | FrameStatus::Late)
    }
}

/// Everything one job measured.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobResult {
    /// One entry per stream class, in the job's order.
    pub streams: Vec<StreamResult>,
    /// Measured phase: from its start to the last completion of the
    /// slowest worker.
    pub elapsed_ns: u64,
    /// Measured phase of the fastest worker (first done).
    pub first_done_ns: u64,
    /// This host's monotonic clock (nanoseconds) at the start of the
    /// measured phase, the earliest worker's; 0 when unknown. Compared
    /// only with the same host's clock (a distributed run's barrier).
    pub measure_start_ns: u64,
    pub cpu: CpuTime,
    /// Stopped by a signal before its bound.
    pub interrupted: bool,
    /// The first failed I/O, if any.
    pub first_failure: Option<IoFailure>,
    /// What the engines really used (common to every worker).
    pub engine: EngineFeatures,
    /// Frame workloads: the first [`MAX_FRAME_RECORDS`] frames, in order
    /// of start.
    pub frames: Vec<FrameRecord>,
    /// Frame workloads: every frame, added up.
    pub frame_tally: FrameTally,
    /// `--verify`: what the pass after the job found.
    pub verify: Option<crate::verify::VerifySummary>,
    /// Blocks sampled from the areas the job read, after it: how many
    /// read as zeros (an area never written answers without the media).
    pub read_sample: Option<ReadSample>,
    /// Buffered jobs that read files: how much of each file's read area
    /// was still in the page cache when the job started, after iosurvey
    /// asked the kernel to drop it.
    pub cached_at_start: Vec<CachedPages>,
    /// `--check-compression`: the write rates, in bytes per second, of the
    /// job's writes with compressible data and with incompressible data.
    pub compression_check: Option<CompressionCheck>,
    /// The nonce the job's written data was generated from
    /// (`iosurvey_engine::data::run_nonce`): one per process, so that two
    /// runs never write the same sector. 0: unknown.
    pub data_nonce: u64,
    /// The streams summarised ([`JobResult::summarise`]): `streams` is then
    /// empty. Travels between ranks on its own, not with the rest.
    #[serde(skip)]
    pub summarised: Option<Box<Summarised>>,
}

/// The two write rates `--check-compression` measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CompressionCheck {
    pub compressible_bytes_per_sec: f64,
    pub incompressible_bytes_per_sec: f64,
    /// How long each ran.
    pub probe_ns: u64,
    /// Bytes the last write of compressible data left on the areas
    /// written (up to their size).
    #[serde(default)]
    pub compressible_written_bytes: u64,
    /// Of the file targets' areas, the bytes in extents the filesystem
    /// encoded (compressed) right after that write (`FIEMAP`); `None` when
    /// no target written has an extent map (a block device, tmpfs).
    #[serde(default)]
    pub encoded_bytes: Option<u64>,
}

/// Pages of a file target's read area, and how many were in the page
/// cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CachedPages {
    /// Index of the target in the job's targets.
    pub target: usize,
    pub pages: u64,
    pub resident: u64,
}

/// What a sample of blocks of the areas read holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReadSample {
    pub blocks: u64,
    pub zero_blocks: u64,
}

impl JobResult {
    /// Sum of every stream's class `op`.
    pub fn total(&self, op: Op) -> ClassStats {
        if let Some(s) = &self.summarised {
            return s.total.class(op).clone();
        }
        let mut t = ClassStats::new();
        for s in &self.streams {
            t.merge(s.class(op));
        }
        t
    }

    /// Failed I/Os over every stream and class.
    pub fn error_count(&self) -> u64 {
        if let Some(s) = &self.summarised {
            let t = &s.total;
            return t.read.error_count() + t.write.error_count() + t.trim.error_count();
        }
        self.streams
            .iter()
            .map(|s| s.read.error_count() + s.write.error_count() + s.trim.error_count())
            .sum()
    }

    /// Replaces the streams by their summaries and merge
    /// ([`Summarised`]); once only.
    pub fn summarise(&mut self) {
        if self.summarised.is_none() {
            let streams = std::mem::take(&mut self.streams);
            self.summarised = Some(Box::new(Summarised::of(&streams)));
        }
    }

    /// The streams' ops and bytes, reads, writes and discards added up.
    pub fn moved(&self) -> (u64, u64) {
        let add = |(o, b): (u64, u64), c: &ClassStats| (o + c.ops, b + c.bytes);
        match &self.summarised {
            Some(s) => [&s.total.read, &s.total.write, &s.total.trim]
                .into_iter()
                .fold((0, 0), add),
            None => self
                .streams
                .iter()
                .flat_map(|s| [&s.read, &s.write, &s.trim])
                .fold((0, 0), add),
        }
    }

    /// Combines the results of two parts of one job run side by side
    /// (workers, or later MPI ranks). Exact and associative.
    pub fn merge(&mut self, other: &JobResult) {
        if self.streams.len() < other.streams.len() {
            self.streams
                .resize(other.streams.len(), StreamResult::default());
        }
        for (a, b) in self.streams.iter_mut().zip(&other.streams) {
            a.merge(b);
        }
        self.first_done_ns = match (self.first_done_ns, other.first_done_ns) {
            (0, x) | (x, 0) => x,
            (a, b) => a.min(b),
        };
        self.elapsed_ns = self.elapsed_ns.max(other.elapsed_ns);
        self.measure_start_ns = match (self.measure_start_ns, other.measure_start_ns) {
            (0, x) | (x, 0) => x,
            (a, b) => a.min(b),
        };
        self.cpu.user_ns += other.cpu.user_ns;
        self.cpu.system_ns += other.cpu.system_ns;
        self.cpu.workers_ns += other.cpu.workers_ns;
        self.interrupted |= other.interrupted;
        self.engine = self.engine.common(other.engine);
        self.frames.extend_from_slice(&other.frames);
        self.frames.sort_by_key(|f| (f.start_ns, f.frame));
        self.frames.truncate(MAX_FRAME_RECORDS);
        self.frame_tally.merge(&other.frame_tally);
        self.first_failure = match (self.first_failure, other.first_failure) {
            (Some(a), Some(b)) => Some(if b.at_ns < a.at_ns { b } else { a }),
            (a, b) => a.or(b),
        };
        if let Some(o) = &other.verify {
            self.verify.get_or_insert_with(Default::default).merge(o);
        }
        if self.data_nonce == 0 {
            self.data_nonce = other.data_nonce;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_class_summarises_as_the_default_and_a_summary_keeps_its_percentiles() {
        assert_eq!(
            ClassSummary::default(),
            ClassSummary::of(&ClassStats::new())
        );
        let mut c = ClassStats::new();
        for i in 0..1000 {
            c.record(0, 4096, 1_000 + i * 100);
        }
        c.record_error(5);
        let s = ClassSummary::of(&c);
        assert_eq!(s.latency.summary(), c.latency.summary());
        assert_eq!((s.ops, s.bytes, s.error_count()), (1000, 4_096_000, 1));
        assert!(s.latency.at[0] > 1_000 && s.latency.at[0] < s.latency.at[5]);
    }

    fn part(ops: u64, elapsed: u64, fail_at: Option<u64>) -> JobResult {
        let mut r = JobResult {
            streams: vec![StreamResult::default()],
            elapsed_ns: elapsed,
            first_done_ns: elapsed,
            ..Default::default()
        };
        for i in 0..ops {
            r.streams[0].read.record(0, 4096, 1000 + i);
        }
        r.first_failure = fail_at.map(|at_ns| IoFailure {
            stream: 0,
            op: Op::Write,
            offset: at_ns,
            errno: 28,
            at_ns,
        });
        r
    }

    #[test]
    fn merge_is_associative_and_keeps_first_and_last_done() {
        let (a, b, c) = (
            part(3, 10, Some(7)),
            part(5, 30, Some(2)),
            part(1, 20, None),
        );
        let mut left = a.clone();
        left.merge(&b);
        left.merge(&c);
        let mut bc = b.clone();
        bc.merge(&c);
        let mut right = a.clone();
        right.merge(&bc);
        assert_eq!(left, right);
        assert_eq!(left.total(Op::Read).ops, 9);
        assert_eq!(left.elapsed_ns, 30);
        assert_eq!(left.first_done_ns, 10);
        assert_eq!(left.first_failure.unwrap().at_ns, 2);
    }
}
