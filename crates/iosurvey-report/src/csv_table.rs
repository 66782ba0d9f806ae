//! The generic CSV presenter: one row per point, stream and class, with raw
//! counts and the derived rates. Modes with a table of their own (diskperf,
//! parallel, survey) have their own CSV.

use iosurvey_model::document::{ClassReport, RunReport};

/// Column names of [`render_csv`].
pub const COLUMNS: [&str; 20] = [
    "point",
    "label",
    "stream",
    "stream_label",
    "target",
    "op",
    "pattern",
    "bs",
    "outstanding",
    "ops",
    "bytes",
    "elapsed_ns",
    "iops",
    "mb_per_s",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_max_ns",
    "errors",
];

fn pct(c: &ClassReport, want: f64) -> String {
    c.latency
        .at(want)
        .map(|ns| ns.to_string())
        .unwrap_or_default()
}

/// Renders every point's streams and classes as CSV with a header row.
pub fn render_csv(report: &RunReport) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(COLUMNS);
    for p in &report.points {
        for (si, s) in p.streams.iter().enumerate() {
            for (op, c) in [("read", &s.read), ("write", &s.write), ("trim", &s.trim)] {
                if c.is_empty() {
                    continue;
                }
                let errors: u64 = c.errors.iter().map(|e| e.count).sum();
                let _ = w.write_record([
                    p.index.to_string(),
                    p.label.clone(),
                    si.to_string(),
                    s.label.clone(),
                    p.targets[s.target].path.clone(),
                    op.to_string(),
                    s.pattern.to_string(),
                    s.bs.to_string(),
                    s.outstanding.to_string(),
                    c.ops.to_string(),
                    c.bytes.to_string(),
                    s.elapsed_ns.to_string(),
                    format!("{:.3}", c.iops),
                    format!("{:.3}", c.bytes_per_sec / 1e6),
                    format!("{:.0}", c.latency.mean_ns),
                    pct(c, 50.0),
                    pct(c, 99.0),
                    pct(c, 99.9),
                    c.latency.max_ns.to_string(),
                    errors.to_string(),
                ]);
            }
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
