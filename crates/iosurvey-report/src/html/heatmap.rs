//! The `matrix` grid as heatmaps: outstanding small I/Os across,
//! outstanding large I/Os down, each cell coloured by its figure (small
//! IOPS, large MB/s or mean small latency) on a scale the legend gives,
//! with the figure written in the cell when it fits and always in the
//! cell's tooltip. A failed cell says FAILED; a cell not run is left
//! blank.

use super::drawn::{open, text};
use super::run::fmt_num;
use super::text_size::{text_width, MIN_FONT_PX};
use crate::matrix::{Cell, FAILED};
use std::fmt::Write as _;

/// One heatmap: its title, and the cell's figure it colours by.
pub(super) struct Heat {
    pub title: &'static str,
    pub unit: &'static str,
    pub figure: fn(&Cell) -> Option<f64>,
    /// Which load's cells hold the figure (small for IOPS and latency,
    /// large for MB/s): a failed cell is shown where that load ran.
    pub small: bool,
}

/// The light and dark ends of the colour scale: from near white to the
/// first series' blue.
const LOW: (f64, f64, f64) = (240.0, 247.0, 252.0);
const HIGH: (f64, f64, f64) = (0.0, 114.0, 178.0);

/// The colour of `t` (0 to 1) along the scale.
fn colour(t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    format!(
        "#{:02X}{:02X}{:02X}",
        mix(LOW.0, HIGH.0),
        mix(LOW.1, HIGH.1),
        mix(LOW.2, HIGH.2)
    )
}

const WIDTH: f64 = super::chart::WIDTH as f64;
const LEFT: f64 = 96.0;
const TOP: f64 = 44.0;
const LEGEND: f64 = 130.0;
const CELL_H: f64 = 30.0;
const BOTTOM: f64 = 56.0;

/// The heatmap of `cells` by `heat`, `None` when no cell holds its figure.
pub(super) fn heatmap(cells: &[Cell], heat: &Heat) -> Option<String> {
    let shown: Vec<&Cell> = cells
        .iter()
        .filter(|c| {
            let level = if heat.small { c.small } else { c.large };
            (heat.figure)(c).is_some() || (c.failed.is_some() && level > 0)
        })
        .collect();
    if !shown.iter().any(|c| (heat.figure)(c).is_some()) {
        return None;
    }
    let levels = |f: fn(&Cell) -> u32| {
        let mut v: Vec<u32> = shown.iter().map(|c| f(c)).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (small, large) = (levels(|c| c.small), levels(|c| c.large));
    let values = shown.iter().filter_map(|c| (heat.figure)(c));
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let at = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
    let cell_w = (WIDTH - LEFT - LEGEND) / small.len() as f64;
    let height = TOP + CELL_H * large.len() as f64 + BOTTOM;
    let mut s = open(WIDTH, height, heat.title);
    // Large levels down, from the lowest at the top, as ORION's tables.
    for (j, l) in large.iter().enumerate() {
        let y = TOP + CELL_H * j as f64;
        text(
            &mut s,
            LEFT - 8.0,
            y + CELL_H / 2.0 + 5.0,
            MIN_FONT_PX,
            "end",
            "#000000",
            &l.to_string(),
        );
        for (i, sm) in small.iter().enumerate() {
            let x = LEFT + cell_w * i as f64;
            let Some(c) = shown.iter().find(|c| c.small == *sm && c.large == *l) else {
                continue;
            };
            let (fill, words, ink) = match ((heat.figure)(c), &c.failed) {
                (_, Some(why)) => (
                    "#BBBBBB".to_string(),
                    (FAILED.to_string(), why.clone()),
                    "#000000",
                ),
                (Some(v), None) => {
                    let t = at(v);
                    let ink = if t > 0.55 { "#FFFFFF" } else { "#000000" };
                    (
                        colour(t),
                        (fmt_num(v), format!("{} {}", fmt_num(v), heat.unit)),
                        ink,
                    )
                }
                (None, None) => continue,
            };
            let _ = write!(
                s,
                "<g><title>small {sm}, large {l}: {}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{CELL_H}\" fill=\"{fill}\" stroke=\"#FFFFFF\"/>",
                super::escape(&words.1),
                cell_w
            );
            if text_width(&words.0, MIN_FONT_PX) + 4.0 <= cell_w {
                text(
                    &mut s,
                    x + cell_w / 2.0,
                    y + CELL_H / 2.0 + 5.0,
                    MIN_FONT_PX,
                    "middle",
                    ink,
                    &words.0,
                );
            }
            s.push_str("</g>");
        }
    }
    let bottom = TOP + CELL_H * large.len() as f64;
    // Column labels, thinned to those that fit side by side.
    let widest = small
        .iter()
        .map(|v| text_width(&v.to_string(), MIN_FONT_PX))
        .fold(0.0, f64::max);
    let every = ((widest + 6.0) / cell_w).ceil().max(1.0) as usize;
    for (i, sm) in small.iter().enumerate().filter(|(i, _)| i % every == 0) {
        let x = LEFT + cell_w * (i as f64 + 0.5);
        text(
            &mut s,
            x,
            bottom + 18.0,
            MIN_FONT_PX,
            "middle",
            "#000000",
            &sm.to_string(),
        );
    }
    let mid = LEFT + (WIDTH - LEFT - LEGEND) / 2.0;
    text(
        &mut s,
        mid,
        bottom + 40.0,
        13.0,
        "middle",
        "#000000",
        "outstanding small I/Os (across), large I/Os (down)",
    );
    text(
        &mut s,
        12.0,
        TOP - 8.0,
        MIN_FONT_PX,
        "start",
        "#000000",
        "large \\ small",
    );
    legend(&mut s, heat, (lo, hi), bottom);
    s.push_str("</svg>");
    Some(s)
}

/// The scale at the right: five steps from the lowest figure to the
/// highest, each with its value.
fn legend(s: &mut String, heat: &Heat, (lo, hi): (f64, f64), bottom: f64) {
    let x = WIDTH - LEGEND + 16.0;
    text(s, x, TOP - 6.0, MIN_FONT_PX, "start", "#000000", heat.unit);
    let steps = 5u32;
    let h = ((bottom - TOP) / f64::from(steps)).clamp(14.0, 24.0);
    for k in 0..steps {
        // The highest at the top.
        let t = 1.0 - f64::from(k) / f64::from(steps - 1);
        let v = lo + (hi - lo) * t;
        let y = TOP + h * f64::from(k);
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"18\" height=\"{h:.1}\" fill=\"{}\"/>",
            colour(t)
        );
        text(
            s,
            x + 24.0,
            y + h / 2.0 + 4.0,
            MIN_FONT_PX,
            "start",
            "#000000",
            &fmt_num(v),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_runs_from_light_to_the_first_series_blue() {
        assert_eq!(colour(1.0), "#0072B2");
        assert_eq!(colour(0.0), "#F0F7FC");
        assert_eq!(colour(7.0), "#0072B2", "clamped");
    }
}
