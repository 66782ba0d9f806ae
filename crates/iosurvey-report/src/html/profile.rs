//! The `profile` plots and tables (HD Tune, zcav): the read rate of every
//! zone against its place on the device, with HD Tune's minimum, average
//! and maximum as lines; the access times as percentiles (the report keeps
//! their distribution, not where each read landed); the burst rate beside
//! the sustained ones. Points are found by their typed position.

use super::chart::{Axis, Chart, Scale, Series, Style};
use super::run::{fmt_ns, fmt_num, fmt_pct};
use crate::profile::{position_unit, rate};
use crate::{format_ns, TextOptions};
use iosurvey_model::document::{ClassReport, PointReport, RunReport, StreamReport};
use iosurvey_model::{PointParams, ProfilePosition};
use iosurvey_stats::Histogram;

/// One zone as measured: where it lies and its read rate in bytes/s.
struct Zone {
    index: u32,
    offset: u64,
    len: u64,
    bytes: u64,
    elapsed_ns: u64,
    rate: Option<f64>,
}

/// The first stream of every point at `want` position, with the position.
fn at<'a>(
    r: &'a RunReport,
    want: fn(&ProfilePosition) -> bool,
) -> impl Iterator<Item = (&'a PointReport, ProfilePosition, &'a StreamReport)> + 'a {
    r.points.iter().filter_map(move |p| match p.params {
        PointParams::Profile { position } if want(&position) => {
            Some((p, position, p.streams.first()?))
        }
        _ => None,
    })
}

fn zones(r: &RunReport) -> Vec<Zone> {
    let mut z: Vec<Zone> = at(r, |q| matches!(q, ProfilePosition::Zone { .. }))
        .filter_map(|(p, q, s)| {
            let ProfilePosition::Zone { index, offset, len } = q else {
                return None;
            };
            Some(Zone {
                index,
                offset,
                len,
                bytes: s.read.bytes,
                elapsed_ns: s.elapsed_ns,
                rate: p
                    .skipped
                    .is_none()
                    .then(|| rate(&s.read, s.elapsed_ns))
                    .flatten(),
            })
        })
        .collect();
    z.sort_by_key(|z| z.offset);
    z
}

/// The access-time point's reads, if it ran.
fn access(r: &RunReport) -> Option<(&StreamReport, &ClassReport)> {
    at(r, |q| *q == ProfilePosition::Access)
        .map(|(_, _, s)| (s, &s.read))
        .find(|(_, c)| c.ops > 0)
}

/// The burst point: its stream, request size, area and rate (bytes/s).
fn burst(r: &RunReport) -> Option<(&StreamReport, u64, u64, Option<f64>)> {
    at(r, |q| matches!(q, ProfilePosition::Burst { .. })).find_map(|(_, q, s)| match q {
        ProfilePosition::Burst { bs, area } => Some((s, bs, area, rate(&s.read, s.elapsed_ns))),
        _ => None,
    })
}

/// HD Tune's minimum, maximum and average (of the zones' rates) in bytes/s,
/// each with its zone (none for the average).
fn extremes(zones: &[Zone]) -> Option<[(f64, Option<&Zone>); 3]> {
    let rated: Vec<(&Zone, f64)> = zones.iter().filter_map(|z| Some((z, z.rate?))).collect();
    let first = *rated.first()?;
    let min = rated
        .iter()
        .copied()
        .fold(first, |a, b| if b.1 < a.1 { b } else { a });
    let max = rated
        .iter()
        .copied()
        .fold(first, |a, b| if b.1 > a.1 { b } else { a });
    let avg = rated.iter().map(|r| r.1).sum::<f64>() / rated.len() as f64;
    Some([(min.1, Some(min.0)), (avg, None), (max.1, Some(max.0))])
}

/// The end of the area the zones cover, and the unit positions are shown in.
fn unit(zones: &[Zone]) -> (u64, &'static str, f64, usize) {
    let end = zones.iter().map(|z| z.offset + z.len).max().unwrap_or(0);
    let (u, div, dec) = position_unit(end, TextOptions { mib: false });
    (end, u, div, dec)
}

