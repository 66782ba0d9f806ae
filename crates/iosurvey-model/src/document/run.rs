//! The run as a whole: the tool, the host, the command, under MPI every
//! rank, and every point (each with its ranks' figures and windows).

use crate::document::modes::{DiskperfSettings, MatrixSettings, QuickSettings};
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
    /// `--shared`: the targets were neither locked nor opened exclusively,
    /// so another run may have used them at the same time (and its load is
    /// in these figures). Left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
    /// Under MPI: every rank, its host and its targets (each point holds
    /// the ranks' own figures). Left out of a run on one host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankReport>,
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
    /// `quick`: the profile its card shows. Left out in other modes (and
    /// in quick reports older than it, which ran `cdm8`'s tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quick: Option<QuickSettings>,
    /// Variables of the environment the command line was read with, as
    /// `NAME=VALUE`: sgpdd-survey's (`scsidevs`, `size`, ...) when
    /// `survey` took them. Left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<String>,
    /// `run --fio JOB.fio`: the fio job file the run was made from, the
    /// sections that ran and its text. Left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_job: Option<FioJobFile>,
    /// `--label`: the user's name for the run (a firmware, a setting
    /// tried), which the history database files it under. Left out when
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Last, so that a report is written as it runs by appending each
    /// point (`,{point}]}`) without rewriting what came before; everything
    /// above is known before the first point.
    pub points: Vec<PointReport>,
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

/// The fio job file a run was made from (`iosurvey run --fio JOB.fio`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FioJobFile {
    /// The job file as named on the command line.
    pub file: String,
    /// Its job sections that ran, together as one run.
    pub sections: Vec<String>,
    /// What ran otherwise than the job file says (`ioengine=libaio` as
    /// io_uring). Left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The job file's text when the run was made, to run it again.
    pub text: String,
}

/// One rank of a run under MPI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankReport {
    pub rank: usize,
    pub host: String,
    /// Its targets, as indices into every point's `targets`.
    pub targets: Vec<usize>,
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
