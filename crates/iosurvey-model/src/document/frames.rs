//! A frame workload in the document (`iosurvey video`): its settings, the
//! first frames' records, and every frame added up in a size that does not
//! grow with their number.

use crate::result::{Extremes, FrameSums, FrameTally};
use crate::{Fps, FrameOrder, FrameRecord, Op};
use serde::{Deserialize, Serialize};

/// The `Last Ns` windows a summary adds up, in seconds.
pub const WINDOWS_S: [u64; 3] = [1, 5, 10];
const SEC: u64 = 1_000_000_000;

/// Where the frames lived: one file each (`files`) or one file or device
/// for all (`stream`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FramesLayout {
    Files,
    Stream,
}

/// `files` or `stream`, as reports print it.
impl std::fmt::Display for FramesLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FramesLayout::Files => "files",
            FramesLayout::Stream => "stream",
        })
    }
}

/// A frame workload as it ran: its settings and one record per frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FramesReport {
    /// `files` (one file per frame) or `stream` (one file).
    pub layout: FramesLayout,
    /// `read` or `write`.
    pub op: Op,
    /// The preset's name, or `custom`.
    pub format: String,
    /// Bytes per frame, header included.
    pub frame_bytes: u64,
    pub header_bytes: u64,
    /// Frames planned (per loop).
    pub frames: u64,
    /// Passes over the frames; absent in reports older than it (one).
    #[serde(default = "crate::document::defaults::one")]
    pub loops: u32,
    /// Worker threads, each moving one frame at a time.
    pub threads: u32,
    /// I/Os in flight per frame.
    pub depth: u32,
    /// Real-time pacing in frames per second, as a fraction (`{"num":
    /// 30000, "den": 1001}`); null when unpaced. (A float in reports of
    /// schema version 3 and older.)
    #[serde(default, deserialize_with = "crate::document::fps::read_fps")]
    #[schemars(with = "Option<Fps>")]
    pub fps: Option<Fps>,
    /// Frame times a frame may wait before it is dropped (paced only).
    pub queue: u32,
    /// `fwd`, `rev` or `random`.
    pub order: FrameOrder,
    /// Files per subdirectory (files layout; 0: all in one).
    pub files_per_dir: u32,
    /// The first frames, in order of start (at most
    /// `iosurvey_model::result::MAX_FRAME_RECORDS`; `summary` counts all).
    pub records: Vec<FrameRecord>,
    /// Every frame added up; absent in reports older than it, whose
    /// records hold every frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<FramesSummary>,
}

/// The transferred frames that ended in the last `window_ns` of a run
/// (`None`: in the whole run), added up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowSums {
    pub window_ns: Option<u64>,
    #[serde(flatten)]
    pub sums: FrameSums,
}

/// A point's frames added up, every one of them, in a size that does not
/// grow with their number: what the JSON carries and the text is made of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FramesSummary {
    /// Transferred by their deadline (or unpaced).
    pub done: u64,
    /// Transferred after their deadline.
    pub late: u64,
    /// Not started before their deadline: no I/O.
    pub skipped: u64,
    pub failed: u64,
    /// The failed frame that started first.
    pub first_failed: Option<FrameRecord>,
    /// The transferred frames that took least and most time.
    pub fastest: Option<FrameRecord>,
    pub slowest: Option<FrameRecord>,
    /// Transferred frames per bucket of [`HISTOGRAM_EDGES_NS`].
    pub histogram: Vec<u64>,
    /// Shortest and longest open, I/O and close of the transferred frames.
    pub open_ns: Option<Extremes>,
    pub io_ns: Option<Extremes>,
    pub close_ns: Option<Extremes>,
    /// The last 1, 5 and 10 s (those the run is at least twice as long
    /// as; to 10 ms), then the whole run.
    pub windows: Vec<WindowSums>,
    /// The fewest bytes transferred in a whole second of the run; null
    /// when it spans fewer than two.
    pub slowest_second_bytes: Option<u64>,
}

impl FramesSummary {
    /// The summary of a run of `elapsed_ns` from its tally.
    pub fn new(t: &FrameTally, elapsed_ns: u64) -> Self {
        let windows = WINDOWS_S
            .iter()
            .map(|s| s * SEC)
            .filter(|&w| elapsed_ns >= 2 * w)
            .map(|w| WindowSums {
                window_ns: Some(w),
                sums: t.ended_after(elapsed_ns - w),
            })
            .chain([WindowSums {
                window_ns: None,
                sums: t.sums,
            }])
            .collect();
        FramesSummary {
            done: t.done,
            late: t.late,
            skipped: t.skipped,
            failed: t.failed,
            first_failed: t.first_failed,
            fastest: t.fastest,
            slowest: t.slowest,
            histogram: t.histogram.to_vec(),
            open_ns: t.open,
            io_ns: t.io,
            close_ns: t.close,
            windows,
            slowest_second_bytes: t.slowest_second(elapsed_ns),
        }
    }

    /// The summary of `records` (a report without one, or a test).
    pub fn from_records(records: &[FrameRecord], elapsed_ns: u64) -> Self {
        FramesSummary::new(&FrameTally::from_records(records), elapsed_ns)
    }

    /// Frames recorded: every status.
    pub fn recorded(&self) -> u64 {
        self.done + self.late + self.skipped + self.failed
    }
}
