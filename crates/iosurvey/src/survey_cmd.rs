//! `iosurvey survey`: Lustre sgpdd-survey. Flags to a SurveySpec (after
//! probing each device's logical block size and the machine's RAM, without
//! I/O), expand, run every point on all devices at once, and print
//! sgpdd-survey's summary lines; `--out PREFIX` also keeps its `.summary`
//! and `.detail` files, rewritten as each point ends.

use crate::flags::common::{size, OutputFlags, TargetFlags};
use crate::flags::listed::{action_names, listed};
use anyhow::anyhow;
use clap::builder::StringValueParser;
use clap::{Args, ValueEnum};
use iosurvey_model::document::RunReport;
use iosurvey_report::survey::{render_detail, render_summary, render_survey_csv, Layout};
use iosurvey_report::TextOptions;
use iosurvey_run::{HostInfo, HostProbe};
use iosurvey_session::presenter::{FileBody, Presenter};
use iosurvey_session::Cluster;
use iosurvey_session::{run_plan, Session};
use iosurvey_session::{usage, Failure, Outcome};
use iosurvey_target::guard::WritePolicy;
use iosurvey_target::target::{plan_geometry, OpenOptions};
use iosurvey_workload::modes::survey::{expand, parse_actions, Action, SurveySpec};
use iosurvey_workload::units::format_size;
use iosurvey_workload::{Plan, TargetSpec};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// `dev N sz ...K rsz ...K crg C thr T write AGG [ MIN, MAX]` (sgpdd-survey since 2013).
    Current,
    /// `total_size ...K rsz R crg C thr T write AGG MB/s N x MIN = PRODUCT MB/s` (older sgpdd-survey).
    Legacy,
}

#[derive(Args, Debug)]
pub struct SurveyArgs {
    /// Block devices, surveyed all at once; write actions DESTROY their data (--allow-destroy). Files work too: an existing file at its own size, or a missing path (not under /dev) created as a test file of --size plus the boundary and removed afterwards.
    #[arg(required = true, value_name = "DEV")]
    pub devices: Vec<PathBuf>,
    /// Bytes per device, split into crg equal regions (sgpdd-survey's `size`, there in MB).
    #[arg(long, value_parser = size)]
    pub size: Option<u64>,
    /// Smallest record size (bytes per I/O); doubles up to --rszhi. A multiple of every device's logical block size.
    #[arg(long, value_parser = size, default_value = "1m")]
    pub rszlo: u64,
    /// Largest record size.
    #[arg(long, value_parser = size, default_value = "1m")]
    pub rszhi: u64,
    /// Fewest concurrent regions per device; doubles up to --crghi. Each region is one sequential pass.
    #[arg(long, default_value_t = 1)]
    pub crglo: u32,
    /// Most concurrent regions per device.
    #[arg(long, default_value_t = 256)]
    pub crghi: u32,
    /// Fewest outstanding I/Os per device (sgpdd-survey's threads), shared among its regions, thr/crg each; doubles up to --thrhi. They are io_uring slots, not threads.
    #[arg(long, default_value_t = 1)]
    pub thrlo: u32,
    /// Most outstanding I/Os per device.
    #[arg(long, default_value_t = 4096)]
    pub thrhi: u32,
    /// What each point does, in order: write, read, or write,read.
    #[arg(long, default_value = "write,read", value_parser = listed(StringValueParser::new(), action_names))]
    pub actions: String,
    /// Logical blocks of each device left alone before the first region.
    #[arg(long, value_name = "BLOCKS", default_value_t = 1024)]
    pub boundary: u64,
    /// Skip points with more than N outstanding I/Os per region (and with thr < crg), as sgpdd-survey does.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub max_per_region: u32,
    /// End each point when this time is up, even if its regions have not finished their pass (sgpdd-survey has no such bound: without it each region moves its share of --size).
    #[arg(long, value_parser = crate::flags::common::duration)]
    pub time: Option<Duration>,
    /// Summary layout. Either way rates are MiB/s (2^20 bytes/s) as sgpdd-survey's are, although its legacy layout labels them MB/s; --mib changes nothing here.
    #[arg(long, value_enum, default_value = "current")]
    pub format: FormatArg,
    /// Also write PREFIX.summary (the lines printed on stdout) and PREFIX.detail (one line per region per point), both rewritten as each point ends. Without --out no file is written (sgpdd-survey wrote /tmp/sgpdd_survey_<date> unasked).
    #[arg(long = "out", value_name = "PREFIX")]
    pub prefix: Option<PathBuf>,
    #[command(flatten)]
    pub target: TargetFlags,
    #[command(flatten)]
    pub out: OutputFlags,
}

