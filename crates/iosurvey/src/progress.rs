//! What a running point shows: a progress bar on a terminal (elapsed and
//! remaining time, live MB/s and IOPS) and, with `--live FILE`, one JSON
//! line per interval, flushed as written.

use crate::cli::OutputFlags;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iosurvey_report::{format_rate, TextOptions};
use iosurvey_run::{JobResult, Observer, Progress};
use iosurvey_workload::Point;
use serde::Serialize;
use std::io::{IsTerminal, Write};

/// One line of `--live`: what completed in one interval of the measured
/// phase. Sampled at the runner's tick (about 100 ms), so boundaries are
/// approximate; the report's `series` is exact.
#[derive(Serialize)]
struct LiveLine {
    point: usize,
    interval: u64,
    /// End of the sample, from the start of the measured phase.
    t_ns: u64,
    /// Length of the sample.
    dt_ns: u64,
    ops: u64,
    bytes: u64,
    iops: f64,
    bytes_per_sec: f64,
}

/// Drives the progress bar and the live stream.
pub struct Display {
    bar: Option<ProgressBar>,
    live: Option<std::fs::File>,
    units: TextOptions,
    ramp_ns: u64,
    interval_ns: u64,
    next_interval: u64,
    last: Progress,
    /// Last sample for the bar's rate, about a second back.
    rate_from: Progress,
}

impl Display {
    /// A display for the flags; `--live` errors are the caller's to report.
    pub fn new(flags: &OutputFlags) -> std::io::Result<Self> {
        let live = match &flags.live {
            Some(p) => Some(std::fs::File::create(p)?),
            None => None,
        };
        let show_bar = !flags.quiet && std::io::stderr().is_terminal();
        Ok(Display {
            bar: show_bar.then(ProgressBar::hidden),
            live,
            units: TextOptions { mib: flags.mib },
            ramp_ns: 0,
            interval_ns: 1_000_000_000,
            next_interval: 0,
            last: Progress::default(),
            rate_from: Progress::default(),
        })
    }

    fn write_live(&mut self, point: usize, p: Progress) {
        let Some(f) = &mut self.live else { return };
        if p.elapsed_ns < self.ramp_ns {
            return;
        }
        let measured = p.elapsed_ns - self.ramp_ns;
        let boundary = (self.next_interval + 1) * self.interval_ns;
        if measured < boundary {
            return;
        }
        let dt = p.elapsed_ns.saturating_sub(self.last.elapsed_ns).max(1);
        let (ops, bytes) = (p.ops - self.last.ops, p.bytes - self.last.bytes);
        let line = LiveLine {
            point,
            interval: self.next_interval,
            t_ns: measured,
            dt_ns: dt,
            ops,
            bytes,
            iops: ops as f64 * 1e9 / dt as f64,
            bytes_per_sec: bytes as f64 * 1e9 / dt as f64,
        };
        if let Ok(s) = serde_json::to_string(&line) {
            let _ = writeln!(f, "{s}");
            let _ = f.flush();
        }
        self.next_interval = measured / self.interval_ns;
        self.last = p;
    }
}

impl Observer for Display {
    fn point_started(&mut self, point: &Point) {
        let b = &point.job.bounds;
        self.ramp_ns = b.ramp.as_nanos() as u64;
        self.interval_ns = point.job.interval.as_nanos() as u64;
        self.next_interval = 0;
        self.last = Progress {
            elapsed_ns: self.ramp_ns,
            ..Default::default()
        };
        self.rate_from = Progress::default();
        if let Some(bar) = &mut self.bar {
            // A paced video point lasts its frames over its rate.
            let paced = point
                .job
                .frames
                .as_ref()
                .and_then(|f| f.fps.map(|r| r.duration_of(f.transfers())));
            let total_ms = b
                .time
                .map(|t| t + b.ramp)
                .or(paced)
                .map(|t| t.as_millis() as u64);
            let new = ProgressBar::with_draw_target(total_ms, ProgressDrawTarget::stderr());
            let style = match total_ms {
                Some(_) => "{prefix} [{bar:30}] {elapsed_precise} / -{eta_precise}  {msg}",
                None => "{prefix} {spinner} {elapsed_precise}  {msg}",
            };
            new.set_style(
                ProgressStyle::with_template(style)
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            new.set_prefix(point.label.clone());
            *bar = new;
        }
    }

    fn tick(&mut self, point: &Point, p: Progress) {
        self.write_live(point.index, p);
        if let Some(bar) = &self.bar {
            bar.set_position(p.elapsed_ns / 1_000_000);
            let dt = p.elapsed_ns.saturating_sub(self.rate_from.elapsed_ns);
            if dt >= 1_000_000_000 || self.rate_from.elapsed_ns == 0 {
                let secs = dt.max(1) as f64 / 1e9;
                let rate = (p.bytes - self.rate_from.bytes) as f64 / secs;
                let iops = (p.ops - self.rate_from.ops) as f64 / secs;
                let phase = if p.elapsed_ns < self.ramp_ns {
                    "ramp "
                } else {
                    ""
                };
                // A video point's ops are whole frames.
                let unit = if point.job.frames.is_some() {
                    "fps"
                } else {
                    "IOPS"
                };
                bar.set_message(format!(
                    "{phase}{}  {:.0} {unit}",
                    format_rate(rate, self.units),
                    iops
                ));
                self.rate_from = p;
            }
        }
    }

    fn point_finished(&mut self, _point: &Point, _result: &JobResult) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
