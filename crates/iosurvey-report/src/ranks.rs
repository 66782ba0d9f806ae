//! The text of a run under MPI, after the mode's own: each rank's host,
//! targets and totals, and each point's rates over the three windows.

use crate::text::{format_rate, TextOptions};
use iosurvey_model::document::RunReport;
use std::fmt::Write;

/// The ranks and windows of `report`; empty for a run on one host.
pub fn render_ranks(report: &RunReport, opts: TextOptions) -> String {
    let mut out = String::new();
    if report.ranks.is_empty() {
        return out;
    }
    let mut hosts: Vec<&str> = report.ranks.iter().map(|r| r.host.as_str()).collect();
    hosts.dedup();
    hosts.sort_unstable();
    hosts.dedup();
    let _ = writeln!(
        out,
        "\nMPI: {} ranks on {} host{}",
        report.ranks.len(),
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" }
    );
    let names = |ix: &[usize]| -> String {
        let first = report.points.first();
        let v: Vec<String> = ix
            .iter()
            .map(|&i| {
                first
                    .and_then(|p| p.targets.get(i))
                    .map_or_else(|| i.to_string(), |t| t.path.clone())
            })
            .collect();
        if v.is_empty() {
            "no target".into()
        } else {
            v.join(", ")
        }
    };
    for r in &report.ranks {
        let _ = writeln!(
            out,
            "  rank {:>3} on {}: {}",
            r.rank,
            r.host,
            names(&r.targets)
        );
    }
    for w in &report.windows {
        let label = report
            .points
            .iter()
            .find(|p| p.index == w.index)
            .map_or("", |p| p.label.as_str());
        let _ = writeln!(out, "point {} ({label}):", w.index);
        for (name, win, what) in [
            ("common window", &w.common, "every rank running"),
            (
                "first done",
                &w.first_done,
                "first start to the first rank's end",
            ),
            (
                "last done",
                &w.last_done,
                "first start to the last rank's end",
            ),
        ] {
            if win.end_ns <= win.start_ns {
                let _ = writeln!(out, "  {name:<13} none: the ranks never all ran at once");
                continue;
            }
            let _ = writeln!(
                out,
                "  {name:<13} {:>9.3} s to {:>9.3} s: {:>12}, {:>10.0} IOPS ({what})",
                win.start_ns as f64 / 1e9,
                win.end_ns as f64 / 1e9,
                format_rate(win.bytes_per_sec, opts),
                win.iops
            );
        }
        for r in &report.ranks {
            if let Some(p) = r.points.iter().find(|p| p.index == w.index) {
                let bytes = p.read_bytes + p.write_bytes;
                let secs = p.end_ns.saturating_sub(p.start_ns) as f64 / 1e9;
                let rate = if secs > 0.0 { bytes as f64 / secs } else { 0.0 };
                let _ = writeln!(
                    out,
                    "  rank {:>3} {:<16} {:>9.3} s to {:>9.3} s: {:>12} ({} ops, {} errors)",
                    r.rank,
                    r.host,
                    p.start_ns as f64 / 1e9,
                    p.end_ns as f64 / 1e9,
                    format_rate(rate, opts),
                    p.read_ops + p.write_ops,
                    p.errors
                );
            }
        }
    }
    out
}
