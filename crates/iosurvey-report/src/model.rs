//! The report document: what ran, where, and what it measured. Raw counts in
//! bytes and nanoseconds, lossless histograms, and a few derived rates.

use iosurvey_model::HostInfo;
use iosurvey_model::Op;
use iosurvey_model::PointParams;
use iosurvey_model::{FrameLayout, Layout, Mix, Point};
use iosurvey_model::{FrameRecord, JobResult, TargetKind};
use iosurvey_stats::{ClassStats, HistogramData, IntervalSample};
use serde::{Deserialize, Serialize};

/// The whole run: one entry per point of the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunReport {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub command_line: Vec<String>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub host: HostInfo,
    pub mode: String,
    pub points: Vec<PointReport>,
    /// `--shared`: the targets were neither locked nor opened exclusively,
    /// so another run may have used them at the same time (and its load is
    /// in these figures). Left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
    /// Under MPI: every rank, its host, its targets and its own totals per
    /// point. Left out of a run on one host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankReport>,
    /// Under MPI: each point's rates over the common window, to the first
    /// rank done and to the last. Left out of a run on one host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<PointWindows>,
    /// `--repeat N`: the whole plan was run N times, one repeat after the
    /// other, and `points` holds every repeat's (each marked with its
    /// `repeat`). Left out when 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeats: u32,
    /// `diskperf`: its display choices (label, scale, frames per second),
    /// which its text, CSV and page show. Left out in other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diskperf: Option<crate::diskperf::DiskperfSettings>,
    /// `matrix`: ORION's run level and cache warm-up as given, which its
    /// summary follows. Left out in other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<crate::matrix::MatrixSettings>,
    /// Variables of the environment the command line was read with, as
    /// `NAME=VALUE`: sgpdd-survey's (`scsidevs`, `size`, ...) when
    /// `survey` took them. Left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<String>,
}

impl RunReport {
    /// The same report with only the points of repeat `k` (the whole report
    /// when it has one repeat): what a presenter of one run of the plan
    /// reads.
    pub fn repeat(&self, k: u32) -> RunReport {
        RunReport {
            points: self
                .points
                .iter()
                .filter(|p| p.repeat == k)
                .cloned()
                .collect(),
            ..self.clone()
        }
    }
}

/// One rank of a run under MPI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankReport {
    pub rank: usize,
    pub host: String,
    /// Its targets, as indices into every point's `targets`.
    pub targets: Vec<usize>,
    /// Its own totals, one entry per point run.
    pub points: Vec<RankPoint>,
}

/// What one rank did in one point. Times are nanoseconds from the rank's
/// own exit from the barrier that started the point (clocks of different
/// hosts are never compared).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankPoint {
    pub index: usize,
    /// The start of its measured phase (after its set-up and ramp).
    pub start_ns: u64,
    /// Its last completion; equal to `start_ns` when it had nothing to run.
    pub end_ns: u64,
    pub read_ops: u64,
    pub read_bytes: u64,
    pub write_ops: u64,
    pub write_bytes: u64,
    pub errors: u64,
}

/// A point's rates under MPI over three windows, in nanoseconds from the
/// barrier that started it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PointWindows {
    pub index: usize,
    /// From the last rank's start to the first rank's end: every rank
    /// running, as `parallel` rates its devices.
    pub common: Window,
    /// From the first rank's start to the first rank's end (IOR's
    /// stonewall).
    pub first_done: Window,
    /// From the first rank's start to the last rank's end (IOR's first
    /// start to last end): everything moved over the whole time.
    pub last_done: Window,
    /// What rank 0 spent after the point on gathering every rank's result
    /// and merging them (the cost of the distributed run itself).
    #[serde(default)]
    pub merge_ns: u64,
    /// Bytes rank 0 gathered for the point (every rank's encoded result).
    #[serde(default)]
    pub gathered_bytes: u64,
}

/// Ops and bytes completed within one window, and their rates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Window {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Completed inside the window: whole intervals of the series, and the
    /// covered share of an interval the window cuts.
    pub ops: f64,
    pub bytes: f64,
    pub iops: f64,
    pub bytes_per_sec: f64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    /// The git commit the binary was built from (12 hex digits), when it
    /// was built from a git checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// The git commit this build comes from, or "" (not built from a checkout).
pub const COMMIT: &str = env!("IOSURVEY_COMMIT");

