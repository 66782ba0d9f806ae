//! The human summary: one block per point, per target and in total.

use iosurvey_model::document::{ClassReport, PointReport, RunReport, StreamReport};
use std::fmt::Write;

/// Display choices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// MiB/s (2^20) instead of MB/s (10^6).
    pub mib: bool,
}

impl TextOptions {
    /// The unit sizes are shown in and its bytes: MB (10^6) or MiB.
    pub fn size_unit(self) -> (&'static str, f64) {
        if self.mib {
            ("MiB", 1048576.0)
        } else {
            ("MB", 1e6)
        }
    }

    /// The unit rates are shown in and its bytes per second: MB/s or MiB/s.
    pub fn rate_unit(self) -> (&'static str, f64) {
        if self.mib {
            ("MiB/s", 1048576.0)
        } else {
            ("MB/s", 1e6)
        }
    }
}

/// `bytes_per_sec` as `"1413.6 MB/s"` or `"1348.1 MiB/s"`.
pub fn format_rate(bytes_per_sec: f64, opts: TextOptions) -> String {
    let (unit, per) = opts.rate_unit();
    format!("{:.1} {unit}", bytes_per_sec / per)
}

fn format_count(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn format_bytes(v: u64, opts: TextOptions) -> String {
    let v = v as f64;
    if opts.mib {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut x = v;
        let mut i = 0;
        while x >= 1024.0 && i < units.len() - 1 {
            x /= 1024.0;
            i += 1;
        }
        format!("{x:.2} {}", units[i])
    } else {
        let units = ["B", "kB", "MB", "GB", "TB"];
        let mut x = v;
        let mut i = 0;
        while x >= 1000.0 && i < units.len() - 1 {
            x /= 1000.0;
            i += 1;
        }
        format!("{x:.2} {}", units[i])
    }
}

/// Nanoseconds with a unit that keeps three or four digits.
pub fn format_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0}ns")
    } else if ns < 1e6 {
        format!("{:.2}us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.3}s", ns / 1e9)
    }
}

fn class_lines(out: &mut String, name: &str, c: &ClassReport, elapsed_ns: u64, opts: TextOptions) {
    if c.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "  {name:<5} {} IOPS  {}  {} ops  {} in {:.3} s",
        format_count(c.iops),
        format_rate(c.bytes_per_sec, opts),
        c.ops,
        format_bytes(c.bytes, opts),
        elapsed_ns as f64 / 1e9
    );
    if c.ops > 0 {
        let l = &c.latency;
        let _ = writeln!(
            out,
            "        lat min {}  mean {}  stdev {}  max {}",
            format_ns(l.min_ns as f64),
            format_ns(l.mean_ns),
            format_ns(l.stdev_ns),
            format_ns(l.max_ns as f64)
        );
        let pct: Vec<String> = l
            .percentiles
            .iter()
            .map(|p| format!("p{} {}", p.percentile, format_ns(p.ns as f64)))
            .collect();
        let _ = writeln!(out, "        {}", pct.join("  "));
    }
    if !c.errors.is_empty() {
        let errs: Vec<String> = c
            .errors
            .iter()
            .map(|e| format!("{} x{}", e.name, e.count))
            .collect();
        let _ = writeln!(out, "        errors: {}", errs.join(", "));
    }
}

fn target_title(t: &iosurvey_model::document::TargetReport) -> String {
    let rot = match t.rotational {
        Some(true) => ", rotational",
        Some(false) => ", non-rotational",
        None => "",
    };
    format!(
        "{} [{} {}, {} bytes, lbs {}{}]",
        t.path,
        match t.kind {
            iosurvey_model::TargetKind::File => "file",
            iosurvey_model::TargetKind::Block => "block",
            iosurvey_model::TargetKind::Directory => "directory",
        },
        if t.direct { "O_DIRECT" } else { "buffered" },
        t.size_bytes,
        t.logical_block_size,
        rot
    )
}

