//! `iosurvey run`: flags to a RunSpec, expand to a Plan, open the targets,
//! run each point, report.

use crate::flags::common::{duration, size, OutputFlags, SimulateArg, TargetFlags};
use crate::flags::listed::{listed, rw_names};
use crate::run_fio::{one_after_another, FromJobFile, RunPresenter};
use anyhow::anyhow;
use clap::builder::StringValueParser;
use clap::Args;
use clap::Parser;
use iosurvey_model::RateUnit;
use iosurvey_session::Cluster;
use iosurvey_session::{run_plan, Session};
use iosurvey_session::{usage, Failure, Outcome};
use iosurvey_workload::modes::run::{expand, parse_bs, parse_qd_list, BsArg, RunSpec};
use iosurvey_workload::rate::parse_rate;
use iosurvey_workload::Layout;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Files or block devices; one stream per target.
    #[arg(required = true, value_name = "TARGET")]
    pub targets: Vec<PathBuf>,
    /// Workload: read, write, backread, backwrite, randread, randwrite, randrw, trim, randtrim (discards of --bs blocks, in order or at random, as fio's; block devices that support discard only, and only with --allow-destroy, as writes).
    #[arg(long, default_value = "read", value_parser = listed(StringValueParser::new(), rw_names))]
    pub rw: String,
    /// Percentage of reads for randrw (0-100; default 50).
    #[arg(long, value_name = "PCT")]
    pub mix: Option<u32>,
    /// Percent of I/Os that are discards (1-100), the rest as --rw and --mix say (e.g. --rw randrw --mix 70 --trim 10: 10% trims, 63% reads, 27% writes). Block devices that support discard only, and only with --allow-destroy, as writes.
    #[arg(long, value_name = "PCT")]
    pub trim: Option<u32>,
    /// Block size per I/O (4k = 4KiB = 4096; 4KB = 4000). A comma list (4k,64k) sweeps it: one point per size, each with every --qd. Sizes with percents (4k:70,64k:30, adding up to 100) split it, as fio's bssplit: each I/O's size drawn by weight (seeded by --seed), offsets aligned to the smallest size (to the sizes' greatest common divisor when one is not a multiple of it), a byte bound met by whole I/Os; a sequential pass does each block once, a size that would run past the end drawn again.
    #[arg(long, default_value = "1m", value_parser = list)]
    pub bs: String,
    /// Outstanding I/Os per target (fio's iodepth per job); with --workers, per target on each worker. A comma list (1,2,4,8) sweeps it: one point per depth, all in one run and one report.
    #[arg(long, default_value = "1", value_parser = list)]
    pub qd: String,
    /// Worker threads, each running a share of every target's stream (each with --qd of it in flight). Default: a worker per target, each target's stream its worker's alone, as fio gives each job a thread; past 64 workers (or the CPUs, if more) the targets are dealt round-robin.
    #[arg(long)]
    pub workers: Option<u32>,
    /// Size to create a missing test file at (laid out fully before any read); on an existing file or device, the I/O stays in its first --size bytes (fio's size=). With --simulate, each member's.
    #[arg(long, value_parser = size)]
    pub size: Option<u64>,
    /// Measured duration (10s, 2m, 500ms).
    #[arg(long, value_parser = duration)]
    pub time: Option<Duration>,
    /// Bytes to transfer per target (with --time, the first reached ends the job). Default: one pass.
    #[arg(long, value_parser = size)]
    pub bytes: Option<u64>,
    /// Unmeasured warm-up before the measured phase.
    #[arg(long, value_parser = duration, default_value = "0s")]
    pub ramp: Duration,
    /// Start of the area, in bytes.
    #[arg(long, value_parser = size, default_value = "0")]
    pub offset: u64,
    /// Length of the area (default: to the end of the target).
    #[arg(long, value_parser = size)]
    pub span: Option<u64>,
    /// Split the area into N evenly spaced sequential streams (default: one per worker that runs the target: one, unless --workers is given).
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    pub regions: u32,
    /// How random offsets spread over the area's blocks, as fio's random_distribution: uniform (the default), zipf:THETA (block of rank k drawn in proportion to 1/k^THETA, e.g. zipf:1.2) or pareto:H (H in (0,1): the hottest share H of the blocks takes 1-H of the I/Os, e.g. pareto:0.2). The hot blocks are scattered over the area, the same for every worker and the same for a seed. Random workloads only.
    #[arg(long, value_name = "DIST", default_value = "uniform")]
    pub dist: String,
    /// Cap the run at N I/Os per second in all (shared equally by the workers), or N/worker for each worker's (fio's rate_iops, which is per job). I/Os go out on a schedule (the n-th of a worker no sooner than its start plus n over its rate, fio's rate_process=linear), at most --qd in flight; latency is timed from the submit, not from the I/O's turn. A run that stays below 95% of the cap is warned about (rate_not_reached).
    #[arg(long, value_name = "N[/worker]", conflicts_with = "rate")]
    pub rate_iops: Option<String>,
    /// Cap the run at SIZE bytes per second in all (e.g. 200m = 200 MiB/s, 200MB = 200 MB/s), or SIZE/worker for each worker's (fio's rate); as --rate-iops.
    #[arg(long, value_name = "SIZE[/worker]")]
    pub rate: Option<String>,
    /// Seed for random offsets and mixes; recorded in the results.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Length of one interval of the series.
    #[arg(long, value_parser = duration, default_value = "1s")]
    pub interval: Duration,
    /// Keep going after a failed I/O, counting it, instead of stopping.
    #[arg(long)]
    pub continue_on_error: bool,
    /// Prove the data: writes carry a header (offset, run id, generation, crc32c) in every 4 KiB block and are read back after the job; what every verified run wrote last is kept in a state file (FILE.iosurvey-verify beside a file, --verify-state DIR for a device), and a read-only run checks exactly that. Each failure is named by class (corruption, misdirected write, lost or stale write, unwritten, read error) and exits 1, as does checking no block. Not with --shared: another run's writes would make the state untrue.
    #[arg(long, conflicts_with = "shared")]
    pub verify: bool,
    /// With --verify: the directory where the verify state of each target is kept (needed for a block device; a file's is kept beside it otherwise).
    #[arg(long, value_name = "DIR", requires = "verify")]
    pub verify_state: Option<std::path::PathBuf>,
    /// With --verify: each worker also reads back its last N writes after every N, during the job (fio's verify_backlog); the job's rates include that time. From the cache in a --buffered run.
    #[arg(long, value_name = "N", requires = "verify", value_parser = clap::value_parser!(u32).range(1..))]
    pub verify_backlog: Option<u32>,
    /// Before the job, run its writes 1 s at a time with data that compresses to almost nothing and with incompressible data, three times each in turn (after 1 s not counted), and warn when the compressible ones are more than 20% faster at the median (the storage compresses or deduplicates). Both rates go in the JSON.
    #[arg(long)]
    pub check_compression: bool,
    /// Put the targets together as one virtual array, end to end (concat) or striped (raid0), and run one stream over it.
    #[arg(long, value_enum)]
    pub simulate: Option<SimulateArg>,
    /// Stripe size for --simulate raid0; an I/O that crosses a stripe is cut into one piece per stripe.
    #[arg(long, value_parser = size, default_value = "1m")]
    pub stripe: u64,
    /// Run the jobs of a fio job file: its options become these flags (fio's defaults and units: bs 4k, psync, buffered unless direct=1, 4k and 4KB both 4096), its filename= the targets. Jobs that run together with the same workload on different files are one run over them, and a job after a stonewall is its next point; an option or a set of jobs one run cannot do is refused by name.
    #[arg(long, value_name = "JOB.fio")]
    pub fio: Option<PathBuf>,
    /// With --fio: run only this job section (fio's --section; repeat for more).
    #[arg(long, value_name = "NAME", requires = "fio")]
    pub section: Vec<String>,
    #[command(flatten)]
    pub target: TargetFlags,
    #[command(flatten)]
    pub out: OutputFlags,
}

