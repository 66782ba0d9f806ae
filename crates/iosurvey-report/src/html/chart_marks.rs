//! What a chart draws at each of a series' points: a marker of the
//! series' shape, and its interval as a whisker.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

type Cartesian = Cartesian2d<RangedCoordf64, RangedCoordf64>;

/// Each point's interval as a vertical whisker with a cap at either end,
/// under its marker.
pub(super) fn whiskers<DB: DrawingBackend>(
    cc: &mut ChartContext<'_, DB, Cartesian>,
    points: &[(f64, f64)],
    intervals: &[Option<(f64, f64)>],
    c: RGBColor,
    on_x: impl Fn(f64) -> Option<f64>,
    on_y: impl Fn(f64) -> Option<f64>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = c.stroke_width(2);
    for (&(x, _), w) in points.iter().zip(intervals) {
        let Some((lo, hi)) = *w else { continue };
        let (Some(x), Some(lo), Some(hi)) = (on_x(x), on_y(lo), on_y(hi)) else {
            continue;
        };
        cc.draw_series(std::iter::once(PathElement::new(
            vec![(x, lo), (x, hi)],
            style,
        )))?;
        for y in [lo, hi] {
            cc.draw_series(std::iter::once(
                EmptyElement::at((x, y)) + PathElement::new(vec![(-7, 0), (7, 0)], style),
            ))?;
        }
    }
    Ok(())
}

/// Marker `k` (circle, triangle, square, cross) of colour `c` at each of
/// `pts`: shapes as well as colours tell the series apart in print.
pub(super) fn markers<DB: DrawingBackend>(
    cc: &mut ChartContext<'_, DB, Cartesian>,
    pts: &[(f64, f64, usize)],
    k: usize,
    c: RGBColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let at = pts.iter().map(|p| (p.0, p.1));
    match k {
        0 => cc.draw_series(at.map(|p| Circle::new(p, 4, c.filled())))?,
        1 => cc.draw_series(at.map(|p| TriangleMarker::new(p, 5, c.filled())))?,
        2 => cc.draw_series(
            at.map(|p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], c.filled())),
        )?,
        _ => cc.draw_series(at.map(|p| Cross::new(p, 4, c.stroke_width(2))))?,
    };
    Ok(())
}
