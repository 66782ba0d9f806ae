//! A run as the database holds it, whatever it came from (an iosurvey
//! report, fio's JSON, exported lines): the run, its hosts and targets,
//! each point with its typed parameters, and each figure per stream,
//! direction and window, with the lossless histograms beside them.

use serde::{Deserialize, Serialize};

/// Where a run's figures came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// An iosurvey report (a run with `--db`, or `db import` of its JSON).
    Iosurvey,
    /// fio's `--output-format=json` or `json+`.
    Fio,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Iosurvey => "iosurvey",
            Source::Fio => "fio",
        }
    }

    pub fn parse(s: &str) -> Option<Source> {
        match s {
            "iosurvey" => Some(Source::Iosurvey),
            "fio" => Some(Source::Fio),
            _ => None,
        }
    }
}

/// One run: what the `runs` table and the tables under it hold of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    #[serde(flatten)]
    pub head: RunHead,
    pub hosts: Vec<HostRow>,
    pub targets: Vec<TargetRow>,
    pub points: Vec<PointRecord>,
    /// The run's whole document as it was read (an iosurvey report, or
    /// fio's JSON), from which the rows can always be made again; `None`
    /// for a run imported from exported lines.
    #[serde(skip)]
    pub document: Option<String>,
}

/// The run itself (the `runs` table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunHead {
    /// What makes a run the same run again: a second import of it is
    /// skipped (see [`crate::hash::run_key`]).
    pub run_key: String,
    pub source: Source,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub tool: String,
    pub tool_version: String,
    pub tool_commit: Option<String>,
    /// The report's `schema_version` (iosurvey); `None` for fio.
    pub schema_version: Option<u32>,
    pub mode: String,
    pub command_line: Vec<String>,
    /// What makes two runs the same test (see [`crate::hash`]): a
    /// history is one plan's runs.
    pub plan_hash: String,
    pub label: Option<String>,
    pub repeats: u32,
    pub interrupted: bool,
}

/// A host of the run (several under MPI; the first is rank 0's, the only
/// one whose details the report holds).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostRow {
    pub index: u32,
    pub hostname: String,
    pub kernel: Option<String>,
    pub os: Option<String>,
    pub arch: Option<String>,
    pub cpu_model: Option<String>,
    pub cpus: Option<u32>,
    pub memory_bytes: Option<u64>,
}

/// A target of the run and the device under it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetRow {
    pub index: u32,
    /// Index into the run's hosts.
    pub host: u32,
    pub path: String,
    pub kind: String,
    pub size_bytes: u64,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    pub rotational: Option<bool>,
    pub direct: bool,
    pub memory_backed: Option<String>,
    pub link: Option<String>,
    pub link_bytes_per_sec: Option<u64>,
    pub device_name: Option<String>,
    pub model: Option<String>,
    pub serial_hash: Option<String>,
    pub firmware: Option<String>,
    pub transport: Option<String>,
    pub scheduler: Option<String>,
    pub filesystem: Option<String>,
    pub mount_options: Option<String>,
    /// An md array's level and members, or the virtual array of the run
    /// this target was a member of (`raid0 stripe 65536 of 0,1`).
    pub array_layout: Option<String>,
}

/// One point and its figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointRecord {
    #[serde(flatten)]
    pub head: PointHead,
    pub figures: Vec<FigureRow>,
    pub histograms: Vec<HistogramRow>,
}

/// A point (the `points` table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointHead {
    pub index: u32,
    pub repeat: u32,
    pub label: String,
    /// Its typed parameters as JSON (iosurvey's `params`, by mode), or
    /// fio's job options.
    pub params: serde_json::Value,
    pub elapsed_ns: u64,
    pub interrupted: bool,
    pub skipped: Option<String>,
    pub cpu_us_per_io: Option<f64>,
    /// The warnings' codes.
    pub warnings: Vec<String>,
    /// `--verify`: blocks found wrong; `None` when not verified.
    pub verify_failures: Option<u64>,
}

/// Stream `total`: every stream of the point together.
pub const TOTAL: &str = "total";

/// One figure set of a point (the `figures` table): for a stream (or
/// [`TOTAL`]), a direction (`read`, `write`, or `all` for a window's
/// rates) and a window (`total`: the point's measured phase; under MPI
/// `common`, `first_done` and `last_done`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureRow {
    pub stream: String,
    pub direction: String,
    pub window: String,
    pub ops: f64,
    pub bytes: f64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    pub errors: u64,
    pub latency: Option<LatencyFigures>,
}

/// Latency in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyFigures {
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub max_ns: u64,
    /// `[percentile, ns]`, ascending.
    pub percentiles: Vec<(f64, u64)>,
}

impl LatencyFigures {
    /// The value at percentile `p`, when it was reported.
    pub fn at(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (q - p).abs() < 1e-9)
            .map(|&(_, ns)| ns)
    }
}

/// A lossless histogram (the `histograms` table), as iosurvey's JSON
/// holds one (`HistogramData`), so any percentile can be made again or
/// merged with another run's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistogramRow {
    pub stream: String,
    pub direction: String,
    pub data: serde_json::Value,
}
