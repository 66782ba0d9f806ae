//! The warnings of `parallel`: a common window far shorter than the run
//! (`short_window`, of one point), and devices that together beat the sum
//! of one alone (`super_linear`, of a `--scale` step against the first).

use super::Warning;
use crate::model::{RunReport, StreamReport};
use iosurvey_model::PointParams;
use serde_json::json;
use std::time::Duration;

/// The least share of the run the common window must cover for its rates
/// to speak for the run.
const MIN_WINDOW_SHARE: f64 = 0.5;
/// How far a step's aggregate may exceed its devices times one device's
/// rate (the first step's) before it is doubted: devices of one kind share
/// a bus, so a real step gives at most the sum.
const MAX_EFFICIENCY: f64 = 1.10;

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
        "short_window",
        format!(
            "the common window, in which every device ran, lasted {:.3} s of a {:.3} s run ({:.1}%): the rates speak for that window only (a device reached its end or failed early); give --loop, or devices of like size",
            window as f64 / 1e9,
            run as f64 / 1e9,
            share * 100.0
        ),
        json!({
            "window_ns": window,
            "run_ns": run,
            "last_done_ns": last,
            "share": (share * 1000.0).round() / 1000.0,
        }),
        "a common window of at least half the run",
    ))
}

/// `super_linear`: adds to the last point of a `parallel --scale` report,
/// once, the warning that its devices together ran more than 10% faster
/// than as many times the first step's rate per device. Called after each
/// point is added (the first step is known by then).
pub fn judge_scaling(report: &mut RunReport) {
    let Some(last) = report.points.last() else {
        return;
    };
    if !matches!(last.params, PointParams::Parallel { .. })
        || last.warnings.iter().any(|w| w.code == "super_linear")
    {
        return;
    }
    let rows = crate::parallel::scaling(report);
    let (Some(first), Some(row)) = (rows.first(), rows.last()) else {
        return;
    };
    if rows.len() < 2 || row.devices <= first.devices || row.efficiency <= MAX_EFFICIENCY {
        return;
    }
    let single = first.aggregate / first.devices.max(1) as f64;
    let w = Warning::new(
        "super_linear",
        format!(
            "{} devices together ran at {:.0} MB/s, {:.1}% of {} times one device alone ({:.0} MB/s): more than the sum of their parts, which devices that share nothing but a bus cannot give: a cache (the page cache, a controller's) answered part of it, or the first device is slower than the others (its rate is the yardstick)",
            row.devices,
            row.aggregate / 1e6,
            row.efficiency * 100.0,
            row.devices,
            single / 1e6
        ),
        json!({
            "devices": row.devices,
            "aggregate_bytes_per_sec": row.aggregate.round(),
            "single_bytes_per_sec": single.round(),
            "efficiency": (row.efficiency * 1000.0).round() / 1000.0,
        }),
        "an aggregate at most 110% of N times one device's rate",
    );
    if let Some(p) = report.points.last_mut() {
        p.warnings.push(w);
    }
}
