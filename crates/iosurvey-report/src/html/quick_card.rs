//! The `quick` card as a bar chart, as CrystalDiskMark draws it: one row
//! per test of the card (whatever the profile's tests are), its read and
//! its write side by side, each bar as long as its MB/s and labelled with
//! its MB/s and IOPS; each bar's tooltip adds the latency percentiles.

use super::drawn::{open, text};
use super::run::fmt_ns;
use super::text_size::{text_width, MIN_FONT_PX};
use iosurvey_model::document::{ClassReport, RunReport};
use iosurvey_model::{Op, PointParams};
use std::fmt::Write as _;

/// The read and write colours, the first two of the charts' palette.
const READ: &str = "#0072B2";
const WRITE: &str = "#D55E00";

pub(super) const WIDTH: f64 = super::chart::WIDTH as f64;
/// The font of the tests' names.
const NAME_PX: f64 = 14.0;
const ROW: f64 = 46.0;
const TOP: f64 = 64.0;
const GAP: f64 = 16.0;

/// One test of the card: its name, and its read and write classes (with
/// I/O done).
type Row<'a> = (&'a str, Option<&'a ClassReport>, Option<&'a ClassReport>);

/// The card's tests in the order they ran, as the text card lists them.
fn rows(r: &RunReport) -> Vec<Row<'_>> {
    let mut rows: Vec<Row<'_>> = Vec::new();
    for p in r.points.iter().filter(|p| p.skipped.is_none()) {
        let PointParams::Quick { test, op } = &p.params else {
            continue;
        };
        let i = match rows.iter().position(|r| r.0 == test) {
            Some(i) => i,
            None => {
                rows.push((test, None, None));
                rows.len() - 1
            }
        };
        match op {
            Op::Read => rows[i].1 = Some(&p.total.read).filter(|c| c.ops > 0),
            Op::Write => rows[i].2 = Some(&p.total.write).filter(|c| c.ops > 0),
            // The quick card's tests never discard.
            Op::Trim => {}
        }
    }
    rows.retain(|r| r.1.is_some() || r.2.is_some());
    rows
}

/// A bar's label: its MB/s and IOPS.
fn label(c: &ClassReport) -> String {
    format!("{:.2} MB/s, {:.0} IOPS", c.bytes_per_sec / 1e6, c.iops)
}

/// The card as an SVG, `None` for a report with no test of a card.
pub(super) fn card(r: &RunReport) -> Option<String> {
    let rows = rows(r);
    if rows.is_empty() {
        return None;
    }
    let height = TOP + ROW * rows.len() as f64 + 16.0;
    // Left of the bars, the tests' names (as long as a profile's are).
    let names = rows
        .iter()
        .map(|r| text_width(r.0, NAME_PX))
        .fold(100.0, f64::max)
        + 24.0;
    let col = (WIDTH - names - 12.0 - GAP) / 2.0;
    let top = rows
        .iter()
        .flat_map(|r| [r.1, r.2])
        .flatten()
        .map(|c| c.bytes_per_sec)
        .fold(0.0, f64::max);
    let mut s = open(
        WIDTH,
        height,
        "The card: MB/s (10^6 bytes/s) and IOPS per test",
    );
    for (k, (name, dir)) in [("Read", READ), ("Write", WRITE)].into_iter().enumerate() {
        let x = names + k as f64 * (col + GAP);
        text(&mut s, x, TOP - 12.0, 14.0, "start", dir, name);
    }
    for (i, (name, read, write)) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        text(&mut s, 12.0, y + 28.0, NAME_PX, "start", "#000000", name);
        for (k, (class, colour, dir)) in [(read, READ, "read"), (write, WRITE, "write")]
            .into_iter()
            .enumerate()
        {
            let x = names + k as f64 * (col + GAP);
            let Some(c) = class else {
                text(
                    &mut s,
                    x,
                    y + 20.0,
                    MIN_FONT_PX,
                    "start",
                    "#555555",
                    "not run",
                );
                continue;
            };
            let len = if top > 0.0 {
                (c.bytes_per_sec / top * col).max(1.0)
            } else {
                1.0
            };
            let tip = format!(
                "{name} {dir}: {}, mean {}, p50 {}, p99 {}",
                label(c),
                fmt_ns(c.latency.mean_ns),
                c.latency.at(50.0).map_or("-".into(), |v| fmt_ns(v as f64)),
                c.latency.at(99.0).map_or("-".into(), |v| fmt_ns(v as f64)),
            );
            let _ = write!(
                s,
                "<g><title>{}</title><rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{len:.1}\" height=\"16\" fill=\"{colour}\"/>",
                super::escape(&tip),
                y + 22.0
            );
            text(&mut s, x, y + 17.0, 13.0, "start", "#000000", &label(c));
            s.push_str("</g>");
        }
    }
    s.push_str("</svg>");
    Some(s)
}
