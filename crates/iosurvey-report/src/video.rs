//! The `video` presenters (frametest, AJA System Test, Blackmagic Disk Speed
//! Test), rebuilt from a report alone: frametest's summary, averaged
//! details and histogram of frame times (from the frames summary, or the
//! records of an older report), a real-time verdict over every preset and
//! frame rate, a per-frame CSV of the records kept and the list of presets.

use crate::{format_rate, FramesReport, PointReport, RunReport, TextOptions};
use iosurvey_run::result::FRAME_HISTOGRAM_EDGES_NS;
pub use iosurvey_run::result::{bucket_of, frame_ns};
use iosurvey_run::FrameRecord;
use iosurvey_workload::modes::video::{FrameFormat, FORMATS, VERDICT_RATES};
use std::fmt::Write;

pub(crate) const SEC: u64 = 1_000_000_000;
/// The margin a format needs over its data rate to be called `ok`.
pub const MARGIN: f64 = 1.2;
/// Ratios this close to a threshold count as reaching it, so that a rate of
/// exactly 1.2 times the need is not undone by rounding.
const EPSILON: f64 = 1e-9;
/// The `Last Ns` windows of the averaged details, in seconds.
pub const WINDOWS_S: [u64; 3] = [1, 5, 10];
/// Upper edges of the histogram's buckets; the last bucket is 1 s or more.
pub const HISTOGRAM_EDGES_NS: [u64; 13] = FRAME_HISTOGRAM_EDGES_NS;
/// The histogram's bucket names, one per bucket.
pub const HISTOGRAM_LABELS: [&str; 14] = [
    "<0.1 ms", "<0.2 ms", "<0.5 ms", "<1 ms", "<2 ms", "<5 ms", "<10 ms", "<20 ms", "<50 ms",
    "<100 ms", "<200 ms", "<500 ms", "<1 s", ">=1 s",
];
/// Width of the histogram's bars.
const BAR: usize = 50;
/// Width of the summary's labels (`Frames transferred: `).
const LABEL: usize = 20;
/// Longest line any presenter here prints.
const WIDTH: usize = 100;

mod summary;
pub use summary::*;

/// Whether a storage keeps up with a format at a frame rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// At least [`MARGIN`] times the rate needed, and no window below it.
    Ok,
    /// At least the rate needed, but without the margin or not in every
    /// window.
    Low,
    /// Below the rate needed.
    No,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Low => "low",
            Verdict::No => "no",
        }
    }
}

/// The verdict for a need of `needed` bytes per second, from the overall
/// rate and the slowest window's (pass the overall rate again when there
/// was no window check).
pub fn verdict(overall: f64, slowest: f64, needed: f64) -> Verdict {
    let ratio = overall / needed;
    if ratio >= MARGIN - EPSILON && slowest >= needed * (1.0 - EPSILON) {
        Verdict::Ok
    } else if ratio >= 1.0 - EPSILON {
        Verdict::Low
    } else {
        Verdict::No
    }
}

/// A ratio as the verdict table prints it: `2.41x`, `12.3x`, `456x`.
pub fn ratio_text(ratio: f64) -> String {
    if ratio >= 9999.5 {
        ">9999x".into()
    } else if ratio >= 100.0 {
        format!("{ratio:.0}x")
    } else if ratio >= 10.0 {
        format!("{ratio:.1}x")
    } else {
        format!("{ratio:.2}x")
    }
}

/// One cell of the verdict table.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictCell {
    /// The frame rate's usual name (`29.97`).
    pub rate: &'static str,
    /// Bytes per second the format needs at that rate.
    pub needed: f64,
    /// The overall rate over `needed`.
    pub ratio: f64,
    pub verdict: Verdict,
}

/// One row of the verdict table: a preset at every rate of
/// [`VERDICT_RATES`].
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictRow {
    pub format: &'static FrameFormat,
    pub cells: Vec<VerdictCell>,
}

/// Every preset of [`FORMATS`] at every rate of [`VERDICT_RATES`], judged
/// from the overall and slowest-window rates in bytes per second.
pub fn verdict_table(overall: f64, slowest: f64) -> Vec<VerdictRow> {
    FORMATS
        .iter()
        .map(|format| VerdictRow {
            format,
            cells: VERDICT_RATES
                .iter()
                .map(|&(rate, fps)| {
                    let needed = format.frame_bytes() as f64 * fps.value();
                    VerdictCell {
                        rate,
                        needed,
                        ratio: overall / needed,
                        verdict: verdict(overall, slowest, needed),
                    }
                })
                .collect(),
        })
        .collect()
}

