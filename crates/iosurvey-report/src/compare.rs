//! `iosurvey compare`: two or more saved runs, point by point. Points are
//! matched by their typed parameters (by their label in modes whose points
//! have none); for each class it gives both sides' medians over the
//! repeats (`--repeat`), the ratio of the later run to the first, and
//! whether the difference is real: an exact Mann-Whitney U test across the
//! repeats, `~` where it is not significant, "n too small" below
//! [`MIN_REPEATS`] repeats a side. Latency percentiles come from the merged
//! histograms of all repeats; their significance from each repeat's own.

use crate::html::{Axis, Chart, Scale, Series, Style};
use crate::{ClassReport, PointReport, RunReport};
use iosurvey_model::PointParams;
use iosurvey_stats::significance::{mann_whitney, median, median_ci, median_ratio_ci, MIN_REPEATS};
use iosurvey_stats::Histogram;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Version of the compare JSON layout.
pub const COMPARE_VERSION: u32 = 1;

/// Significance level of the verdicts.
pub const ALPHA: f64 = 0.05;

/// Resamplings of the bootstrap interval of a ratio.
const BOOTSTRAP_ROUNDS: usize = 2000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    pub compare_version: u32,
    /// The runs, the first being the baseline (A) the others are compared
    /// with.
    pub runs: Vec<RunRef>,
    pub rows: Vec<CompareRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRef {
    /// As given on the command line.
    pub name: String,
    pub mode: String,
    pub started_at: String,
    pub hostname: String,
    pub repeats: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    /// The point, as its label names it.
    pub point: String,
    pub class: String,
    /// `MB/s`, `IOPS`, `mean latency`, `p50 latency`, `p99 latency`.
    pub metric: String,
    /// Larger is better (rates), or smaller (latencies).
    pub higher_is_better: bool,
    /// Which run (index into `runs`, from 1) is compared with the first.
    pub run: usize,
    pub a: Side,
    pub b: Side,
    /// B's value over A's.
    pub ratio: f64,
    /// 95% bootstrap interval of the ratio of the repeats' medians.
    pub ratio_ci: Option<(f64, f64)>,
    /// Two-sided p-value of the Mann-Whitney U test across repeats.
    pub p_value: Option<f64>,
    /// `faster`, `slower`, `~` (not significant) or `n too small`.
    pub verdict: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// One value per repeat.
    pub values: Vec<f64>,
    /// The figure compared: the median of the repeats, or for a latency
    /// percentile, the percentile of the merged histograms.
    pub value: f64,
    /// Distribution-free interval of the median, and its coverage.
    pub ci: (f64, f64),
    pub ci_coverage: f64,
}

impl CompareRow {
    /// Whether this row is a significant slowdown by more than `pct`
    /// percent.
    pub fn slower_by_more_than(&self, pct: f64) -> bool {
        if self.verdict != "slower" {
            return false;
        }
        let change = if self.higher_is_better {
            (1.0 - self.ratio) * 100.0
        } else {
            (self.ratio - 1.0) * 100.0
        };
        change > pct
    }
}

/// The key points are matched by: their typed parameters, or their label
/// where the mode's points carry none that tell them apart.
fn key(p: &PointReport) -> String {
    match &p.params {
        PointParams::None | PointParams::Run | PointParams::Video => p.label.clone(),
        other => serde_json::to_string(other).unwrap_or_else(|_| p.label.clone()),
    }
}

/// Each distinct point of `r` (in the order first run), with its repeats.
fn points_of(r: &RunReport) -> Vec<(String, Vec<&PointReport>)> {
    let mut out: Vec<(String, Vec<&PointReport>)> = Vec::new();
    for p in r
        .points
        .iter()
        .filter(|p| p.skipped.is_none() && !p.interrupted)
    {
        let k = key(p);
        match out.iter_mut().find(|(q, _)| *q == k) {
            Some((_, v)) => v.push(p),
            None => out.push((k, vec![p])),
        }
    }
    out
}

