//! The `parallel` plots and tables: each device's MB/s over the common
//! window as bars, and with `--scale` (several points) the aggregate
//! against the number of devices, beside the ideal N x one device, the
//! spread of the devices and the knee, all from
//! [`crate::parallel::figures`] and [`crate::parallel::scaling`], as the
//! text report has them.

use super::chart::{Axis, Band, Chart, Scale, Series, Style};
use super::run::fmt_num;
use crate::parallel::{figures, scaling, PointFigures, ScaleRow};
use iosurvey_model::document::RunReport;

/// Points drawn as bar series side by side; beyond this, only the first
/// (one device alone) and the largest (every device at once).
const MAX_BAR_SERIES: usize = 4;

pub(super) fn charts(r: &RunReport) -> Vec<Chart> {
    let figs: Vec<PointFigures> = r.points.iter().map(figures).collect();
    let mut out = vec![devices(&figs)];
    if figs.len() > 1 {
        out.push(scaling_chart(&scaling(r)));
    }
    out
}

/// The points shown as bars: all of a few, else the first and the
/// largest.
fn shown(figs: &[PointFigures]) -> Vec<usize> {
    let ran: Vec<usize> = (0..figs.len())
        .filter(|&i| !figs[i].devices.is_empty())
        .collect();
    if ran.len() <= MAX_BAR_SERIES {
        return ran;
    }
    let largest = ran
        .iter()
        .copied()
        .max_by_key(|&i| (figs[i].devices.len(), i))
        .unwrap_or(0);
    let mut v = vec![ran[0]];
    if largest != ran[0] {
        v.push(largest);
    }
    v
}

fn devices(figs: &[PointFigures]) -> Chart {
    let shown = shown(figs);
    let title = if shown.len() < figs.iter().filter(|f| !f.devices.is_empty()).count() {
        "Per-device throughput over the common window (one device alone, and the most at once)"
    } else {
        "Per-device throughput over the common window"
    };
    let mut c = Chart::new(
        title,
        Axis::new("device", Scale::Linear, fmt_num),
        Axis::new("throughput (MB/s, 10^6 bytes/s)", Scale::Linear, fmt_num),
    );
    for &i in &shown {
        for d in &figs[i].devices {
            if !c.categories.contains(&d.path) {
                c.categories.push(d.path.clone());
            }
        }
    }
    for &i in &shown {
        let f = &figs[i];
        let n = f.devices.len();
        let name = format!("{n} device{}", if n == 1 { "" } else { "s" });
        let (points, tips): (Vec<_>, Vec<_>) = f
            .devices
            .iter()
            .filter_map(|d| {
                let x = c.categories.iter().position(|p| *p == d.path)?;
                let mb = d.window_rate / 1e6;
                let tip = format!(
                    "{}, {name} at once: {mb:.1} MB/s over {:.3} s",
                    d.path,
                    f.window_ns as f64 / 1e9
                );
                Some(((x as f64, mb), tip))
            })
            .unzip();
        let mut s = Series::new(name, Style::Bars, points);
        s.tips = Some(tips);
        c.series.push(s);
    }
    c
}

