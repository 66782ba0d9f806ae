//! The plots of a `run` sweep as fio-plot draws them: IOPS against queue
//! depth (or block size), and mean and p99 latency against the same axis;
//! a block-size sweep adds the rate in MB/s. Each line is one direction
//! (and, when both are swept, one block size), from the same rows as the
//! text table ([`crate::run_sweep::sweep_rows`]), so page and text agree.

use super::chart::{Axis, Chart, Scale, Series, Style};
use super::diskperf::fmt_bytes;
use super::run::{fmt_ns, fmt_num};
use crate::run_sweep::{sweep_rows, swept, SweepRow};
use iosurvey_model::document::RunReport;
use iosurvey_model::units::format_size;

/// What one plotted line is made of: its name and its rows.
type Line<'a> = (String, Vec<&'a SweepRow<'a>>);

pub(super) fn charts(r: &RunReport) -> Vec<Chart> {
    let rows = sweep_rows(r);
    let sw = swept(r);
    // Against queue depth when it is swept (a line per block size if that
    // is swept too), else against block size.
    let by_qd = sw.qd;
    let x = |row: &SweepRow<'_>| {
        if by_qd {
            f64::from(row.qd)
        } else {
            row.bs as f64
        }
    };
    let x_axis = || {
        if by_qd {
            Axis::new(
                "queue depth (outstanding I/Os per target, log2)",
                Scale::Log2,
                fmt_num,
            )
        } else {
            Axis::new("block size (bytes, log2)", Scale::Log2, fmt_bytes)
        }
    };
    let against = if by_qd { "queue depth" } else { "block size" };
    let mut lines: Vec<Line<'_>> = Vec::new();
    for row in &rows {
        let name = if by_qd && sw.bs {
            format!("bs {} {}", format_size(row.bs), row.op)
        } else {
            row.op.to_string()
        };
        match lines.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(row),
            None => lines.push((name, vec![row])),
        }
    }
    let series =
        |value: &dyn Fn(&SweepRow<'_>) -> Option<f64>, suffix: &str, unit: fn(f64) -> String| {
            lines
                .iter()
                .map(|(name, rows)| {
                    let name = format!("{name}{suffix}");
                    let (points, tips): (Vec<_>, Vec<_>) = rows
                        .iter()
                        .filter_map(|row| Some((x(row), value(row)?, row.point.label.as_str())))
                        .map(|(x, y, label)| ((x, y), format!("{name}, {label}: {}", unit(y))))
                        .unzip();
                    let mut s = Series::new(name, Style::Line, points);
                    s.tips = Some(tips);
                    s
                })
                .collect::<Vec<_>>()
        };
    let mut iops = Chart::new(
        format!("run sweep: IOPS against {against}"),
        x_axis(),
        Axis::new("IOPS (I/Os per second)", Scale::Linear, fmt_num),
    );
    iops.series = series(&|row| Some(row.class.iops), "", fmt_num);
    let mut latency = Chart::new(
        format!("run sweep: latency against {against} (mean and p99)"),
        x_axis(),
        Axis::new("latency", Scale::Log10, fmt_ns),
    );
    latency.series = series(&|row| Some(row.class.latency.mean_ns), " mean", fmt_ns);
    latency.series.extend(series(
        &|row| row.class.latency.at(99.0).map(|ns| ns as f64),
        " p99",
        fmt_ns,
    ));
    let mut charts = vec![iops, latency];
    if sw.bs && !by_qd {
        let mut rate = Chart::new(
            "run sweep: throughput against block size",
            x_axis(),
            Axis::new("throughput (MB/s, 10^6 bytes/s)", Scale::Linear, fmt_num),
        );
        rate.series = series(&|row| Some(row.class.bytes_per_sec / 1e6), "", fmt_num);
        charts.push(rate);
    }
    charts
}

pub(super) fn tables(r: &RunReport) -> Vec<String> {
    let rows = sweep_rows(r);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let c = row.class;
            let at = |p| {
                c.latency
                    .at(p)
                    .map_or_else(|| "-".into(), |ns| fmt_ns(ns as f64))
            };
            vec![
                row.qd.to_string(),
                format_size(row.bs),
                row.op.to_string(),
                format!("{:.0}", c.iops),
                format!("{:.1}", c.bytes_per_sec / 1e6),
                fmt_ns(c.latency.mean_ns),
                at(50.0),
                at(99.0),
                fmt_ns(c.latency.max_ns as f64),
            ]
        })
        .collect();
    vec![super::table::table(
        "run sweep: one row per point and direction (MB/s = 10^6 bytes/s)",
        &[
            "qd", "bs", "op", "IOPS", "MB/s", "mean", "p50", "p99", "max",
        ],
        &cells,
    )]
}