/// What a device is before anything is written: its logical block size,
/// and its size when it exists (a test file still to create has none).
/// The write guard runs here already, so a refusal comes first.
fn probe(
    dev: &Path,
    size: u64,
    writes: bool,
    a: &SurveyArgs,
) -> Result<(u64, Option<u64>), Failure> {
    let exists = dev.exists();
    if !exists && dev.starts_with("/dev") {
        return usage(anyhow!(
            "{}: no such device; name an existing block device (test files are created only outside /dev)",
            dev.display()
        ));
    }
    let spec = TargetSpec {
        path: dev.to_path_buf(),
        create_size: Some(size),
    };
    let opts = OpenOptions {
        write: writes,
        trim: false,
        direct: !a.target.buffered,
        policy: WritePolicy {
            allow_destroy: a.target.allow_destroy,
            force: a.target.force,
            readonly: a.target.readonly,
        },
        stop: None,
    };
    let g = plan_geometry(&spec, opts).map_err(|e| Failure::Usage(e.into()))?;
    Ok((
        g.logical_block_size,
        (exists && !dev.is_dir()).then_some(g.size),
    ))
}

/// MemTotal, for sgpdd-survey's memory check (with the cgroup's limit or
/// --memory-limit when lower).
fn mem_total() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or_else(|| HostInfo::current().memory_bytes)
}

fn spec_from(
    a: &SurveyArgs,
    cluster: &dyn Cluster,
) -> Result<(SurveySpec, Vec<Option<u64>>), Failure> {
    let size = match a.size {
        None => {
            return usage(anyhow!(
                "--size is required: the bytes to survey per device, e.g. --size 8g (or sgpdd-survey's size=8192, in MB, with scsidevs)"
            ))
        }
        Some(0) => return usage(anyhow!("--size must be greater than zero")),
        Some(s) => s,
    };
    let actions = parse_actions(&a.actions).or_else(usage)?;
    let writes = actions.contains(&Action::Write);
    // `host:/dev/sdX` as sgpdd-survey takes it: each probed on its host.
    let devices = cluster.localize_targets(&a.devices)?;
    let probed = iosurvey_session::probe_each(cluster, |dev| {
        probe(dev, size, writes, a).map_err(|e| iosurvey_session::failure::verdict(&e))
    })?;
    let (block_sizes, sizes) = probed.into_iter().unzip();
    let mut s = SurveySpec::new(devices, block_sizes, size);
    (s.rsz_lo, s.rsz_hi) = (a.rszlo, a.rszhi);
    (s.crg_lo, s.crg_hi) = (a.crglo, a.crghi);
    (s.thr_lo, s.thr_hi) = (a.thrlo, a.thrhi);
    s.actions = actions;
    s.boundary = a.boundary;
    s.max_per_region = a.max_per_region;
    s.time = a.time;
    // sgpdd-survey's memory check, with the smallest host's memory under
    // MPI, so that every rank skips the same points; the memory is the
    // host's, or less: the memory cgroup's limit, or --memory-limit.
    let limit = match a.target.memory_limit {
        Some(bytes) => Some(bytes),
        None => iosurvey_target::memory_limit::cgroup_limit().map(|l| l.bytes),
    };
    let memory = limit.map_or(mem_total(), |l| l.min(mem_total()));
    s.mem_total = cluster.min_u64(memory);
    s.engine = a.target.engine_or_uring();
    s.engine_flags = crate::flags::common::engine_flags(&a.target);
    s.direct = !a.target.buffered;
    Ok((s, sizes))
}

/// Refuses a device smaller than the boundary plus --size, naming both.
fn check_sizes(s: &SurveySpec, sizes: &[Option<u64>]) -> Result<(), Failure> {
    for (i, have) in sizes.iter().enumerate() {
        let (Some(have), Some(need)) = (*have, s.needed_bytes(i)) else {
            continue;
        };
        if have < need {
            return usage(anyhow!(
                "{}: {have} bytes is too small: --size {} after a boundary of {} blocks of {} bytes needs {need}; lower --size or --boundary",
                s.devices[i].display(),
                s.size,
                s.boundary,
                s.block_sizes[i]
            ));
        }
    }
    Ok(())
}

/// One line for stderr saying what the survey will do.
fn announce(plan: &Plan) -> String {
    let run: Vec<_> = plan.points.iter().filter(|p| p.skip.is_none()).collect();
    let bytes: u64 = run
        .iter()
        .flat_map(|p| &p.job.streams)
        .map(|s| s.span.unwrap_or(0))
        .sum();
    format!(
        "iosurvey: survey of {} device(s): {} points, {} skipped by the memory check (ENOMEM), {} to transfer",
        plan.points.first().map_or(0, |p| p.job.targets.len()),
        plan.points.len(),
        plan.points.len() - run.len(),
        format_size(bytes)
    )
}

