//! An HTML table of text cells, numbers right-aligned: what every mode's
//! page is made of.

use super::chart::escape;
use std::fmt::Write as _;

/// A table: header cells, then rows of cells (numbers right-aligned).
pub(crate) fn table(caption: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    let mut t = String::from("<table>");
    if !caption.is_empty() {
        let _ = write!(t, "<caption>{}</caption>", escape(caption));
    }
    if head.iter().any(|c| !c.is_empty()) {
        t.push_str("<thead><tr>");
        for c in head {
            let _ = write!(t, "<th>{}</th>", escape(c));
        }
        t.push_str("</tr></thead>");
    }
    t.push_str("\n<tbody>\n");
    for r in rows {
        t.push_str("<tr>");
        for c in r {
            let numeric = c.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-')
                && c.chars().any(|ch| ch.is_ascii_digit());
            let class = if numeric { " class=\"n\"" } else { "" };
            let _ = write!(t, "<td{class}>{}</td>", escape(c));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</tbody></table>\n");
    t
}
