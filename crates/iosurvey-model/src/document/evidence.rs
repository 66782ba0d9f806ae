//! The figures each warning code is raised on, typed per code, so that the
//! schema documents every code's evidence and scripts can rely on it.

use crate::Op;
use serde::{Deserialize, Serialize};

/// A warning's code and its evidence (`code` and `evidence` in the JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "code", content = "evidence", rename_all = "snake_case")]
pub enum Evidence {
    /// io_uring ran without registered files or fixed buffers.
    IoUringUnregistered(IoUringUnregistered),
    /// Buffered reads of an area smaller than RAM.
    BufferedFitsInRam(BufferedFitsInRam),
    /// The target is memory, or its pages read were resident.
    MemoryBacked(MemoryBacked),
    /// A sample of the area read reads as zeros.
    UnwrittenArea(UnwrittenArea),
    /// A rate above the target's interface.
    RateAboveLink(RateAboveLink),
    /// A random-read median below a rotational disk's seek.
    LatencyBelowFloor(LatencyBelowFloor),
    /// Too few intervals to judge a rate.
    TooShort(TooShort),
    /// Interval rates that vary more than counting explains.
    Unstable(Unstable),
    /// A fast phase, then a cliff to a slow one.
    WriteCacheCollapse(WriteCacheCollapse),
    /// The storage compresses what it is given.
    CompressionSuspected(CompressionSuspected),
    /// A rate above what the device's class gives.
    RateAboveClass(RateAboveClass),
    /// A common window far shorter than the run (`parallel`).
    ShortWindow(ShortWindow),
    /// Devices together faster than the sum of one alone (`parallel --scale`).
    SuperLinear(SuperLinear),
    /// A rate cap the run did not reach (`run --rate-iops`, `--rate`).
    RateNotReached(RateNotReached),
    /// A warning of a report older than the codes: its words only.
    Text(NoEvidence),
}

impl Evidence {
    /// The stable code, as the JSON has it.
    pub fn code(&self) -> &'static str {
        match self {
            Evidence::IoUringUnregistered(_) => "io_uring_unregistered",
            Evidence::BufferedFitsInRam(_) => "buffered_fits_in_ram",
            Evidence::MemoryBacked(_) => "memory_backed",
            Evidence::UnwrittenArea(_) => "unwritten_area",
            Evidence::RateAboveLink(_) => "rate_above_link",
            Evidence::LatencyBelowFloor(_) => "latency_below_floor",
            Evidence::TooShort(_) => "too_short",
            Evidence::Unstable(_) => "unstable",
            Evidence::WriteCacheCollapse(_) => "write_cache_collapse",
            Evidence::CompressionSuspected(_) => "compression_suspected",
            Evidence::RateAboveClass(_) => "rate_above_class",
            Evidence::ShortWindow(_) => "short_window",
            Evidence::SuperLinear(_) => "super_linear",
            Evidence::RateNotReached(_) => "rate_not_reached",
            Evidence::Text(_) => "text",
        }
    }

    /// The target and op the evidence names, when it names them: what
    /// makes two points' warnings of one code the same kind.
    pub fn target_and_op(&self) -> (Option<&str>, Option<Op>) {
        match self {
            Evidence::BufferedFitsInRam(e) => (Some(&e.target), None),
            Evidence::MemoryBacked(e) => (Some(&e.target), None),
            Evidence::LatencyBelowFloor(e) => (Some(&e.target), None),
            Evidence::RateAboveLink(e) => (Some(&e.target), Some(e.op)),
            Evidence::RateAboveClass(e) => (Some(&e.target), Some(e.op)),
            Evidence::TooShort(e) => (None, Some(e.op)),
            Evidence::Unstable(e) => (None, Some(e.op)),
            _ => (None, None),
        }
    }
}

/// No figures (a `text` warning).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NoEvidence {}

/// `io_uring_unregistered`: what the kernel granted (both expected).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct IoUringUnregistered {
    pub registered_files: bool,
    pub fixed_buffers: bool,
}

