//! Presenters of `iosurvey parallel`: each device rated over the window in
//! which every device was running (not from its own start to its own end),
//! in parallel `dd`'s line layout, plus the scaling table and its knee.

use crate::TextOptions;
use iosurvey_model::document::{ClassReport, PointReport, RunReport};
use iosurvey_stats::IntervalSample;
use std::fmt::Write;

/// One device of one point.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceFigures {
    pub path: String,
    /// Bytes completed inside the common window.
    pub window_bytes: f64,
    /// `window_bytes` over the window, bytes per second.
    pub window_rate: f64,
    /// Everything the device transferred, and its own elapsed time.
    pub bytes: u64,
    pub elapsed_ns: u64,
}

/// One point: its devices over the common window, and the spread of ends.
#[derive(Clone, Debug, PartialEq)]
pub struct PointFigures {
    pub devices: Vec<DeviceFigures>,
    /// The common window: from the barrier to the first device's end.
    pub window_ns: u64,
    pub first_done_ns: u64,
    pub last_done_ns: u64,
    /// Sum of the devices' window rates.
    pub aggregate_rate: f64,
    /// All bytes over the last device's end (what a naive sum hides).
    pub last_done_rate: f64,
}

/// The class a stream ran (reads, or writes with `--write`).
fn class(s: &iosurvey_model::document::StreamReport) -> &ClassReport {
    if s.write.ops > 0 || s.read.ops == 0 && !s.write.errors.is_empty() {
        &s.write
    } else {
        &s.read
    }
}

/// Bytes of `c` completed before `window_ns`, from its series: whole
/// intervals inside the window, and the covered share of the one it cuts.
/// The stream's last interval ends at its `elapsed_ns`, not a whole
/// interval later: a device whose pass ended there is wholly inside a
/// window that ends with it.
pub fn bytes_within(c: &ClassReport, interval_ns: u64, window_ns: u64, elapsed_ns: u64) -> f64 {
    done_within(&c.series, interval_ns, window_ns as f64, elapsed_ns).1
}

/// Ops and bytes of `series` (intervals of `interval_ns`, the last ending
/// at `elapsed_ns`) completed by `t` nanoseconds into its measured phase,
/// as [`bytes_within`] counts them; `t` may be before the start (nothing).
pub fn done_within(
    series: &[IntervalSample],
    interval_ns: u64,
    t: f64,
    elapsed_ns: u64,
) -> (f64, f64) {
    let i = interval_ns.max(1) as f64;
    let e = elapsed_ns as f64;
    series
        .iter()
        .enumerate()
        .fold((0.0, 0.0), |(ops, bytes), (k, s)| {
            let start = k as f64 * i;
            let len = (e - start).clamp(0.0, i);
            let covered = if len > 0.0 {
                ((t - start) / len).clamp(0.0, 1.0)
            } else {
                f64::from(t >= start)
            };
            (
                ops + s.ops as f64 * covered,
                bytes + s.bytes as f64 * covered,
            )
        })
}

/// The figures of one point.
pub fn figures(p: &PointReport) -> PointFigures {
    let first = p.streams.iter().map(|s| s.elapsed_ns).min().unwrap_or(0);
    let last = p.streams.iter().map(|s| s.elapsed_ns).max().unwrap_or(0);
    let secs = first as f64 / 1e9;
    let devices: Vec<DeviceFigures> = p
        .streams
        .iter()
        .map(|s| {
            let c = class(s);
            let window_bytes = bytes_within(c, p.settings.interval_ns, first, s.elapsed_ns);
            DeviceFigures {
                path: p.targets[s.target].path.clone(),
                window_bytes,
                window_rate: if secs > 0.0 { window_bytes / secs } else { 0.0 },
                bytes: c.bytes,
                elapsed_ns: s.elapsed_ns,
            }
        })
        .collect();
    let total: u64 = devices.iter().map(|d| d.bytes).sum();
    PointFigures {
        aggregate_rate: devices.iter().map(|d| d.window_rate).sum(),
        last_done_rate: if last > 0 {
            total as f64 * 1e9 / last as f64
        } else {
            0.0
        },
        devices,
        window_ns: first,
        first_done_ns: first,
        last_done_ns: last,
    }
}

