//! `iosurvey parallel`: parallel `dd` across devices, rated over the window
//! in which all of them ran; `--scale` adds devices one step at a time and
//! marks the knee.

use crate::flags::common::{duration, size, OutputFlags, TargetFlags};
use clap::Args;
use iosurvey_model::document::RunReport;
use iosurvey_report::parallel::{render_parallel, render_parallel_csv};
use iosurvey_report::TextOptions;
use iosurvey_session::presenter::Presenter;
use iosurvey_session::Cluster;
use iosurvey_session::{run_plan, Session};
use iosurvey_session::{usage, Failure, Outcome};
use iosurvey_workload::modes::parallel::{all_steps, expand, ParallelSpec};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ParallelArgs {
    /// Block devices (or files), one sequential stream each.
    #[arg(required = true, value_name = "DEV")]
    pub devices: Vec<PathBuf>,
    /// Block size per I/O.
    #[arg(long, value_parser = size, default_value = "1m")]
    pub bs: u64,
    /// Outstanding I/Os per device (dd has 1).
    #[arg(long, default_value_t = 1)]
    pub qd: u32,
    /// Measured time of each step (a device whose pass reaches its end sooner stops there, unless --loop). Default 10s, or none with --bytes.
    #[arg(long, value_parser = duration)]
    pub time: Option<Duration>,
    /// Bytes each device moves in each step, like dd's count= (times bs=); with --time too, whichever comes first.
    #[arg(long, value_parser = size)]
    pub bytes: Option<u64>,
    /// Unmeasured warm-up of each step.
    #[arg(long, value_parser = duration, default_value = "0s")]
    pub ramp: Duration,
    /// Run with 1, 2, ... N devices and print the scaling table.
    #[arg(long)]
    pub scale: bool,
    /// Device counts to run (implies --scale), e.g. 1,2,4.
    #[arg(long, value_delimiter = ',')]
    pub steps: Vec<usize>,
    /// Go round to the start of a device at its end until --time is up; without it each device's pass ends at its end, like dd.
    #[arg(long = "loop")]
    pub wrap: bool,
    /// Write instead of read (needs --allow-destroy on devices).
    #[arg(long)]
    pub write: bool,
    /// Create missing files at this size (to try it on files).
    #[arg(long, value_parser = size)]
    pub size: Option<u64>,
    #[command(flatten)]
    pub target: TargetFlags,
    #[command(flatten)]
    pub out: OutputFlags,
}

struct ParallelPresenter;

impl Presenter for ParallelPresenter {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        render_parallel(report, opts)
    }
    fn csv(&self, report: &RunReport) -> String {
        render_parallel_csv(report)
    }
}

pub fn parallel(
    a: ParallelArgs,
    argv: &[String],
    cluster: &dyn Cluster,
) -> Result<Outcome, Failure> {
    let mut spec = ParallelSpec::new(cluster.localize_targets(&a.devices)?);
    spec.bs = a.bs;
    spec.qd = a.qd;
    spec.time = match (a.time, a.bytes) {
        (None, None) => Some(Duration::from_secs(10)),
        (t, _) => t,
    };
    spec.bytes = a.bytes;
    spec.ramp = a.ramp;
    spec.write = a.write;
    spec.wrap = a.wrap;
    spec.size = a.size;
    spec.engine = a.target.engine_or_uring();
    spec.engine_flags = crate::flags::common::engine_flags(&a.target);
    spec.direct = !a.target.buffered;
    spec.steps = if !a.steps.is_empty() {
        a.steps.clone()
    } else if a.scale {
        all_steps(a.devices.len())
    } else {
        Vec::new()
    };
    let plan = match expand(&spec) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    run_plan(
        &plan,
        &ParallelPresenter,
        &Session {
            argv,
            tflags: &a.target.options(),
            oflags: &a.out.options(),
            cluster,
            banner: None,
        },
    )
}
