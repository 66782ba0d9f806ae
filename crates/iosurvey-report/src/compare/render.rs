//! compare's presenters: the comparison as text (one line per point,
//! class and figure), as JSON, and as a self-contained page; with a gate,
//! its line and each gated row's corrected p-value.

use super::{CompareReport, CompareRow, Figure, GateReport, Side, ALPHA};
use crate::html::{Axis, Chart, Scale, Series, Style};
use iosurvey_stats::significance::MIN_REPEATS;
use std::fmt::Write as _;

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
    // Labels come from the reports read: shown, never acted on.
    let mut cells = vec![
        crate::visible(&r.point).into_owned(),
        crate::visible(&r.class).into_owned(),
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
        let shown = |s: &str| crate::visible(s).into_owned();
        let _ = writeln!(
            out,
            "{tag}: {} ({}, {} on {}, {} repeat{})",
            shown(&r.name),
            shown(&r.mode),
            shown(&r.started_at),
            shown(&r.hostname),
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

/// The settings in which each run differs from A, as a table, or a line
/// saying that none do.
fn differences(h: &mut String, c: &CompareReport) {
    h.push_str("<section id=\"differences\">\n<h2>Settings that differ</h2>\n");
    if c.differences.is_empty() {
        h.push_str("<p>None: same settings, host and version.</p>\n");
    } else {
        let rows: Vec<Vec<String>> = c
            .differences
            .iter()
            .map(|d| {
                vec![
                    format!("B{}", d.run),
                    d.setting.clone(),
                    d.a.clone(),
                    d.b.clone(),
                ]
            })
            .collect();
        h.push_str(&crate::html::table::table(
            "What B ran otherwise than A: a difference in the figures may come from these",
            &["run", "setting", "A", "B"],
            &rows,
        ));
    }
    h.push_str("</section>\n");
}

/// The comparison as a self-contained HTML page: the runs, the settings
/// that differ, a chart of each point's MB/s ratio with its interval as a
/// whisker, and the table.
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
    h.push_str(&crate::html::table::table(
        "Runs",
        &["", "report", "mode", "started", "host", "repeats"],
        &runs,
    ));
    differences(&mut h, c);
    let mut chart = Chart::new(
        "B/A of MB/s per point (whiskers: its 95% bootstrap interval)",
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
    s.whiskers = mb.iter().map(|r| r.ratio_ci).collect();
    chart.series.push(s);
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
    h.push_str(&crate::html::table::table(
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
