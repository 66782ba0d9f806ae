//! `iosurvey diskperf`: SGI diskperf's sweep of request sizes, forward,
//! backward and random, read (and with --write, written), printed in
//! diskperf's gnuplot-ready table.

use crate::flags::common::{duration, size, OutputFlags, TargetFlags};
use anyhow::anyhow;
use clap::Args;
use iosurvey_engine::EngineKind;
use iosurvey_model::document::DiskperfSettings;
use iosurvey_model::document::RunReport;
use iosurvey_report::diskperf::{render_diskperf, render_diskperf_csv};
use iosurvey_report::TextOptions;
use iosurvey_session::presenter::Presenter;
use iosurvey_session::Cluster;
use iosurvey_session::{run_plan, Session};
use iosurvey_session::{usage, Failure, Outcome};
use iosurvey_target::guard::WritePolicy;
use iosurvey_target::target::{plan_geometry, Geometry, OpenOptions};
use iosurvey_workload::modes::diskperf::{expand, preset_bytes, sizes, DiskperfSpec, MinSize};
use iosurvey_workload::TargetSpec;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct DiskperfArgs {
    /// A file (created at --size and laid out if missing), a directory (a test file inside) or a block device (read-only unless --allow-destroy).
    #[arg(value_name = "TARGET")]
    pub path: PathBuf,
    /// Add the write tests (fwd_wt, bwd_wt, rnd_wt). Without it only reads run and the write columns print NaN.
    #[arg(long)]
    pub write: bool,
    /// First request size: a size (4k, 8404992; need not be a power of two) or a frame preset of the one catalogue video takes too (hd-422, hd-4444, dpx-2k, ...: iosurvey video --list-formats), rounded up to the target's logical block size. [default: 4k]
    #[arg(long, value_name = "SIZE|FRAME")]
    pub min: Option<String>,
    /// Largest request size, a size or a frame preset; sizes double from --min while they are at most this. [default: 4m, or 32 x --min when --min is a frame preset or above 4m]
    #[arg(long, value_parser = max_size)]
    pub max: Option<u64>,
    /// Measured time of each test (six tests a size with --write, three without).
    #[arg(long, value_parser = duration, default_value = "10s")]
    pub time: Duration,
    /// Multiply every figure by F (diskperf's -s).
    #[arg(
        long,
        value_name = "F",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    pub scale: f64,
    /// Outstanding I/Os. diskperf runs one synchronous request at a time: the sync engine is used unless --engine is given or --qd is above 1 (then io_uring).
    #[arg(long, default_value_t = 1)]
    pub qd: u32,
    /// Frames per second: also print each figure as times real time, one frame being --min (a frame preset or your own frame size), which must then be given.
    #[arg(long, value_name = "RATE", allow_negative_numbers = true)]
    pub fps: Option<f64>,
    /// Size of the test file created for a missing file or a directory [default: 1g]. An existing file or device is used at its own size.
    #[arg(long, value_parser = size)]
    pub size: Option<u64>,
    /// Seed for random offsets; recorded in the results.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub target: TargetFlags,
    #[command(flatten)]
    pub out: OutputFlags,
}

/// The first request size when --min is not given.
const DEFAULT_MIN: &str = "4k";

/// Test file size when none is given.
const DEFAULT_SIZE: u64 = 1 << 30;

/// Frame rounding when the target cannot be probed yet (opening it later
/// reports why).
const DEFAULT_ALIGN: u64 = 4096;

/// The engine: as given, else sync at QD 1 (diskperf) and io_uring above.
fn pick_engine(given: Option<EngineKind>, qd: u32) -> EngineKind {
    match given {
        Some(e) => e,
        None if qd > 1 => EngineKind::Uring,
        None => EngineKind::Sync,
    }
}

