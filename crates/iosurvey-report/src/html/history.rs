//! `db history --html`: a page of series over time, one chart per series
//! (the figure against the run), each change `db regress` would flag
//! drawn as a line, and a table of the values. Plain data in, as every
//! presenter: the database is read by the caller.

use super::chart::{escape, svg, Axis, Chart, Scale, Series, Style};
use super::run::fmt_num as value;
use super::table::table;
use super::STYLE;
use std::fmt::Write as _;

/// One series of the page.
pub struct HistorySeries {
    /// What it is (point, direction, figure, host, plan).
    pub title: String,
    /// The figure and its unit, for the y axis.
    pub figure: String,
    /// Each run: its id, when it started, its label, the value.
    pub runs: Vec<(i64, String, Option<String>, f64)>,
    /// The indices (into `runs`) where a change starts.
    pub changes: Vec<usize>,
}

/// The page.
pub fn render_history_html(title: &str, series: &[HistorySeries]) -> String {
    let mut h = String::with_capacity(32 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(title),
        escape(title)
    );
    if series.is_empty() {
        h.push_str("<p>No run matches.</p>\n");
    }
    for s in series {
        let _ = writeln!(h, "<section>\n<h2>{}</h2>", escape(&s.title));
        let mut chart = Chart::new(
            s.title.clone(),
            Axis::new("run (oldest first)", Scale::Linear, value),
            Axis::new(s.figure.clone(), Scale::Linear, value),
        );
        let mut line = Series::new(
            s.figure.clone(),
            Style::Line,
            s.runs
                .iter()
                .enumerate()
                .map(|(i, r)| (i as f64 + 1.0, r.3))
                .collect(),
        );
        line.tips = Some(
            s.runs
                .iter()
                .map(|(id, at, label, v)| {
                    format!(
                        "run {id}, {at}{}: {}",
                        label
                            .as_deref()
                            .map(|l| format!(" ({l})"))
                            .unwrap_or_default(),
                        value(*v)
                    )
                })
                .collect(),
        );
        chart.series.push(line);
        for (k, &c) in s.changes.iter().enumerate() {
            // The mean from the change to the next, across the chart,
            // named by run.
            let end = s.changes.get(k + 1).copied().unwrap_or(s.runs.len());
            let after: Vec<f64> = s.runs[c..end].iter().map(|r| r.3).collect();
            let mean = after.iter().sum::<f64>() / after.len().max(1) as f64;
            chart.hlines.push((
                mean,
                format!("change at run {} (mean after {})", s.runs[c].0, value(mean)),
            ));
        }
        let _ = writeln!(h, "<figure class=\"plot\">{}</figure>", svg(&chart));
        let rows: Vec<Vec<String>> = s
            .runs
            .iter()
            .enumerate()
            .map(|(i, (id, at, label, v))| {
                vec![
                    id.to_string(),
                    at.clone(),
                    label.clone().unwrap_or_default(),
                    value(*v),
                    if s.changes.contains(&i) {
                        "change".into()
                    } else {
                        String::new()
                    },
                ]
            })
            .collect();
        h.push_str(&table(
            "",
            &["run", "started", "label", &s.figure, ""],
            &rows,
        ));
        h.push_str("</section>\n");
    }
    h.push_str("</body>\n</html>\n");
    h
}