impl Default for ToolInfo {
    fn default() -> Self {
        ToolInfo {
            name: "iosurvey".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            commit: (!COMMIT.is_empty()).then(|| COMMIT.into()),
        }
    }
}

/// One point: its settings, targets and results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PointReport {
    pub index: usize,
    pub label: String,
    /// What the point varies, typed, by mode (`mode` names it); `none` in
    /// a report saved before points carried it.
    #[serde(default)]
    pub params: PointParams,
    /// Which repeat of the plan this point belongs to (`--repeat`), from
    /// 0; left out when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repeat: u32,
    pub settings: Settings,
    pub targets: Vec<TargetReport>,
    pub elapsed_ns: u64,
    pub first_done_ns: u64,
    pub interrupted: bool,
    /// Why the point was not run, when the mode skipped it (`ENOMEM`).
    pub skipped: Option<String>,
    pub cpu_user_ns: u64,
    pub cpu_system_ns: u64,
    pub cpu_workers_ns: u64,
    /// The process's CPU time (user and system) per completed I/O, in
    /// microseconds; null when no I/O completed. Derived.
    #[serde(default)]
    pub cpu_us_per_io: Option<f64>,
    pub failure: Option<FailureReport>,
    /// Reasons to doubt a figure: a stable code, what it means and what
    /// to do, the figures that raised it and the threshold they crossed.
    /// (Plain strings in reports of schema version 1.)
    #[serde(deserialize_with = "crate::warnings::read_warnings")]
    #[schemars(with = "Vec<crate::warnings::Warning>")]
    pub warnings: Vec<crate::warnings::Warning>,
    pub streams: Vec<StreamReport>,
    /// Every stream's reads and writes added up.
    pub total: StreamTotals,
    /// Frame workloads (`iosurvey video`): the settings and every frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<FramesReport>,
    /// `--verify`: what the pass after the job read back and found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<iosurvey_model::verify::VerifySummary>,
    /// `--check-compression`: the job's writes before it, first with data
    /// that compresses to almost nothing, then with incompressible data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression_check: Option<CompressionReport>,
}

/// The two write rates of `--check-compression`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompressionReport {
    pub compressible_bytes_per_sec: f64,
    pub incompressible_bytes_per_sec: f64,
    /// How long each write ran.
    pub probe_ns: u64,
    /// Bytes the last write of compressible data left on the areas
    /// written (up to their size).
    #[serde(default)]
    pub compressible_written_bytes: u64,
    /// Of the file targets' areas, the bytes in extents the filesystem
    /// encoded (compressed) right after that write (`FIEMAP`); null when no
    /// target written has an extent map (a block device, tmpfs), and in
    /// reports older than it.
    #[serde(default)]
    pub encoded_bytes: Option<u64>,
}

/// A frame workload as it ran: its settings and one record per frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FramesReport {
    /// `files` (one file per frame) or `stream` (one file).
    pub layout: String,
    /// `read` or `write`.
    pub op: String,
    /// The preset's name, or `custom`.
    pub format: String,
    /// Bytes per frame, header included.
    pub frame_bytes: u64,
    pub header_bytes: u64,
    /// Frames planned (per loop).
    pub frames: u64,
    /// Passes over the frames; absent in reports older than it (one).
    #[serde(default = "one")]
    pub loops: u32,
    /// Worker threads, each moving one frame at a time.
    pub threads: u32,
    /// I/Os in flight per frame.
    pub depth: u32,
    /// Real-time pacing in frames per second; null when unpaced.
    pub fps: Option<f64>,
    /// Frame times a frame may wait before it is dropped (paced only).
    pub queue: u32,
    /// `fwd`, `rev` or `random`.
    pub order: String,
    /// Files per subdirectory (files layout; 0: all in one).
    pub files_per_dir: u32,
    /// The first frames, in order of start (at most
    /// `iosurvey_model::result::MAX_FRAME_RECORDS`; `summary` counts all).
    pub records: Vec<FrameRecord>,
    /// Every frame added up; absent in reports older than it, whose
    /// records hold every frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<crate::video::FramesSummary>,
}