/// sgpdd-survey's presenters, and its files after every point.
struct SurveyPresenter {
    layout: Layout,
    prefix: Option<PathBuf>,
    quiet: bool,
    /// Messages already shown on stderr.
    said: RefCell<Vec<String>>,
    /// sgpdd-survey's variables taken from the environment, for the report.
    environment: Vec<String>,
}

impl SurveyPresenter {
    fn say(&self, msg: String) {
        let mut said = self.said.borrow_mut();
        if !self.quiet && !said.contains(&msg) {
            eprintln!("iosurvey: {msg}");
            said.push(msg);
        }
    }
}

/// `PREFIX` with `suffix` after it.
fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut p = prefix.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

impl Presenter for SurveyPresenter {
    fn text(&self, report: &RunReport, _opts: TextOptions) -> String {
        render_summary(report, self.layout)
    }

    fn csv(&self, report: &RunReport) -> String {
        render_survey_csv(report)
    }

    fn annotate(&self, report: &mut RunReport) {
        report.environment = self.environment.clone();
    }

    fn after_point(&self, report: &RunReport) -> Result<(), Failure> {
        if let Some(p) = report.points.last() {
            // Each warning once a run: a memory-backed target, say, is one
            // for every point.
            let earlier = &report.points[..report.points.len() - 1];
            p.warnings
                .iter()
                .filter(|w| {
                    !earlier
                        .iter()
                        .any(|e| e.warnings.iter().any(|x| x.message == w.message))
                })
                .for_each(|w| self.say(format!("warning: {w}")));
            if let Some(f) = &p.failure {
                let dev = &p.targets[p.streams[f.stream].target].path;
                self.say(format!(
                    "{}: first failed I/O: {} at offset {} on {dev}: {}",
                    p.label,
                    f.op,
                    f.offset,
                    iosurvey_model::document::failure_text(f.errno)
                ));
            }
        }
        Ok(())
    }

    fn files(&self, _report: &RunReport) -> Vec<(String, PathBuf)> {
        let Some(prefix) = &self.prefix else {
            return Vec::new();
        };
        [".summary", ".detail"]
            .iter()
            .map(|s| (format!("--out (PREFIX{s})"), with_suffix(prefix, s)))
            .collect()
    }

    fn file_bodies(&self, report: &RunReport) -> Vec<FileBody> {
        vec![
            FileBody::Text(render_summary(report, self.layout)),
            FileBody::Text(render_detail(report)),
        ]
    }
}

/// What the spelling stage took from sgpdd-survey's variables in the
/// environment: the line that says so, and each as `NAME=VALUE`.
#[derive(Debug, Default)]
pub struct FromEnvironment {
    pub line: Option<String>,
    pub read: Vec<String>,
}

pub fn survey(
    a: SurveyArgs,
    argv: &[String],
    cluster: &dyn Cluster,
    taken: FromEnvironment,
) -> Result<Outcome, Failure> {
    let (spec, sizes) = spec_from(&a, cluster)?;
    // The same on every rank (the same line, the sizes gathered): said
    // once.
    let plan = iosurvey_session::agree_on(cluster, expand(&spec).or_else(usage))?;
    iosurvey_session::agree(cluster, check_sizes(&spec, &sizes))?;
    // Only rank 0 writes the files: its directory is the one that counts.
    let mut out_ok = Ok(());
    if let (Some(prefix), 0) = (&a.prefix, cluster.rank()) {
        let dir = prefix.parent().filter(|d| !d.as_os_str().is_empty());
        if dir.is_some_and(|d| !d.is_dir()) || prefix.is_dir() {
            out_ok = usage(anyhow!(
                "--out {}: give a file prefix in an existing directory (PREFIX.summary and PREFIX.detail are written)",
                prefix.display()
            ));
        }
    }
    iosurvey_session::agree(cluster, out_ok)?;
    // The variables the spelling stage read into this line: said once the
    // checks have passed, and kept in the report.
    let banner = match taken.line {
        Some(l) => format!("iosurvey: {l}\n{}", announce(&plan)),
        None => announce(&plan),
    };
    let presenter = SurveyPresenter {
        layout: match a.format {
            FormatArg::Current => Layout::Current,
            FormatArg::Legacy => Layout::Legacy,
        },
        prefix: a.prefix.clone(),
        quiet: a.out.quiet,
        said: RefCell::new(Vec::new()),
        environment: taken.read,
    };
    run_plan(
        &plan,
        &presenter,
        &Session {
            argv,
            tflags: &a.target.options(),
            oflags: &a.out.options(),
            cluster,
            banner: Some(banner),
        },
    )
}
