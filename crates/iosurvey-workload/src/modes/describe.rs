//! `--dry-run`: a plan in words, with its estimated duration. Pure.

use crate::units::format_size;
use crate::{Mix, Plan};
use std::fmt::Write;
use std::time::Duration;

/// The estimated run time: every time-bounded point's ramp and time, or
/// `None` when some point ends on bytes (its time depends on the device).
pub fn estimate(plan: &Plan) -> Option<Duration> {
    plan.points
        .iter()
        .filter(|p| p.skip.is_none())
        .map(|p| p.job.bounds.time.map(|t| t + p.job.bounds.ramp))
        .sum()
}

/// One line per point, then the estimate.
pub fn describe(plan: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} plan: {} points", plan.mode, plan.points.len());
    for p in &plan.points {
        let j = &p.job;
        let streams: Vec<String> = j
            .streams
            .iter()
            .map(|s| {
                let op = match s.mix {
                    Mix::Read => "read".to_string(),
                    Mix::Write => "write".to_string(),
                    Mix::Mixed { read_pct } => format!("{read_pct}% read"),
                };
                format!(
                    "{} {} {} {} x{} at {}",
                    j.targets[s.target].path.display(),
                    s.pattern.name(),
                    op,
                    format_size(s.bs),
                    s.outstanding,
                    s.offset
                )
            })
            .collect();
        let bound = match (j.bounds.time, j.bounds.bytes) {
            (Some(t), Some(b)) => format!("{t:?} or {b} bytes"),
            (Some(t), None) => format!("{t:?}"),
            (None, Some(b)) => format!("{b} bytes per stream"),
            (None, None) => "one pass".into(),
        };
        let skip = p
            .skip
            .as_deref()
            .map(|r| format!(" [skipped: {r}]"))
            .unwrap_or_default();
        let shown = if streams.len() > 4 {
            format!(
                "{}; ... ({} streams)",
                streams[..4].join("; "),
                streams.len()
            )
        } else {
            streams.join("; ")
        };
        let _ = writeln!(
            out,
            "{:>4} {}: {} workers, {}{}: {}",
            p.index, p.label, j.workers, bound, skip, shown
        );
    }
    match estimate(plan) {
        Some(t) => {
            let _ = writeln!(out, "estimated duration: {} s", t.as_secs());
        }
        None => {
            let _ = writeln!(out, "estimated duration: unknown (points bounded by bytes take as long as the device needs)");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::quick::{expand, QuickSpec};

    #[test]
    fn a_time_bounded_plan_has_an_estimate() {
        let plan = expand(&QuickSpec::new("/x".into()));
        assert_eq!(estimate(&plan), Some(Duration::from_secs(48)));
        let text = describe(&plan);
        assert!(
            text.contains("8 points") && text.contains("estimated duration: 48 s"),
            "{text}"
        );
    }
}