/// The job's settings, as run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Settings {
    pub engine: String,
    pub workers: u32,
    pub direct: bool,
    pub seed: u64,
    pub time_ns: Option<u64>,
    pub bytes: Option<u64>,
    pub ramp_ns: u64,
    /// An unmeasured warm-up of this many bytes before the point instead of
    /// a ramp by time (matrix's `-cache_size`). Left out when none.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub warm_bytes: u64,
    pub interval_ns: u64,
    pub continue_on_error: bool,
    /// Files registered with io_uring (false for the sync engine).
    pub registered_files: bool,
    /// Fixed (registered) buffers with io_uring (false for the sync engine).
    pub fixed_buffers: bool,
    /// Longest a batched io_uring wait holds a finished I/O before it is
    /// seen and timed, in microseconds; null when each wait returns at the
    /// first completion.
    pub reap_window_us: Option<u32>,
    /// Waits in the engine that returned with no I/O finished (a timeout
    /// that expired, or a wake-up for nothing), over all workers; each is
    /// a trip into the kernel that did no work. 0 for the sync engine.
    #[serde(default)]
    pub empty_wakeups: u64,
    /// Whether a stream that reaches the end of its area before its time or
    /// byte bound goes round to its start again (`parallel --loop`, `run
    /// --time`); `false`: every stream ends at the end of its area, like dd.
    #[serde(rename = "loop", default)]
    pub wrap: bool,
    /// A kernel thread polled io_uring's submission queue (`--sqpoll`).
    #[serde(default)]
    pub sqpoll: bool,
    /// The CPU that thread was pinned to (`--sqpoll-cpu`); null: not pinned.
    #[serde(default)]
    pub sqpoll_cpu: Option<u32>,
    /// Completions were polled (IORING_SETUP_IOPOLL, `--hipri`).
    #[serde(default)]
    pub hipri: bool,
    /// CPUs the worker threads were pinned to, round-robin (`--cpus`);
    /// empty: not pinned.
    #[serde(default)]
    pub cpus: Vec<u32>,
    /// Every 4 KiB block the run wrote was unique: no deduplicating store
    /// could shrink it. False in reports older than the stamp, whose test
    /// files repeated every 4 MiB and whose writes repeated their buffers.
    #[serde(default)]
    pub unique_blocks: bool,
    /// Every 512-byte sector the run wrote was unique and generated as it
    /// was written, so that no compressor could shrink it either (save
    /// with `--compressible`). False in reports older than that, whose
    /// sectors repeated inside each 4 KiB block and compressed per record.
    #[serde(default)]
    pub unique_sectors: bool,
    /// The nonce the written data was generated from (16 hex digits), drawn
    /// by each run whatever the seed, so that two runs never write the same
    /// sector; each MPI rank draws its own, and this is rank 0's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_nonce: Option<String>,
    /// Percent of each 512-byte chunk of the written data that was zeros
    /// (`--compressible`, as fio's `buffer_compress_percentage`); 0:
    /// incompressible.
    #[serde(default)]
    pub compressible_pct: u8,
}

/// A target as it was opened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetReport {
    pub path: String,
    pub kind: TargetKind,
    pub size_bytes: u64,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    pub rotational: Option<bool>,
    pub direct: bool,
    pub created: bool,
    /// What memory backs the target, when memory does: `tmpfs`, `ramfs`,
    /// `zram`, a ram disk, a file on a filesystem on one of these, or a
    /// loop device over any of these or over a page-cached file (no direct
    /// I/O), judged through stacked loop devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_backed: Option<String>,
    /// The fastest its interface moves data, in bytes per second, and how
    /// that was found (an NVMe drive's PCIe link, a SATA link, the sum
    /// over an md or dm device's members), when sysfs tells it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_bytes_per_sec: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// The first failed I/O.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailureReport {
    pub stream: usize,
    pub op: String,
    pub offset: u64,
    pub errno: i32,
    pub error: String,
    pub at_ns: u64,
}

/// One stream class: its settings and its reads and writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamReport {
    pub label: String,
    pub target: usize,
    pub rw: String,
    pub read_pct: u8,
    pub pattern: String,
    pub bs: u64,
    pub outstanding: u32,
    pub offset: u64,
    pub span: Option<u64>,
    pub regions: u32,
    /// The virtual array the stream ran over, if any (`target` is then its
    /// first member).
    pub array: Option<ArrayReport>,
    /// From the start of the measured phase to the stream's last completion;
    /// its rates are taken over this.
    pub elapsed_ns: u64,
    pub read: ClassReport,
    pub write: ClassReport,
    /// `[offset, latency ns]` of the first measured I/Os of a traced stream
    /// (profile's access times), in completion order. Left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<[u64; 2]>,
}

