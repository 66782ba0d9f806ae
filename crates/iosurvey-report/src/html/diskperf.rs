//! The `diskperf` plot and table: MB/s against request size, one line per
//! pattern and direction, from the same rows as diskperf's text table
//! ([`crate::diskperf::diskperf_rows`]), so that page and text agree.
//!
//! With the run's display choices in the report (`diskperf`: `-s` scale,
//! `--fps`), rates are scaled as the text scales them, and `--fps` adds
//! the "x real time" plot: each rate over the rate of one frame (the first
//! request size) every 1/fps.

use super::chart::{Axis, Chart, Scale, Series, Style};
use super::run::fmt_num;
use crate::diskperf::{diskperf_rows, DiskperfRow, COLUMNS};
use iosurvey_model::document::RunReport;

/// The lines in the order series take their colours: a pattern's read and
/// write side by side, reads first.
const LINES: [usize; 6] = [1, 0, 3, 2, 5, 4];

pub(super) fn charts(r: &RunReport) -> Vec<Chart> {
    let rows = diskperf_rows(r);
    let scale = scale_of(r);
    let y = if scale == 1.0 {
        "throughput (MB/s, 10^6 bytes/s)".to_string()
    } else {
        format!("throughput (MB/s, 10^6 bytes/s) x {scale} (-s)")
    };
    let mut c = Chart::new(
        "diskperf: throughput by request size",
        Axis::new("request size (bytes, log2)", Scale::Log2, fmt_bytes),
        Axis::new(y, Scale::Linear, fmt_num),
    );
    c.series = lines(&rows, scale, 1e6, "MB/s");
    let mut charts = vec![c];
    if let (Some(fps), Some(first)) = (r.diskperf.as_ref().and_then(|d| d.fps), rows.first()) {
        charts.push(real_time(&rows, fps, first.req_size, scale));
    }
    charts
}

/// Each rate as a multiple of real time at `fps` frames of `frame` bytes a
/// second (1 = just real time), as diskperf's second table gives it.
fn real_time(rows: &[DiskperfRow], fps: f64, frame: u64, scale: f64) -> Chart {
    let realtime = frame as f64 * fps;
    let mut c = Chart::new(
        format!(
            "x real time at {fps} fps ({} a frame = {:.2} MB/s)",
            fmt_bytes(frame as f64),
            realtime / 1e6
        ),
        Axis::new("request size (bytes, log2)", Scale::Log2, fmt_bytes),
        Axis::new("times real time", Scale::Linear, fmt_num),
    );
    c.series = lines(rows, scale, realtime, "x real time");
    c.hlines.push((1.0, "real time".into()));
    c
}

/// diskperf's `-s`: what every rate is multiplied by (1 in a report
/// without the run's display choices).
fn scale_of(r: &RunReport) -> f64 {
    r.diskperf.as_ref().map_or(1.0, |d| d.scale)
}

/// The six lines against request size, each rate (bytes/s) times `scale`
/// (diskperf's `-s`) divided by `per`, and named `unit` in its tooltips. Every line is pushed, even one
/// with no point (a read-only run's writes), so that a combination keeps
/// its colour from run to run.
fn lines(rows: &[DiskperfRow], scale: f64, per: f64, unit: &str) -> Vec<Series> {
    LINES
        .into_iter()
        .map(|col| {
            let name = line_name(col);
            let (points, tips): (Vec<_>, Vec<_>) = rows
                .iter()
                .filter_map(|row| Some((row.req_size, row.rates[col]?)))
                .map(|(size, rate)| {
                    let v = rate * scale / per;
                    let tip = format!("{name}, {}: {v:.2} {unit}", fmt_bytes(size as f64));
                    ((size as f64, v), tip)
                })
                .unzip();
            let mut s = Series::new(name, Style::Line, points);
            s.tips = Some(tips);
            s
        })
        .collect()
}

pub(super) fn tables(r: &RunReport) -> Vec<String> {
    let rows = diskperf_rows(r);
    if rows.is_empty() {
        return Vec::new();
    }
    let mut head = vec!["request size".to_string(), "bytes".to_string()];
    head.extend(COLUMNS.iter().map(|&(short, ..)| format!("{short} MB/s")));
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let scale = scale_of(r);
    let cells: Vec<Vec<String>> = rows.iter().map(|row| row_cells(row, scale)).collect();
    vec![super::table::table(
        "diskperf (MB/s = 10^6 bytes/s; - where a test did not run, moved nothing or failed)",
        &head,
        &cells,
    )]
}

fn row_cells(row: &DiskperfRow, scale: f64) -> Vec<String> {
    let mut cells = vec![fmt_bytes(row.req_size as f64), row.req_size.to_string()];
    cells.extend(
        row.rates
            .iter()
            .map(|v| v.map_or_else(|| "-".into(), |v| format!("{:.2}", v * scale / 1e6))),
    );
    cells
}

/// `forward read`, from a column of [`COLUMNS`].
fn line_name(col: usize) -> String {
    let (_, pattern, op) = COLUMNS[col];
    format!("{pattern} {op}")
}

/// Bytes in binary units: `4 KiB`, `1 MiB`, `7.91 MiB`.
pub(super) fn fmt_bytes(v: f64) -> String {
    let b = v.round();
    let (unit, per) = [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        .into_iter()
        .find(|&(_, per)| b >= per as f64)
        .unwrap_or(("B", 1));
    let x = b / per as f64;
    if x == x.trunc() {
        format!("{x:.0} {unit}")
    } else {
        format!("{x:.2} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(fmt_bytes(4096.0), "4 KiB");
        assert_eq!(fmt_bytes(4095.9999), "4 KiB");
        assert_eq!(fmt_bytes(1048576.0), "1 MiB");
        assert_eq!(fmt_bytes(8294400.0), "7.91 MiB");
        assert_eq!(fmt_bytes(512.0), "512 B");
        assert_eq!(fmt_bytes(3.0 * (1u64 << 30) as f64), "3 GiB");
    }

    #[test]
    fn reads_and_writes_of_a_pattern_sit_together() {
        let names: Vec<String> = LINES.iter().map(|&c| line_name(c)).collect();
        assert_eq!(
            names,
            [
                "forward read",
                "forward write",
                "backward read",
                "backward write",
                "random read",
                "random write"
            ]
        );
    }
}
