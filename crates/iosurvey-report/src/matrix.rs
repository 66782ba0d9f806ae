//! Presenters of `iosurvey matrix`, Oracle ORION's layouts: the
//! `_summary.txt` lines, the `_mbps.csv`, `_iops.csv` and `_lat.csv`
//! matrices (`Large/Small, 0, 1, ...`), a latency histogram file and the
//! terminal text. Every figure is rebuilt from the report alone: a point's
//! typed parameters give its cell (small 12, large 4), its `small` and `large`
//! streams its figures. MB/s are 10^6 bytes a second and latencies
//! microseconds (ORION 11.2 and later; 10.2 printed milliseconds).

mod hist;

pub use hist::render_hist;

use iosurvey_model::document::{Cache, ClassReport, PointReport, RunReport, StreamReport};
use iosurvey_model::{Pattern, PointParams};
use iosurvey_stats::Histogram;
use std::fmt::Write;

/// What one cell of the matrix measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub small: u32,
    pub large: u32,
    /// Small I/Os (reads and writes) a second; `None` without small I/O.
    pub iops: Option<f64>,
    /// Small-I/O latency in µs: mean, p50, p99, p99.9.
    pub lat_us: Option<[f64; 4]>,
    /// Large-I/O MB/s (10^6); `None` without large I/O.
    pub mbps: Option<f64>,
    /// The point's first failed I/O, in words: its figures are then no
    /// measure of the storage, and every output marks the cell failed.
    pub failed: Option<String>,
}

/// What a failed cell shows instead of a figure.
pub const FAILED: &str = "FAILED";

/// `first failed I/O: write at offset N on PATH: EIO (errno 5)`, for a
/// point that had one.
pub fn failure_words(p: &PointReport) -> Option<String> {
    let f = p.failure.as_ref()?;
    let target = p
        .streams
        .get(f.stream)
        .and_then(|s| p.targets.get(s.target))
        .map_or("?", |t| t.path.as_str());
    Some(format!(
        "first failed I/O: {} at offset {} on {}: {}",
        f.op,
        f.offset,
        crate::visible(target),
        iosurvey_model::document::failure_text(f.errno)
    ))
}

/// ORION's two classes of I/O in a matrix point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Small,
    Large,
}

/// The stream of `class` in `p`, found by the order `expand` gives a
/// matrix point its streams: the small one first when the point has small
/// I/Os, then the large one when it has large I/Os.
pub(crate) fn stream(p: &PointReport, class: Class) -> Option<&StreamReport> {
    let PointParams::Matrix { small, large } = p.params else {
        return None;
    };
    match class {
        Class::Small if small > 0 => p.streams.first(),
        Class::Large if large > 0 => p.streams.get(usize::from(small > 0)),
        _ => None,
    }
}

/// Reads and writes of one stream as one histogram.
pub(crate) fn merged(s: &StreamReport) -> Histogram {
    let mut h = Histogram::from_data(&s.read.histogram);
    h.merge(&Histogram::from_data(&s.write.histogram));
    h
}

fn both(s: &StreamReport, f: fn(&ClassReport) -> f64) -> f64 {
    f(&s.read) + f(&s.write)
}

/// The cell of one point; `None` for a point that is not a matrix cell.
pub fn cell(p: &PointReport) -> Option<Cell> {
    let PointParams::Matrix { small, large } = p.params else {
        return None;
    };
    let s = stream(p, Class::Small).filter(|_| p.skipped.is_none());
    let l = stream(p, Class::Large).filter(|_| p.skipped.is_none());
    Some(Cell {
        small,
        large,
        iops: s.map(|s| both(s, |c| c.iops)),
        lat_us: s.map(merged).filter(|h| h.count() > 0).map(|h| {
            let us = |ns: u64| ns as f64 / 1e3;
            [
                h.mean() / 1e3,
                us(h.percentile(50.0)),
                us(h.percentile(99.0)),
                us(h.percentile(99.9)),
            ]
        }),
        mbps: l.map(|l| both(l, |c| c.bytes_per_sec) / 1e6),
        failed: failure_words(p),
    })
}

/// Every cell of the report, in the order they ran.
pub fn cells(report: &RunReport) -> Vec<Cell> {
    report.points.iter().filter_map(cell).collect()
}

