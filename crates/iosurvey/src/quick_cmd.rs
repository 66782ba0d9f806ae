//! `iosurvey quick` and `iosurvey` alone: characterise the storage under a
//! directory in about a minute and print a CrystalDiskMark-style card.

use crate::flags::common::{duration, size, OutputFlags, TargetFlags};
use anyhow::anyhow;
use clap::{Args, ValueEnum};
use iosurvey_model::document::{QuickSettings, RunReport};
use iosurvey_report::TextOptions;
use iosurvey_session::presenter::Presenter;
use iosurvey_session::Cluster;
use iosurvey_session::{run_plan, Session};
use iosurvey_session::{usage, Failure, Outcome};
use iosurvey_workload::modes::quick::{expand, find_profile, QuickProfile, QuickSpec};
use iosurvey_workload::units::format_size;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The card's profile, as CrystalDiskMark and KDiskMark name theirs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// CrystalDiskMark 8's default (KDiskMark's Standard): SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1.
    Cdm8,
    /// CrystalDiskMark 8's NVMe SSD profile (KDiskMark's NVMe SSD): SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1.
    Cdm8Nvme,
    /// CrystalDiskMark 7's default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T16, RND4K Q1T1.
    Cdm7,
}

impl ProfileArg {
    fn profile(self) -> &'static QuickProfile {
        let name = match self {
            ProfileArg::Cdm8 => "cdm8",
            ProfileArg::Cdm8Nvme => "cdm8-nvme",
            ProfileArg::Cdm7 => "cdm7",
        };
        find_profile(name).expect("every profile argument names a profile")
    }
}

#[derive(Args, Debug)]
pub struct QuickArgs {
    /// Directory to put the test file in (or an existing file or device to read and, with --allow-destroy, write).
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// The card's tests: CrystalDiskMark's and KDiskMark's profiles (a test of T threads runs T workers, Q outstanding each).
    #[arg(long, value_enum, default_value = "cdm8")]
    pub profile: ProfileArg,
    /// Test file size [default: 1g, or half the free space when that is short; a size given must fit].
    #[arg(long, value_parser = size)]
    pub size: Option<u64>,
    /// Measured time per test.
    #[arg(long, value_parser = duration, default_value = "5s")]
    pub time: Duration,
    /// Unmeasured warm-up per test.
    #[arg(long, value_parser = duration, default_value = "1s")]
    pub ramp: Duration,
    /// Seed for random offsets.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub target: TargetFlags,
    #[command(flatten)]
    pub out: OutputFlags,
}

/// Smallest test file worth choosing when free space is short.
const MIN_SIZE: u64 = 64 << 20;
/// The test file's size when none is given.
const DEFAULT_SIZE: u64 = 1 << 30;
/// Room left beside a test file of a given size (the filesystem's own
/// blocks for it, the report files).
const HEADROOM: u64 = 1 << 20;

/// The test file size: as given (refused when it cannot fit), or 1 GiB,
/// or half the free space (whole MiB) when that is short, saying so.
fn fit_size(a: &QuickArgs) -> Result<u64, Failure> {
    let want = a.size.unwrap_or(DEFAULT_SIZE);
    if !a.dir.is_dir() {
        return Ok(want);
    }
    let Ok(vfs) = rustix::fs::statvfs(&a.dir) else {
        return Ok(want);
    };
    let free = vfs.f_bavail.saturating_mul(vfs.f_frsize);
    if let Some(given) = a.size {
        if free >= given.saturating_add(HEADROOM) {
            return Ok(given);
        }
        return usage(anyhow!(
            "--size {}: only {} bytes free under {}; give a smaller --size, or leave it out to use half the free space",
            format_size(given),
            free,
            a.dir.display()
        ));
    }
    if free >= want.saturating_add(MIN_SIZE) {
        return Ok(want);
    }
    let size = (free / 2) & !((1 << 20) - 1);
    if size < MIN_SIZE {
        return usage(anyhow!(
            "{}: only {} bytes free; quick needs at least {} for its test file (or a --size that fits)",
            a.dir.display(),
            free,
            format_size(MIN_SIZE * 2)
        ));
    }
    if !a.out.quiet {
        eprintln!(
            "iosurvey: only {} bytes free under {}: using a {} test file instead of {}",
            free,
            a.dir.display(),
            format_size(size),
            format_size(want)
        );
    }
    Ok(size)
}

/// A path that names nothing: quick puts its test file in a directory,
/// and a missing name is not one (it would have laid out a file of that
/// name in the parent).
fn refuse_missing(dir: &Path) -> Result<(), Failure> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => usage(anyhow!(
            "{}: does not exist; quick takes a directory (its test file goes inside) or an existing file or device",
            dir.display()
        )),
        _ => Ok(()),
    }
}

/// The card, with the profile it shows kept in the report.
struct Card(QuickSettings);

impl Presenter for Card {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        iosurvey_report::render_card(report, opts)
    }

    fn annotate(&self, report: &mut RunReport) {
        report.quick = Some(self.0.clone());
    }
}

pub fn quick(a: QuickArgs, argv: &[String], cluster: &dyn Cluster) -> Result<Outcome, Failure> {
    cluster.single_rank("quick")?;
    if a.time.is_zero() {
        return usage(anyhow!("--time must be greater than zero"));
    }
    if a.size == Some(0) {
        return usage(anyhow!("--size must be greater than zero"));
    }
    refuse_missing(&a.dir)?;
    let mut spec = QuickSpec::new(a.dir.clone());
    spec.size = fit_size(&a)?;
    spec.time = a.time;
    spec.ramp = a.ramp;
    spec.seed = a.seed;
    spec.profile = a.profile.profile();
    spec.direct = !a.target.buffered;
    spec.engine = a.target.engine_or_uring();
    spec.engine_flags = crate::flags::common::engine_flags(&a.target);
    // An existing file or device (not a directory to put a test file in)
    // is only read, unless its data is offered; with --readonly, too.
    let existing = !a.dir.is_dir() && std::fs::symlink_metadata(&a.dir).is_ok();
    let reads_only = if a.target.readonly && existing {
        Some("--readonly".to_string())
    } else if existing && !a.target.allow_destroy {
        Some(format!(
            "writing to {} would destroy its data; add --allow-destroy for the write half",
            a.dir.display()
        ))
    } else {
        None
    };
    spec.writes = reads_only.is_none();
    spec.create = !existing;
    let plan = expand(&spec);
    let per = (a.time + a.ramp).as_secs_f64();
    let mut banner = format!(
        "iosurvey: {} tests ({} profile) of {} s each on {}: about {:.0} s{}",
        plan.points.len(),
        spec.profile.name,
        per,
        a.dir.display(),
        per * plan.points.len() as f64,
        if existing {
            ""
        } else {
            " plus laying out the test file"
        }
    );
    if let Some(why) = &reads_only {
        banner.push_str(&format!("\niosurvey: the read half only: {why}"));
    }
    let card = Card(QuickSettings {
        profile: spec.profile.name.into(),
        description: spec.profile.description.into(),
    });
    run_plan(
        &plan,
        &card,
        &Session {
            argv,
            tflags: &a.target.options(),
            oflags: &a.out.options(),
            cluster,
            banner: Some(banner),
        },
    )
}