/// A virtual array of targets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArrayReport {
    #[serde(flatten)]
    pub layout: Layout,
    /// Target indices, in array order.
    pub members: Vec<usize>,
}

/// Reads and writes over all streams.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamTotals {
    pub read: ClassReport,
    pub write: ClassReport,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorCount {
    pub errno: i32,
    pub name: String,
    pub count: u64,
}

/// Latency figures in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyReport {
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub max_ns: u64,
    /// Ascending by percentile.
    pub percentiles: Vec<Percentile>,
}

impl LatencyReport {
    /// The value at percentile `p` (one of those reported), in ns.
    pub fn at(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|x| x.percentile == p)
            .map(|x| x.ns)
    }
}

/// One percentile of a latency distribution.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Percentile {
    /// 0 to 100, e.g. 99.9.
    pub percentile: f64,
    pub ns: u64,
}

/// One class (reads or writes) of a stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassReport {
    pub ops: u64,
    pub bytes: u64,
    /// ops / elapsed, derived.
    pub iops: f64,
    /// bytes / elapsed, derived.
    pub bytes_per_sec: f64,
    pub errors: Vec<ErrorCount>,
    pub latency: LatencyReport,
    /// Lossless: merge two runs by adding these counts.
    pub histogram: HistogramData,
    /// Non-cumulative, one entry per interval of `settings.interval_ns`.
    pub series: Vec<IntervalSample>,
    /// Real length of the last entry of `series`: `settings.interval_ns`,
    /// or less when the end of the point's measured phase cut it short.
    #[serde(default)]
    pub series_last_ns: u64,
}

impl ClassReport {
    /// Builds a class report, deriving rates over `elapsed_ns`.
    pub fn new(c: &ClassStats, elapsed_ns: u64) -> Self {
        let secs = elapsed_ns as f64 / 1e9;
        let per_sec = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
        let s = c.latency.summary();
        ClassReport {
            ops: c.ops,
            bytes: c.bytes,
            iops: per_sec(c.ops),
            bytes_per_sec: per_sec(c.bytes),
            errors: c
                .errors
                .iter()
                .map(|(&errno, &count)| ErrorCount {
                    errno,
                    name: crate::errno_name(errno),
                    count,
                })
                .collect(),
            latency: LatencyReport {
                min_ns: s.min_ns,
                mean_ns: s.mean_ns,
                stdev_ns: s.stdev_ns,
                max_ns: s.max_ns,
                percentiles: s
                    .percentiles_ns
                    .iter()
                    .map(|&(percentile, ns)| Percentile { percentile, ns })
                    .collect(),
            },
            histogram: c.latency.to_data(),
            series: c.series.samples.clone(),
            series_last_ns: 0,
        }
    }

    /// Sets `series_last_ns` for a measured phase of `end_ns` cut into
    /// intervals of `interval_ns`.
    pub fn set_last_interval(&mut self, interval_ns: u64, end_ns: u64) {
        self.series_last_ns = match self.series.len().checked_sub(1) {
            Some(k) => end_ns
                .saturating_sub(k as u64 * interval_ns)
                .min(interval_ns),
            None => 0,
        };
    }

    /// Whether anything was attempted in this class.
    pub fn is_empty(&self) -> bool {
        self.ops == 0 && self.errors.is_empty()
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
    }
}

/// The point's totals over every stream of `r`. A point of one stream
/// that lasted the whole point has that stream's figures as its totals
/// (the merge of one is itself, to the bit): they are copied, not summed
/// and summarised again, which saves a walk of each histogram's buckets.
fn totals(streams: &[StreamReport], r: &JobResult) -> StreamTotals {
    match (streams, &r.streams[..]) {
        ([s], [one]) if one.elapsed_ns == r.elapsed_ns => StreamTotals {
            read: s.read.clone(),
            write: s.write.clone(),
        },
        _ => StreamTotals {
            read: ClassReport::new(&r.total(Op::Read), r.elapsed_ns),
            write: ClassReport::new(&r.total(Op::Write), r.elapsed_ns),
        },
    }
}