pub(crate) fn stream_title(p: &PointReport, s: &StreamReport) -> String {
    match &s.array {
        None => target_title(&p.targets[s.target]),
        Some(a) => {
            let layout = match a.layout {
                iosurvey_model::Layout::Concat => "concat".to_string(),
                iosurvey_model::Layout::Raid0 { stripe } => {
                    format!("raid0, stripe {stripe} bytes")
                }
            };
            let members: Vec<String> = a
                .members
                .iter()
                .map(|&m| target_title(&p.targets[m]))
                .collect();
            format!("array ({layout}) of {}", members.join(", "))
        }
    }
}

/// A block-size split's sizes: each one's share asked for and done (of
/// the measured I/Os that completed whole), so that a reader sees the
/// split happened.
fn split_line(out: &mut String, split: &[iosurvey_model::SizeReport]) {
    let done: u64 = split.iter().map(|s| s.ops).sum();
    if split.is_empty() || done == 0 {
        return;
    }
    let parts: Vec<String> = split
        .iter()
        .map(|s| {
            format!(
                "{} {}% asked, {:.1}% done ({} ops)",
                iosurvey_model::units::format_size(s.bs),
                s.pct,
                s.ops as f64 * 100.0 / done as f64,
                s.ops
            )
        })
        .collect();
    let _ = writeln!(out, "        bs split: {}", parts.join("; "));
}

/// Bytes at the end of a stream's area that no I/O covers: every I/O moves
/// a whole block, so a tail shorter than one is never read or written.
pub(crate) fn untouched_tail(p: &PointReport, s: &StreamReport) -> u64 {
    // A split's I/Os vary in size: no one block length to speak of.
    if s.array.is_some() || s.bs == 0 || !s.bs_split.is_empty() {
        return 0;
    }
    let size = p.targets.get(s.target).map_or(0, |t| t.size_bytes);
    s.span.unwrap_or(size.saturating_sub(s.offset)) % s.bs
}

/// Point `p`'s first failed I/O, its verification and its warnings, a
/// line each (the run's text and the run sweep's notes both show them).
pub(crate) fn outcome_lines(out: &mut String, p: &PointReport, opts: TextOptions) {
    if let Some(f) = &p.failure {
        let _ = writeln!(
            out,
            "  first failed I/O: {} at offset {} on {}: {}",
            f.op,
            f.offset,
            p.targets[p.streams[f.stream].target].path,
            iosurvey_model::document::failure_text(f.errno)
        );
    }
    if let Some(v) = &p.verify {
        verify_lines(out, p, v, opts);
    }
    for w in &p.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }
}

/// The `--verify` pass: what it checked, and each failure it lists.
pub(crate) fn verify_lines(
    out: &mut String,
    p: &PointReport,
    v: &iosurvey_model::verify::VerifySummary,
    opts: TextOptions,
) {
    let whose = match (v.mode.as_str(), &v.run_id) {
        (_, None) => "no block known from a verified run".to_string(),
        ("write", Some(r)) => format!("written by this run ({r})"),
        (_, Some(r)) => format!("as its verify state records them (newest run {r})"),
    };
    let others = match v.mode.as_str() {
        "write" => "not written by it",
        _ => "no verified run wrote",
    };
    let _ = writeln!(
        out,
        "  verify: {} blocks checked, {whose}; {} others {others} (not checked); {} read in {:.2} s",
        v.blocks_checked,
        v.blocks_unwritten,
        format_bytes(v.bytes_read, opts),
        v.elapsed_ns as f64 / 1e9
    );
    if v.interrupted {
        let _ = writeln!(
            out,
            "  verify: INTERRUPTED: {} blocks checked, {} skipped (not read back)",
            v.blocks_checked, v.blocks_skipped
        );
    }
    let c = &v.counts;
    if let Some(why) = &v.nothing_checked {
        let _ = writeln!(out, "  VERIFY FAILED: no block could be checked: {why}");
    }
    if c.total() == 0 {
        if v.nothing_checked.is_none() && !v.interrupted {
            let _ = writeln!(out, "  verify: no failure");
        }
        return;
    }
    let list: Vec<String> = c
        .by_class()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(class, n)| format!("{n} {}", class.describe()))
        .collect();
    let _ = writeln!(
        out,
        "  VERIFY FAILED: {} blocks: {}",
        c.total(),
        list.join(", ")
    );
    for f in &v.failures {
        let mut path = p
            .targets
            .get(f.target)
            .map_or("?", |t| t.path.as_str())
            .to_string();
        if let Some(file) = &f.file {
            path = format!("{}/{file}", path.trim_end_matches('/'));
        }
        let _ = writeln!(
            out,
            "    {path} offset {}: {}: expected {}, found {}",
            f.offset,
            f.class.describe(),
            f.expected,
            f.found
        );
    }
    if (v.failures.len() as u64) < c.total() {
        let _ = writeln!(
            out,
            "    ({} more not listed; the JSON counts them all)",
            c.total() - v.failures.len() as u64
        );
    }
}

