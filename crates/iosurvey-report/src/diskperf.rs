//! The SGI diskperf table, rebuilt from a `diskperf` report alone: one row
//! per request size, six columns (fwd/bwd/rnd x write/read) in MB/s, as
//! gnuplot-ready text with `#` comments, and as CSV.

use crate::TextOptions;
use iosurvey_model::document::{DiskperfSettings, PointReport, RunReport};
use iosurvey_model::{Op, Pattern, PointParams};
use std::fmt::Write;

/// The columns, in diskperf's order: its name, and the pattern and op of
/// the points it shows.
pub const COLUMNS: [(&str, Pattern, Op); 6] = [
    ("fwd_wt", Pattern::Forward, Op::Write),
    ("fwd_rd", Pattern::Forward, Op::Read),
    ("bwd_wt", Pattern::Backward, Op::Write),
    ("bwd_rd", Pattern::Backward, Op::Read),
    ("rnd_wt", Pattern::Random, Op::Write),
    ("rnd_rd", Pattern::Random, Op::Read),
];

const RULE: &str = "#---------------------------------------------------------";

/// One row: a request size and, per column, bytes per second over that
/// point's elapsed time (`None` when the test did not run, moved nothing or
/// failed).
#[derive(Clone, Debug, PartialEq)]
pub struct DiskperfRow {
    pub req_size: u64,
    pub rates: [Option<f64>; 6],
}

/// The column a point fills, from its typed pattern and op.
fn column(p: &PointReport) -> Option<usize> {
    let PointParams::Diskperf { pattern, op, .. } = p.params else {
        return None;
    };
    COLUMNS
        .iter()
        .position(|&(_, pat, o)| pat == pattern && o == op)
}

/// Whether a diskperf point writes.
fn writes(p: &PointReport) -> bool {
    matches!(p.params, PointParams::Diskperf { op: Op::Write, .. })
}

/// The test's rate, or `None` (NaN) when it did not run, moved nothing or
/// failed: a test with a failed I/O has no rate, whatever it moved first.
fn rate(p: &PointReport) -> Option<f64> {
    let s = p.streams.first()?;
    let c = if writes(p) { &s.write } else { &s.read };
    let failed = p.failure.is_some() || !s.read.errors.is_empty() || !s.write.errors.is_empty();
    (c.ops > 0 && p.elapsed_ns > 0 && p.skipped.is_none() && !failed)
        .then(|| c.bytes as f64 * 1e9 / p.elapsed_ns as f64)
}

/// The table's rows, in the order their sizes first appear.
pub fn diskperf_rows(report: &RunReport) -> Vec<DiskperfRow> {
    let mut rows: Vec<DiskperfRow> = Vec::new();
    for p in &report.points {
        let (Some(col), Some(s)) = (column(p), p.streams.first()) else {
            continue;
        };
        let i = match rows.iter().position(|r| r.req_size == s.bs) {
            Some(i) => i,
            None => {
                rows.push(DiskperfRow {
                    req_size: s.bs,
                    rates: [None; 6],
                });
                rows.len() - 1
            }
        };
        rows[i].rates[col] = rate(p);
    }
    rows
}

/// The rule, the column names, a unit line and the rule again.
fn table_head(out: &mut String, unit: &str) {
    let _ = writeln!(out, "{RULE}");
    let _ = writeln!(
        out,
        "# req_size  fwd_wt  fwd_rd  bwd_wt  bwd_rd  rnd_wt  rnd_rd"
    );
    let u = format!("({unit})");
    let _ = writeln!(out, "#  (bytes){}", format!(" {u:>7}").repeat(6));
    let _ = writeln!(out, "{RULE}");
}

/// `%11d` then six ` %7.2f`; what did not run is NaN.
fn table_rows(out: &mut String, rows: &[DiskperfRow], divisor: f64) {
    for r in rows {
        let _ = write!(out, "{:11}", r.req_size);
        for v in r.rates {
            let _ = write!(out, " {:7.2}", v.map_or(f64::NAN, |v| v / divisor));
        }
        let _ = writeln!(out);
    }
}

