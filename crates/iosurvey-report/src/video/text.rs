//! The frametest-like text of a video report: parameters, summary, averaged
//! details, histogram of frame times, the verdict lines, and the list of
//! presets.

use super::*;
use crate::{format_rate, TextOptions};
use iosurvey_model::document::{FramesLayout, FramesReport, FramesSummary, PointReport, RunReport};
use iosurvey_model::video::{FORMATS, VERDICT_RATES};
use iosurvey_model::{Fps, FrameRecord};
use std::fmt::Write;

/// Nanoseconds as milliseconds with four figures: `0.021 ms`, `10.20 ms`.
pub fn format_ms(ns: f64) -> String {
    let ms = ns / 1e6;
    if ms < 10.0 {
        format!("{ms:.3} ms")
    } else if ms < 100.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

/// A `Label:` line with the value in the column after it.
fn line(out: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "{:<LABEL$}{value}", format!("{label}:"));
}

/// `text` wrapped at [`WIDTH`], the first line after `prefix`, the others
/// indented as far.
pub(super) fn wrapped(out: &mut String, prefix: &str, text: &str) {
    let indent = " ".repeat(prefix.len());
    let mut cur = prefix.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && cur.len() + 1 + word.len() > WIDTH {
            let _ = writeln!(out, "{cur}");
            cur = indent.clone();
            empty = true;
        }
        if !empty {
            cur.push(' ');
        }
        cur.push_str(word);
        empty = false;
    }
    let _ = writeln!(out, "{cur}");
}

fn parameters(out: &mut String, f: &FramesReport, s: &iosurvey_model::document::Settings) {
    let loops = if f.loops > 1 {
        format!(", {} loops", f.loops)
    } else {
        String::new()
    };
    let header = if f.header_bytes > 0 {
        format!(" (header {} bytes)", f.header_bytes)
    } else {
        String::new()
    };
    line(
        out,
        "Test parameters",
        format_args!(
            "{} {} {} frames of {} bytes{header}{loops}",
            f.op, f.frames, f.format, f.frame_bytes
        ),
    );
    let layout = match (f.layout, f.files_per_dir) {
        (FramesLayout::Stream, _) => "stream layout (every frame in one file)".to_string(),
        (l, 0) => format!("{l} layout (1 file per frame, all in one directory)"),
        (l, n) => format!("{l} layout (1 file per frame, {n} per directory)"),
    };
    let pacing = match f.fps {
        Some(fps) => format!("paced at {} fps, queue {}", fps_name(fps), f.queue),
        None => "unpaced".into(),
    };
    let threads = if f.threads == 1 { "thread" } else { "threads" };
    let _ = writeln!(out, "{:LABEL$}{layout}", "");
    let _ = writeln!(
        out,
        "{:LABEL$}{} {threads}, depth {}, {pacing}, order {}, engine {}, {}",
        "",
        f.threads,
        f.depth,
        f.order,
        s.engine,
        if s.direct { "O_DIRECT" } else { "buffered" }
    );
}

fn frame_line(out: &mut String, label: &str, r: Option<FrameRecord>, opts: TextOptions) {
    if let Some(r) = r {
        let ns = frame_ns(&r);
        // Empty frames (metadata only) have no data rate.
        let rate = match r.bytes {
            0 => String::new(),
            b => format!("{}, ", format_rate(per_sec(b, ns), opts)),
        };
        line(
            out,
            label,
            format_args!("{} ({rate}frame {})", format_ms(ns as f64), r.frame),
        );
    }
}

