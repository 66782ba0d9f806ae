//! `iosurvey matrix`: Oracle ORION's small/large I/O matrix. ORION's own
//! spellings (`-run advanced -num_disks 24 -size_small 4`) are rewritten
//! into flags first; targets come from the command line or `<testname>.lun`;
//! ORION's files are rewritten in `--out DIR` after every point.

mod stamp;

use crate::flags::common::{duration, size, OutputFlags, SimulateArg, TargetFlags};
use anyhow::anyhow;
use clap::{Args, ValueEnum};
use iosurvey_model::document::{Cache, MatrixSettings, RunReport};
use iosurvey_report::matrix::{
    cell, failure_words, render_hist, render_matrix_csv, render_matrix_text, render_summary,
    stamp_of, Metric,
};
use iosurvey_report::TextOptions;
use iosurvey_session::presenter::{FileBody, Presenter};
use iosurvey_session::Cluster;
use iosurvey_session::{run_plan, Session};
use iosurvey_session::{usage, Failure, Outcome};
use iosurvey_workload::memory::points_memory;
use iosurvey_workload::modes::describe::estimate;
use iosurvey_workload::modes::matrix::{
    each_point, expand, MatrixSpec, MatrixType, RunLevel, Warm, ORION_DEFAULT_WARM,
};
use iosurvey_workload::units::{parse_duration, parse_size};
use iosurvey_workload::Layout;
use stamp::{prefixes, FILES};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunArg {
    /// The basic matrix: small I/O alone at every load, then large I/O alone.
    Simple,
    /// The detailed matrix: every combination of small and large loads.
    Normal,
    /// The --matrix given (default basic), with your sizes and types.
    Advanced,
    /// Small random I/O alone at increasing load: the maximum IOPS.
    Oltp,
    /// Large random I/O alone at increasing load: the maximum MB/s.
    Dss,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MatrixArg {
    Basic,
    Detailed,
    Row,
    Col,
    Point,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TypeArg {
    Rand,
    Seq,
}

#[derive(Args, Debug)]
pub struct MatrixArgs {
    /// Files or block devices, put together as one array (--simulate). Default: the lines of <testname>.lun.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<PathBuf>,
    /// ORION's run level.
    #[arg(long, value_enum, default_value = "advanced")]
    pub run: RunArg,
    /// Spindles behind the targets; sets the loads (small up to 5x, large up to 2x). Default: the number of targets.
    #[arg(long)]
    pub num_disks: Option<u32>,
    /// Small random I/O size (ORION's -size_small, there in KB).
    #[arg(long, value_parser = size, default_value = "8k")]
    pub size_small: u64,
    /// Large I/O size (ORION's -size_large, there in KB).
    #[arg(long, value_parser = size, default_value = "1m")]
    pub size_large: u64,
    /// Large I/O random, or sequential streams (each --num-streamio deep).
    #[arg(long = "type", value_enum, default_value = "rand")]
    pub kind: TypeArg,
    /// Outstanding I/Os per sequential stream.
    #[arg(long, default_value_t = 4)]
    pub num_streamio: u32,
    /// How the targets make one volume.
    #[arg(long, value_enum, default_value = "concat")]
    pub simulate: SimulateArg,
    /// Stripe size for --simulate raid0 (ORION's -stripe, there in KB); an I/O that crosses a stripe is cut into one piece per stripe.
    #[arg(long, value_parser = size, default_value = "1m")]
    pub stripe: u64,
    /// Percentage of writes in both classes (ORION's -write); writes DESTROY device data (--allow-destroy).
    #[arg(long, value_name = "PCT", default_value_t = 0)]
    pub write_pct: u8,
    /// Measured time of each point (ORION's -duration, there in seconds; --duration is kept as an alias).
    #[arg(long, visible_alias = "duration", value_parser = duration, default_value = "60s")]
    pub time: Duration,
    /// Unmeasured warm-up at the point's own load before each point with large sequential I/O, as ORION's -cache_size (there in MB): a size moved (256MiB, 256m; `m` is MiB; 0 for none) or a duration (30s). Default: 2 minutes, ORION's own.
    #[arg(long, value_name = "SIZE|DURATION")]
    pub cache_warm: Option<String>,
    /// Which cells run (with --run advanced).
    #[arg(long, value_enum)]
    pub matrix: Option<MatrixArg>,
    /// Small load for --matrix col, point and max.
    #[arg(long)]
    pub num_small: Option<u32>,
    /// Large load for --matrix row, point and max.
    #[arg(long)]
    pub num_large: Option<u32>,
    /// Name of the test: files are <testname>_<stamp>_summary.txt etc.; targets default to <testname>.lun.
    #[arg(long, default_value = "orion", value_parser = testname)]
    pub testname: String,
    /// Directory for ORION's files (default: the current directory).
    #[arg(long = "out", value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Size to create missing test files at (ORION needs existing ones).
    #[arg(long, value_parser = size)]
    pub size: Option<u64>,
    /// Seed for random offsets and mixes; recorded in the results.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub target: TargetFlags,
    #[command(flatten)]
    pub out: OutputFlags,
}

/// `--cache-warm`: a size first (`m` is MiB), else a duration.
fn warm(s: &str) -> Result<Warm, Failure> {
    if let Ok(b) = parse_size(s) {
        return Ok(Warm::Bytes(b));
    }
    match parse_duration(s) {
        Ok(t) => Ok(Warm::Time(t)),
        Err(_) => usage(anyhow!(
            "--cache-warm '{s}': give a duration (30s, 2min) or a size (256MiB)"
        )),
    }
}

/// ORION's test name: a name for its files (in `--out`), never a path
/// that would put them elsewhere.
fn testname(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("give a name for the test's files".into());
    }
    if s.contains('/') || s.contains('\0') {
        return Err(format!(
            "{s:?} is a path; the test name is a name (the files go in --out DIR)"
        ));
    }
    Ok(s.to_string())
}

/// ORION's list of targets for test `testname`.
fn lun_path(testname: &str) -> PathBuf {
    PathBuf::from(format!("{testname}.lun"))
}

/// The targets given, or the lines of `<testname>.lun`.
fn targets(a: &MatrixArgs, cluster: &dyn Cluster) -> Result<Vec<PathBuf>, Failure> {
    if !a.targets.is_empty() {
        return Ok(a.targets.clone());
    }
    let lun = lun_path(&a.testname);
    let read = match crate::small_text::read_small_text(&lun) {
        Ok(text) => Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(PathBuf::from)
            .collect::<Vec<_>>()),
        Err(e) => usage(anyhow!(
            "no target given and {} cannot be read ({e}): name the targets, or list them in it one per line",
            lun.display()
        )),
    };
    // Under MPI each rank reads its own host's file: all must read it,
    // and read the same.
    let (list, step) = match read {
        Ok(l) => (l, Ok(())),
        Err(e) => (Vec::new(), Err(e)),
    };
    iosurvey_session::agree(cluster, step)?;
    iosurvey_session::same_everywhere(cluster, &list, &format!("{}", lun.display()))?;
    Ok(list)
}

