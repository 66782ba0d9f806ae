//! `short_window` (parallel): the common window, in which every device
//! ran, is far shorter than the run.

use crate::document::class::StreamReport;
use crate::document::evidence::*;
use crate::document::warning::Warning;
use std::time::Duration;

/// The least share of the run the common window must cover for its rates
/// to speak for the run.
const MIN_WINDOW_SHARE: f64 = 0.5;

/// `short_window`: the common window (from the start to the first
/// device's end) covers under half of the run (the longer of the last
/// device's end and the time asked).
pub(super) fn short_window(streams: &[StreamReport], asked: Option<Duration>) -> Option<Warning> {
    let window = streams.iter().map(|s| s.elapsed_ns).min()?;
    let last = streams.iter().map(|s| s.elapsed_ns).max()?;
    let asked_ns = asked.map_or(0, |d| d.as_nanos() as u64);
    let run = last.max(asked_ns);
    if run == 0 || window as f64 >= MIN_WINDOW_SHARE * run as f64 {
        return None;
    }
    let share = window as f64 / run as f64;
    Some(Warning::new(
        Evidence::ShortWindow(ShortWindow {
            window_ns: window,
            run_ns: run,
            last_done_ns: last,
            share: (share * 1000.0).round() / 1000.0,
        }),
        format!(
            "the common window, in which every device ran, lasted {:.3} s of a {:.3} s run ({:.1}%): the rates speak for that window only (a device reached its end or failed early); give --loop, or devices of like size",
            window as f64 / 1e9,
            run as f64 / 1e9,
            share * 100.0
        ),
        "a common window of at least half the run",
    ))
}
