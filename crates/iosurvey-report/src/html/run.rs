//! Plots of one workload (`run`, `quick`): latency percentiles on a nines
//! axis, the rate and the latency per interval over time, and the latency
//! histogram, its counts on a linear and on a log axis.

use super::chart::{Axis, Chart, Scale, Series, Style};
use iosurvey_model::document::{ClassReport, PointReport, RunReport, StreamReport};
use iosurvey_stats::{Histogram, IntervalSample};

pub(super) fn charts(r: &RunReport) -> Vec<Chart> {
    let lines = class_lines(r);
    let mut out = vec![
        percentiles(&lines),
        over_time(&lines, Rate::Bytes),
        over_time(&lines, Rate::Ops),
        latency_over_time(&lines),
    ];
    out.extend(histograms(&lines));
    out
}

/// A class that did something, named for its point (when there are
/// several), its stream (when the point has several) and its direction.
pub(super) struct Line<'a> {
    pub name: String,
    pub point: &'a PointReport,
    pub class: &'a ClassReport,
}

/// Every stream's read, write and trim classes that did something, of
/// every point that ran.
pub(super) fn class_lines(r: &RunReport) -> Vec<Line<'_>> {
    let many_points = r.points.len() > 1;
    let mut out = Vec::new();
    for p in r.points.iter().filter(|p| p.skipped.is_none()) {
        // Whose reads and writes: each stream's, or (summarised streams
        // hold no histogram and no series) the point's totals, the merge
        // of them all.
        let whose: Vec<(String, [&ClassReport; 3])> = if p.settings.stream_detail.is_full() {
            let many_streams = p.streams.len() > 1;
            p.streams
                .iter()
                .map(|s| {
                    (
                        stream_name(p, s, many_streams),
                        [&s.read, &s.write, &s.trim],
                    )
                })
                .collect()
        } else {
            let all = format!("all {} streams ", p.streams.len());
            let t = &p.total;
            vec![(all, [&t.read, &t.write, &t.trim])]
        };
        for (who, classes) in whose {
            for (dir, c) in ["read", "write", "trim"].into_iter().zip(classes) {
                if c.is_empty() || c.ops == 0 {
                    continue;
                }
                let mut name = String::new();
                if many_points {
                    name.push_str(&p.label);
                    name.push(' ');
                }
                name.push_str(&who);
                name.push_str(dir);
                out.push(Line {
                    name,
                    point: p,
                    class: c,
                });
            }
        }
    }
    out
}

/// A stream's part of its lines' names (with a space after it): its
/// label when the point has several, and its target when several streams
/// have that label (one per target); nothing for a point's one stream.
fn stream_name(p: &PointReport, s: &StreamReport, many_streams: bool) -> String {
    if !many_streams {
        return String::new();
    }
    let mut name = s.label.clone();
    if p.streams.iter().filter(|t| t.label == s.label).count() > 1 {
        match p.targets.get(s.target) {
            Some(t) => name.push_str(&format!(" {}", t.path)),
            None => name.push_str(&format!(" #{}", s.target)),
        }
    }
    name.push(' ');
    name
}

/// Latency as written on an axis: ns, µs, ms or s.
pub(super) fn fmt_ns(v: f64) -> String {
    crate::format_ns(v).replace("us", "µs")
}

