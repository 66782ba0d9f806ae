//! The `video` plots and tables (frametest, AJA): per point with frames,
//! the time of every recorded frame with the frame period and the dropped
//! frames marked, the data rate of each whole second of the run, the
//! histogram of frame times, and the verdict as the text gives it.

use super::chart::{Axis, Chart, Scale, Series, Style};
use super::run::fmt_num;
use crate::video::{
    fps_name, frame_ns, frames_summary, real_time_held, summarize, verdict_table, window_rows,
    FrameSummary, HISTOGRAM_LABELS, MARGIN, SEC,
};
use crate::{format_rate, TextOptions};
use iosurvey_model::document::{FramesLayout, FramesSummary};
use iosurvey_model::document::{FramesReport, PointReport, RunReport};
use iosurvey_model::result::FrameTally;
use iosurvey_model::{FrameRecord, FrameStatus};

const MB: TextOptions = TextOptions { mib: false };

/// The points with frames, each with its name in titles (empty when alone).
fn framed(r: &RunReport) -> Vec<(String, &PointReport, &FramesReport)> {
    let points: Vec<(&PointReport, &FramesReport)> = r
        .points
        .iter()
        .filter_map(|p| Some((p, p.frames.as_ref()?)))
        .collect();
    let many = points.len() > 1;
    points
        .into_iter()
        .map(|(p, f)| {
            (
                if many {
                    format!(" — {}", p.label)
                } else {
                    String::new()
                },
                p,
                f,
            )
        })
        .collect()
}

pub(super) fn charts(r: &RunReport) -> Vec<Chart> {
    let mut out = Vec::new();
    for (name, p, f) in framed(r) {
        out.push(frame_times(&name, f));
        out.push(per_second(&name, p, f));
        out.push(histogram(&name, &frames_summary(f, p.elapsed_ns)));
    }
    out
}

