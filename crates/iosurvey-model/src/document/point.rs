//! One point of the document: its settings, its targets, its streams and
//! totals, its frames, its warnings and how it failed.

use crate::document::class::{StreamReport, StreamTotals};
use crate::document::frames::FramesReport;
use crate::document::warning::Warning;
use crate::PointParams;
use crate::TargetKind;
use crate::{EngineKind, Op};
use serde::{Deserialize, Serialize};

/// One point: its settings, targets and results.
// Read through `totals::read_point`, which makes the totals' histograms
// again from the streams' (see `Deserialize for PointReport` there).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(remote = "Self")]
pub struct PointReport {
    pub index: usize,
    pub label: String,
    /// What the point varies, typed, by mode (`mode` names it); `none` in
    /// a report saved before points carried it.
    #[serde(default)]
    pub params: PointParams,
    /// Which repeat of the plan this point belongs to (`--repeat`), from
    /// 0; left out when 0.
    #[serde(default, skip_serializing_if = "crate::document::defaults::is_zero")]
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
    #[serde(deserialize_with = "crate::document::warning::read_warnings")]
    #[schemars(with = "Vec<Warning>")]
    pub warnings: Vec<Warning>,
    pub streams: Vec<StreamReport>,
    /// Every stream's reads and writes added up.
    #[serde(serialize_with = "crate::document::totals::write_totals")]
    pub total: StreamTotals,
    /// Frame workloads (`iosurvey video`): the settings and every frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<FramesReport>,
    /// `--verify`: what the pass after the job read back and found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::verify::VerifySummary>,
    /// `--check-compression`: the job's writes before it, first with data
    /// that compresses to almost nothing, then with incompressible data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression_check: Option<CompressionReport>,
    /// Under MPI: each rank's own figures in the point, in rank order (as
    /// the run's `ranks`). Left out of a run on one host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<crate::document::mpi::RankPoint>,
    /// Under MPI: the point's rates over the common window, to the first
    /// rank done and to the last, and rank 0's cost of gathering them.
    /// Left out of a run on one host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<crate::document::mpi::PointWindows>,
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

/// The job's settings, as run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Settings {
    pub engine: EngineKind,
    pub workers: u32,
    pub direct: bool,
    pub seed: u64,
    pub time_ns: Option<u64>,
    pub bytes: Option<u64>,
    pub ramp_ns: u64,
    /// An unmeasured warm-up of this many bytes before the point instead of
    /// a ramp by time (matrix's `-cache_size`). Left out when none.
    #[serde(
        default,
        skip_serializing_if = "crate::document::defaults::is_zero_u64"
    )]
    pub warm_bytes: u64,
    /// The cap on the rate the workers issued their I/Os at (`run
    /// --rate-iops`, `--rate`); left out when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<crate::RateCap>,
    pub interval_ns: u64,
    pub continue_on_error: bool,
    /// Files registered with io_uring (false for the sync engine).
    pub registered_files: bool,
    /// Fixed (registered) buffers with io_uring (false for the sync engine).
    pub fixed_buffers: bool,
    /// Longest a batched io_uring wait aims to hold a finished I/O before
    /// it is seen and timed, in microseconds (a wait is for several only
    /// when the last reap's rate brings them in this time); null when each
    /// wait returns at the first completion.
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
    /// What the report keeps of each stream (schema version 5 on): `full`,
    /// or `summary`: its counts, rates, errors and latency figures, its
    /// histograms and series only merged into the point's `total`. Left
    /// out when full.
    #[serde(default, skip_serializing_if = "StreamDetail::is_full")]
    pub stream_detail: StreamDetail,
}

/// What a report keeps of each stream (`--stream-detail`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum StreamDetail {
    /// Everything: its lossless histograms and its series too.
    #[default]
    Full,
    /// Its counts, rates, errors and latency figures; its histograms and
    /// series are merged into the point's totals, not kept on their own.
    Summary,
}

impl StreamDetail {
    pub fn is_full(&self) -> bool {
        *self == StreamDetail::Full
    }
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
    /// The device under the target and how it is used, as sysfs and the
    /// mount table tell it; left out when nothing is known (and in reports
    /// older than it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceReport>,
}

/// The device a target is on (for a file, the device of its filesystem),
/// for the history of runs: what changed between two runs (a firmware, a
/// scheduler, a mount option). Each field is left out when not known.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceReport {
    /// The kernel's name of the whole device (`nvme0n1`, `sda`, `md0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The serial number hashed (xxh3-64, 16 hex digits): the same drive
    /// is recognised again. Not keyed: it keeps the serial from a casual
    /// reader, not from one who tries a model's serials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
    /// How it is attached: `nvme`, `sata`, `sas`, `scsi`, `usb`, `virtio`,
    /// `mmc`, or a virtual device's kind (`md`, `dm`, `loop`, `zram`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// The I/O scheduler in use (`none`, `mq-deadline`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// A file's filesystem type and its mount options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_options: Option<String>,
    /// A file's mount: where it is mounted (`/`, `/mnt/b`) and what is
    /// mounted there (`/dev/vda1`, a server's export, `tmpfs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_point: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_source: Option<String>,
    /// An md array's level and members (`raid0 of sda,sdb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<String>,
}

/// The first failed I/O.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailureReport {
    pub stream: usize,
    pub op: Op,
    pub offset: u64,
    pub errno: i32,
    pub error: String,
    pub at_ns: u64,
}

impl PointReport {
    /// The process's CPU time per completed I/O in microseconds, over the
    /// measured phase; `None` when no I/O completed.
    pub fn cpu_per_io_us(&self) -> Option<f64> {
        let ops = self.total.read.ops + self.total.write.ops + self.total.trim.ops;
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
            s.trim.set_last_interval(interval, own);
        }
        let t = &mut self.total;
        for c in [&mut t.read, &mut t.write, &mut t.trim] {
            c.set_last_interval(interval, end);
        }
    }
}
