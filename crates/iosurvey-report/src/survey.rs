//! Presenters of `iosurvey survey`: sgpdd-survey's summary lines (its
//! current and legacy layouts), one detail line per region, and CSV. Every
//! rate here is MiB/s (2^20 bytes per second), as sgpdd-survey's are, even
//! where its legacy layout labels them `MB/s`.

use iosurvey_model::document::{ClassReport, PointReport, RunReport, StreamReport};
use iosurvey_model::{Op, PointParams};
use std::fmt::Write;

/// The two summary layouts sgpdd-survey has printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// `dev 2 sz ... rsz 1024K crg ... thr ... write X [ min, max]` (LU-3478).
    #[default]
    Current,
    /// `total_size ...K rsz 1024 crg ... thr ... write X MB/s n x min = Y MB/s`.
    Legacy,
}

/// The sweep values of a point, from its typed parameters (crg and thr
/// per device).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepPoint {
    pub rsz: u64,
    pub crg: u32,
    pub thr: u32,
    pub action: Op,
}

impl SweepPoint {
    /// The sweep values of a survey point; `None` for any other point.
    pub fn of(params: &PointParams) -> Option<SweepPoint> {
        match *params {
            PointParams::Survey {
                rsz,
                crg,
                thr,
                action,
            } => Some(SweepPoint {
                rsz,
                crg,
                thr,
                action,
            }),
            _ => None,
        }
    }
}

/// What one point (one action at one rsz, crg, thr) measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionFigures {
    pub point: usize,
    pub sweep: SweepPoint,
    pub devices: usize,
    pub regions: usize,
    /// Bytes the regions cover (what a full pass transfers).
    pub planned_bytes: u64,
    /// Bytes transferred, over every region.
    pub bytes: u64,
    /// From the common start to the last region's last completion.
    pub elapsed_ns: u64,
    /// When the first region finished.
    pub first_done_ns: u64,
    /// `bytes` over `elapsed_ns`, MiB/s.
    pub aggregate: f64,
    /// Per-region MiB/s, each over the region's own time.
    pub min: f64,
    pub max: f64,
    pub sum: f64,
    /// Regions with failed I/O.
    pub failed: usize,
    pub skipped: Option<String>,
    pub interrupted: bool,
}

const MIB: f64 = 1048576.0;

fn mib_per_s(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 / MIB / (ns as f64 / 1e9)
    }
}

fn class(s: &StreamReport, action: Op) -> &ClassReport {
    if action == Op::Write {
        &s.write
    } else {
        &s.read
    }
}

/// The figures of a survey point; `None` for a point that is not one.
pub fn figures(p: &PointReport) -> Option<ActionFigures> {
    let sweep = SweepPoint::of(&p.params)?;
    let rates: Vec<f64> = p
        .streams
        .iter()
        .map(|s| mib_per_s(class(s, sweep.action).bytes, s.elapsed_ns))
        .collect();
    let bytes = p.streams.iter().map(|s| class(s, sweep.action).bytes).sum();
    let fold = |f: fn(f64, f64) -> f64| rates.iter().copied().reduce(f).unwrap_or(0.0);
    Some(ActionFigures {
        point: p.index,
        devices: p.targets.len(),
        regions: p.streams.len(),
        planned_bytes: p.streams.iter().map(|s| s.span.unwrap_or(0)).sum(),
        bytes,
        elapsed_ns: p.elapsed_ns,
        first_done_ns: p.streams.iter().map(|s| s.elapsed_ns).min().unwrap_or(0),
        aggregate: mib_per_s(bytes, p.elapsed_ns),
        min: fold(f64::min),
        max: fold(f64::max),
        sum: rates.iter().sum(),
        failed: p
            .streams
            .iter()
            .filter(|s| !class(s, sweep.action).errors.is_empty())
            .count(),
        skipped: p.skipped.clone(),
        interrupted: p.interrupted,
        sweep,
    })
}