/// A count on an axis (frames, seconds, outstanding I/Os): whole ticks
/// only, the ones between left blank.
pub(super) fn fmt_whole(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 * v.abs().max(1.0) {
        format!("{:.0}", v.round())
    } else {
        String::new()
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Every recorded frame's time (start to end) by frame number: those in
/// time, those late (dropped for real time), those skipped (no I/O, drawn
/// at zero) and those failed, each a series of its own.
fn frame_times(name: &str, f: &FramesReport) -> Chart {
    let mut c = Chart::new(
        format!("Frame times{name}"),
        Axis::new("frame number", Scale::Linear, fmt_whole),
        Axis::new("frame time, start to end (ms)", Scale::Linear, fmt_num),
    );
    let on_time = if f.fps.is_some() {
        "in time"
    } else {
        "transferred"
    };
    let kinds: [(FrameStatus, &str); 4] = [
        (FrameStatus::Done, on_time),
        (FrameStatus::Late, "late"),
        (FrameStatus::Skipped, "skipped (no I/O)"),
        (FrameStatus::Failed, "failed"),
    ];
    for (status, label) in kinds {
        let recs: Vec<&FrameRecord> = f.records.iter().filter(|r| r.status == status).collect();
        if recs.is_empty() {
            continue;
        }
        let pts = recs
            .iter()
            .map(|r| (r.frame as f64, ms(frame_ns(r))))
            .collect();
        let tips = recs.iter().map(|r| tip(r, label)).collect();
        let mut s = Series::new(label, Style::Points, pts);
        s.tips = Some(tips);
        c.series.push(s);
    }
    if let Some(fps) = f.fps {
        c.hlines.push((
            1e3 / fps.value(),
            format!("frame period, 1/{} s", fps_name(fps)),
        ));
    }
    c
}

fn tip(r: &FrameRecord, label: &str) -> String {
    let t = |ns: u64| format!("{:.3}", ms(ns));
    let secs = |ns: u64| format!("{:.3}", ns as f64 / 1e9);
    match r.status {
        FrameStatus::Skipped => format!(
            "frame {}: skipped at {} s, not started before its deadline",
            r.frame,
            secs(r.start_ns)
        ),
        _ => format!(
            "frame {} {label}: {} ms (open {}, I/O {}, close {}), ended at {} s",
            r.frame,
            t(frame_ns(r)),
            t(r.open_ns),
            t(r.io_ns),
            t(r.close_ns),
            secs(r.end_ns)
        ),
    }
}

/// The bytes of the frames that ended in each whole second of the run, as
/// the text's slowest-window check counts them, over the seconds the kept
/// records cover in full.
fn per_second(name: &str, p: &PointReport, f: &FramesReport) -> Chart {
    let summary = frames_summary(f, p.elapsed_ns);
    let kept = f.records.len() as u64;
    // Whole seconds up to the last frame kept (never more than it holds: a
    // report's elapsed time alone could ask for years of points).
    let last_end = f.records.iter().map(|r| r.end_ns).max().unwrap_or(0);
    let mut whole = (p.elapsed_ns / SEC).min(last_end / SEC + 1);
    let mut title = format!("Data rate per second{name}");
    if kept < summary.recorded() {
        // The kept records are the first by start: a frame left out started
        // after the last kept one, so ended after it too.
        let last_start = f.records.iter().map(|r| r.start_ns).max().unwrap_or(0);
        whole = whole.min(last_start / SEC);
        title.push_str(&format!(
            " (the first {kept} of {} frames are kept)",
            summary.recorded()
        ));
    }
    let mut c = Chart::new(
        title,
        Axis::new("end of the 1 s window (s)", Scale::Linear, fmt_whole),
        Axis::new("MB/s (10^6 bytes/s)", Scale::Linear, fmt_num),
    );
    let seconds = FrameTally::from_records(&f.records).seconds;
    let pts: Vec<(f64, f64)> = (0..whole as usize)
        .map(|k| {
            let [_, bytes] = seconds.get(k).copied().unwrap_or([0, 0]);
            ((k + 1) as f64, bytes as f64 / 1e6)
        })
        .collect();
    let tips = (0..whole as usize)
        .map(|k| {
            let [n, bytes] = seconds.get(k).copied().unwrap_or([0, 0]);
            format!(
                "{k} s to {} s: {n} frames, {:.1} MB/s",
                k + 1,
                bytes as f64 / 1e6
            )
        })
        .collect();
    let mut s = Series::new("data rate", Style::Line, pts);
    s.tips = Some(tips);
    c.series.push(s);
    if let Some(fps) = f.fps.filter(|_| f.frame_bytes > 0) {
        let need = f.frame_bytes as f64 * fps.value() / 1e6;
        c.hlines
            .push((need, format!("needed at {} fps", fps_name(fps))));
    } else if let Some(s) = summarize(p).filter(|s| s.bytes > 0) {
        c.hlines.push((s.bytes_per_sec() / 1e6, "overall".into()));
    }
    c
}

/// Transferred frames per bucket of frame time: every frame, kept or not.
fn histogram(name: &str, d: &FramesSummary) -> Chart {
    let mut c = Chart::new(
        format!("Histogram of frame times{name}"),
        Axis::new("frame time (ms, s)", Scale::Linear, fmt_whole),
        Axis::new("frames", Scale::Linear, fmt_num),
    );
    if d.histogram.iter().all(|&n| n == 0) {
        return c;
    }
    c.categories = HISTOGRAM_LABELS.iter().map(|l| l.to_string()).collect();
    let pts = d
        .histogram
        .iter()
        .enumerate()
        .map(|(i, &n)| (i as f64, n as f64))
        .collect();
    let mut s = Series::new("frames", Style::Bars, pts);
    s.tips = Some(
        HISTOGRAM_LABELS
            .iter()
            .zip(&d.histogram)
            .map(|(l, n)| format!("{l}: {n} frames"))
            .collect(),
    );
    c.series.push(s);
    c
}

pub(super) fn tables(r: &RunReport) -> Vec<String> {
    let mut out = Vec::new();
    for (name, p, f) in framed(r) {
        let Some(s) = summarize(p) else { continue };
        let d = frames_summary(f, p.elapsed_ns);
        out.push(super::table::table(
            &format!("Summary{name}"),
            &["", ""],
            &summary_rows(p, f, &s, &d),
        ));
        out.push(details(&name, p, f, &d));
        if f.fps.is_none() && f.frame_bytes > 0 && s.bytes_per_sec() > 0.0 {
            out.push(verdicts(&name, f, &s, &d));
        }
    }
    out
}

fn summary_rows(
    p: &PointReport,
    f: &FramesReport,
    s: &FrameSummary,
    d: &FramesSummary,
) -> Vec<Vec<String>> {
    let row = |k: &str, v: String| vec![k.to_string(), v];
    let mut rows = vec![
        row(
            "test duration",
            format!("{:.2} s", p.elapsed_ns as f64 / 1e9),
        ),
        row("frames tested", s.recorded.to_string()),
    ];
    if p.interrupted {
        rows.push(row(
            "interrupted",
            format!("{} of {} frames were started", s.started(), s.planned),
        ));
    }
    match f.fps {
        Some(_) => {
            rows.push(row("frames transferred", format!("{} in time", s.in_time)));
            rows.push(row(
                "frames dropped",
                format!(
                    "{} ({} not started in time, {} finished late)",
                    s.dropped(),
                    s.dropped_skipped,
                    s.dropped_late
                ),
            ));
        }
        None => {
            rows.push(row("frames transferred", s.transferred.to_string()));
            rows.push(row("frames dropped", s.dropped().to_string()));
        }
    }
    if let Some(r) = s.first_failed {
        let err = r
            .errno
            .map_or("unknown error".into(), iosurvey_model::document::errno_name);
        rows.push(row(
            "frames failed",
            format!("{} (first: frame {}, {err})", s.failed, r.frame),
        ));
    }
    for (k, r) in [("fastest frame", s.fastest), ("slowest frame", s.slowest)] {
        if let Some(r) = r {
            rows.push(row(
                k,
                format!("{:.3} ms (frame {})", ms(frame_ns(&r)), r.frame),
            ));
        }
    }
    rows.push(row(
        "frames per second achieved",
        format!("{:.1} fps", s.frames_per_sec()),
    ));
    rows.push(row("data rate", format_rate(s.bytes_per_sec(), MB)));
    rows.push(row(
        "slowest 1 s window",
        d.slowest_second_bytes
            .map_or("- (run shorter than 2 s)".into(), |b| {
                format_rate(b as f64, MB)
            }),
    ));
    if let Some(fps) = f.fps {
        let held = if real_time_held(s) {
            "held"
        } else {
            "NOT held"
        };
        rows.push(row(
            &format!("real time at {} fps", fps_name(fps)),
            format!(
                "{held} ({} of {} frames dropped, {} failed)",
                s.dropped(),
                s.recorded,
                s.failed
            ),
        ));
    }
    let kept = f.records.len() as u64;
    if kept < s.recorded {
        rows.push(row(
            "per-frame records",
            format!(
                "the first {kept} of {} are kept; the counts here hold all",
                s.recorded
            ),
        ));
    }
    rows
}

/// The averaged details: the last 1, 5, 10 s and the whole run.
fn details(name: &str, p: &PointReport, f: &FramesReport, d: &FramesSummary) -> String {
    let files = f.layout == FramesLayout::Files;
    let t = |v: Option<f64>, shown: bool| match v {
        Some(ns) if shown => format!("{:.3}", ns / 1e6),
        _ => "-".into(),
    };
    let rows: Vec<Vec<String>> = window_rows(d, p.elapsed_ns)
        .into_iter()
        .map(|w| {
            vec![
                w.window_ns
                    .map_or("overall".into(), |ns| format!("last {} s", ns / SEC)),
                w.frames.to_string(),
                t(w.open_ns, files),
                t(w.io_ns, true),
                t(w.close_ns, files),
                t(w.frame_ns, true),
                format!("{:.1}", w.bytes_per_sec / 1e6),
                format!("{:.1}", w.frames_per_sec),
            ]
        })
        .collect();
    super::table::table(
        &format!("Averaged details{name}"),
        &[
            "window",
            "frames",
            "open (ms)",
            "I/O (ms)",
            "close (ms)",
            "frame (ms)",
            "MB/s",
            "fps",
        ],
        &rows,
    )
}

/// Every preset at every rate, judged from the overall rate and the
/// slowest whole second, as the text's verdict table.
fn verdicts(name: &str, f: &FramesReport, s: &FrameSummary, d: &FramesSummary) -> String {
    let overall = s.bytes_per_sec();
    let slowest = d.slowest_second_bytes.map_or(overall, |b| b as f64);
    let table = verdict_table(overall, slowest);
    let mut head: Vec<String> = vec!["format".into(), "MB/frame".into()];
    if let Some(row) = table.first() {
        head.extend(row.cells.iter().map(|c| format!("{} fps", c.rate)));
    }
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> =
        table
            .iter()
            .map(|row| {
                let mark = if row.format.name == f.format {
                    " (tested)"
                } else {
                    ""
                };
                let mut cells = vec![
                    format!("{}{mark}", row.format.name),
                    format!("{:.2}", row.format.frame_bytes() as f64 / 1e6),
                ];
                cells.extend(row.cells.iter().map(|c| {
                    format!("{} {}", crate::video::ratio_text(c.ratio), c.verdict.name())
                }));
                cells
            })
            .collect();
    let ok = match d.slowest_second_bytes {
        Some(b) => format!(
            "{} in the slowest 1 s window; ok = at least {MARGIN}x the rate needed and that \
             window kept up",
            format_rate(b as f64, MB)
        ),
        None => format!(
            "run shorter than 2 s, no window check; ok = at least {MARGIN}x the rate needed"
        ),
    };
    super::table::table(
        &format!(
            "Real-time verdict{name}: {} overall, {ok}; low = at least the rate needed, \
             no = below it",
            format_rate(overall, MB)
        ),
        &head,
        &rows,
    )
}
