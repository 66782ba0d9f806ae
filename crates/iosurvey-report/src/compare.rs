//! `iosurvey compare`: two or more saved runs, point by point. Points are
//! matched by their typed parameters (by their label in modes whose points
//! have none); for each class it gives both sides' medians over the
//! repeats (`--repeat`), the ratio of the later run to the first, and
//! whether the difference is real: an exact Mann-Whitney U test across the
//! repeats, `~` where it is not significant, "n too small" below
//! [`MIN_REPEATS`] repeats a side. Latency percentiles come from the merged
//! histograms of all repeats; their significance from each repeat's own.
//! The gate (`--fail-if-slower`) is in [`gate`]; the matching of points in
//! `matching`.

mod gate;
mod matching;

pub use gate::{gate, GateFigure, GateReport};
pub use matching::NoMatch;

use crate::html::{Axis, Chart, Scale, Series, Style};
use crate::{ClassReport, PointReport, RunReport};
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

/// A point's headline rate is IOPS when its mean I/O is smaller than this
/// on both sides, MB/s otherwise (also where the two sides' I/O sizes
/// straddle it: MB/s is the fair measure of unlike sizes).
pub const HEADLINE_IOPS_BELOW: f64 = 65536.0;

/// A figure compared, named in JSON as in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Figure {
    #[serde(rename = "MB/s")]
    Mbps,
    #[serde(rename = "IOPS")]
    Iops,
    #[serde(rename = "mean latency")]
    MeanLatency,
    #[serde(rename = "p50 latency")]
    P50Latency,
    #[serde(rename = "p99 latency")]
    P99Latency,
}

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Mbps => "MB/s",
            Figure::Iops => "IOPS",
            Figure::MeanLatency => "mean latency",
            Figure::P50Latency => "p50 latency",
            Figure::P99Latency => "p99 latency",
        }
    }

    /// Larger is better (rates), or smaller (latencies).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Figure::Mbps | Figure::Iops)
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    pub compare_version: u32,
    /// The runs, the first being the baseline (A) the others are compared
    /// with.
    pub runs: Vec<RunRef>,
    pub rows: Vec<CompareRow>,
    /// What `--fail-if-slower` judged, when it was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateReport>,
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
    pub metric: Figure,
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
    /// `faster`, `slower`, `~` (not significant) or `n too small`; from
    /// this row's p-value alone, uncorrected.
    pub verdict: String,
    /// The point's headline rate (what the gate judges by default): IOPS
    /// where its mean I/O is under 64 KiB in A and B, MB/s otherwise.
    #[serde(default)]
    pub headline: bool,
    /// Judged by the gate (`--fail-if-slower`, `--gate`).
    #[serde(default)]
    pub gated: bool,
    /// The p-value corrected by Holm's method over every gated row, when
    /// this row is gated and has a p-value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_holm: Option<f64>,
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
    /// How much worse B is than A, in percent: the fall of a rate, the
    /// rise of a latency (negative when B is better).
    pub fn worse_pct(&self) -> f64 {
        if !self.ratio.is_finite() {
            return 0.0;
        }
        if self.higher_is_better {
            (1.0 - self.ratio) * 100.0
        } else {
            (self.ratio - 1.0) * 100.0
        }
    }

    /// Whether this row alone, uncorrected, is a significant slowdown by
    /// more than `pct` percent (the gate corrects for testing several: see
    /// [`gate`]).
    pub fn slower_by_more_than(&self, pct: f64) -> bool {
        self.verdict == "slower" && self.worse_pct() > pct
    }
}

type Metric = (Figure, fn(&ClassReport) -> f64);

/// The figures compared as each repeat gives them (the latency
/// percentiles, from the merged histograms, are apart).
const BY_REPEAT: [Metric; 3] = [
    (Figure::Mbps, |c| c.bytes_per_sec / 1e6),
    (Figure::Iops, |c| c.iops),
    (Figure::MeanLatency, |c| c.latency.mean_ns),
];

