//! What a running point shows: a progress bar on a terminal (elapsed and
//! remaining time, live MB/s and IOPS) and, with `--live FILE`, one JSON
//! line per interval, target and direction, written as the interval ends
//! ([`crate::live_lines`]). Each point that runs ends with lines marked
//! `partial` that carry the rest, so a point's lines add up to its totals
//! in the report. A failed `--live` write is said once on stderr,
//! ends the stream (the run goes on) and makes the run exit 1; a closed
//! stdout under `--live -` stops the run as Ctrl-C does.

use crate::live_lines::{LiveLine, LiveLines};
use crate::output::write_stdout;
use crate::plan_progress::{planned, PlanProgress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iosurvey_report::{format_rate, TextOptions};
use iosurvey_run::{IntervalRow, JobResult, LiveSnapshot, Observer, Progress};
use iosurvey_target::output::path::OutPath;
use iosurvey_workload::{Plan, Point};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the live lines go, opened once the targets have passed the guard.
enum LiveSink {
    Stdout,
    File(std::fs::File),
}

/// Opens `--live` (see [`crate::output::open_appended`]).
fn open_live(out: &OutPath, stop: &AtomicBool) -> anyhow::Result<LiveSink> {
    Ok(match crate::output::open_appended(out, stop)? {
        Some(f) => LiveSink::File(f),
        None => LiveSink::Stdout,
    })
}

/// Drives the progress bar and the live stream.
pub struct Display {
    bar: Option<ProgressBar>,
    live: Option<LiveSink>,
    live_shown: String,
    /// Set when a `--live` write failed; the run then exits 1.
    pub live_failed: bool,
    stop: Arc<AtomicBool>,
    stdout_closed: Arc<AtomicBool>,
    units: TextOptions,
    ramp_ns: u64,
    lines: LiveLines,
    /// Whether the point under way has a planned length (its bar fills).
    timed: bool,
    quiet: bool,
    /// A plan of several points: where it is.
    plan: Option<PlanProgress>,
    run_started: Option<Instant>,
    /// Last sample for the bar's rate, about a second back.
    rate_from: Progress,
    /// `--metrics-file`, `--metrics-push`, once the targets are open.
    pub metrics: Option<crate::metrics::Metrics>,
}

impl Display {
    /// A display for the flags, with `--live` (judged already) opened; a
    /// FIFO's reader is waited for until `stop` is set.
    /// A failed `--live` write sets `stop` and `stdout_closed` when the
    /// stream was stdout and its reader went away.
    pub fn new(
        quiet: bool,
        mib: bool,
        live: Option<&OutPath>,
        stop: Arc<AtomicBool>,
        stdout_closed: Arc<AtomicBool>,
    ) -> anyhow::Result<Self> {
        let sink = live.map(|o| open_live(o, &stop)).transpose()?;
        let show_bar = !quiet && std::io::stderr().is_terminal();
        Ok(Display {
            bar: show_bar.then(ProgressBar::hidden),
            live: sink,
            live_shown: live.map(OutPath::shown).unwrap_or_default(),
            live_failed: false,
            stop,
            stdout_closed,
            units: TextOptions { mib },
            ramp_ns: 0,
            lines: LiveLines::default(),
            timed: false,
            quiet,
            plan: None,
            run_started: None,
            rate_from: Progress::default(),
            metrics: None,
        })
    }

    /// Writes one line; a failure ends the stream and is said once.
    fn emit(&mut self, line: &LiveLine) {
        let Some(sink) = &mut self.live else { return };
        let Ok(mut s) = serde_json::to_string(line) else {
            return;
        };
        s.push('\n');
        let written = match sink {
            LiveSink::Stdout => write_stdout(&s),
            LiveSink::File(f) => f.write_all(s.as_bytes()),
        };
        let Err(e) = written else { return };
        let to_stdout = matches!(sink, LiveSink::Stdout);
        self.live = None;
        if to_stdout && e.kind() == std::io::ErrorKind::BrokenPipe {
            self.stdout_closed.store(true, Ordering::Relaxed);
            self.stop.store(true, Ordering::Relaxed);
            return;
        }
        self.live_failed = true;
        let msg = format!(
            "iosurvey: {}: writing failed: {e}; no more live lines, the run goes on and will exit 1",
            self.live_shown
        );
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{msg}")),
            None => eprintln!("{msg}"),
        }
    }

    /// Where a plan of several points is, on the terminal and on stderr
    /// (see [`PlanProgress`]); not with `--quiet`.
    pub fn set_plan(&mut self, plan: &Plan, repeats: u32) {
        if !self.quiet {
            self.plan = PlanProgress::of(plan, repeats);
        }
    }

    /// Run `k` of the plan (repeats included) is about to start, whether
    /// it runs here or not.
    pub fn at_run(&mut self, k: usize) {
        let now = Instant::now();
        if let Some(plan) = &mut self.plan {
            plan.start(k, self.run_started.map(|t| now - t));
        }
        self.run_started = Some(now);
    }

    /// The bar's look: one line of a terminal 80 columns wide: the label
    /// (a survey's `rsz=1MiB crg=4 thr=16 write` whole) and the rates are
    /// cut to their columns, the time is elapsed over the point's length,
    /// and the bar takes what is left; over it, in a plan of several
    /// points, where the plan is, `into` the point.
    fn style(&self, into: Duration) -> ProgressStyle {
        let line = match self.timed {
            true => "{prefix:28!} [{wide_bar}] {elapsed_precise}/{duration_precise} {msg:26!}",
            false => "{prefix:28!} {spinner} {elapsed_precise} {msg:26!}",
        };
        let template = match &self.plan {
            Some(plan) => format!("{}\n{line}", plan.text(into)),
            None => line.to_string(),
        };
        ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ")
    }

    /// Writes the lines of `rows` (see [`LiveLines::rows`]).
    fn write_rows(&mut self, point: &Point, rows: &[IntervalRow], last: bool) {
        if self.live.is_none() {
            return;
        }
        for line in self.lines.rows(point, rows, last) {
            self.emit(&line);
        }
    }

    /// The point's last lines, so that its lines add up to `result`.
    fn finish_live(&mut self, point: &Point, result: &JobResult) {
        if self.live.is_none() {
            return;
        }
        for line in self.lines.finish(point, result) {
            self.emit(&line);
        }
    }
}

