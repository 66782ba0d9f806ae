//! Figures laid out by hand, not by plotters (the quick card's bars, the
//! matrix heatmaps): the SVG's frame and its text.

use super::chart::escape;
use std::fmt::Write as _;

/// The opening of an SVG of `w` × `h` (with a white ground and its
/// title), to be closed with `</svg>`.
pub fn open(w: f64, h: f64, title: &str) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" xmlns=\"http://www.w3.org/2000/svg\">\
         <rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#FFFFFF\"/>"
    );
    text(&mut s, w / 2.0, 22.0, 17.0, "middle", "#000000", title);
    s
}

/// A line of text at (`x`, `y`) (its baseline), anchored `start`, `middle`
/// or `end`.
pub fn text(s: &mut String, x: f64, y: f64, px: f64, anchor: &str, fill: &str, t: &str) {
    let _ = write!(
        s,
        "<text x=\"{x:.1}\" y=\"{y:.1}\" font-family=\"sans-serif\" font-size=\"{px}\" \
         text-anchor=\"{anchor}\" fill=\"{fill}\">{}</text>",
        escape(t)
    );
}
