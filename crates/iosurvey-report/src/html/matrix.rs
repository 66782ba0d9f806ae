//! The `matrix` plots and tables (Oracle ORION): the grid as heatmaps;
//! small IOPS and small latency against the small load, one line per large
//! level; large MB/s against the large load, one line per small level; and
//! ORION's three matrices. Every figure is a [`crate::matrix::Cell`], as the text and
//! CSV presenters compute it.

use super::chart::{Axis, Chart, Scale, Series, Style};
use super::heatmap::{heatmap, Heat};
use super::run::fmt_num;
use super::video::fmt_whole;
use crate::matrix::{cells, grid, Cell, Metric};
use iosurvey_model::document::RunReport;

/// The grid as heatmaps (SVG), one per figure that some cell holds.
pub(super) fn heatmaps(r: &RunReport) -> Vec<String> {
    let cells = cells(r);
    [
        Heat {
            title: "Small IOPS (reads + writes) by load",
            unit: "IOPS",
            figure: |c| c.iops,
            small: true,
        },
        Heat {
            title: "Large MB/s (10^6 bytes/s) by load",
            unit: "MB/s",
            figure: |c| c.mbps,
            small: false,
        },
        Heat {
            title: "Mean small latency (µs) by load",
            unit: "µs",
            figure: |c| c.lat_us.map(|l| l[0]),
            small: true,
        },
    ]
    .iter()
    .filter_map(|h| heatmap(&cells, h))
    .collect()
}

pub(super) fn charts(r: &RunReport) -> Vec<Chart> {
    let cells = cells(r);
    vec![
        by_load(
            &cells,
            "Small IOPS against small load",
            Axis::new("outstanding small I/Os", Scale::Linear, fmt_whole),
            Axis::new("small IOPS (reads + writes)", Scale::Linear, fmt_num),
            Load::Small,
            |c| c.iops,
        ),
        by_load(
            &cells,
            "Small latency against small load",
            Axis::new("outstanding small I/Os", Scale::Linear, fmt_whole),
            Axis::new("mean small latency (µs)", Scale::Linear, fmt_num),
            Load::Small,
            |c| c.lat_us.map(|l| l[0]),
        ),
        by_load(
            &cells,
            "Large MB/s against large load",
            Axis::new("outstanding large I/Os", Scale::Linear, fmt_whole),
            Axis::new("large MB/s (10^6 bytes/s)", Scale::Linear, fmt_num),
            Load::Large,
            |c| c.mbps,
        ),
    ]
}

/// Which load is on the x axis; the other one names the lines.
#[derive(Clone, Copy, PartialEq)]
enum Load {
    Small,
    Large,
}

impl Load {
    /// The cell's level of this load and of the other one.
    fn levels(self, c: &Cell) -> (u32, u32) {
        match self {
            Load::Small => (c.small, c.large),
            Load::Large => (c.large, c.small),
        }
    }

    /// The name of the other load, which names the lines.
    fn other(self) -> &'static str {
        match self {
            Load::Small => "large",
            Load::Large => "small",
        }
    }
}

/// One line per level of the other load, through the cells that hold a
/// figure, in ascending x.
fn by_load(
    cells: &[Cell],
    title: &str,
    x: Axis,
    y: Axis,
    load: Load,
    figure: fn(&Cell) -> Option<f64>,
) -> Chart {
    let per_line = |c: &Cell| load.levels(c).1;
    let on_x = |c: &Cell| load.levels(c).0;
    let mut levels: Vec<u32> = cells
        .iter()
        .filter(|c| figure(c).is_some())
        .map(per_line)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let mut chart = Chart::new(title, x, y);
    for level in levels {
        let mut pts: Vec<(f64, f64)> = cells
            .iter()
            .filter(|c| per_line(c) == level)
            .filter_map(|c| Some((f64::from(on_x(c)), figure(c)?)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart.series.push(Series::new(
            format!("{}={level}", load.other()),
            Style::Line,
            pts,
        ));
    }
    chart
}

pub(super) fn tables(r: &RunReport) -> Vec<String> {
    [
        (
            Metric::Mbps,
            "Large MB/s (10^6 bytes/s), as ORION's _mbps.csv",
        ),
        (Metric::Iops, "Small IOPS, as ORION's _iops.csv"),
        (Metric::Lat, "Mean small latency (µs), as ORION's _lat.csv"),
    ]
    .into_iter()
    .filter_map(|(metric, caption)| {
        let g = grid(r, metric);
        if g.rows.is_empty() {
            return None;
        }
        let head: Vec<String> = std::iter::once("Large/Small".to_string())
            .chain(g.small.iter().map(u32::to_string))
            .collect();
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        let rows: Vec<Vec<String>> = g
            .rows
            .into_iter()
            .map(|(large, row)| {
                std::iter::once(large.to_string())
                    .chain(row.into_iter().map(|v| v.unwrap_or_default()))
                    .collect()
            })
            .collect();
        Some(super::table::table(caption, &head, &rows))
    })
    .collect()
}
