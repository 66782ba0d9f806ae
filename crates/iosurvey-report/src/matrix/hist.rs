//! `_hist.txt`: ORION 12c's per-point latency histograms, one per class
//! (small, large) and op (read, write), in power-of-two microsecond buckets
//! with cumulative percentages, after an avg/min/max/std dev line.

use super::{cell, stream, Class, FAILED};
use iosurvey_model::document::{ClassReport, RunReport};
use std::fmt::Write;

/// Upper bounds of the buckets in µs: 32, 64, ... 2^22 (about 4 s), then
/// everything above.
fn bounds() -> impl Iterator<Item = u64> {
    (5..=22).map(|k| 1u64 << k)
}

fn one(o: &mut String, name: &str, c: &ClassReport, at: &str) {
    if c.ops == 0 {
        return;
    }
    let l = &c.latency;
    let us = |ns: f64| ns / 1e3;
    let _ = writeln!(
        o,
        "{name} Latency: avg={:.3} us, min={:.3} us, max={:.3} us, std dev={:.3} us {at}",
        us(l.mean_ns),
        us(l.min_ns as f64),
        us(l.max_ns as f64),
        us(l.stdev_ns)
    );
    let total: u64 = c.histogram.counts.iter().map(|[_, n]| n).sum();
    let mut lo = 0u64;
    let mut cum = 0u64;
    let mut line = String::new();
    for hi in bounds().map(Some).chain([None]) {
        let n: u64 = c
            .histogram
            .counts
            .iter()
            .filter(|[v, _]| *v / 1000 >= lo && hi.is_none_or(|hi| *v / 1000 < hi))
            .map(|[_, n]| n)
            .sum();
        cum += n;
        let pct = if total > 0 {
            cum as f64 * 100.0 / total as f64
        } else {
            0.0
        };
        let hi_s = hi.map_or("inf".to_string(), |h| h.to_string());
        let _ = write!(line, "{lo} - {hi_s} us: {n} ({pct:6.2}%) ");
        lo = hi.unwrap_or(lo);
        if cum == total {
            break;
        }
    }
    let _ = writeln!(o, "{}", line.trim_end());
}

/// Every point's histograms, point by point.
pub fn render_hist(report: &RunReport) -> String {
    let mut o = String::new();
    for p in &report.points {
        let Some(c) = cell(p) else { continue };
        let at = format!("@ Small={} and Large={}", c.small, c.large);
        // The I/Os that completed before the failure, marked as such.
        if let Some(why) = &c.failed {
            let _ = writeln!(o, "{FAILED} {at}: {why}");
        }
        let classes = [(Class::Small, "Small"), (Class::Large, "Large")];
        for (s, class) in classes
            .iter()
            .filter_map(|&(c, name)| Some((stream(p, c)?, name)))
        {
            one(&mut o, &format!("{class} Read"), &s.read, &at);
            one(&mut o, &format!("{class} Write"), &s.write, &at);
        }
    }
    o
}