/// The target's geometry, probed (read-only, through the write guard)
/// before any I/O, or `None` when it cannot be used (opening it for the run
/// then says why).
fn probe(spec: &DiskperfSpec, flags: &TargetFlags) -> Option<Geometry> {
    let target = TargetSpec {
        path: spec.target.clone(),
        create_size: spec.create_size,
    };
    let opts = OpenOptions {
        write: spec.write,
        trim: false,
        direct: spec.direct,
        policy: WritePolicy {
            allow_destroy: flags.allow_destroy,
            force: flags.force,
            readonly: flags.readonly,
        },
        stop: None,
    };
    plan_geometry(&target, opts).ok()
}

/// Refuses, in diskperf's terms, request sizes the target cannot take.
fn check_fit(spec: &DiskperfSpec, g: &Geometry) -> Result<(), Failure> {
    let all = sizes(spec).map_err(|e| Failure::Usage(e.into()))?;
    let (first, last) = (all[0], all[all.len() - 1]);
    let lbs = g.logical_block_size;
    if g.direct && first % lbs != 0 {
        return usage(anyhow!(
            "{}: request size {first} (--min) is not a multiple of the logical block size {lbs}, which O_DIRECT needs; give a multiple of {lbs} or add --buffered",
            g.path.display()
        ));
    }
    if last > g.size {
        let fix = if g.path.exists() {
            "lower --max"
        } else {
            "lower --max or raise --size"
        };
        return usage(anyhow!(
            "{}: request size {last} is larger than the target ({} bytes); {fix}",
            g.path.display(),
            g.size
        ));
    }
    Ok(())
}

fn spec_from(a: &DiskperfArgs) -> Result<DiskperfSpec, Failure> {
    let mut s = DiskperfSpec::new(a.path.clone());
    // A frame rate counts frames: without a frame's size (a preset or a
    // size given to --min) there is nothing to count.
    if a.fps.is_some() && a.min.is_none() {
        return usage(anyhow!(
            "--fps needs a frame size: give --min (-r) a frame preset (--min hd-422; iosurvey video --list-formats) or your frame's size (--min 8404992)"
        ));
    }
    s.min = match MinSize::parse(a.min.as_deref().unwrap_or(DEFAULT_MIN)) {
        Ok(m) => m,
        Err(e) => return usage(e),
    };
    s.create_size = match a.size {
        Some(n) => Some(n),
        None if !a.path.exists() || a.path.is_dir() => Some(DEFAULT_SIZE),
        None => None,
    };
    s.write = a.write;
    s.max = a.max;
    s.time = a.time;
    s.qd = a.qd;
    s.engine = pick_engine(a.target.engine.kind(), a.qd);
    s.engine_flags = crate::flags::common::engine_flags(&a.target);
    s.direct = !a.target.buffered;
    s.seed = a.seed;
    Ok(s)
}

/// The widest factor `--scale` and `--fps` take either way: a figure (at
/// most about 10^7 MB/s) times or over it stays a finite number that
/// prints (1e308 printed `inf` in every column).
const FACTOR_RANGE: (f64, f64) = (1e-9, 1e9);

/// Whether `f` is a factor in [`FACTOR_RANGE`].
fn in_range(f: f64) -> bool {
    f.is_finite() && (FACTOR_RANGE.0..=FACTOR_RANGE.1).contains(&f)
}

fn settings_from(a: &DiskperfArgs, spec: &DiskperfSpec) -> Result<DiskperfSettings, Failure> {
    let (lo, hi) = FACTOR_RANGE;
    if !in_range(a.scale) {
        return usage(anyhow!(
            "--scale {}: give a factor from {lo:e} to {hi:e} (beyond it the figures overflow or vanish)",
            a.scale
        ));
    }
    if a.fps.is_some_and(|f| !in_range(f)) {
        return usage(anyhow!(
            "--fps {}: give frames per second from {lo:e} to {hi:e}",
            a.fps.unwrap_or_default()
        ));
    }
    let frame = match spec.min {
        MinSize::Frame(f) => {
            // The preset's size is the same in every mode; the alignment
            // the target needs is said apart.
            let (bytes, rounded) = (preset_bytes(f), spec.min.bytes(spec.align));
            let note = if rounded == bytes {
                format!(", a multiple of the block size {}", spec.align)
            } else {
                format!(
                    ", rounded up to {rounded} for the block size {}",
                    spec.align
                )
            };
            let header = match f.default_header() {
                0 => String::new(),
                h => format!(" + {h}-byte DPX header"),
            };
            Some(format!(
                "{} ({}{header} = {} bytes{note})",
                f.name,
                f.geometry(),
                bytes
            ))
        }
        MinSize::Bytes(_) => None,
    };
    Ok(DiskperfSettings {
        // diskperf's -n: the run's --label, echoed in the header.
        label: a.out.label.clone(),
        scale: a.scale,
        fps: a.fps,
        frame,
    })
}