type Metric = (&'static str, bool, fn(&ClassReport) -> f64);

/// The figures compared as each repeat gives them (the latency
/// percentiles, from the merged histograms, are apart).
const BY_REPEAT: [Metric; 3] = [
    ("MB/s", true, |c| c.bytes_per_sec / 1e6),
    ("IOPS", true, |c| c.iops),
    ("mean latency", false, |c| c.latency.mean_ns),
];

/// `names` (as given) and their reports, compared with the first.
pub fn compare(names: &[String], runs: &[RunReport]) -> CompareReport {
    let refs = names
        .iter()
        .zip(runs)
        .map(|(n, r)| RunRef {
            name: n.clone(),
            mode: r.mode.clone(),
            started_at: r.started_at.clone(),
            hostname: r.host.hostname.clone(),
            repeats: r.repeats,
        })
        .collect();
    let mut rows = Vec::new();
    let base = points_of(&runs[0]);
    for (i, other) in runs.iter().enumerate().skip(1) {
        let theirs = points_of(other);
        // Two runs of one point each are compared whatever their points
        // are (two settings of one workload, say).
        let only = base.len() == 1 && theirs.len() == 1;
        for (k, a_points) in &base {
            let Some((_, b_points)) = theirs.iter().find(|(q, _)| q == k || only) else {
                continue;
            };
            let point = if only && b_points[0].label != a_points[0].label {
                format!("{} | {}", a_points[0].label, b_points[0].label)
            } else {
                a_points[0].label.clone()
            };
            for (class, read) in [("read", true), ("write", false)] {
                let (ac, bc) = (classes(a_points, read), classes(b_points, read));
                if ac.iter().all(|c| c.ops == 0) || bc.iter().all(|c| c.ops == 0) {
                    continue;
                }
                for (metric, up, f) in BY_REPEAT {
                    let av: Vec<f64> = ac.iter().map(|c| f(c)).collect();
                    let bv: Vec<f64> = bc.iter().map(|c| f(c)).collect();
                    rows.push(row(&point, class, metric, up, i, av, bv, None));
                }
                // Each repeat's histogram decoded once, and each side's
                // merged once, for every percentile.
                let decode = |cs: &[&ClassReport]| -> Vec<Histogram> {
                    cs.iter()
                        .map(|c| Histogram::from_data(&c.histogram))
                        .collect()
                };
                let merge = |hs: &[Histogram]| {
                    let mut all = Histogram::new();
                    for h in hs {
                        all.merge(h);
                    }
                    all
                };
                let (ah, bh) = (decode(&ac), decode(&bc));
                let (am, bm) = (merge(&ah), merge(&bh));
                for (pct, name) in [(50.0, "p50 latency"), (99.0, "p99 latency")] {
                    let at = |h: &Histogram| h.percentile(pct) as f64;
                    let av: Vec<f64> = ah.iter().map(at).collect();
                    let bv: Vec<f64> = bh.iter().map(at).collect();
                    let values = Some((at(&am), at(&bm)));
                    rows.push(row(&point, class, name, false, i, av, bv, values));
                }
            }
        }
    }
    CompareReport {
        compare_version: COMPARE_VERSION,
        runs: refs,
        rows,
    }
}

/// The read (or write) class of each of `points`.
fn classes<'a>(points: &[&'a PointReport], read: bool) -> Vec<&'a ClassReport> {
    points
        .iter()
        .map(|p| if read { &p.total.read } else { &p.total.write })
        .collect()
}

fn side(values: Vec<f64>, value: Option<f64>) -> Side {
    let (lo, hi, cover) = median_ci(&values);
    Side {
        value: value.unwrap_or_else(|| median(&values)),
        ci: (lo, hi),
        ci_coverage: cover,
        values,
    }
}

#[allow(clippy::too_many_arguments)]
fn row(
    point: &str,
    class: &str,
    metric: &str,
    higher_is_better: bool,
    run: usize,
    av: Vec<f64>,
    bv: Vec<f64>,
    merged: Option<(f64, f64)>,
) -> CompareRow {
    let enough = av.len() >= MIN_REPEATS && bv.len() >= MIN_REPEATS;
    let (_, p) = mann_whitney(&av, &bv);
    let (_, lo, hi) = median_ratio_ci(&av, &bv, BOOTSTRAP_ROUNDS);
    let a = side(av, merged.map(|m| m.0));
    let b = side(bv, merged.map(|m| m.1));
    let ratio = b.value / a.value;
    let verdict = if !enough {
        "n too small"
    } else if p >= ALPHA || !ratio.is_finite() || ratio == 1.0 {
        "~"
    } else if (ratio > 1.0) == higher_is_better {
        "faster"
    } else {
        "slower"
    };
    CompareRow {
        point: point.into(),
        class: class.into(),
        metric: metric.into(),
        higher_is_better,
        run,
        a,
        b,
        ratio,
        ratio_ci: (enough && lo.is_finite()).then_some((lo, hi)),
        p_value: enough.then_some(p),
        verdict: verdict.into(),
    }
}

