//! `iosurvey compare`: two or more saved runs, point by point. Points are
//! matched by their typed parameters (by their label in modes whose points
//! have none); for each class it gives both sides' medians over the
//! repeats (`--repeat`), the ratio of the later run to the first, and
//! whether the difference is real: an exact Mann-Whitney U test across the
//! repeats, `~` where it is not significant, "n too small" below
//! [`MIN_REPEATS`] repeats a side. Latency percentiles come from the merged
//! histograms of all repeats; their significance from each repeat's own.
//! The gate (`--fail-if-slower`) is in [`gate`], the matching of points
//! in `matching`, the settings that differ in `settings`, the text, JSON
//! and page in `render`.

mod gate;
mod matching;
mod render;
mod settings;

pub use gate::{gate, GateFigure, GateReport};
pub use matching::NoMatch;
pub use render::{compare_json, render_compare_html, render_compare_text};
pub use settings::SettingDiff;

use iosurvey_model::document::{ClassReport, PointReport, RunReport};
use iosurvey_stats::significance::{mann_whitney, median, median_ci, median_ratio_ci, MIN_REPEATS};
use iosurvey_stats::Histogram;
use serde::{Deserialize, Serialize};

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompareReport {
    pub compare_version: u32,
    /// The runs, the first being the baseline (A) the others are compared
    /// with.
    pub runs: Vec<RunRef>,
    pub rows: Vec<CompareRow>,
    /// What `--fail-if-slower` judged, when it was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateReport>,
    /// The settings (workload, targets, host, version) in which each run
    /// compared differs from the first; empty when none do.
    #[serde(default)]
    pub differences: Vec<SettingDiff>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunRef {
    /// As given on the command line.
    pub name: String,
    pub mode: String,
    pub started_at: String,
    pub hostname: String,
    pub repeats: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
            for k in 0..3 {
                let class = a_points[0].total.classes()[k].0;
                let (ac, bc) = (classes(a_points, k), classes(b_points, k));
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
        differences: runs
            .iter()
            .enumerate()
            .skip(1)
            .flat_map(|(i, b)| settings::differences(&runs[0], b, i))
            .collect(),
    })
}

/// Class `k` of each of `points` (reads, writes, trims:
/// [`StreamTotals::classes`]).
///
/// [`StreamTotals::classes`]: iosurvey_model::document::StreamTotals::classes
fn classes<'a>(points: &[&'a PointReport], k: usize) -> Vec<&'a ClassReport> {
    points.iter().map(|p| p.total.classes()[k].1).collect()
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