/// The points of a survey, grouped by (rsz, crg, thr): one summary line
/// each, its actions in the order they ran.
pub fn lines(report: &RunReport) -> Vec<Vec<ActionFigures>> {
    let mut out: Vec<Vec<ActionFigures>> = Vec::new();
    for f in report.points.iter().filter_map(figures) {
        let key = |a: &ActionFigures| (a.sweep.rsz, a.sweep.crg, a.sweep.thr);
        match out.last_mut() {
            Some(line) if key(&line[0]) == key(&f) => line.push(f),
            _ => out.push(vec![f]),
        }
    }
    out
}

/// `2026-11-30T00:00:00Z` as `date(1)` prints it: `Mon Nov 30 00:00:00 UTC 2026`.
pub fn date_line(rfc3339: &str) -> String {
    let parsed = (|| {
        let s = rfc3339.strip_suffix('Z')?;
        let (y, m, d) = (
            s.get(0..4)?.parse::<i64>().ok()?,
            s.get(5..7)?.parse::<i64>().ok()?,
            s.get(8..10)?.parse::<i64>().ok()?,
        );
        let time = s.get(11..19)?;
        if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return None;
        }
        // Days since 1970-01-01 (a Thursday), from Howard Hinnant's
        // days_from_civil.
        let yy = if m <= 2 { y - 1 } else { y };
        let era = yy.div_euclid(400);
        let yoe = yy - era * 400;
        let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146097 + doe - 719468;
        const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let wd = DAYS[days.rem_euclid(7) as usize];
        Some(format!(
            "{wd} {} {d:>2} {time} UTC {y}",
            MONTHS[m as usize - 1]
        ))
    })();
    parsed.unwrap_or_else(|| rfc3339.to_string())
}

/// The first line: `<date> sgpdd-survey on <devices> from <host>`.
fn title(report: &RunReport) -> String {
    let devices: Vec<&str> = report
        .points
        .first()
        .map(|p| p.targets.iter().map(|t| t.path.as_str()).collect())
        .unwrap_or_default();
    format!(
        "{} sgpdd-survey on {} from {}",
        date_line(&report.started_at),
        devices.join(" "),
        report.host.hostname
    )
}

/// One action's part of a line, with its trailing blanks, as sgpdd-survey
/// prints them.
fn action_cell(a: &ActionFigures, layout: Layout) -> String {
    let name = a.sweep.action.name();
    if let Some(reason) = &a.skipped {
        return format!("{name} {reason} ");
    }
    if a.failed > 0 {
        return format!("{name} {} failed ", a.failed);
    }
    if a.interrupted {
        return format!("{name} interrupted ");
    }
    match layout {
        Layout::Current => format!(
            "{name} {:7.2}  [ {:7.2}, {:7.2}]  ",
            a.aggregate, a.min, a.max
        ),
        Layout::Legacy => format!(
            "{name} {:7.2} MB/s {:5} x {:6.2} = {:7.2} MB/s ",
            a.aggregate,
            a.regions,
            a.min,
            a.min * a.regions as f64
        ),
    }
}

/// The summary: the title line, then one line per (rsz, crg, thr), with
/// crg and thr summed over devices. Same bytes on stdout and in `.summary`.
pub fn render_summary(report: &RunReport, layout: Layout) -> String {
    let mut out = title(report);
    out.push('\n');
    for line in lines(report) {
        let a = &line[0];
        let n = a.devices as u64;
        let (kib, rsz) = (a.planned_bytes / 1024, a.sweep.rsz / 1024);
        let (crg, thr) = (u64::from(a.sweep.crg) * n, u64::from(a.sweep.thr) * n);
        let _ = match layout {
            Layout::Current => write!(
                out,
                "dev {n:2} sz {kib:8}K rsz {rsz:4}K crg {crg:5} thr {thr:5} "
            ),
            Layout::Legacy => write!(
                out,
                "total_size {kib:8}K rsz {rsz:4} crg {crg:5} thr {thr:5} "
            ),
        };
        // sgpdd-survey's memory check prints ENOMEM once for the line.
        if let Some(reason) = line
            .iter()
            .map(|a| a.skipped.as_deref())
            .reduce(|x, y| if x == y { x } else { None })
            .flatten()
        {
            out.push_str(reason);
        } else {
            line.iter()
                .for_each(|a| out.push_str(&action_cell(a, layout)));
        }
        out.push('\n');
    }
    out
}