fn summary_lines(out: &mut String, p: &PointReport, s: &FrameSummary, opts: TextOptions) {
    let f = p.frames.as_ref().expect("summarized points have frames");
    let (u, per) = opts.size_unit();
    line(
        out,
        "Test duration",
        format_args!("{:.2} s", p.elapsed_ns as f64 / 1e9),
    );
    if p.interrupted {
        line(
            out,
            "Interrupted",
            format_args!("{} of {} frames were started", s.started(), s.planned),
        );
    }
    line(out, "Frames tested", s.recorded);
    if f.fps.is_some() {
        // Late frames moved their data but count as dropped, not twice.
        line(
            out,
            "Frames transferred",
            format_args!(
                "{} in time ({:.1} {u})",
                s.in_time,
                (s.in_time * f.frame_bytes) as f64 / per
            ),
        );
    } else {
        line(
            out,
            "Frames transferred",
            format_args!("{} ({:.1} {u})", s.transferred, s.bytes as f64 / per),
        );
    }
    if f.fps.is_some() {
        line(
            out,
            "Frames dropped",
            format_args!(
                "{} ({} not started in time, {} finished late)",
                s.dropped(),
                s.dropped_skipped,
                s.dropped_late
            ),
        );
    } else {
        line(out, "Frames dropped", s.dropped());
    }
    if let Some(r) = s.first_failed {
        let err = r
            .errno
            .map_or("unknown error".into(), iosurvey_model::document::errno_name);
        line(
            out,
            "Frames failed",
            format_args!("{} (first: frame {}, {err})", s.failed, r.frame),
        );
    }
    if let Some(e) = &p.failure {
        line(
            out,
            "First failed I/O",
            format_args!(
                "{} at offset {} after {:.3} s: {}",
                e.op,
                e.offset,
                e.at_ns as f64 / 1e9,
                iosurvey_model::document::failure_text(e.errno)
            ),
        );
    }
    frame_line(out, "Fastest frame", s.fastest, opts);
    frame_line(out, "Slowest frame", s.slowest, opts);
    let kept = f.records.len() as u64;
    if kept < s.recorded {
        line(
            out,
            "Per-frame records",
            format_args!(
                "the first {kept} of {} are kept (JSON, CSV); every figure here counts all",
                s.recorded
            ),
        );
    }
}

fn ms_or_dash(v: Option<f64>, shown: bool) -> String {
    match v {
        Some(ns) if shown => format_ms(ns),
        _ => "-".into(),
    }
}

fn details(
    out: &mut String,
    p: &PointReport,
    f: &FramesReport,
    d: &FramesSummary,
    opts: TextOptions,
) {
    let files = f.layout == FramesLayout::Files;
    let _ = writeln!(out, "Averaged details:");
    let _ = writeln!(
        out,
        "  {:<9}{:>10}{:>10}{:>10}{:>10} {:>13} {:>13}",
        "", "Open", "I/O", "Close", "Frame", "Data rate", "Frame rate"
    );
    for w in window_rows(d, p.elapsed_ns) {
        let label = match w.window_ns {
            Some(ns) => format!("Last {}s:", ns / SEC),
            None => "Overall:".into(),
        };
        let _ = writeln!(
            out,
            "  {label:<9}{:>10}{:>10}{:>10}{:>10} {:>13} {:>13}",
            ms_or_dash(w.open_ns, files),
            ms_or_dash(w.io_ns, true),
            ms_or_dash(w.close_ns, files),
            ms_or_dash(w.frame_ns, true),
            format_rate(w.bytes_per_sec, opts),
            format!("{:.1} fps", w.frames_per_sec)
        );
    }
}