/// A `--qd` or `--bs` list as given (read by the run's list parsers), a
/// negative value refused as such.
fn list(s: &str) -> Result<String, String> {
    crate::flags::common::positive(s)?;
    Ok(s.to_string())
}

fn spec_from(a: &RunArgs, cluster: &dyn Cluster) -> Result<RunSpec, Failure> {
    let mut s = RunSpec::new(cluster.localize_targets(&a.targets)?);
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
    s.trim = match a.trim {
        Some(t) if !(1..=100).contains(&t) => {
            return usage(anyhow!(
            "--trim {t} is out of range: give the percentage of I/Os that are discards, 1 to 100"
        ))
        }
        t => t.map(|t| t as u8),
    };
    let qd = parse_qd_list(&a.qd).or_else(usage)?;
    match parse_bs(&a.bs).or_else(usage)? {
        BsArg::Sizes(bs) => {
            s.bs = bs[0];
            if bs.len() > 1 {
                s.bs_sweep = bs;
            }
        }
        BsArg::Split(split) => {
            s.bs = split.max_bs();
            s.bs_split = Some(split);
        }
    }
    s.qd = qd[0];
    if qd.len() > 1 {
        s.qd_sweep = qd;
    }
    s.workers = a.workers;
    s.cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    s.size = a.size;
    s.time = a.time;
    s.bytes = a.bytes;
    s.ramp = a.ramp;
    s.offset = a.offset;
    s.span = a.span;
    s.regions = a.regions;
    s.seed = a.seed;
    let cap = |s: &Option<String>, unit| s.as_deref().map(|s| parse_rate(s, unit)).transpose();
    s.rate = match (
        cap(&a.rate_iops, RateUnit::Iops),
        cap(&a.rate, RateUnit::Bytes),
    ) {
        (Err(e), _) | (_, Err(e)) => return usage(e),
        (Ok(r), Ok(b)) => r.or(b),
    };
    s.dist = match a.dist.parse() {
        Ok(d) => d,
        Err(e) => return usage(e),
    };
    s.interval = a.interval;
    s.continue_on_error = a.continue_on_error;
    s.verify = a.verify;
    s.verify_backlog = a.verify_backlog;
    s.verify_state = a.verify_state.clone();
    s.check_compression = a.check_compression;
    s.simulate = a.simulate.map(|l| match l {
        SimulateArg::Concat => Layout::Concat,
        SimulateArg::Raid0 => Layout::Raid0 { stripe: a.stripe },
    });
    s.direct = !a.target.buffered;
    s.engine = a.target.engine_or_uring();
    s.engine_flags = crate::flags::common::engine_flags(&a.target);
    Ok(s)
}

