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
    for p in &report.points {
        let Some(w) = &p.windows else {
            continue;
        };
        let again = match p.repeat {
            0 => String::new(),
            k => format!(", repeat {}", k + 1),
        };
        let _ = writeln!(out, "point {} ({}{again}):", p.index, p.label);
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
        for (r, f) in report.ranks.iter().zip(&p.ranks) {
            let bytes = f.read_bytes + f.write_bytes;
            let secs = f.end_ns.saturating_sub(f.start_ns) as f64 / 1e9;
            let rate = if secs > 0.0 { bytes as f64 / secs } else { 0.0 };
            let _ = writeln!(
                out,
                "  rank {:>3} {:<16} {:>9.3} s to {:>9.3} s: {:>12} ({} ops, {} errors)",
                r.rank,
                r.host,
                f.start_ns as f64 / 1e9,
                f.end_ns as f64 / 1e9,
                format_rate(rate, opts),
                f.read_ops + f.write_ops,
                f.errors
            );
        }
    }
    out
}