/// Renders a report as a block per point (see [`crate::render_text`]).
pub(crate) fn render_points(report: &RunReport, opts: TextOptions) -> String {
    let mut out = String::new();
    for p in &report.points {
        let s = &p.settings;
        let compressible = match s.compressible_pct {
            0 => String::new(),
            pct => format!(", data {pct}% compressible"),
        };
        let rate = match &s.rate {
            Some(cap) => format!(", rate capped at {cap}"),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "{}: {} (engine {}, {}, seed {}{compressible}{rate})",
            report.mode,
            p.label,
            s.engine,
            if s.direct { "O_DIRECT" } else { "buffered" },
            s.seed
        );
        if p.interrupted {
            let _ = writeln!(out, "  INTERRUPTED: partial results");
        }
        for st in &p.streams {
            let _ = write!(out, "{}", stream_title(p, st));
            if !st.dist.is_uniform() {
                let _ = write!(out, ", offsets by {}", st.dist);
            }
            out.push('\n');
            class_lines(&mut out, "read", &st.read, st.elapsed_ns, opts);
            class_lines(&mut out, "write", &st.write, st.elapsed_ns, opts);
            class_lines(&mut out, "trim", &st.trim, st.elapsed_ns, opts);
            split_line(&mut out, &st.bs_split);
            let tail = untouched_tail(p, st);
            if tail > 0 {
                let _ = writeln!(
                    out,
                    "        not covered: the last {tail} bytes of the area, less than one {}-byte block",
                    st.bs
                );
            }
        }
        if p.streams.len() > 1 {
            let _ = writeln!(out, "all {} streams:", p.streams.len());
            class_lines(&mut out, "read", &p.total.read, p.elapsed_ns, opts);
            class_lines(&mut out, "write", &p.total.write, p.elapsed_ns, opts);
            class_lines(&mut out, "trim", &p.total.trim, p.elapsed_ns, opts);
        }
        outcome_lines(&mut out, p, opts);
        let secs = p.elapsed_ns as f64 / 1e9;
        if secs > 0.0 {
            let _ = write!(
                out,
                "  cpu: user {:.1}%  sys {:.1}%  (of one core)",
                p.cpu_user_ns as f64 / 1e9 / secs * 100.0,
                p.cpu_system_ns as f64 / 1e9 / secs * 100.0
            );
            if let Some(us) = p.cpu_us_per_io {
                let _ = write!(out, "  {us:.2}us per I/O");
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_labelled_with_their_unit() {
        assert_eq!(format_rate(1e6, TextOptions { mib: false }), "1.0 MB/s");
        assert_eq!(
            format_rate(1048576.0, TextOptions { mib: true }),
            "1.0 MiB/s"
        );
    }

    #[test]
    fn latency_units_scale() {
        assert_eq!(format_ns(950.0), "950ns");
        assert_eq!(format_ns(88_060.0), "88.06us");
        assert_eq!(format_ns(1_500_000.0), "1.50ms");
        assert_eq!(format_ns(2e9), "2.000s");
    }
}