fn header(out: &mut String, report: &RunReport, opts: TextOptions, set: &DiskperfSettings) {
    let _ = match &set.label {
        Some(l) => writeln!(out, "# iosurvey diskperf: {l}"),
        None => writeln!(out, "# iosurvey diskperf"),
    };
    let Some(p) = report.points.first() else {
        return;
    };
    if let Some(t) = p.targets.first() {
        let kind = match t.kind {
            iosurvey_model::TargetKind::File => "file",
            iosurvey_model::TargetKind::Block => "block device",
            iosurvey_model::TargetKind::Directory => "directory",
        };
        let _ = writeln!(
            out,
            "# target {} ({kind}, {} bytes, logical block {})",
            t.path, t.size_bytes, t.logical_block_size
        );
    }
    let s = &p.settings;
    let _ = writeln!(
        out,
        "# {} s per test, qd {}, engine {}, {}, scale {}, rates in {} ({})",
        s.time_ns.unwrap_or(0) as f64 / 1e9,
        p.streams.first().map_or(0, |s| s.outstanding),
        s.engine,
        if s.direct { "O_DIRECT" } else { "buffered" },
        set.scale,
        opts.rate_unit().0,
        if opts.mib {
            "2^20 bytes/s"
        } else {
            "10^6 bytes/s"
        }
    );
    if let Some(f) = &set.frame {
        let _ = writeln!(out, "# frame {f}");
    }
    let wrote = report.points.iter().any(writes);
    if !wrote {
        let _ = writeln!(
            out,
            "# read-only (no --write): the write columns are NaN, which gnuplot skips"
        );
    }
}

/// Interruptions, failed I/Os and warnings, as comments after the table.
fn footer(out: &mut String, report: &RunReport) {
    if report.points.iter().any(|p| p.interrupted) {
        let _ = writeln!(out, "# INTERRUPTED: partial results");
    }
    for p in &report.points {
        if let Some(f) = &p.failure {
            let _ = writeln!(
                out,
                "# {}: first failed I/O: {} at offset {}: {}",
                p.label,
                f.op,
                f.offset,
                iosurvey_model::document::failure_text(f.errno)
            );
        }
    }
    crate::warnings::warnings_once(out, report, "# warning: ");
}

/// Renders a `diskperf` report in diskperf's layout: `#` comments, the
/// table in MB/s (MiB/s with `opts.mib`) times `set.scale`, and with
/// `set.fps` a second data set (after two blank lines, gnuplot's `index 1`)
/// of each figure divided by the real-time rate of one frame a frame time.
pub fn render_diskperf(report: &RunReport, opts: TextOptions, set: &DiskperfSettings) -> String {
    let mut out = String::new();
    header(&mut out, report, opts, set);
    let (unit_name, per) = opts.rate_unit();
    let rows = diskperf_rows(report);
    table_head(&mut out, unit_name);
    table_rows(&mut out, &rows, per / set.scale);
    if let (Some(fps), Some(first)) = (set.fps, rows.first()) {
        let frame = first.req_size;
        let realtime = frame as f64 * fps;
        let _ = writeln!(out, "\n");
        let _ = writeln!(
            out,
            "# x real time at {fps} fps ({frame} bytes/frame = {:.2} {unit_name})",
            realtime / per
        );
        table_head(&mut out, "x RT");
        table_rows(&mut out, &rows, realtime / set.scale);
    }
    footer(&mut out, report);
    out
}

/// The table as CSV: `req_size` and the six columns in MB/s (10^6) times
/// `set.scale`, empty where a test did not run.
pub fn render_diskperf_csv(report: &RunReport, set: &DiskperfSettings) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head = vec!["req_size"];
    head.extend(COLUMNS.iter().map(|c| c.0));
    let _ = w.write_record(&head);
    for r in diskperf_rows(report) {
        let mut rec = vec![r.req_size.to_string()];
        rec.extend(
            r.rates
                .iter()
                .map(|v| v.map_or(String::new(), |v| format!("{:.3}", v * set.scale / 1e6))),
        );
        let _ = w.write_record(&rec);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
