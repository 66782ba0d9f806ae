//! Under MPI, what each point holds of the ranks: each rank's own figures
//! and the point's rates over its three windows.

use serde::{Deserialize, Serialize};

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