/// `buffered_fits_in_ram`: the area read and the host's memory, in bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct BufferedFitsInRam {
    pub target: String,
    pub area_bytes: u64,
    pub ram_bytes: u64,
}

/// `memory_backed`: what memory backs the target (`tmpfs`, `zram`, ...,
/// or `page cache` with the pages read and those resident at the start).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct MemoryBacked {
    pub target: String,
    pub backing: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resident_pages: Option<u64>,
}

/// `unwritten_area`: the sample of blocks read and the share of zeros,
/// with the share's lower bound at `confidence`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct UnwrittenArea {
    pub sampled_blocks: u64,
    pub zero_blocks: u64,
    pub zero_share: f64,
    pub zero_share_low: f64,
    pub confidence: f64,
}

// Evidence read from an older report may lack the figures added since its
// code was: they read as 0 (every code has named its `op` from the start).

/// `rate_above_link`: the rate of `op`s and the interface's ceiling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RateAboveLink {
    #[serde(default)]
    pub target: String,
    pub op: Op,
    #[serde(default)]
    pub bytes_per_sec: f64,
    #[serde(default)]
    pub link_bytes_per_sec: u64,
}

/// `latency_below_floor`: the random reads' median latency.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct LatencyBelowFloor {
    pub target: String,
    pub read_p50_ns: u64,
}

/// `rate_not_reached`: the cap asked for (the whole job's, per second)
/// and the rate the run reached, in the cap's unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RateNotReached {
    pub unit: crate::RateUnit,
    pub asked_per_sec: u64,
    pub reached_per_sec: f64,
}

/// `too_short`: the whole intervals and the time measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TooShort {
    pub op: Op,
    #[serde(default)]
    pub intervals: u64,
    #[serde(default)]
    pub interval_ns: u64,
    #[serde(default)]
    pub measured_ns: u64,
}

/// `unstable`: the interval rates' coefficient of variation, and the
/// dispersion of the I/Os per interval against what counting gives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Unstable {
    pub op: Op,
    #[serde(default)]
    pub cv: f64,
    #[serde(default)]
    pub intervals: u64,
    #[serde(default)]
    pub stalled_intervals: u64,
    #[serde(default)]
    pub mean_bytes_per_sec: f64,
    #[serde(default)]
    pub ops_per_interval: f64,
    #[serde(default)]
    pub dispersion: f64,
    #[serde(default)]
    pub dispersion_limit: f64,
    #[serde(default)]
    pub confidence: f64,
}

/// `write_cache_collapse`: the rates before and after the knee, and where
/// it came.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct WriteCacheCollapse {
    pub start_bytes_per_sec: f64,
    pub after_bytes_per_sec: f64,
    pub knee_bytes: u64,
    pub knee_gb: f64,
    pub fast_intervals: u64,
    pub slow_intervals: u64,
}

/// `compression_suspected`: the two write rates, and when the filesystem
/// tells it, how much of the compressible data it stored encoded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct CompressionSuspected {
    pub compressible_bytes_per_sec: f64,
    pub incompressible_bytes_per_sec: f64,
    pub ratio: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoded_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoded_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compressible_written_bytes: Option<u64>,
}

/// `rate_above_class`: the rate of `op`s and the most the class gives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RateAboveClass {
    #[serde(default)]
    pub target: String,
    pub op: Op,
    #[serde(default)]
    pub bytes_per_sec: f64,
    #[serde(default)]
    pub class: String,
    #[serde(default)]
    pub class_bytes_per_sec: f64,
}

/// `short_window`: the common window, the run, and the share.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ShortWindow {
    pub window_ns: u64,
    pub run_ns: u64,
    pub last_done_ns: u64,
    pub share: f64,
}

/// `super_linear`: the step's devices and rate, one device's, and their
/// ratio.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct SuperLinear {
    pub devices: u64,
    pub aggregate_bytes_per_sec: f64,
    pub single_bytes_per_sec: f64,
    pub efficiency: f64,
}