/// ORION's file stamp, `yyyymmdd_hhmm`, from the report's start time.
pub fn stamp(report: &RunReport) -> String {
    stamp_of(&report.started_at)
}

/// ORION's file stamp, `yyyymmdd_hhmm`, of an RFC 3339 time.
pub fn stamp_of(t: &str) -> String {
    match (
        t.get(0..4),
        t.get(5..7),
        t.get(8..10),
        t.get(11..13),
        t.get(14..16),
    ) {
        (Some(y), Some(mo), Some(d), Some(h), Some(mi)) => format!("{y}{mo}{d}_{h}{mi}"),
        _ => "unknown".into(),
    }
}

fn levels(cells: &[Cell], f: fn(&Cell) -> u32) -> Vec<u32> {
    let mut v: Vec<u32> = cells.iter().map(f).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn columns_line(name: &str, levels: &[u32]) -> String {
    let mut s = format!("{name} Columns:,");
    for l in levels {
        let _ = write!(s, "{l:>7},");
    }
    s.pop();
    s
}

/// The best cell by `key` (largest, or smallest with `min`).
fn best(cells: &[Cell], key: fn(&Cell) -> Option<f64>, min: bool) -> Option<(&Cell, f64)> {
    let mut out: Option<(&Cell, f64)> = None;
    // A failed cell's figures measure the failure, not the storage.
    for c in cells.iter().filter(|c| c.failed.is_none()) {
        let Some(v) = key(c) else { continue };
        let better = out.is_none_or(|(_, b)| if min { v < b } else { v > b });
        if better {
            out = Some((c, v));
        }
    }
    out
}

fn at(c: &Cell) -> String {
    format!("@ Small={} and Large={}", c.small, c.large)
}

/// The first point with a stream of `class`.
fn first_stream(report: &RunReport, class: Class) -> Option<&StreamReport> {
    report.points.iter().find_map(|p| stream(p, class))
}

/// ORION's `Total Data Points`: the cells of its grid, which holds the
/// (0, 0) cell (no load, never run) whenever the row of no large I/O and
/// the column of no small I/O are both in it: 8 for `-run simple` on one
/// LUN (5 small and 2 large points), 416 for a detailed 26 by 16 grid.
fn data_points(cells: &[Cell]) -> usize {
    let run = cells.len();
    let zero_row = cells.iter().any(|c| c.large == 0);
    let zero_col = cells.iter().any(|c| c.small == 0);
    let has_origin = cells.iter().any(|c| c.small == 0 && c.large == 0);
    run + usize::from(zero_row && zero_col && !has_origin)
}

/// `_summary.txt`: ORION's lines, from the command line to the maxima.
pub fn render_summary(report: &RunReport, testname: &str) -> String {
    let mut o = String::new();
    let cells = cells(report);
    let small = first_stream(report, Class::Small);
    let large = first_stream(report, Class::Large);
    let any = small.or(large);
    let first = report.points.first();
    let _ = writeln!(o, "iosurvey {} (ORION matrix)\n", report.tool.version);
    let _ = writeln!(o, "Commandline:");
    // ORION's own options as the run kept them; a report older than them
    // shows the line as typed.
    let args = match report
        .matrix
        .as_ref()
        .and_then(|m| m.orion_command_line.as_ref())
    {
        Some(orion) => orion.as_slice(),
        None => iosurvey_model::document::invocation::mode_words(&report.command_line),
    };
    let _ = writeln!(o, "{}\n", args.join(" "));
    let _ = writeln!(o, "This maps to this test:");
    let _ = writeln!(o, "Test: {testname}");
    let kb = |s: Option<&StreamReport>| s.map_or("-".into(), |s| (s.bs / 1024).to_string());
    // ORION names only the sizes of the I/O it runs.
    if small.is_some() {
        let _ = writeln!(o, "Small IO size: {} KB", kb(small));
    }
    if large.is_some() {
        let _ = writeln!(o, "Large IO size: {} KB", kb(large));
    }
    let mut types = Vec::new();
    if small.is_some() {
        types.push("Small Random IOs");
    }
    match large.map(|l| l.pattern) {
        Some(Pattern::Random) => types.push("Large Random IOs"),
        Some(_) => types.push("Large Sequential Streams"),
        None => {}
    }
    let _ = writeln!(o, "IO Types: {}", types.join(", "));
    if let Some(l) = large.filter(|l| l.pattern.is_sequential()) {
        let per = l.outstanding / l.regions.max(1);
        let _ = writeln!(o, "Number of Concurrent IOs Per Stream: {per}");
    }
    let array = any.and_then(|s| s.array.as_ref());
    let layout = match array.map(|a| a.layout) {
        Some(iosurvey_model::Layout::Raid0 { stripe }) => {
            format!("RAID 0\nStripe Depth: {} KB", stripe / 1024)
        }
        _ => "CONCAT".into(),
    };
    let _ = writeln!(o, "Simulated Array Type: {layout}");
    let write = any.map_or(0, |s| 100 - s.read_pct);
    let _ = writeln!(o, "Write: {write}%");
    let settings = report.matrix.as_ref();
    // ORION's line for -cache_size as given (MB moved before each large
    // sequential point), or iosurvey's own warm-up by time.
    let cache = match settings.and_then(|m| m.cache) {
        Some(Cache::Bytes(b)) => format!("Cache Size: {} MB", b >> 20),
        Some(Cache::Time(ns)) => format!("Cache Warm-up: {:.2} seconds", ns as f64 / 1e9),
        None if report.matrix.is_some() => "Cache Size: Not Entered".into(),
        // A report without the settings (saved before they were kept).
        None => {
            let ramp = first.map_or(0, |p| p.settings.ramp_ns);
            if ramp > 0 {
                format!("Cache Warm-up: {:.2} seconds", ramp as f64 / 1e9)
            } else {
                "Cache Size: Not Entered".into()
            }
        }
    };
    let _ = writeln!(o, "{cache}");
    let secs = first.and_then(|p| p.settings.time_ns).unwrap_or(0) as f64 / 1e9;
    let _ = writeln!(o, "Duration for each Data Point: {secs} seconds");
    // `-run simple` lists its small loads as the one column 0, as ORION
    // prints it (its small points are still in the matrix files).
    let small_levels = if settings.is_some_and(|m| m.run == "simple") {
        vec![0]
    } else {
        levels(&cells, |c| c.small)
    };
    let _ = writeln!(o, "{}", columns_line("Small", &small_levels));
    let _ = writeln!(o, "{}", columns_line("Large", &levels(&cells, |c| c.large)));
    let _ = writeln!(o, "Total Data Points: {}\n", data_points(&cells));
    let targets = first.map(|p| p.targets.as_slice()).unwrap_or_default();
    for t in targets {
        let _ = writeln!(o, "Name: {}\tSize: {}", t.path, t.size_bytes);
    }
    let _ = writeln!(o, "{} FILEs found.\n", targets.len());
    if let Some((c, v)) = best(&cells, |c| c.mbps, false) {
        let _ = writeln!(o, "Maximum Large MBPS={v:.2} {}", at(c));
    }
    if let Some((c, v)) = best(&cells, |c| c.iops, false) {
        let _ = writeln!(o, "Maximum Small IOPS={v:.0} {}", at(c));
    }
    if let Some((c, v)) = best(&cells, |c| c.lat_us.map(|l| l[0]), true) {
        let _ = writeln!(o, "Minimum Small Latency={v:.2} usecs {}", at(c));
        if let Some([_, p50, p99, p999]) = c.lat_us {
            let _ = writeln!(
                o,
                "Small Latency percentiles there: p50={p50:.2} p99={p99:.2} p99.9={p999:.2} usecs"
            );
        }
    }
    failed_lines(&mut o, &cells);
    o
}

/// A line per failed cell, after the count: what failed, and where.
fn failed_lines(o: &mut String, cells: &[Cell]) {
    let failed: Vec<&Cell> = cells.iter().filter(|c| c.failed.is_some()).collect();
    if failed.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "{FAILED} Data Points: {} of {} (their figures are left out of the maxima and shown as {FAILED})",
        failed.len(),
        cells.len()
    );
    for c in failed {
        let why = c.failed.as_deref().unwrap_or_default();
        let _ = writeln!(o, "{FAILED} {}: {why}", at(c));
    }
}