/// Whether a paced run held real time: nothing dropped and nothing failed.
pub fn real_time_held(s: &FrameSummary) -> bool {
    s.dropped() == 0 && s.failed == 0
}

/// A frame rate by its usual name (`23.976`), or with up to 3 decimals.
pub fn fps_name(fps: f64) -> String {
    if let Some((name, _)) = VERDICT_RATES
        .iter()
        .find(|(_, r)| (r.value() - fps).abs() < 1e-9)
    {
        return (*name).into();
    }
    let s = format!("{fps:.3}");
    s.trim_end_matches('0').trim_end_matches('.').into()
}

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
fn wrapped(out: &mut String, prefix: &str, text: &str) {
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

fn parameters(out: &mut String, f: &FramesReport, s: &crate::Settings) {
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
    let layout = match (f.layout.as_str(), f.files_per_dir) {
        ("stream", _) => "stream layout (every frame in one file)".to_string(),
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
        let err = r.errno.map_or("unknown error".into(), crate::errno_name);
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
                crate::failure_text(e.errno)
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
    let files = f.layout != "stream";
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

fn real_time_line(out: &mut String, fps: f64, s: &FrameSummary) {
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
    if f.layout != "stream" {
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
    for w in &p.warnings {
        wrapped(out, "warning: ", w);
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

/// Every frame of every point as CSV, in record order; times in
/// nanoseconds, `errno` empty unless the frame failed.
pub fn render_video_csv(report: &RunReport) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "frame", "thread", "status", "errno", "start_ns", "end_ns", "open_ns", "io_ns", "close_ns",
        "frame_ns", "bytes",
    ]);
    for f in report.points.iter().filter_map(|p| p.frames.as_ref()) {
        for r in &f.records {
            let _ = w.write_record([
                r.frame.to_string(),
                r.thread.to_string(),
                r.status.name().into(),
                r.errno.map_or(String::new(), |e| e.to_string()),
                r.start_ns.to_string(),
                r.end_ns.to_string(),
                r.open_ns.to_string(),
                r.io_ns.to_string(),
                r.close_ns.to_string(),
                frame_ns(r).to_string(),
                r.bytes.to_string(),
            ]);
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// Every preset for `--list-formats`: name, picture size, bytes per pixel,
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
            f.bytes_per_pixel,
            f.default_header(),
            f.frame_bytes(),
            mbs(24.0),
            mbs(60.0),
            f.description
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_keep_three_or_four_figures() {
        assert_eq!(ratio_text(2.414), "2.41x");
        assert_eq!(ratio_text(12.34), "12.3x");
        assert_eq!(ratio_text(456.4), "456x");
        assert_eq!(ratio_text(20000.0), ">9999x");
    }

    #[test]
    fn milliseconds_keep_four_figures() {
        assert_eq!(format_ms(21_000.0), "0.021 ms");
        assert_eq!(format_ms(10_200_000.0), "10.20 ms");
        assert_eq!(format_ms(123_450_000.0), "123.5 ms");
        assert_eq!(format_ms(1_500_000_000.0), "1500 ms");
    }

    #[test]
    fn frame_rates_go_by_their_usual_names() {
        assert_eq!(fps_name(24000.0 / 1001.0), "23.976");
        assert_eq!(fps_name(24.0), "24");
        assert_eq!(fps_name(12.5), "12.5");
        assert_eq!(fps_name(100.0), "100");
    }

    #[test]
    fn buckets_take_their_upper_edge_out() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(99_999), 0);
        assert_eq!(bucket_of(100_000), 1);
        assert_eq!(bucket_of(999_999_999), 12);
        assert_eq!(bucket_of(1_000_000_000), 13);
    }

    #[test]
    fn wrapping_keeps_lines_within_the_width() {
        let mut out = String::new();
        wrapped(&mut out, "warning: ", &"word ".repeat(60));
        assert!(out.lines().count() > 2);
        assert!(out.lines().all(|l| l.len() <= WIDTH), "{out}");
        assert!(out.lines().skip(1).all(|l| l.starts_with("         word")));
    }
}