/// Shortest, mean and longest open, I/O and close of the transferred
/// frames (files layout).
fn file_times(out: &mut String, d: &FramesSummary) {
    let (Some(o), Some(i), Some(c)) = (d.open_ns, d.io_ns, d.close_ns) else {
        return;
    };
    let Some(all) = d.windows.last().map(|w| w.sums).filter(|s| s.frames > 0) else {
        return;
    };
    let mean = |sum: u64| format_ms(sum as f64 / all.frames as f64);
    let _ = writeln!(out, "File times:");
    let _ = writeln!(out, "  {:<9}{:>10}{:>10}{:>10}", "", "Open", "I/O", "Close");
    let ms = |v: u64| format_ms(v as f64);
    let rows = [
        ("Shortest:", [ms(o.min_ns), ms(i.min_ns), ms(c.min_ns)]),
        (
            "Average:",
            [mean(all.open_ns), mean(all.io_ns), mean(all.close_ns)],
        ),
        ("Longest:", [ms(o.max_ns), ms(i.max_ns), ms(c.max_ns)]),
    ];
    for (label, [o, i, c]) in rows {
        let _ = writeln!(out, "  {label:<9}{o:>10}{i:>10}{c:>10}");
    }
}

fn histogram(out: &mut String, d: &FramesSummary) {
    let b = &d.histogram;
    let total: u64 = b.iter().sum();
    let max = b.iter().copied().max().unwrap_or(0);
    let _ = writeln!(out, "Histogram of frame completion times:");
    for (label, &n) in HISTOGRAM_LABELS.iter().zip(b) {
        let mut w = if max > 0 {
            (n as f64 / max as f64 * BAR as f64).round() as usize
        } else {
            0
        };
        if n > 0 {
            w = w.max(1);
        }
        let pct = if total > 0 {
            n as f64 * 100.0 / total as f64
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "{label:>10} |{:<BAR$}{n:>8} {pct:>5.1}%",
            "#".repeat(w)
        );
    }
}

fn verdict_lines(
    out: &mut String,
    f: &FramesReport,
    d: &FramesSummary,
    s: &FrameSummary,
    opts: TextOptions,
) {
    let overall = s.bytes_per_sec();
    if overall <= 0.0 {
        let _ = writeln!(out, "Real-time verdict: no frames transferred, no verdict");
        return;
    }
    let slowest = d.slowest_second_bytes.map(|b| b as f64);
    let window = match slowest {
        Some(w) => format!(", {} in the slowest 1 s window", format_rate(w, opts)),
        None => " (run shorter than 2 s: no window check)".into(),
    };
    let _ = writeln!(
        out,
        "Real-time verdict for {}: {} overall{window}",
        f.op,
        format_rate(overall, opts)
    );
    let (u, per) = opts.size_unit();
    let _ = write!(out, "{:<10}{:>9}", "format", format!("{u}/frame"));
    for (name, _) in VERDICT_RATES {
        let _ = write!(out, "{name:>10}");
    }
    let _ = writeln!(out);
    let tested = FORMATS.iter().any(|p| p.name == f.format);
    for row in verdict_table(overall, slowest.unwrap_or(overall)) {
        let mark = if row.format.name == f.format { "*" } else { "" };
        let _ = write!(
            out,
            "{:<10}{:>9.2}",
            format!("{}{mark}", row.format.name),
            row.format.frame_bytes() as f64 / per
        );
        for c in row.cells {
            let cell = format!("{} {}", ratio_text(c.ratio), c.verdict.name());
            let _ = write!(out, "{cell:>10}");
        }
        let _ = writeln!(out);
    }
    let margin = format!("{MARGIN}x");
    let ok = if slowest.is_some() {
        format!("ok: at least {margin} the data rate needed, and the slowest 1 s window kept up;")
    } else {
        format!("ok: at least {margin} the data rate needed;")
    };
    let extrapolated = if tested {
        format!(
            "* marks the format tested; the other rows are extrapolated from the {u}/s \
             measured with {}-byte frames.",
            f.frame_bytes
        )
    } else {
        format!(
            "Every row is extrapolated from the {u}/s measured with {}-byte frames.",
            f.frame_bytes
        )
    };
    let mut legend = format!(
        "{ok} low: at least the rate needed, but not ok; no: below the rate needed. {extrapolated}"
    );
    if s.failed > 0 {
        let n = if s.failed == 1 { "frame" } else { "frames" };
        let _ = write!(
            legend,
            " {} {n} failed: the rates count only the frames transferred.",
            s.failed
        );
    }
    wrapped(out, "", &legend);
}