/// A rate with three significant digits, as dd prints it.
fn rate3(bytes_per_sec: f64, opts: TextOptions) -> String {
    let (unit, per) = opts.rate_unit();
    let v = bytes_per_sec / per;
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// `13107200000` -> `13 GB`, dd's way (SI, two significant digits).
fn human_si(bytes: f64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = bytes;
    let mut i = 0;
    while v >= 1000.0 && i < units.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    if v >= 10.0 || i == 0 {
        format!("{v:.0} {}", units[i])
    } else {
        format!("{v:.1} {}", units[i])
    }
}

/// One row of the scaling table.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleRow {
    pub devices: usize,
    pub aggregate: f64,
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    /// Aggregate over `devices` x the single-device rate.
    pub efficiency: f64,
    /// The first step whose added devices each add less than half a single
    /// device's rate: adding devices has stopped adding throughput.
    pub knee: bool,
}

/// The scaling table of a report, one row per point.
pub fn scaling(report: &RunReport) -> Vec<ScaleRow> {
    let figs: Vec<PointFigures> = report.points.iter().map(figures).collect();
    let Some(first) = figs.first() else {
        return Vec::new();
    };
    // The single-device rate: the mean device rate of the smallest step.
    let single = first.aggregate_rate / first.devices.len().max(1) as f64;
    let mut rows: Vec<ScaleRow> = Vec::new();
    let mut knee_seen = false;
    for f in &figs {
        let n = f.devices.len();
        let rates: Vec<f64> = f.devices.iter().map(|d| d.window_rate).collect();
        let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let max = rates.iter().copied().fold(0.0, f64::max);
        let knee = match rows.last() {
            Some(prev) if !knee_seen && n > prev.devices => {
                (f.aggregate_rate - prev.aggregate) / ((n - prev.devices) as f64) < 0.5 * single
            }
            _ => false,
        };
        knee_seen |= knee;
        rows.push(ScaleRow {
            devices: n,
            aggregate: f.aggregate_rate,
            min: if min.is_finite() { min } else { 0.0 },
            avg: f.aggregate_rate / n.max(1) as f64,
            max,
            efficiency: if single > 0.0 {
                f.aggregate_rate / (n as f64 * single)
            } else {
                0.0
            },
            knee,
        });
    }
    rows
}

/// The text report: dd-style lines per device for every point, then (with
/// more than one point) the scaling table.
pub fn render_parallel(report: &RunReport, opts: TextOptions) -> String {
    let mut out = String::new();
    for p in &report.points {
        let f = figures(p);
        let _ = writeln!(
            out,
            "# {}: common window {:.3} s{}",
            p.label,
            f.window_ns as f64 / 1e9,
            if p.settings.wrap {
                "; looped (--loop): a device that reached its end went on from its start"
            } else {
                ""
            }
        );
        for d in &f.devices {
            let _ = writeln!(
                out,
                "{}: {:.0} bytes ({}) copied, {:.3} s, {}",
                d.path,
                d.window_bytes,
                human_si(d.window_bytes),
                f.window_ns as f64 / 1e9,
                rate3(d.window_rate, opts)
            );
        }
        for st in &p.streams {
            let tail = crate::text::untouched_tail(p, st);
            if tail > 0 {
                let _ = writeln!(
                    out,
                    "# {}: the last {tail} bytes, less than one {}-byte block, are not read",
                    p.targets[st.target].path, st.bs
                );
            }
        }
        let _ = writeln!(
            out,
            "aggregate: {} over the common window; first done {:.3} s, last done {:.3} s ({} to last done)",
            rate3(f.aggregate_rate, opts),
            f.first_done_ns as f64 / 1e9,
            f.last_done_ns as f64 / 1e9,
            rate3(f.last_done_rate, opts)
        );
        if p.interrupted {
            let _ = writeln!(out, "INTERRUPTED: partial results");
        }
        if let Some(e) = &p.failure {
            let _ = writeln!(
                out,
                "first failed I/O: {} at offset {} on {}: {}",
                e.op,
                e.offset,
                p.targets[p.streams[e.stream].target].path,
                iosurvey_model::document::failure_text(e.errno)
            );
        }
    }
    if report.points.len() > 1 {
        let (unit, scale) = opts.rate_unit();
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "#  N  aggregate {unit:<6}  per-device min     avg     max  efficiency"
        );
        let rows = scaling(report);
        for r in &rows {
            let _ = writeln!(
                out,
                "{:>4}  {:>16.1}  {:>18.1} {:>7.1} {:>7.1}  {:>9.1}%{}",
                r.devices,
                r.aggregate / scale,
                r.min / scale,
                r.avg / scale,
                r.max / scale,
                r.efficiency * 100.0,
                if r.knee { "  <- knee" } else { "" }
            );
        }
        if !rows.iter().any(|r| r.knee) {
            let _ = writeln!(
                out,
                "# no knee: each added device still adds at least half a device's rate"
            );
        }
    }
    crate::warnings::warnings_once(&mut out, report, "# warning: ");
    out
}

