//! The `quick` card: one row per test and direction, as CrystalDiskMark's
//! tests, with IOPS and latency percentiles it lacks, in 80 columns.

use crate::text::format_ns;
use crate::{format_rate, TextOptions};
use iosurvey_model::document::{ClassReport, RunReport, TargetReport};
use iosurvey_model::{Op, PointParams};
use std::fmt::Write;

/// One side of a row: a class of a point and the point's CPU time per I/O.
type Side<'a> = Option<(&'a ClassReport, Option<f64>)>;

fn cells(side: Side<'_>, opts: TextOptions) -> String {
    match side.filter(|(c, _)| c.ops > 0) {
        None => format!("{:>10} {:>10} {:>9} {:>9} {:>9}", "-", "-", "-", "-", "-"),
        Some((c, cpu_us)) => {
            let pct = |want: f64| {
                c.latency
                    .at(want)
                    .map(|ns| format_ns(ns as f64))
                    .unwrap_or_default()
            };
            let rate = format_rate(c.bytes_per_sec, opts);
            let rate = rate.split(' ').next().unwrap_or("").to_string();
            let cpu = cpu_us.map_or("-".to_string(), |us| format!("{us:.2}us"));
            format!(
                "{:>10} {:>10.0} {:>9} {:>9} {:>9}",
                rate,
                c.iops,
                pct(50.0),
                pct(99.0),
                cpu
            )
        }
    }
}

/// The card's width: it fits an 80-column terminal.
pub const CARD_WIDTH: usize = 80;

/// Where the card's test file is: the filesystem, what is mounted and
/// where, and the disk under it, as far as the report knows them.
fn storage_line(t: &TargetReport) -> Option<String> {
    let d = t.device.as_ref()?;
    let mut parts = Vec::new();
    if let Some(fs) = &d.filesystem {
        let mut on = fs.clone();
        // A filesystem with no device under it names its source as its
        // type (`tmpfs`, `overlay`): "tmpfs on tmpfs" says nothing more.
        let source = d
            .mount_source
            .as_deref()
            .filter(|s| !s.is_empty() && s != fs);
        if let Some(src) = source {
            on.push_str(&format!(" on {src}"));
        }
        if let Some(point) = &d.mount_point {
            on.push_str(&format!(" mounted at {point}"));
        }
        parts.push(on);
    }
    if let Some(name) = &d.name {
        let about: Vec<&str> = [d.model.as_deref(), d.transport.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        parts.push(match about.is_empty() {
            true => format!("disk {name}"),
            false => format!("disk {name} ({})", about.join(", ")),
        });
    }
    (!parts.is_empty()).then(|| format!("storage: {}", parts.join("; ")))
}

/// Renders a `quick` report as the card: a header naming the profile, the
/// storage and the test file, then one line per test and direction (read
/// and write under each other), every line at most [`CARD_WIDTH`] wide.
pub fn render_card(report: &RunReport, opts: TextOptions) -> String {
    let mut out = String::new();
    let (unit, _) = opts.rate_unit();
    match &report.quick {
        Some(q) => {
            let _ = writeln!(
                out,
                "iosurvey quick, profile {}: {}",
                q.profile, q.description
            );
        }
        None => {
            let _ = writeln!(out, "iosurvey quick");
        }
    }
    if let Some(p) = report.points.first() {
        let t = &p.targets[0];
        if let Some(line) = storage_line(t) {
            let _ = writeln!(out, "{line}");
        }
        // The test file quick laid out, or the file or device it was given.
        let what = if t.created { "test file" } else { "target" };
        let _ = writeln!(out, "{what} {} ({} bytes)", t.path, t.size_bytes);
        let _ = writeln!(
            out,
            "{}, engine {}, {} s per test after {} s warm-up",
            if p.settings.direct {
                "O_DIRECT"
            } else {
                "buffered"
            },
            p.settings.engine,
            p.settings.time_ns.unwrap_or(0) as f64 / 1e9,
            p.settings.ramp_ns as f64 / 1e9,
        );
    }
    let _ = writeln!(
        out,
        "{:<13} {:<5} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "Test", "Op", unit, "IOPS", "p50", "p99", "CPU/IO"
    );
    // Rows in first-seen order, by the test each point ran: any profile's
    // tests, from the points alone.
    let mut rows: Vec<(&str, Side<'_>, Side<'_>)> = Vec::new();
    for p in &report.points {
        let PointParams::Quick { test, op } = &p.params else {
            continue;
        };
        let name = test.as_str();
        let i = match rows.iter().position(|r| r.0 == name) {
            Some(i) => i,
            None => {
                rows.push((name, None, None));
                rows.len() - 1
            }
        };
        match op {
            Op::Read => rows[i].1 = Some((&p.total.read, p.cpu_us_per_io)),
            Op::Write => rows[i].2 = Some((&p.total.write, p.cpu_us_per_io)),
            // The quick card's tests never discard.
            Op::Trim => {}
        }
    }
    for (name, r, w) in rows {
        // A half that did not run (the write half of an existing file or
        // device) shows its dashes.
        let _ = writeln!(out, "{name:<13} {:<5} {}", "Read", cells(r, opts));
        let _ = writeln!(out, "{:<13} {:<5} {}", "", "Write", cells(w, opts));
    }
    interruptions_and_failures(&mut out, report);
    crate::warnings::warnings_once(&mut out, report, "warning: ");
    fit(&out, CARD_WIDTH)
}

/// `text` with every line longer than `width` columns wrapped at blanks
/// (continued two columns in), a word longer than a line cut.
fn fit(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.chars().count() <= width {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut cur = String::new();
        // Ends the line so far; the next is continued two columns in.
        fn push(cur: &mut String, out: &mut String) {
            out.push_str(cur.trim_end());
            out.push('\n');
            *cur = "  ".into();
        }
        for word in line.split(' ') {
            let len = cur.chars().count();
            let has_text = !cur.trim().is_empty();
            if has_text && len + 1 + word.chars().count() > width {
                push(&mut cur, &mut out);
            }
            if !cur.trim().is_empty() {
                cur.push(' ');
            }
            for c in word.chars() {
                if cur.chars().count() >= width {
                    push(&mut cur, &mut out);
                }
                cur.push(c);
            }
        }
        if !cur.trim().is_empty() {
            push(&mut cur, &mut out);
        }
    }
    out
}

/// The lines a multi-point summary ends with: whether the run was cut
/// short, and each point's first failed I/O.
pub(crate) fn interruptions_and_failures(out: &mut String, report: &RunReport) {
    if report.points.iter().any(|p| p.interrupted) {
        let _ = writeln!(out, "INTERRUPTED: partial results");
    }
    for p in &report.points {
        if let Some(f) = &p.failure {
            let _ = writeln!(
                out,
                "{}: first failed I/O: {} at offset {}: {}",
                p.label,
                f.op,
                f.offset,
                iosurvey_model::document::failure_text(f.errno)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_at_blanks_and_long_words_are_cut() {
        let long = format!("storage: ext4 on /dev/{} mounted at /", "x".repeat(120));
        let text = fit(
            &format!("short\n{long}\nwarning: {}\n", "word ".repeat(40)),
            80,
        );
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(
            text.starts_with("short\nstorage: ext4 on\n  /dev/xxx"),
            "{text}"
        );
        // Nothing is lost but the blanks it broke at.
        let squash = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(
            squash(&text),
            squash(&format!("short {long} warning: {}", "word ".repeat(40)))
        );
    }
}
