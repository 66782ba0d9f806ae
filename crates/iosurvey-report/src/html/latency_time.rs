//! Latency over time: each class's median and 99th percentile per
//! interval of its series (the interval's own latencies, cut from the
//! histogram at its ends), against the interval's end. A report from
//! before the series kept percentiles has none to draw, and the plot is
//! left out.

use super::chart::{Axis, Chart, Scale, Series, Style};
use super::run::{fmt_ns, fmt_num, Line};
use iosurvey_stats::IntervalSample;

pub(super) fn latency_over_time(lines: &[Line<'_>]) -> Chart {
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
