//! Figures laid out by hand, not by plotters (the quick card's bars, the
//! matrix heatmaps): the SVG's frame, its text, and a conservative guess
//! of how wide a text is drawn, so that nothing is placed past the edge.

use super::chart::escape;
use std::fmt::Write as _;

/// The smallest font, in px, of any text of a figure: at the page's
/// width a figure is drawn at its own size, so this is what is read.
pub const MIN_FONT_PX: f64 = 12.0;

/// An upper bound of the width of `text` drawn at `px` in the page's
/// sans-serif: no glyph of a proportional sans-serif font (digits, letters,
/// `µ`, `/`) is wider than 0.62 em but `m`, `w`, `M`, `W` and `%`, taken at
/// 0.95 em.
pub fn text_width(text: &str, px: f64) -> f64 {
    text.chars()
        .map(|c| match c {
            'm' | 'w' | 'M' | 'W' | '%' | '@' => 0.95,
            'A'..='Z' => 0.75,
            _ => 0.62,
        })
        .sum::<f64>()
        * px
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_letters_count_wider() {
        assert!(text_width("mmmm", 12.0) > text_width("1111", 12.0));
        assert!((text_width("1234", 10.0) - 24.8).abs() < 1e-9);
    }
}
