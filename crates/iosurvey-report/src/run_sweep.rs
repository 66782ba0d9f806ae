//! A `run` sweep (`--qd 1,2,4`, `--bs 4k,64k`) as text: one row per point
//! and direction (its depth, block size, IOPS, rate and latencies), then
//! what any point has to say (warnings, failures, an interruption). The
//! rows are also what the HTML page plots.

use crate::text::{format_ns, outcome_lines, stream_title, TextOptions};
use iosurvey_model::document::{ClassReport, PointReport, RunReport};
use iosurvey_model::units::format_size;
use iosurvey_model::PointParams;
use std::fmt::Write;

/// Whether `r` is a `run` sweep: one of its points sweeps a value.
pub fn is_run_sweep(r: &RunReport) -> bool {
    r.mode == "run" && r.points.iter().any(|p| p.params.is_run_sweep())
}

/// What the sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Swept {
    pub qd: bool,
    pub bs: bool,
}

/// Which of `--qd` and `--bs` the points of `r` sweep.
pub(crate) fn swept(r: &RunReport) -> Swept {
    let mut s = Swept {
        qd: false,
        bs: false,
    };
    for p in &r.points {
        if let PointParams::Run { qd, bs } = &p.params {
            s.qd |= qd.is_some();
            s.bs |= bs.is_some();
        }
    }
    s
}

/// One row: a point's reads or writes (over all its streams).
pub(crate) struct SweepRow<'a> {
    pub point: &'a PointReport,
    pub qd: u32,
    pub bs: u64,
    pub op: &'static str,
    pub class: &'a ClassReport,
}

/// The point's depth and block size: the swept values of its parameters,
/// else its first stream's settings.
fn settings_of(p: &PointReport) -> (u32, u64) {
    let first = p.streams.first();
    let (mut qd, mut bs) = (
        first.map_or(0, |s| s.outstanding),
        first.map_or(0, |s| s.bs),
    );
    if let PointParams::Run { qd: q, bs: b } = &p.params {
        qd = q.unwrap_or(qd);
        bs = b.unwrap_or(bs);
    }
    (qd, bs)
}

/// Every point's reads, writes and discards that moved something, in the
/// points' order, reads first.
pub(crate) fn sweep_rows(r: &RunReport) -> Vec<SweepRow<'_>> {
    let mut out = Vec::new();
    for p in r.points.iter().filter(|p| p.skipped.is_none()) {
        let (qd, bs) = settings_of(p);
        let t = &p.total;
        for (op, class) in [("read", &t.read), ("write", &t.write), ("trim", &t.trim)] {
            if class.is_empty() || class.ops == 0 {
                continue;
            }
            out.push(SweepRow {
                point: p,
                qd,
                bs,
                op,
                class,
            });
        }
    }
    out
}

fn lat(c: &ClassReport, p: f64) -> String {
    c.latency
        .at(p)
        .map_or_else(|| "-".into(), |ns| format_ns(ns as f64))
}

/// The sweep's table and notes.
pub fn render_sweep_text(r: &RunReport, opts: TextOptions) -> String {
    let mut out = String::new();
    let sw = swept(r);
    let what = match (sw.qd, sw.bs) {
        (true, true) => "each block size at each queue depth",
        (true, false) => "queue depths",
        _ => "block sizes",
    };
    if let Some(p) = r.points.first() {
        let s = &p.settings;
        let _ = writeln!(
            out,
            "run: sweep of {what}, {} points (engine {}, {}, seed {}, {} workers)",
            r.points.len(),
            s.engine,
            if s.direct { "O_DIRECT" } else { "buffered" },
            s.seed,
            s.workers
        );
        for st in &p.streams {
            let _ = writeln!(out, "{} {} {}", stream_title(p, st), st.pattern, st.rw);
        }
    }
    let (unit, per) = opts.rate_unit();
    let _ = writeln!(
        out,
        "{:>5} {:>7} {:<5} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9}",
        "qd", "bs", "op", "IOPS", unit, "mean", "p50", "p99", "max"
    );
    for row in sweep_rows(r) {
        let c = row.class;
        let mark = if row.point.interrupted { " *" } else { "" };
        let _ = writeln!(
            out,
            "{:>5} {:>7} {:<5} {:>10.0} {:>10.1} {:>9} {:>9} {:>9} {:>9}{mark}",
            row.qd,
            format_size(row.bs),
            row.op,
            c.iops,
            c.bytes_per_sec / per,
            format_ns(c.latency.mean_ns),
            lat(c, 50.0),
            lat(c, 99.0),
            format_ns(c.latency.max_ns as f64),
        );
    }
    for p in &r.points {
        notes(&mut out, p, opts);
    }
    out
}

/// What point `p` has to say besides its row, under its label.
fn notes(out: &mut String, p: &PointReport, opts: TextOptions) {
    let mut lines = String::new();
    if p.interrupted {
        lines.push_str("  INTERRUPTED: partial results (marked *)\n");
    }
    if let Some(why) = &p.skipped {
        let _ = writeln!(lines, "  skipped: {why}");
    }
    outcome_lines(&mut lines, p, opts);
    if !lines.is_empty() {
        let _ = writeln!(out, "{}:", p.label);
        out.push_str(&lines);
    }
}