pub(super) fn charts(r: &RunReport) -> Vec<Chart> {
    let zones = zones(r);
    vec![
        transfer(&zones),
        access_chart(r),
        scatter(&zones, r),
        rates(&zones, r),
    ]
}

/// HD Tune's access-time scatter: each random read's time against where
/// it read (the reads an access point kept, all of them as it runs them).
fn scatter(zones: &[Zone], r: &RunReport) -> Chart {
    let (end, u, div, _) = unit(zones);
    let (u, div) = if end == 0 {
        // No zone to take a unit from: the reads' own span.
        let far = access(r).map_or(0, |(s, _)| {
            s.samples.iter().map(|x| x[0]).max().unwrap_or(0)
        });
        let (u, div, _) = position_unit(far, TextOptions { mib: false });
        (u, div)
    } else {
        (u, div)
    };
    let mut c = Chart::new(
        "Access time against position",
        Axis::new(format!("position ({u})"), Scale::Linear, fmt_num),
        Axis::new("access time", Scale::Log10, fmt_ns),
    );
    let Some((s, _)) = access(r) else {
        return c;
    };
    let points = s
        .samples
        .iter()
        .map(|&[offset, ns]| (offset as f64 / div, ns as f64))
        .collect();
    let tips = s
        .samples
        .iter()
        .map(|&[offset, ns]| format!("offset {offset}: {}", fmt_ns(ns as f64)))
        .collect();
    let mut series = Series::new("read", Style::Points, points);
    series.tips = Some(tips);
    c.series.push(series);
    c
}

fn transfer(zones: &[Zone]) -> Chart {
    let (_, u, div, dec) = unit(zones);
    let mut c = Chart::new(
        "Transfer rate against position",
        Axis::new(format!("zone start ({u})"), Scale::Linear, fmt_num),
        Axis::new("read rate (MB/s, 10^6 bytes/s)", Scale::Linear, fmt_num),
    );
    let rated: Vec<&Zone> = zones.iter().filter(|z| z.rate.is_some()).collect();
    let points = rated
        .iter()
        .map(|z| (z.offset as f64 / div, z.rate.unwrap_or(0.0) / 1e6))
        .collect();
    let tips = rated
        .iter()
        .map(|z| {
            format!(
                "zone {}: {:.*} to {:.*} {u}, {:.1} MB/s",
                z.index,
                dec,
                z.offset as f64 / div,
                dec,
                (z.offset + z.len) as f64 / div,
                z.rate.unwrap_or(0.0) / 1e6
            )
        })
        .collect();
    // Markers while they stay apart; a plain curve for a fine profile.
    let style = if rated.len() <= 100 {
        Style::Line
    } else {
        Style::Curve
    };
    let mut s = Series::new("read rate", style, points);
    s.tips = Some(tips);
    c.series.push(s);
    if let Some(e) = extremes(zones) {
        for ((v, _), name) in e.iter().zip(["minimum", "average", "maximum"]) {
            c.hlines.push((v / 1e6, name.to_string()));
        }
    }
    c
}

/// The access times' percentiles, up to what their count can tell, with
/// the mean as a line.
fn access_chart(r: &RunReport) -> Chart {
    let what = access(r).map_or(String::new(), |(s, c)| {
        format!(
            " ({} random {}-byte reads, QD {})",
            c.ops, s.bs, s.outstanding
        )
    });
    let mut chart = Chart::new(
        format!("Access time percentiles{what}"),
        Axis::new("percentile (%)", Scale::Nines, fmt_pct),
        Axis::new("access time", Scale::Log10, fmt_ns),
    );
    let Some((_, c)) = access(r) else {
        return chart;
    };
    let h = Histogram::from_data(&c.histogram);
    if h.count() > 0 {
        let pts = super::run::nines_curve(&h);
        let tips = pts
            .iter()
            .map(|&(p, ns)| format!("{}: {}", fmt_pct(p), fmt_ns(ns)))
            .collect();
        let mut series = Series::new("access time", Style::Curve, pts);
        series.tips = Some(tips);
        chart.series.push(series);
        chart.hlines.push((c.latency.mean_ns, "mean".into()));
    }
    chart
}

