//! `iosurvey run`: flags to a RunSpec, expand to a Plan, open the targets,
//! run each point, report.

use crate::cli::{EngineArg, RunArgs};
use crate::exit::{usage, Failure, Outcome};
use crate::{output, progress, targets};
use anyhow::anyhow;
use iosurvey_engine::EngineKind;
use iosurvey_report::{PointReport, RunReport, ToolInfo, SCHEMA_VERSION};
use iosurvey_run::{run_point, HostInfo};
use iosurvey_workload::modes::run::{expand, RunSpec};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn spec_from(a: &RunArgs) -> Result<RunSpec, Failure> {
    let mut s = RunSpec::new(a.targets.clone());
    s.rw = match a.rw.parse() {
        Ok(rw) => rw,
        Err(e) => return usage(e),
    };
    s.mix = match a.mix {
        Some(m) if m > 100 => {
            return usage(anyhow!(
                "--mix {m} is out of range: give the percentage of reads, 0 to 100"
            ))
        }
        m => m.map(|m| m as u8),
    };
    s.bs = a.bs;
    s.qd = a.qd;
    s.workers = a.workers;
    s.size = a.size;
    s.time = a.time;
    s.bytes = a.bytes;
    s.ramp = a.ramp;
    s.offset = a.offset;
    s.span = a.span;
    s.regions = a.regions;
    s.seed = a.seed;
    s.interval = a.interval;
    s.continue_on_error = a.continue_on_error;
    s.direct = !a.target.buffered;
    s.engine = match a.target.engine {
        EngineArg::Uring => EngineKind::Uring,
        EngineArg::Sync => EngineKind::Sync,
    };
    Ok(s)
}

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

pub fn run(a: RunArgs, argv: &[String]) -> Result<Outcome, Failure> {
    let spec = spec_from(&a)?;
    let plan = match expand(&spec) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let stop = stop_flag();
    let mut report = RunReport {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::default(),
        command_line: argv.to_vec(),
        started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        host: HostInfo::current(),
        mode: plan.mode.clone(),
        points: Vec::new(),
    };
    let mut outcome = Outcome::Ok;
    let targets = targets::open_all(&plan, &a.target, a.out.quiet, &stop)?;
    let mut display = match progress::Display::new(&a.out) {
        Ok(d) => d,
        Err(e) => {
            return usage(anyhow!(
                "--live {}: {e}",
                a.out
                    .live
                    .as_deref()
                    .unwrap_or(std::path::Path::new(""))
                    .display()
            ))
        }
    };
    for point in &plan.points {
        if stop.load(Ordering::Relaxed) {
            outcome = Outcome::Interrupted;
            break;
        }
        let result =
            run_point(point, &targets, &stop, &mut display).map_err(|e| Failure::Run(e.into()))?;
        report
            .points
            .push(PointReport::new(point, &targets, &result));
        output::save(&report, &a.out)?;
        if result.interrupted {
            outcome = Outcome::Interrupted;
            break;
        }
        if result.first_failure.is_some() {
            outcome = Outcome::IoFailed;
        }
    }
    output::print(&report, &a.out);
    Ok(outcome)
}