fn spec_from(a: &MatrixArgs, cluster: &dyn Cluster) -> Result<MatrixSpec, Failure> {
    // LUNs on several hosts (host:path) share each point's load out.
    let mut s = MatrixSpec::new(cluster.localize_targets(&targets(a, cluster)?)?);
    s.create_size = a.size;
    s.run = match a.run {
        RunArg::Simple => RunLevel::Simple,
        RunArg::Normal => RunLevel::Normal,
        RunArg::Advanced => RunLevel::Advanced,
        RunArg::Oltp => RunLevel::Oltp,
        RunArg::Dss => RunLevel::Dss,
    };
    s.num_disks = a.num_disks;
    (s.size_small, s.size_large) = (a.size_small, a.size_large);
    (s.sequential, s.num_streamio) = (a.kind == TypeArg::Seq, a.num_streamio);
    s.layout = match a.simulate {
        SimulateArg::Concat => Layout::Concat,
        SimulateArg::Raid0 => Layout::Raid0 { stripe: a.stripe },
    };
    (s.write_pct, s.duration) = (a.write_pct, a.time);
    s.warm = match &a.cache_warm {
        Some(w) => warm(w)?,
        None => Warm::Time(ORION_DEFAULT_WARM),
    };
    s.matrix = a.matrix.map(|m| match m {
        MatrixArg::Basic => MatrixType::Basic,
        MatrixArg::Detailed => MatrixType::Detailed,
        MatrixArg::Row => MatrixType::Row,
        MatrixArg::Col => MatrixType::Col,
        MatrixArg::Point => MatrixType::Point,
        MatrixArg::Max => MatrixType::Max,
    });
    (s.num_small, s.num_large) = (a.num_small, a.num_large);
    s.engine = a.target.engine_or_uring();
    s.engine_flags = crate::flags::common::engine_flags(&a.target);
    (s.direct, s.seed) = (!a.target.buffered, a.seed);
    Ok(s)
}

/// ORION's presenters, and its files in `dir` after every point.
struct MatrixPresenter {
    testname: String,
    /// ORION's run level and the warm-up given, kept in the report for its
    /// summary.
    settings: MatrixSettings,
    dir: PathBuf,
    /// --quiet: failed points are marked in the outputs, not said.
    quiet: bool,
    /// Whether this process writes the files (rank 0) and says so.
    writes: bool,
}

impl Presenter for MatrixPresenter {
    fn text(&self, report: &RunReport, _opts: TextOptions) -> String {
        render_matrix_text(report, &self.testname)
    }

    fn annotate(&self, report: &mut RunReport) {
        report.matrix = Some(self.settings.clone());
    }

    /// A point whose I/O failed is said as it ends, as the other modes
    /// say theirs.
    fn after_point(&self, report: &RunReport) -> Result<(), Failure> {
        let Some(p) = report.points.last() else {
            return Ok(());
        };
        if let (Some(why), Some(c), false) = (failure_words(p), cell(p), self.quiet) {
            eprintln!("iosurvey: Small={} Large={}: {why}", c.small, c.large);
        }
        Ok(())
    }

