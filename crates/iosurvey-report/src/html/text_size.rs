//! How large the plots' text is: the least font size, and a conservative
//! guess of how wide a text is drawn, so that nothing is placed past a
//! plot's edge or over its neighbour.

/// The smallest font, in px, of any text of a figure: at the page's
/// width a figure is drawn at its own size, so this is what is read.
pub const MIN_FONT_PX: f64 = 12.0;

/// An upper bound of the width of `text` drawn at `px` in the page's
/// sans-serif: a glyph of a proportional sans-serif font (digits, small
/// letters, `µ`, `/`) is taken at 0.62 em, a capital at 0.75 em, and `m`,
/// `w`, `M`, `W`, `%` and `@` at 0.95 em.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_letters_count_wider() {
        assert!(text_width("mmmm", 12.0) > text_width("1111", 12.0));
        assert!((text_width("1234", 10.0) - 24.8).abs() < 1e-9);
    }
}