/// Which matrix a CSV holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Large MB/s: rows large >= 1, columns small from 0.
    Mbps,
    /// Small IOPS: rows large from 0, columns small >= 1.
    Iops,
    /// Mean small latency in µs, laid out as IOPS.
    Lat,
}

/// One of ORION's matrices: the small levels of its columns, then a row
/// per large level with the figure of each column (`None` where the cell
/// did not run), formatted as ORION prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub small: Vec<u32>,
    pub rows: Vec<(u32, Vec<Option<String>>)>,
}

/// The matrix of `metric`, with only the rows and columns that hold a
/// figure: the basic matrix's MB/s is column 0 alone, its IOPS row 0 alone.
pub fn grid(report: &RunReport, metric: Metric) -> Grid {
    // A failed point that completed no I/O has no figure, but its cell
    // is still in the matrix its kind of I/O belongs to, saying FAILED.
    let failed = |c: &Cell, level: u32| c.failed.is_some() && level > 0;
    let has = |c: &Cell| match metric {
        Metric::Mbps => c.mbps.is_some() || failed(c, c.large),
        Metric::Iops => c.iops.is_some() || failed(c, c.small),
        Metric::Lat => c.lat_us.is_some() || failed(c, c.small),
    };
    let cells: Vec<Cell> = cells(report).into_iter().filter(has).collect();
    let small = levels(&cells, |c| c.small);
    let rows = levels(&cells, |c| c.large)
        .into_iter()
        .map(|l| {
            let row = small
                .iter()
                .map(|&s| {
                    let c = cells.iter().find(|c| (c.small, c.large) == (s, l))?;
                    if c.failed.is_some() {
                        return Some(FAILED.to_string());
                    }
                    match metric {
                        Metric::Mbps => c.mbps.map(|v| format!("{v:.2}")),
                        Metric::Iops => c.iops.map(|v| format!("{v:.0}")),
                        Metric::Lat => c.lat_us.map(|v| format!("{:.2}", v[0])),
                    }
                })
                .collect();
            (l, row)
        })
        .collect();
    Grid { small, rows }
}