fn figure(metric: &str, v: f64) -> String {
    if metric.ends_with("latency") {
        crate::format_ns(v)
    } else if metric == "IOPS" {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn side_text(metric: &str, s: &Side) -> String {
    if s.values.len() >= MIN_REPEATS {
        // Too few repeats for 95%: the whole range, with what it covers.
        let cover = if s.ci_coverage < 0.95 {
            format!(" @{:.1}%", s.ci_coverage * 100.0)
        } else {
            String::new()
        };
        format!(
            "{} [{}, {}{cover}]",
            figure(metric, s.value),
            figure(metric, s.ci.0),
            figure(metric, s.ci.1)
        )
    } else {
        figure(metric, s.value)
    }
}

fn ratio_text(r: &CompareRow) -> String {
    match r.ratio_ci {
        Some((lo, hi)) => format!("{:.3} [{lo:.3}, {hi:.3}]", r.ratio),
        None => format!("{:.3}", r.ratio),
    }
}

/// A row's cells: point, class, figure, A, B (named `B<run>:` when
/// `name_b`), B/A, p and the verdict.
fn cells(r: &CompareRow, name_b: bool) -> [String; 8] {
    let b = side_text(&r.metric, &r.b);
    [
        r.point.clone(),
        r.class.clone(),
        r.metric.clone(),
        side_text(&r.metric, &r.a),
        if name_b {
            format!("B{}: {b}", r.run)
        } else {
            b
        },
        ratio_text(r),
        r.p_value.map_or_else(|| "-".into(), |p| format!("{p:.3}")),
        r.verdict.clone(),
    ]
}

/// The comparison as text: the runs, then one line per point, class and
/// figure.
pub fn render_compare_text(c: &CompareReport) -> String {
    let mut out = String::new();
    for (i, r) in c.runs.iter().enumerate() {
        let tag = if i == 0 {
            "A".to_string()
        } else {
            format!("B{i}")
        };
        let _ = writeln!(
            out,
            "{tag}: {} ({}, {} on {}, {} repeat{})",
            r.name,
            r.mode,
            r.started_at,
            r.hostname,
            r.repeats,
            if r.repeats == 1 { "" } else { "s" }
        );
    }
    let _ = writeln!(
        out,
        "medians over the repeats with their 95% interval (with fewer than 6 repeats the whole range, @ what it covers); latency percentiles from the merged histograms; B/A with a bootstrap interval; p from a Mann-Whitney U test across repeats; ~ not significant at {ALPHA}"
    );
    let head = ["point", "class", "figure", "A", "B", "B/A", "p", ""];
    let rows: Vec<[String; 8]> = c.rows.iter().map(|r| cells(r, c.runs.len() > 2)).collect();
    let mut width = head.map(str::len);
    for r in &rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (k, (cell, w)) in cells.iter().zip(width).enumerate() {
            if k > 0 {
                l.push_str("  ");
            }
            let _ = write!(l, "{cell:<w$}");
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(&head.map(String::from)));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r));
    }
    if c.rows.is_empty() {
        out.push_str("no point is in both runs\n");
    }
    out
}

/// The comparison as JSON.
pub fn compare_json(c: &CompareReport) -> String {
    let mut s = serde_json::to_string_pretty(c).expect("a comparison always serialises");
    s.push('\n');
    s
}

/// The comparison as a self-contained HTML page: the table, and a chart of
/// each point's MB/s ratio with its interval.
pub fn render_compare_html(c: &CompareReport) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>iosurvey compare</title>\n<style>{}</style>\n</head>\n<body>\n<h1>iosurvey compare</h1>\n",
        crate::html::STYLE
    );
    let runs: Vec<Vec<String>> = c
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                if i == 0 { "A".into() } else { format!("B{i}") },
                r.name.clone(),
                r.mode.clone(),
                r.started_at.clone(),
                r.hostname.clone(),
                r.repeats.to_string(),
            ]
        })
        .collect();
    h.push_str(&crate::html::table(
        "Runs",
        &["", "report", "mode", "started", "host", "repeats"],
        &runs,
    ));
    let mut chart = Chart::new(
        "B/A of MB/s per point (1 = the same; the whiskers: 95% bootstrap interval)",
        Axis::new("point", Scale::Linear, |v| format!("{v}")),
        Axis::new("B/A", Scale::Linear, |v| format!("{v:.2}")),
    );
    let mb: Vec<&CompareRow> = c.rows.iter().filter(|r| r.metric == "MB/s").collect();
    chart.categories = mb
        .iter()
        .map(|r| format!("{} {}", r.point, r.class))
        .collect();
    let mut s = Series::new(
        "B/A",
        Style::Points,
        mb.iter()
            .enumerate()
            .map(|(i, r)| (i as f64, r.ratio))
            .collect(),
    );
    s.tips = Some(
        mb.iter()
            .map(|r| {
                format!(
                    "{} {}: B/A {} {}",
                    r.point,
                    r.class,
                    ratio_text(r),
                    r.verdict
                )
            })
            .collect(),
    );
    chart.series.push(s);
    chart.bands.push(crate::html::Band {
        name: "95% interval".into(),
        points: mb
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.ratio_ci.map(|(lo, hi)| (i as f64, lo, hi)))
            .collect(),
    });
    chart.hlines.push((1.0, "the same".into()));
    if chart.has_data() {
        let _ = writeln!(
            h,
            "<figure class=\"plot\">{}</figure>",
            crate::html::svg(&chart)
        );
    }
    let rows: Vec<Vec<String>> = c.rows.iter().map(|r| cells(r, true).to_vec()).collect();
    h.push_str(&crate::html::table(
        "Point by point",
        &["point", "class", "figure", "A", "B", "B/A", "p", "verdict"],
        &rows,
    ));
    let json = compare_json(c).replace('<', "\\u003c");
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"iosurvey-compare\">{json}</script>"
    );
    h.push_str("</body>\n</html>\n");
    h
}