/// The detail: one line per region of every point that ran (a comment
/// line for a point that was skipped).
pub fn render_detail(report: &RunReport) -> String {
    let mut out = String::from(
        "# one line per region; secs from the common start to the region's last completion; MiB/s = 2^20 bytes/s\n\
         # point   rsz   crg   thr action device region offset bytes secs MiB/s errors\n",
    );
    for p in &report.points {
        let Some(f) = figures(p) else { continue };
        let w = &f.sweep;
        if let Some(reason) = &p.skipped {
            let _ = writeln!(out, "# point {} {}: {reason}", p.index, p.label);
            continue;
        }
        let mut region = vec![0usize; p.targets.len()];
        for s in &p.streams {
            let c = class(s, w.action);
            let errors: u64 = c.errors.iter().map(|e| e.count).sum();
            let _ = writeln!(
                out,
                "{:7} {:5}K {:5} {:5} {:<6} {} {:6} {:14} {:12} {:10.6} {:9.2} {errors}",
                p.index,
                w.rsz / 1024,
                w.crg,
                w.thr,
                w.action.name(),
                p.targets[s.target].path,
                region[s.target],
                s.offset,
                c.bytes,
                s.elapsed_ns as f64 / 1e9,
                mib_per_s(c.bytes, s.elapsed_ns),
            );
            region[s.target] += 1;
        }
        if p.interrupted {
            let _ = writeln!(out, "# point {} {}: interrupted", p.index, p.label);
        }
    }
    out
}

/// Column names of [`render_survey_csv`]; crg and thr are per device, as
/// given, and rates are MiB/s.
pub const CSV_COLUMNS: [&str; 17] = [
    "point",
    "devices",
    "rsz",
    "crg",
    "thr",
    "action",
    "regions",
    "failed",
    "bytes",
    "elapsed_ns",
    "first_done_ns",
    "aggregate_mib_s",
    "min_mib_s",
    "max_mib_s",
    "sum_mib_s",
    "interrupted",
    "skipped",
];

/// One row per point (one action at one rsz, crg, thr).
pub fn render_survey_csv(report: &RunReport) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(CSV_COLUMNS);
    for f in report.points.iter().filter_map(figures) {
        let _ = w.write_record([
            f.point.to_string(),
            f.devices.to_string(),
            f.sweep.rsz.to_string(),
            f.sweep.crg.to_string(),
            f.sweep.thr.to_string(),
            f.sweep.action.name().into(),
            f.regions.to_string(),
            f.failed.to_string(),
            f.bytes.to_string(),
            f.elapsed_ns.to_string(),
            f.first_done_ns.to_string(),
            format!("{:.3}", f.aggregate),
            format!("{:.3}", f.min),
            format!("{:.3}", f.max),
            format!("{:.3}", f.sum),
            f.interrupted.to_string(),
            f.skipped.clone().unwrap_or_default(),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_values_come_from_typed_parameters_only() {
        let params = PointParams::Survey {
            rsz: 1 << 20,
            crg: 4,
            thr: 16,
            action: Op::Write,
        };
        let p = SweepPoint::of(&params).unwrap();
        assert_eq!((p.rsz, p.crg, p.thr, p.action), (1 << 20, 4, 16, Op::Write));
        assert_eq!(SweepPoint::of(&PointParams::RUN), None);
        assert_eq!(SweepPoint::of(&PointParams::None), None);
    }

    #[test]
    fn dates_print_as_date_does() {
        assert_eq!(
            date_line("2014-10-06T19:07:30Z"),
            "Mon Oct  6 19:07:30 UTC 2014"
        );
        assert_eq!(
            date_line("2026-11-30T00:00:00Z"),
            "Mon Nov 30 00:00:00 UTC 2026"
        );
        assert_eq!(
            date_line("2000-02-29T23:59:59Z"),
            "Tue Feb 29 23:59:59 UTC 2000"
        );
        assert_eq!(
            date_line("1969-12-31T12:00:00Z"),
            "Wed Dec 31 12:00:00 UTC 1969"
        );
        assert_eq!(date_line("yesterday"), "yesterday");
    }
}