/// The diskperf table as text and CSV.
struct DiskperfPresenter(DiskperfSettings);

impl Presenter for DiskperfPresenter {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        render_diskperf(report, opts, &self.0)
    }
    fn csv(&self, report: &RunReport) -> String {
        render_diskperf_csv(report, &self.0)
    }
    fn annotate(&self, report: &mut RunReport) {
        report.diskperf = Some(self.0.clone());
    }
    /// Like diskperf, the table is printed as it fills: the header once the
    /// first test has run, then each row once the next size has begun.
    fn text_so_far(&self, report: &RunReport, opts: TextOptions) -> Option<String> {
        let text = render_diskperf(report, opts, &self.0);
        Some(settled(&text).to_string())
    }
}

/// The head of a diskperf table that later tests cannot change: its
/// comment lines and every row but the last, which may still fill in.
fn settled(text: &str) -> &str {
    let (mut at, mut last_row, mut in_rows) = (0, None, false);
    for line in text.split_inclusive('\n') {
        let row = !line.starts_with('#') && !line.trim().is_empty();
        if row {
            in_rows = true;
            last_row = Some(at);
        } else if in_rows {
            break;
        }
        at += line.len();
    }
    last_row.map_or("", |end| &text[..end])
}

pub fn diskperf(
    a: DiskperfArgs,
    argv: &[String],
    cluster: &dyn Cluster,
) -> Result<Outcome, Failure> {
    cluster.single_rank("diskperf")?;
    let mut spec = spec_from(&a)?;
    let geometry = probe(&spec, &a.target);
    spec.align = geometry
        .as_ref()
        .map_or(DEFAULT_ALIGN, |g| g.logical_block_size.max(1));
    let plan = match expand(&spec) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    if let Some(g) = &geometry {
        check_fit(&spec, g)?;
    }
    let per = a.time.as_secs_f64();
    let banner = geometry.is_some().then(|| {
        format!(
            "iosurvey: diskperf: {} tests of {} s each on {}: about {:.0} s plus laying out any test file",
            plan.points.len(),
            per,
            a.path.display(),
            per * plan.points.len() as f64
        )
    });
    let presenter = DiskperfPresenter(settings_from(&a, &spec)?);
    run_plan(
        &plan,
        &presenter,
        &Session {
            argv,
            tflags: &a.target.options(),
            oflags: &a.out.options(),
            cluster,
            banner,
        },
    )
}

/// `--max`: a size, or a frame preset's bytes (sizes first: `2k` is 2048).
fn max_size(s: &str) -> Result<u64, String> {
    crate::flags::common::positive(s)?;
    iosurvey_workload::modes::diskperf::parse_size_or_frame(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diskperf_runs_sync_at_qd1_unless_told_otherwise() {
        assert_eq!(pick_engine(None, 1), EngineKind::Sync);
        assert_eq!(pick_engine(None, 8), EngineKind::Uring);
        assert_eq!(pick_engine(Some(EngineKind::Uring), 1), EngineKind::Uring);
        assert_eq!(pick_engine(Some(EngineKind::Sync), 8), EngineKind::Sync);
    }

    #[test]
    fn the_settled_head_stops_before_the_last_row() {
        let t = "# a\n# b\n   4096 1.00\n   8192 2.00\n# INTERRUPTED\n";
        assert_eq!(settled(t), "# a\n# b\n   4096 1.00\n");
        assert_eq!(settled("# a\n   4096 NaN\n"), "# a\n");
        assert_eq!(settled("# a\n"), "");
    }
}