impl Observer for Display {
    fn point_started(&mut self, point: &Point) {
        if let Some(m) = &mut self.metrics {
            m.point_started(point);
        }
        let b = &point.job.bounds;
        self.ramp_ns = b.ramp.as_nanos() as u64;
        self.lines.start(point);
        self.rate_from = Progress::default();
        if self.bar.is_some() {
            // Its time and ramp, or a paced video point's frames over
            // its rate.
            let total_ms = planned(point).map(|t| t.as_millis() as u64);
            let new = ProgressBar::with_draw_target(total_ms, ProgressDrawTarget::stderr());
            self.timed = total_ms.is_some();
            new.set_style(self.style(Duration::ZERO));
            new.set_prefix(point.label.clone());
            self.bar = Some(new);
        } else if let Some(plan) = &self.plan {
            // Not a terminal: a plain line per point, no carriage returns.
            eprintln!("iosurvey: {}: {}", plan.text(Duration::ZERO), point.label);
        }
    }

    fn tick(&mut self, point: &Point, p: Progress) {
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
                // A video point's ops are whole frames: how many of how
                // many, and their rate.
                let text = match point.job.frames() {
                    Some(f) => format!("{phase}{}/{} frames {:.0} fps", p.ops, f.transfers(), iops),
                    None => format!("{phase}{} {:.0} IOPS", format_rate(rate, self.units), iops),
                };
                bar.set_message(text);
                if self.plan.is_some() {
                    bar.set_style(self.style(Duration::from_nanos(p.elapsed_ns)));
                }
                self.rate_from = p;
            }
        }
    }

    fn wants_live(&self) -> bool {
        self.metrics.is_some()
    }

    fn live(&mut self, _point: &Point, snapshot: &LiveSnapshot) {
        if let Some(m) = &mut self.metrics {
            m.live(snapshot);
        }
    }

    fn intervals(&mut self, point: &Point, rows: &[IntervalRow], last: bool) {
        self.write_rows(point, rows, last);
    }

    fn point_finished(&mut self, point: &Point, result: &JobResult) {
        self.finish_live(point, result);
        if let Some(m) = &mut self.metrics {
            m.point_finished(point, result);
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