    /// ORION's files of each minute from the run's start on: the session
    /// takes the first set that is free and claims it (`made_up`).
    fn made_up_files(&self, report: &RunReport) -> Vec<Vec<(String, PathBuf)>> {
        prefixes(&self.testname, &report.started_at)
            .iter()
            .map(|prefix| {
                FILES
                    .iter()
                    .map(|suffix| {
                        let path = self.dir.join(format!("{prefix}_{suffix}"));
                        (format!("--out ({suffix})"), path)
                    })
                    .collect()
            })
            .collect()
    }

    /// Says which minute the files took when it is not the run's own.
    fn took_files(&self, report: &RunReport, k: usize) {
        if k == 0 || !self.writes || self.quiet {
            return;
        }
        let own = format!("{}_{}", self.testname, stamp_of(&report.started_at));
        let taken = prefixes(&self.testname, &report.started_at);
        let prefix = taken.get(k).map_or("?", String::as_str);
        eprintln!(
            "iosurvey: {own}_* already in {} (an earlier run this minute, one started with this one, or files of yours; kept): this run's files are {prefix}_*, the next free minute (the report's started_at keeps the start)",
            self.dir.display()
        );
    }

    fn file_bodies(&self, report: &RunReport) -> Vec<FileBody> {
        vec![
            FileBody::Text(render_summary(report, &self.testname)),
            FileBody::Text(render_matrix_csv(report, Metric::Mbps)),
            FileBody::Text(render_matrix_csv(report, Metric::Iops)),
            FileBody::Text(render_matrix_csv(report, Metric::Lat)),
            FileBody::Text(render_hist(report)),
            FileBody::Report,
        ]
    }
}

pub fn matrix(a: MatrixArgs, argv: &[String], cluster: &dyn Cluster) -> Result<Outcome, Failure> {
    let spec = spec_from(&a, cluster)?;
    // Judged point by point before the plan is held whole: -num_disks
    // 10000 plans millions of points.
    let points = iosurvey_session::agree_on(cluster, each_point(&spec).or_else(usage))?;
    let count = points.len();
    let need = points_memory(points.map_while(Result::ok), count, a.out.repeat);
    iosurvey_session::agree(
        cluster,
        crate::budget::check_need(&need, "matrix", a.target.memory_limit).or_else(usage),
    )?;
    let plan = iosurvey_session::agree_on(cluster, expand(&spec).or_else(usage))?;
    let dir = a.out_dir.clone().unwrap_or_else(|| PathBuf::from("."));
    // Only rank 0 writes the files: its directory is the one that counts.
    let out_ok = if !dir.is_dir() && cluster.rank() == 0 {
        usage(anyhow!(
            "--out {}: not a directory; give an existing directory for ORION's files",
            dir.display()
        ))
    } else {
        Ok(())
    };
    iosurvey_session::agree(cluster, out_ok)?;
    let secs = estimate(&plan).unwrap_or_default().as_secs();
    let about = if secs < 90 {
        format!("{secs} seconds")
    } else {
        format!("{} minutes", secs.div_ceil(60))
    };
    let mut banner = format!(
        "iosurvey: matrix of {} points over {} target(s), {} disks; this will take about {about}",
        plan.points.len(),
        spec.targets.len(),
        spec.disks()
    );
    // What the warm-up is, when there are points it comes before.
    let n = plan
        .points
        .iter()
        .filter(|p| p.job.warm_bytes > 0 || !p.job.bounds.ramp.is_zero())
        .count();
    if n > 0 {
        let what = match spec.warm {
            Warm::Bytes(b) => format!("{b} bytes moved"),
            Warm::Time(t) if a.cache_warm.is_none() => format!(
                "{} s of load (ORION's default without -cache_size; -cache_size 0 for none)",
                t.as_secs()
            ),
            Warm::Time(t) => format!("{:.2} s of load", t.as_secs_f64()),
        };
        banner.push_str(&format!(
            "\niosurvey: before each of the {n} points with large sequential I/O, an unmeasured cache warm-up: {what}"
        ));
    }
    let presenter = MatrixPresenter {
        testname: a.testname.clone(),
        settings: MatrixSettings {
            run: spec.run.name().into(),
            cache: a.cache_warm.as_ref().map(|_| match spec.warm {
                Warm::Bytes(b) => Cache::Bytes(b),
                Warm::Time(t) => Cache::Time(t.as_nanos() as u64),
            }),
            orion_command_line: Some(crate::flags::spellings::orion_command_line(
                iosurvey_model::document::invocation::mode_words(argv),
            )),
        },
        dir,
        quiet: a.out.quiet,
        writes: cluster.rank() == 0,
    };
    run_plan(
        &plan,
        &presenter,
        &Session {
            argv,
            tflags: &a.target.options(),
            oflags: &a
                .out
                .options()
                .reading(a.targets.is_empty().then(|| lun_path(&a.testname))),
            cluster,
            banner: Some(banner),
        },
    )
}