fn real_time_line(out: &mut String, fps: Fps, s: &FrameSummary) {
    let rate = fps_name(fps);
    if real_time_held(s) {
        let _ = writeln!(
            out,
            "Real time at {rate} fps: held ({} of {} frames dropped)",
            s.dropped(),
            s.recorded
        );
    } else {
        let failed = if s.failed > 0 {
            format!("; {} failed", s.failed)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "Real time at {rate} fps: NOT held ({} of {} frames dropped: {} not started in time, \
             {} finished late{failed})",
            s.dropped(),
            s.recorded,
            s.dropped_skipped,
            s.dropped_late
        );
    }
}

fn render_point(out: &mut String, p: &PointReport, opts: TextOptions) {
    let (Some(f), Some(s)) = (p.frames.as_ref(), summarize(p)) else {
        return;
    };
    let d = frames_summary(f, p.elapsed_ns);
    parameters(out, f, &p.settings);
    summary_lines(out, p, &s, opts);
    let _ = writeln!(out);
    details(out, p, f, &d, opts);
    if f.layout == FramesLayout::Files {
        let _ = writeln!(out);
        file_times(out, &d);
    }
    let _ = writeln!(out);
    histogram(out, &d);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Overall frame rate .... {:.1} fps ({:.0} bytes/s)",
        s.frames_per_sec(),
        s.bytes_per_sec()
    );
    let _ = writeln!(out);
    match f.fps {
        Some(fps) => real_time_line(out, fps, &s),
        None if f.frame_bytes == 0 => {
            let _ = writeln!(
                out,
                "Empty frames: only the create (or open) and the close are timed; no data rate to judge"
            );
        }
        None => verdict_lines(out, f, &d, &s, opts),
    }
    if let Some(v) = &p.verify {
        crate::text::verify_lines(out, p, v, opts);
    }
    for w in &p.warnings {
        wrapped(out, "warning: ", &w.to_string());
    }
}

/// Renders a `video` report like frametest: for every point with frames,
/// its parameters and summary, averaged details, histogram of frame times,
/// and a real-time verdict (every preset and rate when unpaced, whether the
/// pacing held when paced).
pub fn render_video(report: &RunReport, opts: TextOptions) -> String {
    let framed: Vec<&PointReport> = report
        .points
        .iter()
        .filter(|p| p.frames.is_some())
        .collect();
    let mut out = String::new();
    for (i, p) in framed.iter().enumerate() {
        if i > 0 {
            let _ = writeln!(out);
        }
        if framed.len() > 1 {
            let _ = writeln!(out, "== {} ==", p.label);
        }
        render_point(&mut out, p, opts);
    }
    out
}

/// Every preset for `--list-formats`: name, picture size, bytes per pixel
/// (or `v210`),
/// header and frame bytes, MB/s (10^6) needed at 24 and 60 fps, then the
/// description and aliases. One header line, one row per preset.
pub fn render_format_list() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<9}{:>10}{:>5}{:>7}{:>9}{:>8}{:>8}  description (aliases)",
        "name", "WxH", "B/px", "header", "frame", "MB/s@24", "@60"
    );
    for f in FORMATS {
        let mbs = |fps: f64| f.frame_bytes() as f64 * fps / 1e6;
        let aliases = if f.aliases.is_empty() {
            String::new()
        } else {
            format!(" ({})", f.aliases.join(", "))
        };
        let _ = writeln!(
            out,
            "{:<9}{:>10}{:>5}{:>7}{:>9}{:>8.1}{:>8.1}  {}{aliases}",
            f.name,
            format!("{}x{}", f.width, f.height),
            f.packing.to_string(),
            f.default_header(),
            f.frame_bytes(),
            mbs(24.0),
            mbs(60.0),
            f.description
        );
    }
    out
}
