//! The `profile` presenters (HD Tune, zcav), rebuilt from a report alone:
//! a chart of read rate against position with one row per zone, HD Tune's
//! minimum, maximum and average transfer rate, access time and burst rate,
//! and a CSV of the zones.

use crate::{format_ns, TextOptions};
use iosurvey_model::document::{ClassReport, PointReport, RunReport, StreamReport};
use iosurvey_model::units::format_size;
use iosurvey_model::{PointParams, ProfilePosition};
use std::fmt::Write;

/// Width of the chart's bars: 27 columns of figures before them, 77 in all.
const BAR: usize = 50;

/// One zone: where it starts, how long it is, what was read and at what
/// rate (bytes per second over the stream's elapsed time; `None` when
/// nothing was read).
#[derive(Clone, Debug, PartialEq)]
pub struct ZoneRow {
    pub index: usize,
    pub offset: u64,
    pub span: u64,
    pub bytes: u64,
    pub elapsed_ns: u64,
    pub rate: Option<f64>,
}

/// Access time: random reads of `bs` bytes at QD 1.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessTime {
    pub ops: u64,
    pub bs: u64,
    pub mean_ns: f64,
    pub p99_ns: Option<u64>,
}

/// Burst rate: repeated reads of the first `span` bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Burst {
    pub ops: u64,
    pub bs: u64,
    pub span: u64,
    pub rate: Option<f64>,
}

/// The first stream of every point whose position `want` accepts.
fn streams(
    report: &RunReport,
    want: fn(&ProfilePosition) -> bool,
) -> impl Iterator<Item = (&PointReport, &StreamReport)> + '_ {
    report.points.iter().filter_map(move |p| match &p.params {
        PointParams::Profile { position } if want(position) => Some((p, p.streams.first()?)),
        _ => None,
    })
}

fn zone(q: &ProfilePosition) -> bool {
    matches!(q, ProfilePosition::Zone { .. })
}

fn access(q: &ProfilePosition) -> bool {
    matches!(q, ProfilePosition::Access)
}

fn burst_area(q: &ProfilePosition) -> bool {
    matches!(q, ProfilePosition::Burst { .. })
}

pub(crate) fn rate(c: &ClassReport, elapsed_ns: u64) -> Option<f64> {
    (c.ops > 0 && elapsed_ns > 0).then(|| c.bytes as f64 * 1e9 / elapsed_ns as f64)
}

/// The zones, in position order, from the zone points' streams.
pub fn profile_zones(report: &RunReport) -> Vec<ZoneRow> {
    streams(report, zone)
        .enumerate()
        .map(|(index, (_, s))| ZoneRow {
            index,
            offset: s.offset,
            span: s.span.unwrap_or(0),
            bytes: s.read.bytes,
            elapsed_ns: s.elapsed_ns,
            rate: rate(&s.read, s.elapsed_ns),
        })
        .collect()
}

/// The access-time point's figures, if it ran.
pub fn access_time(report: &RunReport) -> Option<AccessTime> {
    let (_, s) = streams(report, access).next()?;
    (s.read.ops > 0).then(|| AccessTime {
        ops: s.read.ops,
        bs: s.bs,
        mean_ns: s.read.latency.mean_ns,
        p99_ns: s.read.latency.at(99.0),
    })
}

/// The burst point's figures, if it ran.
pub fn burst(report: &RunReport) -> Option<Burst> {
    let (_, s) = streams(report, burst_area).next()?;
    Some(Burst {
        ops: s.read.ops,
        bs: s.bs,
        span: s.span.unwrap_or(0),
        rate: rate(&s.read, s.elapsed_ns),
    })
}

/// The unit positions are shown in, picked once from the device's size so
/// every row uses the same one.
pub(crate) fn position_unit(end: u64, opts: TextOptions) -> (&'static str, f64, usize) {
    let e = end as f64;
    match (opts.mib, e) {
        (false, e) if e >= 1e10 => ("GB", 1e9, 2),
        (false, e) if e >= 1e7 => ("MB", 1e6, 1),
        (false, _) => ("kB", 1e3, 1),
        (true, e) if e >= 10.0 * 1073741824.0 => ("GiB", 1073741824.0, 2),
        (true, e) if e >= 10.0 * 1048576.0 => ("MiB", 1048576.0, 1),
        (true, _) => ("KiB", 1024.0, 1),
    }
}

fn header(out: &mut String, report: &RunReport, zones: &[ZoneRow], opts: TextOptions) {
    let _ = writeln!(out, "iosurvey profile");
    let Some((p, s)) = streams(report, zone).next() else {
        return;
    };
    let members: Vec<usize> = s
        .array
        .as_ref()
        .map_or(vec![s.target], |a| a.members.clone());
    let names: Vec<String> = members
        .iter()
        .filter_map(|&m| p.targets.get(m))
        .map(|t| format!("{} ({} bytes)", t.path, t.size_bytes))
        .collect();
    let what = match &s.array {
        Some(a) => format!("array ({}) of ", layout_name(a)),
        None => String::new(),
    };
    let _ = writeln!(out, "target {what}{}", names.join(" + "));
    let end = zones.last().map_or(0, |z| z.offset + z.span);
    let set = &p.settings;
    let per_zone = match (set.time_ns, set.bytes) {
        (Some(t), _) => format!("{} s (at most the zone)", t as f64 / 1e9),
        (None, Some(b)) => format!("{b} bytes"),
        (None, None) => "the whole zone".into(),
    };
    let _ = writeln!(
        out,
        "{} zones over {end} bytes, {} reads at QD {}, engine {}, {}",
        zones.len(),
        format_size(s.bs),
        s.outstanding,
        set.engine,
        if set.direct { "O_DIRECT" } else { "buffered" }
    );
    let (u, _) = opts.rate_unit();
    let per = if opts.mib { "2^20" } else { "10^6" };
    let _ = writeln!(
        out,
        "read per zone: {per_zone}; rates in {u} ({per} bytes/s)"
    );
}