/// `names` (as given) and their reports, compared with the first; an
/// error when a run has nothing in common with the first (no point
/// matched, or none in a class of I/O), saying why.
pub fn compare(names: &[String], runs: &[RunReport]) -> Result<CompareReport, NoMatch> {
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
    let base = matching::points_of(&runs[0]);
    if base.is_empty() {
        return Err(NoMatch::Empty {
            run: names[0].clone(),
        });
    }
    for (i, other) in runs.iter().enumerate().skip(1) {
        let theirs = matching::points_of(other);
        if theirs.is_empty() {
            return Err(NoMatch::Empty {
                run: names[i].clone(),
            });
        }
        // Two runs of one point each are compared whatever their points
        // are (two settings of one workload, say).
        let only = base.len() == 1 && theirs.len() == 1;
        let (before, mut matched) = (rows.len(), false);
        for (k, a_points) in &base {
            let Some((_, b_points)) = theirs.iter().find(|(q, _)| q == k || only) else {
                continue;
            };
            matched = true;
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
                let mean_io = |cs: &[&ClassReport]| {
                    let (bytes, ops) = cs
                        .iter()
                        .fold((0u64, 0u64), |(b, o), c| (b + c.bytes, o + c.ops));
                    bytes as f64 / ops as f64
                };
                let headline = if mean_io(&ac).max(mean_io(&bc)) < HEADLINE_IOPS_BELOW {
                    Figure::Iops
                } else {
                    Figure::Mbps
                };
                for (metric, f) in BY_REPEAT {
                    let av: Vec<f64> = ac.iter().map(|c| f(c)).collect();
                    let bv: Vec<f64> = bc.iter().map(|c| f(c)).collect();
                    let mut r = row(&point, class, metric, i, av, bv, None);
                    r.headline = metric == headline;
                    rows.push(r);
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
                for (pct, name) in [(50.0, Figure::P50Latency), (99.0, Figure::P99Latency)] {
                    let at = |h: &Histogram| h.percentile(pct) as f64;
                    let av: Vec<f64> = ah.iter().map(at).collect();
                    let bv: Vec<f64> = bh.iter().map(at).collect();
                    let values = Some((at(&am), at(&bm)));
                    rows.push(row(&point, class, name, i, av, bv, values));
                }
            }
        }
        if !matched {
            return Err(matching::no_point_matched(
                &names[0], &base, &names[i], &theirs,
            ));
        }
        if rows.len() == before {
            return Err(NoMatch::Classes {
                a: names[0].clone(),
                b: names[i].clone(),
            });
        }
    }
    Ok(CompareReport {
        compare_version: COMPARE_VERSION,
        runs: refs,
        rows,
        gate: None,
    })
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

fn row(
    point: &str,
    class: &str,
    metric: Figure,
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
    let higher_is_better = metric.higher_is_better();
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
        metric,
        higher_is_better,
        run,
        a,
        b,
        ratio,
        ratio_ci: (enough && lo.is_finite()).then_some((lo, hi)),
        p_value: enough.then_some(p),
        verdict: verdict.into(),
        headline: false,
        gated: false,
        p_holm: None,
    }
}

fn figure(metric: Figure, v: f64) -> String {
    match metric {
        Figure::Mbps => format!("{v:.2}"),
        Figure::Iops => format!("{v:.0}"),
        Figure::MeanLatency | Figure::P50Latency | Figure::P99Latency => crate::format_ns(v),
    }
}

fn side_text(metric: Figure, s: &Side) -> String {
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

/// The table's head: with a gate, a column of the corrected p-values.
fn head(gate: Option<&GateReport>) -> Vec<&'static str> {
    let mut h = vec!["point", "class", "figure", "A", "B", "B/A", "p"];
    if gate.is_some() {
        h.push("p Holm");
    }
    h.push("verdict");
    h
}

/// A row's cells: point, class, figure, A, B (named `B<run>:` when
/// `name_b`), B/A, p, with a gate its corrected p (blank where the row is
/// not gated, `fails` where it fails the gate), and the verdict.
fn cells(c: &CompareReport, k: usize, name_b: bool) -> Vec<String> {
    let r = &c.rows[k];
    let b = side_text(r.metric, &r.b);
    let mut cells = vec![
        r.point.clone(),
        r.class.clone(),
        r.metric.to_string(),
        side_text(r.metric, &r.a),
        if name_b {
            format!("B{}: {b}", r.run)
        } else {
            b
        },
        ratio_text(r),
        r.p_value.map_or_else(|| "-".into(), |p| format!("{p:.3}")),
    ];
    if let Some(g) = &c.gate {
        cells.push(match (r.gated, r.p_holm) {
            (false, _) => String::new(),
            (true, None) => "-".into(),
            (true, Some(p)) if g.failed.contains(&k) => format!("{p:.3} fails"),
            (true, Some(p)) => format!("{p:.3}"),
        });
    }
    cells.push(r.verdict.clone());
    cells
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
    if let Some(g) = &c.gate {
        let _ = writeln!(out, "{}", g.summary());
    }
    let mut head: Vec<String> = head(c.gate.as_ref())
        .into_iter()
        .map(String::from)
        .collect();
    // The verdict column goes without a heading in the text.
    if let Some(last) = head.last_mut() {
        last.clear();
    }
    let rows: Vec<Vec<String>> = (0..c.rows.len())
        .map(|k| cells(c, k, c.runs.len() > 2))
        .collect();
    let mut width: Vec<usize> = head.iter().map(String::len).collect();
    for r in &rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (k, (cell, &w)) in cells.iter().zip(&width).enumerate() {
            if k > 0 {
                l.push_str("  ");
            }
            let _ = write!(l, "{cell:<w$}");
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(&head));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r));
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
    let mb: Vec<&CompareRow> = c.rows.iter().filter(|r| r.metric == Figure::Mbps).collect();
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
    if let Some(g) = &c.gate {
        let _ = writeln!(h, "<p>{}</p>", crate::html::escape(&g.summary()));
    }
    let rows: Vec<Vec<String>> = (0..c.rows.len()).map(|k| cells(c, k, true)).collect();
    h.push_str(&crate::html::table(
        "Point by point",
        &head(c.gate.as_ref()),
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
