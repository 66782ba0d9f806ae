//! The `survey` plots and tables, as Lustre's `iokit-plot-sgpdd` draws
//! sgpdd-survey: one chart per record size and action, throughput against
//! outstanding I/Os per device (`thr`, log scale), one line per count of
//! concurrent regions per device (`crg`); and the same figures as a pivot.
//! Each figure is the point's aggregate in MiB/s, as the summary prints it
//! ([`crate::survey::figures`]).

use super::chart::{Axis, Chart, Scale, Series, Style};
use super::diskperf::fmt_bytes;
use super::run::fmt_num;
use crate::survey::{figures, ActionFigures};
use iosurvey_model::document::RunReport;
use iosurvey_model::Op;

/// The points of one record size and action, in the order they ran.
struct Group {
    rsz: u64,
    action: Op,
    points: Vec<ActionFigures>,
}

impl Group {
    fn crgs(&self) -> Vec<u32> {
        sorted(self.points.iter().map(|a| a.sweep.crg))
    }

    fn thrs(&self) -> Vec<u32> {
        sorted(self.points.iter().map(|a| a.sweep.thr))
    }

    /// The title both the chart and the table carry.
    fn title(&self) -> String {
        let devices = self.points.first().map_or(0, |a| a.devices);
        format!(
            "sgpdd-survey {}, rsz {}, {devices} device{}",
            self.action.name(),
            fmt_bytes(self.rsz as f64),
            if devices == 1 { "" } else { "s" }
        )
    }
}

fn sorted(v: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = v.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The survey's points grouped by (rsz, action), groups in order of first
/// appearance.
fn groups(r: &RunReport) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for a in r.points.iter().filter_map(figures) {
        let (rsz, action) = (a.sweep.rsz, a.sweep.action);
        match out.iter_mut().find(|g| g.rsz == rsz && g.action == action) {
            Some(g) => g.points.push(a),
            None => out.push(Group {
                rsz,
                action,
                points: vec![a],
            }),
        }
    }
    out
}

/// The figure of a point, or why it has none: sgpdd-survey prints no rate
/// for a skipped point, one with failed regions, or an interrupted one.
fn rate(a: &ActionFigures) -> Result<f64, String> {
    if let Some(why) = &a.skipped {
        Err(why.clone())
    } else if a.failed > 0 {
        Err(format!("{} failed", a.failed))
    } else if a.interrupted {
        Err("interrupted".into())
    } else {
        Ok(a.aggregate)
    }
}

pub(super) fn charts(r: &RunReport) -> Vec<Chart> {
    groups(r).iter().map(chart).collect()
}

fn chart(g: &Group) -> Chart {
    let mut c = Chart::new(
        g.title(),
        Axis::new(
            "outstanding I/Os per device (thr, log2)",
            Scale::Log2,
            fmt_num,
        ),
        Axis::new("throughput (MiB/s, 2^20 bytes/s)", Scale::Linear, fmt_num),
    );
    for crg in g.crgs() {
        let mut pts: Vec<(u32, f64, String)> = g
            .points
            .iter()
            .filter(|a| a.sweep.crg == crg)
            .filter_map(|a| {
                let v = rate(a).ok()?;
                let tip = format!(
                    "crg {crg}, thr {}: {v:.2} MiB/s [{:.2}, {:.2}] per region",
                    a.sweep.thr, a.min, a.max
                );
                Some((a.sweep.thr, v, tip))
            })
            .collect();
        pts.sort_by_key(|p| p.0);
        let (points, tips) = pts
            .into_iter()
            .map(|(thr, v, tip)| ((f64::from(thr), v), tip))
            .unzip();
        let mut s = Series::new(format!("{crg} crg/device"), Style::Line, points);
        s.tips = Some(tips);
        c.series.push(s);
    }
    c
}

pub(super) fn tables(r: &RunReport) -> Vec<String> {
    groups(r).iter().map(pivot).collect()
}

/// Rows crg, columns thr (both per device), aggregate MiB/s.
fn pivot(g: &Group) -> String {
    let thrs = g.thrs();
    let mut head = vec!["crg \\ thr".to_string()];
    head.extend(thrs.iter().map(u32::to_string));
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = g
        .crgs()
        .into_iter()
        .map(|crg| {
            let mut row = vec![crg.to_string()];
            row.extend(thrs.iter().map(|&thr| {
                g.points
                    .iter()
                    .find(|a| a.sweep.crg == crg && a.sweep.thr == thr)
                    .map_or_else(
                        || "-".into(),
                        |a| rate(a).map_or_else(|why| why, |v| format!("{v:.2}")),
                    )
            }));
            row
        })
        .collect();
    super::table::table(
        &format!(
            "{}: aggregate MiB/s (2^20 bytes/s); rows crg, columns thr, both per device",
            g.title()
        ),
        &head,
        &rows,
    )
}
