//! Typed parameters of a point, one variant per mode, set where the point
//! is planned: presenters read them and never parse a label back.

use crate::{Op, Pattern};
use serde::{Deserialize, Serialize};

/// What a point varies, by mode. Serialised with a `mode` tag.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum PointParams {
    /// Not recorded: a report saved before points carried parameters.
    #[default]
    None,
    /// `run`: one workload, described by its job; in a sweep (`--qd
    /// 1,2,4`, `--bs 4k,64k`), the swept values of this point. A value
    /// that is not swept is left out (`{"mode":"run"}` for a run of one
    /// point, as before sweeps).
    Run {
        /// Outstanding I/Os per target of this point, when `--qd` is swept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        qd: Option<u32>,
        /// Block size of this point in bytes, when `--bs` is swept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bs: Option<u64>,
    },
    /// `quick`: one test of the card (`SEQ1M Q8T1`, ...), one direction.
    Quick { test: String, op: Op },
    /// `diskperf`: one request size, pattern and direction.
    Diskperf { size: u64, pattern: Pattern, op: Op },
    /// `parallel`: how many devices run at once.
    Parallel { devices: usize },
    /// `survey`: record size, concurrent regions and outstanding I/Os
    /// (both per device), and the action.
    Survey {
        rsz: u64,
        crg: u32,
        thr: u32,
        action: Op,
    },
    /// `matrix`: outstanding small and large I/Os.
    Matrix { small: u32, large: u32 },
    /// `profile`: where on the device the point measures.
    Profile { position: ProfilePosition },
    /// `video`: one frame workload, described by its frame job.
    Video,
}

impl PointParams {
    /// A `run` point that sweeps nothing.
    pub const RUN: PointParams = PointParams::Run { qd: None, bs: None };

    /// Whether this is a point of a `run` sweep (a swept `--qd` or `--bs`).
    pub fn is_run_sweep(&self) -> bool {
        matches!(self, PointParams::Run { qd, bs } if qd.is_some() || bs.is_some())
    }
}

/// Where a `profile` point measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ProfilePosition {
    /// Zone `index`: `len` bytes from `offset`, read forward.
    Zone { index: u32, offset: u64, len: u64 },
    /// Random 4 KiB reads over the whole area.
    Access,
    /// Requests of `bs` bytes over the first `area` bytes, from the cache.
    Burst { bs: u64, area: u64 },
}