fn layout_name(a: &iosurvey_model::document::ArrayReport) -> String {
    match a.layout {
        iosurvey_model::Layout::Concat => "concat".into(),
        iosurvey_model::Layout::Raid0 { stripe } => format!("raid0, stripe {stripe}"),
    }
}

/// One row per zone: index, start, rate and a bar scaled to the fastest.
fn chart(out: &mut String, zones: &[ZoneRow], opts: TextOptions) {
    let (u, per) = opts.rate_unit();
    let end = zones.last().map_or(0, |z| z.offset + z.span);
    let (pu, pdiv, pdec) = position_unit(end, opts);
    let max = zones.iter().filter_map(|z| z.rate).fold(0.0, f64::max) / per;
    let top = format!("{max:.1}");
    let _ = writeln!(
        out,
        "{:>4}  {:>9}  {:>8}  0{top:>w$}",
        "zone",
        format!("at {pu}"),
        u,
        w = BAR - 1
    );
    for z in zones {
        let at = format!("{:.*}", pdec, z.offset as f64 / pdiv);
        match z.rate {
            Some(r) => {
                let v = r / per;
                let n = if max > 0.0 {
                    ((v / max) * BAR as f64).round() as usize
                } else {
                    0
                };
                let _ = writeln!(out, "{:>4}  {at:>9}  {v:>8.1}  {}", z.index, "#".repeat(n));
            }
            None => {
                let _ = writeln!(out, "{:>4}  {at:>9}  {:>8}", z.index, "-");
            }
        }
    }
}

fn summary(out: &mut String, report: &RunReport, zones: &[ZoneRow], opts: TextOptions) {
    let (u, per) = opts.rate_unit();
    let rated: Vec<(&ZoneRow, f64)> = zones
        .iter()
        .filter_map(|z| z.rate.map(|r| (z, r)))
        .collect();
    let end = zones.last().map_or(0, |z| z.offset + z.span);
    let (pu, pdiv, pdec) = position_unit(end, opts);
    let pick = |better: fn(f64, f64) -> bool| {
        rated
            .iter()
            .copied()
            .reduce(|a, b| if better(b.1, a.1) { b } else { a })
    };
    let lines = [
        ("Minimum", pick(|b, a| b < a)),
        ("Maximum", pick(|b, a| b > a)),
    ];
    for (name, best) in lines {
        if let Some((z, r)) = best {
            let _ = writeln!(
                out,
                "Transfer Rate {name} : {:.1} {u} (zone {} at {:.*} {pu})",
                r / per,
                z.index,
                pdec,
                z.offset as f64 / pdiv
            );
        }
    }
    if !rated.is_empty() {
        let avg = rated.iter().map(|r| r.1).sum::<f64>() / rated.len() as f64;
        let _ = writeln!(
            out,
            "Transfer Rate Average : {:.1} {u} (mean of {} zones)",
            avg / per,
            rated.len()
        );
    }
    if let Some(a) = access_time(report) {
        let p99 = a.p99_ns.map_or("-".into(), |n| format_ns(n as f64));
        let _ = writeln!(
            out,
            "Access Time           : {} mean, {p99} p99 ({} random {} reads)",
            format_ns(a.mean_ns),
            a.ops,
            format_size(a.bs)
        );
    }
    if let Some(b) = burst(report) {
        let r = b.rate.map_or("-".into(), |r| format!("{:.1} {u}", r / per));
        let _ = writeln!(
            out,
            "Burst Rate            : {r} ({} x {} reads of the first {})",
            b.ops,
            format_size(b.bs),
            format_size(b.span)
        );
    }
    // The workers' own CPU time over the zones' measured time: the
    // process's figure also holds each point's setup and wind-down, which
    // outweigh a zone read in milliseconds.
    let (cpu, elapsed) = streams(report, zone).fold((0, 0), |(c, e), (p, s)| {
        (c + p.cpu_workers_ns, e + s.elapsed_ns)
    });
    if elapsed > 0 {
        let _ = writeln!(
            out,
            "CPU Usage             : {:.1}% of one core (reading the zones)",
            cpu as f64 / elapsed as f64 * 100.0
        );
    }
}

/// Interruptions, failed I/Os and (once each) warnings.
fn footer(out: &mut String, report: &RunReport) {
    crate::card::interruptions_and_failures(out, report);
    crate::warnings::warnings_once(out, report, "warning: ");
}

/// Renders a `profile` report: a header, the chart (one row per zone),
/// then HD Tune's summary lines.
pub fn render_profile(report: &RunReport, opts: TextOptions) -> String {
    let zones = profile_zones(report);
    let mut out = String::new();
    header(&mut out, report, &zones, opts);
    let _ = writeln!(out);
    chart(&mut out, &zones, opts);
    let _ = writeln!(out);
    summary(&mut out, report, &zones, opts);
    footer(&mut out, report);
    out
}

/// The zones as CSV: index, offset and span in bytes, bytes read, elapsed
/// nanoseconds and MB/s (10^6), empty when the zone read nothing.
pub fn render_profile_csv(report: &RunReport) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(["zone", "offset", "span", "bytes", "elapsed_ns", "mb_per_s"]);
    for z in profile_zones(report) {
        let _ = w.write_record([
            z.index.to_string(),
            z.offset.to_string(),
            z.span.to_string(),
            z.bytes.to_string(),
            z.elapsed_ns.to_string(),
            z.rate.map_or(String::new(), |r| format!("{:.3}", r / 1e6)),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