/// HD Tune's side panel as bars: the sustained minimum, average and
/// maximum beside the burst rate. Empty without a burst point.
fn rates(zones: &[Zone], r: &RunReport) -> Chart {
    let mut c = Chart::new(
        "Burst rate beside the sustained rates",
        Axis::new("rate", Scale::Linear, fmt_num),
        Axis::new("MB/s (10^6 bytes/s)", Scale::Linear, fmt_num),
    );
    let Some((_, _, _, Some(b))) = burst(r) else {
        return c;
    };
    let mut bars: Vec<(&str, f64)> = Vec::new();
    if let Some([min, avg, max]) = extremes(zones) {
        bars.extend([("minimum", min.0), ("average", avg.0), ("maximum", max.0)]);
    }
    bars.push(("burst", b));
    c.categories = bars.iter().map(|(n, _)| n.to_string()).collect();
    let pts = bars
        .iter()
        .enumerate()
        .map(|(i, (_, v))| (i as f64, v / 1e6))
        .collect();
    let mut s = Series::new("MB/s", Style::Bars, pts);
    s.tips = Some(
        bars.iter()
            .map(|(n, v)| format!("{n}: {:.1} MB/s", v / 1e6))
            .collect(),
    );
    c.series.push(s);
    c
}

pub(super) fn tables(r: &RunReport) -> Vec<String> {
    let zones = zones(r);
    let mut out = Vec::new();
    let (end, u, div, dec) = unit(&zones);
    if !zones.is_empty() {
        let rows: Vec<Vec<String>> = zones
            .iter()
            .map(|z| {
                vec![
                    z.index.to_string(),
                    format!("{:.*}", dec, z.offset as f64 / div),
                    format!("{:.*}", dec, z.len as f64 / div),
                    format!("{:.1}", z.offset as f64 * 100.0 / end.max(1) as f64),
                    z.bytes.to_string(),
                    format!("{:.3}", z.elapsed_ns as f64 / 1e9),
                    z.rate.map_or("-".into(), |v| format!("{:.1}", v / 1e6)),
                ]
            })
            .collect();
        let start = format!("start ({u})");
        let len = format!("length ({u})");
        out.push(super::table::table(
            "Zones",
            &[
                "zone",
                &start,
                &len,
                "start (% of area)",
                "bytes read",
                "seconds",
                "MB/s",
            ],
            &rows,
        ));
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    if let Some(e) = extremes(&zones) {
        for ((v, z), name) in e.iter().zip(["minimum", "average", "maximum"]) {
            let at = match z {
                Some(z) => format!("zone {} at {:.*} {u}", z.index, dec, z.offset as f64 / div),
                None => format!(
                    "mean of {} zones",
                    zones.iter().filter(|z| z.rate.is_some()).count()
                ),
            };
            rows.push(vec![
                format!("transfer rate {name}"),
                format!("{:.1} MB/s", v / 1e6),
                at,
            ]);
        }
    }
    if let Some((s, c)) = access(r) {
        let l = &c.latency;
        let pct = |p: f64| l.at(p).map_or("-".into(), |v| format_ns(v as f64));
        rows.push(vec![
            "access time".into(),
            format!("{} mean", format_ns(l.mean_ns)),
            format!(
                "p50 {}, p99 {}, max {} ({} random {}-byte reads)",
                pct(50.0),
                pct(99.0),
                format_ns(l.max_ns as f64),
                c.ops,
                s.bs
            ),
        ]);
    }
    if let Some((s, bs, area, b)) = burst(r) {
        rows.push(vec![
            "burst rate".into(),
            b.map_or("-".into(), |b| format!("{:.1} MB/s", b / 1e6)),
            format!("{} x {bs}-byte reads of the first {area} bytes", s.read.ops),
        ]);
    }
    if !rows.is_empty() {
        out.push(super::table::table(
            "HD Tune's figures",
            &["figure", "value", "where"],
            &rows,
        ));
    }
    out
}