impl PointReport {
    /// Builds the report of `point`, which ran on `targets` and gave `r`,
    /// on a host of `ram_bytes` of memory (buffered reads of less are
    /// warned of).
    pub fn new(point: &Point, targets: &[TargetReport], r: &JobResult, ram_bytes: u64) -> Self {
        let job = &point.job;
        let streams = job
            .streams
            .iter()
            .zip(&r.streams)
            .map(|(s, res)| {
                let (rw, read_pct) = match s.mix {
                    Mix::Read => ("read", 100),
                    Mix::Write => ("write", 0),
                    Mix::Mixed { read_pct } => ("mixed", read_pct),
                };
                StreamReport {
                    label: s.label.clone(),
                    target: s.target,
                    rw: rw.into(),
                    read_pct,
                    pattern: s.pattern.name().into(),
                    bs: s.bs,
                    outstanding: s.outstanding,
                    offset: s.offset,
                    span: s.span,
                    regions: s.regions,
                    array: s.array.as_ref().map(|a| ArrayReport {
                        layout: a.layout,
                        members: a.members.clone(),
                    }),
                    elapsed_ns: res.elapsed_ns,
                    read: ClassReport::new(&res.read, res.elapsed_ns),
                    write: ClassReport::new(&res.write, res.elapsed_ns),
                    samples: res.samples.clone(),
                }
            })
            .collect::<Vec<StreamReport>>();
        let total = totals(&streams, r);
        let mut report = PointReport {
            index: point.index,
            label: point.label.clone(),
            params: point.params.clone(),
            repeat: 0,
            settings: Settings {
                engine: job.engine.name().into(),
                workers: job.workers,
                direct: job.direct,
                seed: job.seed,
                time_ns: job.bounds.time.map(|t| t.as_nanos() as u64),
                bytes: job.bounds.bytes,
                ramp_ns: job.bounds.ramp.as_nanos() as u64,
                warm_bytes: job.warm_bytes,
                interval_ns: job.interval.as_nanos() as u64,
                continue_on_error: job.continue_on_error,
                registered_files: r.engine.registered_files,
                fixed_buffers: r.engine.fixed_buffers,
                reap_window_us: r.engine.reap_window_us,
                empty_wakeups: r.engine.empty_wakeups,
                wrap: (job.bounds.time.is_some() || job.bounds.bytes.is_some())
                    && job.streams.iter().any(|s| s.wrap),
                sqpoll: r.engine.sqpoll,
                sqpoll_cpu: job.sqpoll.and_then(|s| s.cpu),
                hipri: r.engine.iopoll,
                cpus: job.cpus.clone(),
                unique_blocks: true,
                unique_sectors: true,
                data_nonce: (r.data_nonce != 0).then(|| format!("{:016x}", r.data_nonce)),
                compressible_pct: job.fill.compressible_pct,
            },
            targets: targets.to_vec(),
            elapsed_ns: r.elapsed_ns,
            first_done_ns: r.first_done_ns,
            interrupted: r.interrupted,
            skipped: point.skip.clone(),
            cpu_user_ns: r.cpu.user_ns,
            cpu_system_ns: r.cpu.system_ns,
            cpu_workers_ns: r.cpu.workers_ns,
            cpu_us_per_io: None,
            failure: r.first_failure.map(|f| FailureReport {
                stream: f.stream,
                op: op_name(f.op).into(),
                offset: f.offset,
                errno: f.errno,
                error: crate::errno_name(f.errno),
                at_ns: f.at_ns,
            }),
            warnings: Vec::new(),
            verify: r.verify.clone(),
            compression_check: r.compression_check.map(|c| CompressionReport {
                compressible_bytes_per_sec: c.compressible_bytes_per_sec,
                incompressible_bytes_per_sec: c.incompressible_bytes_per_sec,
                probe_ns: c.probe_ns,
                compressible_written_bytes: c.compressible_written_bytes,
                encoded_bytes: c.encoded_bytes,
            }),
            streams,
            total,
            frames: job.frames().map(|f| FramesReport {
                layout: match f.layout {
                    FrameLayout::Files { .. } => "files",
                    FrameLayout::Stream => "stream",
                }
                .into(),
                op: op_name(f.op).into(),
                format: f.format.clone(),
                frame_bytes: f.frame_bytes,
                header_bytes: f.header_bytes,
                frames: f.frames,
                loops: f.loops,
                threads: job.workers,
                depth: f.depth,
                fps: f.fps.map(|r| r.value()),
                queue: f.queue,
                order: f.order.name().into(),
                files_per_dir: match f.layout {
                    FrameLayout::Files { files_per_dir } => files_per_dir,
                    FrameLayout::Stream => 0,
                },
                records: r.frames.clone(),
                summary: Some(crate::video::FramesSummary::new(
                    &r.frame_tally,
                    r.elapsed_ns,
                )),
            }),
        };
        report.set_last_intervals();
        report.cpu_us_per_io = report.cpu_per_io_us();
        let totals = crate::warnings::PointTotals {
            read: &report.total.read,
            write: &report.total.write,
            interval_ns: report.settings.interval_ns,
        };
        report.warnings =
            crate::warnings::warnings(point, targets, r, ram_bytes, &report.streams, &totals);
        report
    }

