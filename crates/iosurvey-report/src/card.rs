//! The `quick` card: one row per test, read and write side by side, like
//! CrystalDiskMark, with IOPS and latency percentiles it lacks.

use crate::text::format_ns;
use crate::{format_rate, TextOptions};
use iosurvey_model::document::{ClassReport, RunReport};
use iosurvey_model::{Op, PointParams};
use std::fmt::Write;

/// One side of a row: a class of a point and the point's CPU time per I/O.
type Side<'a> = Option<(&'a ClassReport, Option<f64>)>;

fn cells(side: Side<'_>, opts: TextOptions) -> String {
    match side.filter(|(c, _)| c.ops > 0) {
        None => format!("{:>12} {:>9} {:>9} {:>9} {:>8}", "-", "-", "-", "-", "-"),
        Some((c, cpu_us)) => {
            let pct = |want: f64| {
                c.latency
                    .at(want)
                    .map(|ns| format_ns(ns as f64))
                    .unwrap_or_default()
            };
            let rate = format_rate(c.bytes_per_sec, opts);
            let rate = rate.split(' ').next().unwrap_or("").to_string();
            let cpu = cpu_us.map_or("-".to_string(), |us| format!("{us:.2}us"));
            format!(
                "{:>12} {:>9.0} {:>9} {:>9} {:>8}",
                rate,
                c.iops,
                pct(50.0),
                pct(99.0),
                cpu
            )
        }
    }
}

/// Renders a `quick` report as the card.
pub fn render_card(report: &RunReport, opts: TextOptions) -> String {
    let mut out = String::new();
    let (unit, _) = opts.rate_unit();
    if let Some(p) = report.points.first() {
        let t = &p.targets[0];
        let _ = writeln!(
            out,
            "iosurvey quick: test file {} ({} bytes, {}, engine {}, {} s per test after {} s warm-up)",
            t.path,
            t.size_bytes,
            if p.settings.direct { "O_DIRECT" } else { "buffered" },
            p.settings.engine,
            p.settings.time_ns.unwrap_or(0) as f64 / 1e9,
            p.settings.ramp_ns as f64 / 1e9,
        );
    }
    let title = format!("{:<12} {:^51}   {:^51}", "", "Read", "Write");
    let _ = writeln!(out, "{}", title.trim_end());
    let head = format!(
        "{:>12} {:>9} {:>9} {:>9} {:>8}",
        unit, "IOPS", "p50", "p99", "CPU/IO"
    );
    let _ = writeln!(out, "{:<12} {head}   {head}", "");
    // Rows in first-seen order, by the test each point ran.
    let mut rows: Vec<(&str, Side<'_>, Side<'_>)> = Vec::new();
    for p in &report.points {
        let PointParams::Quick { test, op } = &p.params else {
            continue;
        };
        let name = test.as_str();
        let i = match rows.iter().position(|r| r.0 == name) {
            Some(i) => i,
            None => {
                rows.push((name, None, None));
                rows.len() - 1
            }
        };
        match op {
            Op::Read => rows[i].1 = Some((&p.total.read, p.cpu_us_per_io)),
            Op::Write => rows[i].2 = Some((&p.total.write, p.cpu_us_per_io)),
        }
    }
    for (name, r, w) in rows {
        let _ = writeln!(out, "{name:<12} {}   {}", cells(r, opts), cells(w, opts));
    }
    interruptions_and_failures(&mut out, report);
    crate::warnings::warnings_once(&mut out, report, "warning: ");
    out
}

/// The lines a multi-point summary ends with: whether the run was cut
/// short, and each point's first failed I/O.
pub(crate) fn interruptions_and_failures(out: &mut String, report: &RunReport) {
    if report.points.iter().any(|p| p.interrupted) {
        let _ = writeln!(out, "INTERRUPTED: partial results");
    }
    for p in &report.points {
        if let Some(f) = &p.failure {
            let _ = writeln!(
                out,
                "{}: first failed I/O: {} at offset {}: {}",
                p.label,
                f.op,
                f.offset,
                iosurvey_model::document::failure_text(f.errno)
            );
        }
    }
}