/// CSV: one row per point and device.
pub fn render_parallel_csv(report: &RunReport) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "devices",
        "device",
        "window_s",
        "window_bytes",
        "window_mb_per_s",
        "bytes",
        "elapsed_s",
        "aggregate_mb_per_s",
        "efficiency",
    ]);
    let rows = scaling(report);
    for (p, row) in report.points.iter().zip(&rows) {
        let f = figures(p);
        for d in &f.devices {
            let _ = w.write_record([
                f.devices.len().to_string(),
                d.path.clone(),
                format!("{:.6}", f.window_ns as f64 / 1e9),
                format!("{:.0}", d.window_bytes),
                format!("{:.3}", d.window_rate / 1e6),
                d.bytes.to_string(),
                format!("{:.6}", d.elapsed_ns as f64 / 1e9),
                format!("{:.3}", f.aggregate_rate / 1e6),
                format!("{:.4}", row.efficiency),
            ]);
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosurvey_stats::{ClassStats, IntervalSample};

    fn class_with(series: &[u64]) -> ClassReport {
        let mut c = ClassReport::new(&ClassStats::new(), 1);
        c.series = series
            .iter()
            .map(|&b| IntervalSample {
                ops: 1,
                bytes: b,
                lat_sum_ns: 1,
                lat_max_ns: 1,
                ..Default::default()
            })
            .collect();
        c.bytes = series.iter().sum();
        c.ops = series.len() as u64;
        c
    }

    #[test]
    fn the_window_takes_whole_intervals_and_a_share_of_the_cut_one() {
        let c = class_with(&[100, 100, 100, 100]);
        assert_eq!(bytes_within(&c, 10, 40, 40), 400.0);
        assert_eq!(bytes_within(&c, 10, 25, 40), 250.0);
        assert_eq!(bytes_within(&c, 10, 0, 40), 0.0);
    }

    #[test]
    fn a_window_that_ends_with_the_stream_holds_all_its_bytes() {
        // Done 8 ms into a 10 ms interval: the window of 8 ms has it all.
        let c = class_with(&[16_777_216]);
        assert_eq!(bytes_within(&c, 10, 8, 8), 16_777_216.0);
        assert_eq!(bytes_within(&c, 10, 4, 8), 8_388_608.0);
        let c = class_with(&[100, 100, 50]);
        assert_eq!(bytes_within(&c, 10, 25, 25), 250.0);
        assert_eq!(bytes_within(&c, 10, 20, 25), 200.0);
    }

    #[test]
    fn dd_style_numbers() {
        assert_eq!(human_si(13_107_200_000.0), "13 GB");
        assert_eq!(human_si(1_048_576_000.0), "1.0 GB");
        assert_eq!(rate3(80.04e6, TextOptions::default()), "80.0 MB/s");
        assert_eq!(rate3(123.4e6, TextOptions::default()), "123 MB/s");
    }
}