pub(super) fn fmt_num(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The percentiles of `h` along a nines axis, in steps of a twentieth of
/// a nine, up to what its count can tell (1 in n) and at most p99.9999.
pub(super) fn nines_curve(h: &Histogram) -> Vec<(f64, f64)> {
    let n = h.count();
    if n == 0 {
        return Vec::new();
    }
    let top = (n as f64).log10().min(6.0);
    let steps = (top * 20.0).ceil() as usize;
    (0..=steps)
        .map(|k| (k as f64 / 20.0).min(top))
        .map(|t| 100.0 * (1.0 - 10f64.powf(-t)))
        .map(|p| (p, h.percentile(p) as f64))
        .collect()
}

pub(super) fn fmt_pct(v: f64) -> String {
    let s = format!("{v:.5}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("p{s}")
}

fn percentiles(lines: &[Line<'_>]) -> Chart {
    let mut c = Chart::new(
        "Latency percentiles",
        Axis::new("percentile", Scale::Nines, fmt_pct),
        Axis::new("latency", Scale::Log10, fmt_ns),
    );
    for l in lines {
        let h = Histogram::from_data(&l.class.histogram);
        let n = h.count();
        if n == 0 {
            continue;
        }
        c.series
            .push(Series::new(&l.name, Style::Curve, nines_curve(&h)));
    }
    c
}

#[derive(Clone, Copy, PartialEq)]
enum Rate {
    Bytes,
    Ops,
}

fn over_time(lines: &[Line<'_>], rate: Rate) -> Chart {
    let (title, y) = match rate {
        Rate::Bytes => (
            "Throughput per interval",
            Axis::new("MB/s", Scale::Linear, fmt_num),
        ),
        Rate::Ops => (
            "IOPS per interval",
            Axis::new("IOPS", Scale::Linear, fmt_num),
        ),
    };
    let mut c = Chart::new(title, Axis::new("time (s)", Scale::Linear, fmt_num), y);
    for l in lines {
        let interval = l.point.settings.interval_ns.max(1) as f64;
        let n = l.class.series.len();
        let pts = l
            .class
            .series
            .iter()
            .enumerate()
            .filter_map(|(k, s)| {
                // The last interval may be cut short; one under half an
                // interval is left out, its rate being mostly noise, and so
                // is one of unknown length (a report older than
                // `series_last_ns`, where it reads 0).
                let len = if k + 1 == n {
                    l.class.series_last_ns as f64
                } else {
                    interval
                };
                if len < interval / 2.0 {
                    return None;
                }
                let v = match rate {
                    Rate::Bytes => s.bytes as f64 / 1e6,
                    Rate::Ops => s.ops as f64,
                };
                Some(((k as f64 * interval + len) / 1e9, v / (len / 1e9)))
            })
            .collect();
        c.series.push(Series::new(&l.name, Style::Line, pts));
    }
    c
}

/// Latency over time: each class's median and 99th percentile per
/// interval of its series (the interval's own latencies, cut from the
/// histogram at its ends), against the interval's end. A report from
/// before the series kept percentiles has none to draw, and the plot is
/// left out.
fn latency_over_time(lines: &[Line<'_>]) -> Chart {
    let mut c = Chart::new(
        "Latency per interval (p50, p99)",
        Axis::new("time (s)", Scale::Linear, fmt_num),
        Axis::new("latency", Scale::Log10, fmt_ns),
    );
    for l in lines {
        let interval = l.point.settings.interval_ns.max(1) as f64;
        let n = l.class.series.len();
        let p50: fn(&IntervalSample) -> u64 = |s| s.lat_p50_ns;
        let p99: fn(&IntervalSample) -> u64 = |s| s.lat_p99_ns;
        for (tag, pick) in [("p50", p50), ("p99", p99)] {
            let pts: Vec<(f64, f64)> = l
                .class
                .series
                .iter()
                .enumerate()
                .filter(|(_, s)| s.ops > 0 && pick(s) > 0)
                .map(|(k, s)| {
                    // The last interval ends where the point did.
                    let len = match k + 1 == n && l.class.series_last_ns > 0 {
                        true => l.class.series_last_ns as f64,
                        false => interval,
                    };
                    ((k as f64 * interval + len) / 1e9, pick(s) as f64)
                })
                .collect();
            if !pts.is_empty() {
                c.series
                    .push(Series::new(format!("{} {tag}", l.name), Style::Line, pts));
            }
        }
    }
    c
}

/// The latency histogram twice: I/Os on a linear axis, where the body of
/// the distribution shows, and on a log axis, where the tail's few slow
/// I/Os (a count of 1 beside 10^6) show too. Latency is on a log axis in
/// both. Two plots, not a switch: the page runs no script.
fn histograms(lines: &[Line<'_>]) -> [Chart; 2] {
    let mut linear = Chart::new(
        "Latency histogram (10 bins per decade)",
        Axis::new("latency", Scale::Log10, fmt_ns),
        Axis::new("I/Os", Scale::Linear, fmt_num),
    );
    let mut log = Chart::new(
        "Latency histogram, I/Os on a log scale (the tail)",
        Axis::new("latency", Scale::Log10, fmt_ns),
        Axis::new("I/Os (log scale)", Scale::Log10, fmt_num),
    );
    for l in lines {
        let pts = bins(l.class);
        // A bin with no I/O has no place on a log axis: left out, its
        // neighbours' markers standing apart.
        let filled = pts.iter().copied().filter(|p| p.1 > 0.0).collect();
        linear.series.push(Series::new(&l.name, Style::Line, pts));
        log.series.push(Series::new(&l.name, Style::Points, filled));
    }
    [linear, log]
}

/// The lossless buckets of `class`, gathered into bins of a tenth of a
/// decade, as (the bin's middle, I/Os); the empty bins between filled
/// ones at zero.
fn bins(class: &ClassReport) -> Vec<(f64, f64)> {
    let mut bins: Vec<(i64, u64)> = Vec::new();
    for &[v, n] in &class.histogram.counts {
        let b = ((v.max(1) as f64).log10() * 10.0).floor() as i64;
        match bins.last_mut() {
            Some((k, m)) if *k == b => *m += n,
            _ => bins.push((b, n)),
        }
    }
    let mut pts = Vec::new();
    let mut last: Option<i64> = None;
    for (b, n) in bins {
        if let Some(prev) = last {
            for gap in prev + 1..b {
                pts.push((10f64.powf((gap as f64 + 0.5) / 10.0), 0.0));
            }
        }
        pts.push((10f64.powf((b as f64 + 0.5) / 10.0), n as f64));
        last = Some(b);
    }
    pts
}
