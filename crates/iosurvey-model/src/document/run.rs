//! The run as a whole: the tool, the host, the command, every point, and
//! under MPI every rank and each point's windows.

use crate::document::modes::{DiskperfSettings, MatrixSettings};
use crate::document::point::PointReport;
use crate::HostInfo;
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
    #[serde(
        default = "crate::document::defaults::one",
        skip_serializing_if = "crate::document::defaults::is_one"
    )]
    pub repeats: u32,
    /// `diskperf`: its display choices (label, scale, frames per second),
    /// which its text, CSV and page show. Left out in other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diskperf: Option<DiskperfSettings>,
    /// `matrix`: ORION's run level and cache warm-up as given, which its
    /// summary follows. Left out in other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<MatrixSettings>,
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
    /// and merging them, from a barrier (the cost of the distributed run
    /// itself).
    #[serde(default)]
    pub merge_ns: u64,
    /// Bytes rank 0 received for the point (every other rank's encoded
    /// result; its own is merged where it is).
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