/// `_mbps.csv`, `_iops.csv` or `_lat.csv` in ORION's layout; a cell that
/// did not run is left empty, one whose I/O failed says `FAILED`.
pub fn render_matrix_csv(report: &RunReport, metric: Metric) -> String {
    let g = grid(report, metric);
    let mut o = String::from("Large/Small");
    for s in &g.small {
        let _ = write!(o, ",{s:>7}");
    }
    o.push('\n');
    for (l, row) in g.rows {
        let _ = write!(o, "{l:>11}");
        for v in row {
            let _ = write!(o, ",{:>7}", v.unwrap_or_default());
        }
        o.push('\n');
    }
    o
}

/// The terminal text: one line per cell, with the percentiles ORION lacks,
/// then the summary's maxima.
pub fn render_matrix_text(report: &RunReport, testname: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "small", "large", "IOPS", "lat avg", "p50", "p99", "p99.9", "MB/s"
    );
    let dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    for c in &cells(report) {
        if c.failed.is_some() {
            let _ = writeln!(
                o,
                "{:>6} {:>6} {FAILED:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
                c.small, c.large, "-", "-", "-", "-", "-"
            );
            continue;
        }
        let lat = |i: usize| dash(c.lat_us.map(|l| format!("{:.1}", l[i])));
        let _ = writeln!(
            o,
            "{:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            c.small,
            c.large,
            dash(c.iops.map(|v| format!("{v:.0}"))),
            lat(0),
            lat(1),
            lat(2),
            lat(3),
            dash(c.mbps.map(|v| format!("{v:.2}"))),
        );
    }
    let _ = writeln!(
        o,
        "(latencies in usecs of small I/O; MB/s = 10^6 bytes/s of large I/O)\n"
    );
    let summary = render_summary(report, testname);
    let maxima = summary
        .lines()
        .filter(|l| l.starts_with("Maximum") || l.starts_with("Minimum") || l.starts_with(FAILED));
    for l in maxima {
        let _ = writeln!(o, "{l}");
    }
    // The plausibility warnings, as the other modes print theirs.
    crate::warnings::warnings_once(&mut o, report, "warning: ");
    o
}