pub fn run(
    a: RunArgs,
    argv: &[String],
    cluster: &dyn Cluster,
    fio: Option<FromJobFile>,
) -> Result<Outcome, Failure> {
    if let Some(f) = &fio {
        // The line's operands follow the job file's: any more are the user's.
        if a.targets.len() > f.targets {
            return usage(anyhow!(
                "{} is a target on the command line, and {} names the targets (filename=): give them in one place",
                a.targets[0].display(),
                f.job.file
            ));
        }
    }
    let spec = spec_from(&a, cluster)?;
    // The same on every rank: a refusal said once.
    let plan = iosurvey_session::agree_on(cluster, expand(&spec).or_else(usage))?;
    let job_file = fio.as_ref().map(|f| PathBuf::from(&f.job.file));
    let (plan, presenter) = match fio {
        None => (
            plan,
            RunPresenter {
                job: None,
                points: Vec::new(),
            },
        ),
        Some(f) => {
            let later = f
                .later
                .iter()
                .map(|line| later_plan(line, cluster))
                .collect::<Result<Vec<_>, _>>()?;
            (
                one_after_another(plan, later, &f.points),
                RunPresenter {
                    job: Some(f.job),
                    points: f.points,
                },
            )
        }
    };
    run_plan(
        &plan,
        &presenter,
        &Session {
            argv,
            tflags: &a.target.options(),
            oflags: &a.out.options().reading(job_file),
            cluster,
            banner: None,
        },
    )
}

/// `run`'s flags alone, for the line of a later point of a job file.
#[derive(Parser)]
#[command(name = "iosurvey run")]
struct LaterPoint {
    #[command(flatten)]
    run: RunArgs,
}

/// The plan of a job file's later point, from its line (`iosurvey run
/// ...`): the same checks as the first's.
fn later_plan(line: &[String], cluster: &dyn Cluster) -> Result<iosurvey_workload::Plan, Failure> {
    let words = std::iter::once("iosurvey run".to_string()).chain(line.iter().skip(2).cloned());
    let b = match LaterPoint::try_parse_from(words) {
        Ok(p) => p.run,
        Err(e) => {
            let e = e.to_string();
            let first = e.lines().next().unwrap_or_default();
            return usage(anyhow!(
                "{}",
                first.strip_prefix("error: ").unwrap_or(first)
            ));
        }
    };
    let spec = spec_from(&b, cluster)?;
    iosurvey_session::agree_on(cluster, expand(&spec).or_else(usage))
}
