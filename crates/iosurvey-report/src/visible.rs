//! Text from input data, made safe for a terminal. A report's hostname,
//! labels, mode and paths are whatever the JSON says: an escape sequence
//! there would set the terminal's title, clear the screen or forge table
//! lines when printed raw. Every text presenter passes such strings
//! through [`visible`]; whole texts bound for stdout pass [`terminal_text`]
//! as a last line of defence.

use std::borrow::Cow;
use std::fmt::Write;

/// Characters a terminal acts on instead of showing: the C0 and C1
/// controls and DEL, and the marks that reorder what follows them
/// (bidirectional overrides and isolates), which can make a line read as
/// another.
fn acts(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// `c` spelled out: `\x1b` for an ASCII control, `\u{202e}` otherwise.
fn spelled(out: &mut String, c: char) {
    let _ = if c.is_ascii() {
        write!(out, "\\x{:02x}", c as u32)
    } else {
        write!(out, "\\u{{{:x}}}", c as u32)
    };
}

/// `s` with every character in it that `keep` does not keep and a
/// terminal would act on spelled out.
fn escape_if(s: &str, keep: fn(char) -> bool) -> Cow<'_, str> {
    let bad = |c: char| acts(c) && !keep(c);
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            spelled(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One field of input data (a hostname, a label, a path) as a terminal
/// may show it: every control character, line feeds and tabs too, spelled
/// out (`\x1b`, `\n`, `\u{202e}`), so it stays on its line and in its
/// column.
pub fn visible(s: &str) -> Cow<'_, str> {
    escape_if(s, |_| false)
}

/// A whole text for stdout: its line feeds and tabs kept, every other
/// character a terminal would act on spelled out.
pub fn terminal_text(s: &str) -> Cow<'_, str> {
    escape_if(s, |c| c == '\n' || c == '\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_spelled_out_and_plain_text_is_kept() {
        assert_eq!(visible("host-1 é"), "host-1 é");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
        assert_eq!(visible("\u{1b}]0;pwned\u{7}"), "\\x1b]0;pwned\\x07");
        assert_eq!(visible("a\nb\tc\r"), "a\\x0ab\\x09c\\x0d");
        assert_eq!(visible("\u{9b}2J\u{202e}"), "\\u{9b}2J\\u{202e}");
        assert_eq!(terminal_text("a\tb\n\u{1b}[2J"), "a\tb\n\\x1b[2J");
    }
}