/// A whole number of devices; nothing between ticks.
fn fmt_count(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

fn scaling_chart(rows: &[ScaleRow]) -> Chart {
    let mut c = Chart::new(
        "Scaling: aggregate throughput by devices at once",
        Axis::new("devices at once (N)", Scale::Linear, fmt_count),
        Axis::new("throughput (MB/s, 10^6 bytes/s)", Scale::Linear, fmt_num),
    );
    let rows: Vec<&ScaleRow> = rows.iter().filter(|r| r.devices > 0).collect();
    let Some(first) = rows.first() else {
        return c;
    };
    // The single-device rate, as `scaling` takes it: the mean device of
    // the smallest step.
    let single = first.avg;
    let mb = |v: f64| v / 1e6;
    let n = |r: &ScaleRow| r.devices as f64;
    // Series 0 and band 0 share a colour: the mean device and its spread.
    c.bands.push(Band {
        name: "per-device min–max".into(),
        points: rows.iter().map(|r| (n(r), mb(r.min), mb(r.max))).collect(),
    });
    let mut mean = Series::new(
        "per-device mean",
        Style::Line,
        rows.iter().map(|r| (n(r), mb(r.avg))).collect(),
    );
    mean.tips = Some(
        rows.iter()
            .map(|r| {
                format!(
                    "{} devices: per device {:.1} MB/s mean, {:.1} min, {:.1} max",
                    r.devices,
                    mb(r.avg),
                    mb(r.min),
                    mb(r.max)
                )
            })
            .collect(),
    );
    let mut aggregate = Series::new(
        "aggregate",
        Style::Line,
        rows.iter().map(|r| (n(r), mb(r.aggregate))).collect(),
    );
    aggregate.tips = Some(
        rows.iter()
            .map(|r| {
                format!(
                    "{} devices: aggregate {:.1} MB/s, {:.1}% of ideal",
                    r.devices,
                    mb(r.aggregate),
                    r.efficiency * 100.0
                )
            })
            .collect(),
    );
    let mut ideal = Series::new(
        format!("ideal: N x {:.1} MB/s", mb(single)),
        Style::Curve,
        rows.iter().map(|r| (n(r), n(r) * mb(single))).collect(),
    );
    ideal.tips = Some(
        rows.iter()
            .map(|r| format!("{} devices: ideal {:.1} MB/s", r.devices, n(r) * mb(single)))
            .collect(),
    );
    c.series.extend([mean, aggregate, ideal]);
    if let Some(k) = rows.iter().find(|r| r.knee) {
        let mut knee = Series::new(
            format!("knee at {} devices", k.devices),
            Style::Points,
            vec![(n(k), mb(k.aggregate))],
        );
        knee.tips = Some(vec![format!(
            "knee: from {} devices, each added device adds less than half a device's rate",
            k.devices
        )]);
        c.series.push(knee);
    }
    c
}

pub(super) fn tables(r: &RunReport) -> Vec<String> {
    let rows = scaling(r);
    let mut cells = Vec::new();
    for (p, f) in r.points.iter().map(|p| (p, figures(p))) {
        if let Some(why) = &p.skipped {
            cells.push(vec![p.label.clone(), "-".into(), format!("skipped: {why}")]);
        }
        for d in &f.devices {
            cells.push(vec![
                p.label.clone(),
                d.path.clone(),
                format!("{:.1}", d.window_rate / 1e6),
                format!("{:.0}", d.window_bytes),
                format!("{:.3}", f.window_ns as f64 / 1e9),
                d.bytes.to_string(),
                format!("{:.3}", d.elapsed_ns as f64 / 1e9),
            ]);
        }
    }
    let mut out = vec![super::table::table(
        "Per device, over the common window (from the start to the first device done; MB/s = 10^6 bytes/s)",
        &[
            "point",
            "device",
            "MB/s",
            "bytes in window",
            "window s",
            "bytes in all",
            "own elapsed s",
        ],
        &cells,
    )];
    if r.points.len() > 1 {
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|s| {
                vec![
                    s.devices.to_string(),
                    format!("{:.1}", s.aggregate / 1e6),
                    format!("{:.1}", s.min / 1e6),
                    format!("{:.1}", s.avg / 1e6),
                    format!("{:.1}", s.max / 1e6),
                    format!("{:.1}%", s.efficiency * 100.0),
                    if s.knee { "knee" } else { "" }.into(),
                ]
            })
            .collect();
        out.push(super::table::table(
            "Scaling (efficiency: aggregate over N x the single-device rate; the knee: the first step whose added devices each add less than half a device's rate)",
            &[
                "N",
                "aggregate MB/s",
                "per-device min",
                "avg",
                "max",
                "efficiency",
                "",
            ],
            &cells,
        ));
    }
    out
}