    /// The process's CPU time per completed I/O in microseconds, over the
    /// measured phase; `None` when no I/O completed.
    pub fn cpu_per_io_us(&self) -> Option<f64> {
        let ops = self.total.read.ops + self.total.write.ops;
        let cpu_ns = self.cpu_user_ns + self.cpu_system_ns;
        (ops > 0).then(|| cpu_ns as f64 / 1e3 / ops as f64)
    }

    /// Marks the real length of the last interval of every series: the
    /// measured phase ended `elapsed_ns` in, maybe inside an interval.
    pub fn set_last_intervals(&mut self) {
        let (interval, end) = (self.settings.interval_ns, self.elapsed_ns);
        // A stream that ended before the point ends its series at its own
        // end.
        for s in &mut self.streams {
            let own = if s.elapsed_ns > 0 {
                s.elapsed_ns.min(end)
            } else {
                end
            };
            s.read.set_last_interval(interval, own);
            s.write.set_last_interval(interval, own);
        }
        for c in [&mut self.total.read, &mut self.total.write] {
            c.set_last_interval(interval, end);
        }
    }
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn one() -> u32 {
    1
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosurvey_model::{Bounds, Job, Pattern, StreamClass, TargetSpec};

    /// A read point of `streams` streams on one target, and a result whose
    /// streams recorded a spread of latencies, a few errors and several
    /// intervals; the first stream lasts `first_ns` of the point's 3 s.
    fn point_and_result(streams: usize, first_ns: u64) -> (Point, JobResult) {
        let class = |i| StreamClass::new("s", 0, Mix::Read, Pattern::Random, 4096, 8 + i);
        let job = Job::new(
            vec![TargetSpec {
                path: "/dev/x".into(),
                create_size: None,
            }],
            (0..streams as u32).map(class).collect(),
            Bounds {
                time: None,
                bytes: None,
                ramp: std::time::Duration::ZERO,
            },
        );
        let point = Point {
            index: 0,
            label: String::new(),
            params: PointParams::Run,
            job,
            skip: None,
        };
        let mut r = JobResult {
            streams: vec![Default::default(); streams],
            elapsed_ns: 3_000_000_000,
            first_done_ns: 3_000_000_000,
            ..Default::default()
        };
        for (k, s) in r.streams.iter_mut().enumerate() {
            s.elapsed_ns = if k == 0 { first_ns } else { 3_000_000_000 };
            for i in 0..20_000u64 {
                let lat = 1_000 + (i * 7919 + k as u64) % 5_000_000;
                s.read.record((i % 3) as usize, 4096, lat);
            }
            s.read.record_error(5);
        }
        (point, r)
    }

    #[test]
    fn the_totals_of_one_stream_are_its_figures_as_a_merge_gives_them() {
        let target = TargetReport {
            path: "/dev/x".into(),
            kind: TargetKind::Block,
            size_bytes: 1 << 30,
            logical_block_size: 512,
            physical_block_size: 4096,
            rotational: Some(false),
            direct: true,
            created: false,
            memory_backed: None,
            link_bytes_per_sec: None,
            link: None,
        };
        for (streams, first_ns) in [(1, 3_000_000_000), (1, 2_000_000_000), (2, 3_000_000_000)] {
            let (point, r) = point_and_result(streams, first_ns);
            let report = PointReport::new(&point, std::slice::from_ref(&target), &r, 1 << 40);
            // The totals as the merge of every stream gives them.
            let mut merged = StreamTotals {
                read: ClassReport::new(&r.total(Op::Read), r.elapsed_ns),
                write: ClassReport::new(&r.total(Op::Write), r.elapsed_ns),
            };
            for c in [&mut merged.read, &mut merged.write] {
                c.set_last_interval(report.settings.interval_ns, r.elapsed_ns);
            }
            assert_eq!(
                report.total.read, merged.read,
                "{streams} streams, {first_ns} ns"
            );
            assert_eq!(report.total.write, merged.write);
            assert_eq!(report.total.read.ops, 20_000 * streams as u64);
        }
    }
}
