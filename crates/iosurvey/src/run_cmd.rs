//! `iosurvey run`: flags to a RunSpec, expand to a Plan, open the targets,
//! run each point, report.

use crate::cli::{RunArgs, SimulateArg};
use crate::execute::{execute, TextOnly};
use crate::exit::{usage, Failure, Outcome};
use anyhow::anyhow;
use iosurvey_workload::modes::run::{expand, RunSpec};
use iosurvey_workload::Layout;

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
    s.simulate = a.simulate.map(|l| match l {
        SimulateArg::Concat => Layout::Concat,
        SimulateArg::Raid0 => Layout::Raid0 { stripe: a.stripe },
    });
    s.direct = !a.target.buffered;
    s.engine = a.target.engine_or_uring();
    Ok(s)
}

pub fn run(a: RunArgs, argv: &[String]) -> Result<Outcome, Failure> {
    let spec = spec_from(&a)?;
    let plan = match expand(&spec) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    execute(
        &plan,
        argv,
        &a.target,
        &a.out,
        &TextOnly(iosurvey_report::render_text),
    )
}
