//! Running a Plan: open its targets once, run each point, save the report
//! after every point, and print it in the requested form. Shared by every
//! mode.

use crate::cli::{OutputFlags, TargetFlags};
use crate::exit::{usage, Failure, Outcome};
use crate::{output, progress, targets};
use anyhow::anyhow;
use iosurvey_report::{render_csv, PointReport, RunReport, TextOptions, ToolInfo, SCHEMA_VERSION};
use iosurvey_run::{run_point, HostInfo, JobResult};
use iosurvey_workload::modes::describe::describe;
use iosurvey_workload::Plan;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Sets a flag on SIGINT or SIGTERM; a second signal exits at once (130).
pub fn stop_flag() -> Arc<AtomicBool> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop));
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    stop
}

/// How a mode presents its report. Every presenter is a pure function of the
/// report; `after_point` saves mode-specific files as each point ends.
pub trait Presenter {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String;
    fn csv(&self, report: &RunReport) -> String {
        render_csv(report)
    }
    fn after_point(&self, _report: &RunReport) -> Result<(), Failure> {
        Ok(())
    }
    /// A line for stderr once the targets have passed the guard and the
    /// checks, before any is opened or laid out (so a refusal is the only
    /// line printed); not with --quiet.
    fn banner(&self) -> Option<&str> {
        None
    }
}

/// A presenter made of a text function, with the generic CSV.
pub struct TextOnly(pub fn(&RunReport, TextOptions) -> String);

impl Presenter for TextOnly {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        (self.0)(report, opts)
    }
}

/// Runs `plan` and presents it (text or JSON on stdout, `--json`, `--csv`).
/// With `--dry-run`, prints the plan and its estimated duration instead.
pub fn execute(
    plan: &Plan,
    argv: &[String],
    tflags: &TargetFlags,
    oflags: &OutputFlags,
    presenter: &dyn Presenter,
) -> Result<Outcome, Failure> {
    if oflags.dry_run {
        targets::check_all(plan, tflags)?;
        output::print_text(&describe(plan));
        return Ok(Outcome::Ok);
    }
    let stop = stop_flag();
    let mut report = RunReport {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::default(),
        command_line: argv.to_vec(),
        started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        host: HostInfo::current(),
        mode: plan.mode.clone(),
        points: Vec::new(),
        shared: tflags.shared,
    };
    let banner = presenter.banner().filter(|_| !oflags.quiet);
    let targets = targets::open_all(plan, tflags, oflags.quiet, banner, &stop)?;
    let mut display = match progress::Display::new(oflags) {
        Ok(d) => d,
        Err(e) => {
            let live = oflags.live.as_deref().unwrap_or(std::path::Path::new(""));
            return usage(anyhow!("--live {}: {e}", live.display()));
        }
    };
    let mut outcome = Outcome::Ok;
    for point in &plan.points {
        if stop.load(Ordering::Relaxed) {
            outcome = Outcome::Interrupted;
            break;
        }
        if point.skip.is_some() {
            let nothing = JobResult {
                streams: vec![Default::default(); point.job.streams.len()],
                ..Default::default()
            };
            report
                .points
                .push(PointReport::new(point, &targets, &nothing));
            output::save(&report, oflags, presenter)?;
            continue;
        }
        let result = match run_point(point, &targets, &stop, &mut display) {
            Ok(r) => r,
            Err(e) => {
                output::print(&report, oflags, presenter);
                return Err(Failure::Run(e.into()));
            }
        };
        report
            .points
            .push(PointReport::new(point, &targets, &result));
        output::save(&report, oflags, presenter)?;
        if result.interrupted {
            outcome = Outcome::Interrupted;
            break;
        }
        if result.first_failure.is_some() {
            outcome = Outcome::IoFailed;
        }
    }
    output::print(&report, oflags, presenter);
    Ok(outcome)
}
