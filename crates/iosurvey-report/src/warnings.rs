//! Warnings as presenters show them, and the one warning judged across
//! points once a report holds several (`super_linear`, from the scaling
//! rows `parallel` presents).

mod parallel;

pub use parallel::judge_scaling;

use iosurvey_model::document::{RunReport, Warning};

/// Every point's warnings, one per line after `prefix`, each kind once:
/// the summaries of many-point modes (the quick card, diskperf, profile).
/// A kind is a code on one target and op (its figures differ from point to
/// point); the first point's is printed, with how many more raised it.
pub(crate) fn warnings_once(out: &mut String, report: &RunReport, prefix: &str) {
    use std::fmt::Write as _;
    let mut seen: Vec<(&Warning, usize)> = Vec::new();
    for w in report.points.iter().flat_map(|p| &p.warnings) {
        match seen.iter_mut().find(|(s, _)| s.same_kind(w)) {
            Some((_, n)) => *n += 1,
            None => seen.push((w, 1)),
        }
    }
    for (w, n) in seen {
        let _ = match n {
            1 => writeln!(out, "{prefix}{w}"),
            2 => writeln!(out, "{prefix}{w} (and 1 more point)"),
            n => writeln!(out, "{prefix}{w} (and {} more points)", n - 1),
        };
    }
}
