//! The warning of `parallel` judged across its points: devices that
//! together beat the sum of one alone (`super_linear`, of a `--scale` step
//! against the first).

use iosurvey_model::document::evidence::{Evidence, SuperLinear};
use iosurvey_model::document::{RunReport, Warning};
use iosurvey_model::PointParams;
/// How far a step's aggregate may exceed its devices times one device's
/// rate (the first step's) before it is doubted: devices of one kind share
/// a bus, so a real step gives at most the sum.
const MAX_EFFICIENCY: f64 = 1.10;

/// `super_linear`: adds to the last point of a `parallel --scale` report,
/// once, the warning that its devices together ran more than 10% faster
/// than as many times the first step's rate per device. Called after each
/// point is added (the first step is known by then).
pub fn judge_scaling(report: &mut RunReport) {
    let Some(last) = report.points.last() else {
        return;
    };
    if !matches!(last.params, PointParams::Parallel { .. })
        || last.warnings.iter().any(|w| w.code() == "super_linear")
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
        Evidence::SuperLinear(SuperLinear {
            devices: row.devices as u64,
            aggregate_bytes_per_sec: row.aggregate.round(),
            single_bytes_per_sec: single.round(),
            efficiency: (row.efficiency * 1000.0).round() / 1000.0,
        }),
        format!(
            "{} devices together ran at {:.0} MB/s, {:.1}% of {} times one device alone ({:.0} MB/s): more than the sum of their parts, which devices that share nothing but a bus cannot give: a cache (the page cache, a controller's) answered part of it, or the first device is slower than the others (its rate is the yardstick)",
            row.devices,
            row.aggregate / 1e6,
            row.efficiency * 100.0,
            row.devices,
            single / 1e6
        ),
        "an aggregate at most 110% of N times one device's rate",
    );
    if let Some(p) = report.points.last_mut() {
        p.warnings.push(w);
    }
}
