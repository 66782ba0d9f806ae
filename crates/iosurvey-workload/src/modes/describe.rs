//! `--dry-run`: a plan in words, with its estimated duration. Pure.

use crate::units::format_size;
use crate::{Mix, Plan};
use std::fmt::Write;
use std::time::Duration;

/// The estimated run time: every time-bounded point's ramp and time, and
/// every paced frame point's frames over its rate, or `None` when some
/// point ends on bytes (its time depends on the device).
pub fn estimate(plan: &Plan) -> Option<Duration> {
    plan.points
        .iter()
        .filter(|p| p.skip.is_none())
        .map(|p| match (&p.job.frames(), p.job.bounds.time) {
            (Some(f), _) => f.fps.map(|r| r.duration_of(f.transfers())),
            (None, t) => t.map(|t| t + p.job.bounds.ramp),
        })
        .sum()
}

/// A frame point in words.
fn describe_frames(j: &crate::Job, f: &crate::FrameJob) -> String {
    let verb = f.op.name();
    let layout = match f.layout {
        crate::FrameLayout::Files { files_per_dir: 0 } => "one file per frame".to_string(),
        crate::FrameLayout::Files { files_per_dir } => {
            format!("one file per frame, {files_per_dir} per directory")
        }
        crate::FrameLayout::Stream => "one stream".to_string(),
    };
    let pace = match f.fps {
        Some(r) => format!("at {:.3} fps, queue {}", r.value(), f.queue),
        None => "unpaced".to_string(),
    };
    let loops = if f.loops > 1 {
        format!(", {} loops", f.loops)
    } else {
        String::new()
    };
    let size = if f.frame_bytes == 0 {
        "no data: create or open, then close".to_string()
    } else {
        format!(
            "{} bytes, {} I/Os of {}",
            f.frame_bytes,
            f.depth,
            format_size(j.streams.first().map_or(f.frame_bytes, |s| s.bs))
        )
    };
    format!(
        "{verb} {} frames of {} ({size}) by {} threads in {}, {layout}, order {}, {pace}{loops}",
        f.frames,
        f.format,
        j.workers,
        j.targets[0].path.display(),
        f.order.name(),
    )
}

/// One line per point, then the estimate.
pub fn describe(plan: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} plan: {} points", plan.mode, plan.points.len());
    for p in &plan.points {
        let j = &p.job;
        if let Some(f) = j.frames() {
            let _ = writeln!(out, "{:>4} {}: {}", p.index, p.label, describe_frames(j, f));
            continue;
        }
        let streams: Vec<String> = j
            .streams
            .iter()
            .map(|s| {
                let op = match s.mix {
                    Mix::Read => "read".to_string(),
                    Mix::Write => "write".to_string(),
                    Mix::Mixed { read_pct } => format!("{read_pct}% read"),
                    Mix::Trims { trim_pct: 100, .. } => "trim".to_string(),
                    Mix::Trims { trim_pct, read_pct } => {
                        format!("{trim_pct}% trim, the rest {read_pct}% read")
                    }
                };
                format!(
                    "{} {} {} {} x{} at {}{}",
                    j.targets[s.target].path.display(),
                    s.pattern.name(),
                    op,
                    format_size(s.bs),
                    s.outstanding,
                    s.offset,
                    if s.wrap { "" } else { ", one pass at most" }
                )
            })
            .collect();
        let bound = match (j.bounds.time, j.bounds.bytes) {
            (Some(t), Some(b)) => format!("{t:?} or {b} bytes"),
            (Some(t), None) => format!("{t:?}"),
            (None, Some(b)) => format!("{b} bytes per stream"),
            (None, None) => "one pass".into(),
        };
        // After an unmeasured warm-up, by time or by bytes.
        let bound = match (j.bounds.ramp, j.warm_bytes) {
            (_, w @ 1..) => format!("{bound} after {w} bytes unmeasured"),
            (r, _) if !r.is_zero() => format!("{bound} after {r:?} unmeasured"),
            _ => bound,
        };
        let skip = p
            .skip
            .as_deref()
            .map(|r| format!(" [skipped: {r}]"))
            .unwrap_or_default();
        let shown = if streams.len() > 4 {
            format!(
                "{}; ... ({} streams)",
                streams[..4].join("; "),
                streams.len()
            )
        } else {
            streams.join("; ")
        };
        let _ = writeln!(
            out,
            "{:>4} {}: {} workers, {}{}: {}",
            p.index, p.label, j.workers, bound, skip, shown
        );
    }
    match estimate(plan) {
        Some(t) => {
            let _ = writeln!(out, "estimated duration: {} s", t.as_secs());
        }
        None => {
            let _ = writeln!(out, "estimated duration: unknown (points bounded by bytes take as long as the device needs)");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::quick::{expand, QuickSpec};

    #[test]
    fn a_paced_video_plan_is_estimated_from_its_frames() {
        use crate::modes::video::{self, VideoSpec};
        let mut s = VideoSpec::new("/m".into());
        s.frames = 240;
        let plan = video::expand(&s).unwrap();
        assert_eq!(
            estimate(&plan),
            None,
            "unpaced frames take as long as the device needs"
        );
        s.fps = Some(crate::Fps { num: 24, den: 1 });
        let plan = video::expand(&s).unwrap();
        assert_eq!(estimate(&plan), Some(Duration::from_secs(10)));
        let text = describe(&plan);
        assert!(
            text.contains("read 240 frames of hd-422 (4149248 bytes, 1 I/Os of")
                && text.contains("one file per frame")
                && text.contains("at 24.000 fps, queue 4"),
            "{text}"
        );
    }

    #[test]
    fn a_time_bounded_plan_has_an_estimate() {
        let plan = expand(&QuickSpec::new("/x".into()));
        assert_eq!(estimate(&plan), Some(Duration::from_secs(48)));
        let text = describe(&plan);
        assert!(
            text.contains("8 points") && text.contains("estimated duration: 48 s"),
            "{text}"
        );
    }
}
