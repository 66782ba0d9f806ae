//! What a video point's frames add up to: the summary the JSON carries
//! (every frame, in a size that does not grow with their number), and the
//! figures the text is made of (counts, windows, histogram).

use iosurvey_model::document::{FramesReport, FramesSummary, PointReport, WindowSums};
use iosurvey_model::result::FrameTally;
use iosurvey_model::FrameRecord;

/// The summary of a point's frames: the report's, or for an older report
/// one made from its records.
pub fn frames_summary(f: &FramesReport, elapsed_ns: u64) -> FramesSummary {
    f.summary
        .clone()
        .unwrap_or_else(|| FramesSummary::from_records(&f.records, elapsed_ns))
}

/// What a point's frames add up to. Every recorded frame is in exactly one
/// of `in_time`, `dropped_skipped`, `dropped_late` and `failed`.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameSummary {
    /// Frames planned.
    pub planned: u64,
    /// Frames recorded: transferred, dropped or failed.
    pub recorded: u64,
    /// Transferred by their deadline (every transferred frame, unpaced).
    pub in_time: u64,
    /// Done or late: the data was moved.
    pub transferred: u64,
    /// Dropped because not started before their deadline (no I/O).
    pub dropped_skipped: u64,
    /// Transferred, but after their deadline.
    pub dropped_late: u64,
    pub failed: u64,
    /// The first failed frame in order of start.
    pub first_failed: Option<FrameRecord>,
    /// Bytes of the transferred frames (late ones included).
    pub bytes: u64,
    /// The measured phase.
    pub elapsed_ns: u64,
    /// The transferred frames that took least and most time (first on ties).
    pub fastest: Option<FrameRecord>,
    pub slowest: Option<FrameRecord>,
}

impl FrameSummary {
    /// Frames dropped for real-time use: skipped and late.
    pub fn dropped(&self) -> u64 {
        self.dropped_skipped + self.dropped_late
    }

    /// Frames whose I/O began (all recorded frames but the skipped ones).
    pub fn started(&self) -> u64 {
        self.recorded - self.dropped_skipped
    }

    /// Transferred bytes over the measured phase.
    pub fn bytes_per_sec(&self) -> f64 {
        per_sec(self.bytes, self.elapsed_ns)
    }

    /// Transferred frames over the measured phase.
    pub fn frames_per_sec(&self) -> f64 {
        per_sec(self.transferred, self.elapsed_ns)
    }
}

pub(crate) fn per_sec(v: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        v as f64 * 1e9 / ns as f64
    }
}

/// The summary of a point's frames, or `None` when it has none.
pub fn summarize(p: &PointReport) -> Option<FrameSummary> {
    let f = p.frames.as_ref()?;
    let d = frames_summary(f, p.elapsed_ns);
    Some(FrameSummary {
        planned: f.frames * u64::from(f.loops.max(1)),
        recorded: d.recorded(),
        in_time: d.done,
        transferred: d.done + d.late,
        dropped_skipped: d.skipped,
        dropped_late: d.late,
        failed: d.failed,
        first_failed: d.first_failed,
        bytes: d.windows.last().map_or(0, |w| w.sums.bytes),
        elapsed_ns: p.elapsed_ns,
        fastest: d.fastest,
        slowest: d.slowest,
    })
}

/// Means and rates of the transferred frames that ended in a window.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowRow {
    /// The last `window_ns` of the run; `None` for the whole run.
    pub window_ns: Option<u64>,
    pub frames: u64,
    pub bytes: u64,
    /// Means over the frames, `None` when there are none.
    pub open_ns: Option<f64>,
    pub io_ns: Option<f64>,
    pub close_ns: Option<f64>,
    pub frame_ns: Option<f64>,
    /// Bytes and frames over the window's length.
    pub bytes_per_sec: f64,
    pub frames_per_sec: f64,
}

impl WindowRow {
    fn new(w: &WindowSums, elapsed_ns: u64) -> Self {
        let s = &w.sums;
        let n = s.frames;
        let mean = |sum: u64| (n > 0).then(|| sum as f64 / n as f64);
        let span = w.window_ns.unwrap_or(elapsed_ns);
        WindowRow {
            window_ns: w.window_ns,
            frames: n,
            bytes: s.bytes,
            open_ns: mean(s.open_ns),
            io_ns: mean(s.io_ns),
            close_ns: mean(s.close_ns),
            frame_ns: mean(s.frame_ns),
            bytes_per_sec: per_sec(s.bytes, span),
            frames_per_sec: per_sec(n, span),
        }
    }
}

/// The averaged details: a `Last Ns` row for each of [`iosurvey_model::document::frames::WINDOWS_S`] the run
/// is at least twice as long as, then the whole run.
pub fn window_rows(s: &FramesSummary, elapsed_ns: u64) -> Vec<WindowRow> {
    s.windows
        .iter()
        .map(|w| WindowRow::new(w, elapsed_ns))
        .collect()
}

/// The row of the transferred frames that ended in the last `window_ns`
/// of a run of `elapsed_ns` (`end_ns > elapsed_ns - window_ns`, to 10 ms),
/// or in the whole run when `window_ns` is `None`.
pub fn window_row(records: &[FrameRecord], elapsed_ns: u64, window_ns: Option<u64>) -> WindowRow {
    let t = FrameTally::from_records(records);
    let sums = match window_ns {
        Some(w) => t.ended_after(elapsed_ns.saturating_sub(w)),
        None => t.sums,
    };
    WindowRow::new(&WindowSums { window_ns, sums }, elapsed_ns)
}

/// Transferred frames per bucket of [`HISTOGRAM_EDGES_NS`].
pub fn histogram_buckets(records: &[FrameRecord]) -> [u64; 14] {
    FrameTally::from_records(records).histogram
}

/// The lowest rate in bytes per second over the whole seconds
/// `[k s, (k+1) s)` of the run, by the end of each transferred frame;
/// `None` when the run spans fewer than two whole seconds.
pub fn slowest_window(records: &[FrameRecord], elapsed_ns: u64) -> Option<f64> {
    FrameTally::from_records(records)
        .slowest_second(elapsed_ns)
        .map(|b| b as f64)
}
