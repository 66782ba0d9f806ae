//! `iosurvey profile` (HD Tune, zcav): read rate across the device's
//! surface, zone by zone, with access time and burst rate on request.
//! Read-only always: the targets are probed for their size before any I/O
//! and never opened for writing.

use crate::flags::common::{size, OutputFlags, SimulateArg, TargetFlags};
use anyhow::anyhow;
use clap::Args;
use iosurvey_engine::EngineKind;
use iosurvey_model::document::RunReport;
use iosurvey_report::profile::{render_profile, render_profile_csv};
use iosurvey_report::TextOptions;
use iosurvey_session::presenter::Presenter;
use iosurvey_session::Cluster;
use iosurvey_session::{run_plan, Session};
use iosurvey_session::{usage, Failure, Outcome};
use iosurvey_target::guard::WritePolicy;
use iosurvey_target::target::{plan_geometry, Geometry, OpenOptions, TargetError};
use iosurvey_workload::modes::profile::{expand, PerZone, ProfileSpec};
use iosurvey_workload::units::{parse_duration, parse_size};
use iosurvey_workload::{ArrayMap, ArraySpec, Layout, TargetSpec};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// A block device or a file (created at --size if missing), read only; several with --simulate are profiled as one device.
    #[arg(required = true, value_name = "TARGET")]
    pub targets: Vec<PathBuf>,
    /// Positions to read at, spread evenly over the whole device.
    #[arg(long, default_value_t = 100)]
    pub zones: u32,
    /// Block size per read.
    #[arg(long, value_parser = size, default_value = "1m")]
    pub bs: u64,
    /// How much to read at each zone: a size (64m) or a time (1s, 500ms; minutes are 2min, as 2m is 2 MiB). At most the zone is read.
    #[arg(long, value_parser = per_zone, default_value = "64m")]
    pub per_zone: PerZone,
    /// Add the access time: random QD 1 reads of 4 KiB (or the logical block size) across the device, up to 1000 or 2 s.
    #[arg(long)]
    pub access_time: bool,
    /// Add the burst rate: repeated reads of the first 1 MiB (the device's cache), up to 256 or 1 s.
    #[arg(long)]
    pub burst: bool,
    /// Put the targets together as one device, end to end (concat) or striped (raid0).
    #[arg(long, value_enum)]
    pub simulate: Option<SimulateArg>,
    /// Stripe size for --simulate raid0; an I/O that crosses a stripe is cut into one piece per stripe.
    #[arg(long, value_parser = size, default_value = "1m")]
    pub stripe: u64,
    /// Size of the test file created for a missing file or a directory (laid out with random data, removed at the end).
    #[arg(long, value_parser = size)]
    pub size: Option<u64>,
    /// Seed for the access-time offsets; recorded in the results.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub target: TargetFlags,
    #[command(flatten)]
    pub out: OutputFlags,
}

/// `--per-zone`: a size first, else a duration.
fn per_zone(s: &str) -> Result<PerZone, String> {
    if let Ok(b) = parse_size(s) {
        return Ok(PerZone::Bytes(b));
    }
    parse_duration(s).map(PerZone::Time).map_err(|_| {
        format!("invalid --per-zone '{s}': give a size (64m) or a time (1s, 500ms, 2min)")
    })
}

fn target_error(e: TargetError) -> Failure {
    match e {
        e @ TargetError::Io { .. } => Failure::Run(e.into()),
        e => Failure::Usage(e.into()),
    }
}

/// Every target's geometry, probed read-only before any I/O.
fn probe(a: &ProfileArgs) -> Result<Vec<Geometry>, Failure> {
    let opts = OpenOptions {
        write: false,
        trim: false,
        direct: !a.target.buffered,
        policy: WritePolicy {
            allow_destroy: a.target.allow_destroy,
            force: a.target.force,
            readonly: a.target.readonly,
        },
        stop: None,
    };
    a.targets
        .iter()
        .map(|p| {
            let spec = TargetSpec {
                path: p.clone(),
                create_size: a.size,
            };
            plan_geometry(&spec, opts).map_err(target_error)
        })
        .collect()
}

/// The bytes the profile covers: the target's size, or the array's (its
/// members cut to whole --bs, or to whole stripes for raid0).
fn device_size(layout: Option<Layout>, g: &[Geometry], bs: u64) -> Result<u64, Failure> {
    match layout {
        None => Ok(g[0].size),
        Some(layout) => {
            let spec = ArraySpec {
                members: (0..g.len()).collect(),
                layout,
            };
            let sizes: Vec<u64> = g.iter().map(|t| t.size).collect();
            ArrayMap::new(&spec, &sizes, bs.max(1))
                .map(|m| m.size())
                .map_err(|e| Failure::Usage(anyhow!("--simulate: {e}")))
        }
    }
}

fn spec_from(a: &ProfileArgs) -> Result<ProfileSpec, Failure> {
    if a.targets.len() > 1 && a.simulate.is_none() {
        return usage(anyhow!(
            "{} targets given: profile one, or add --simulate concat to profile them as one device",
            a.targets.len()
        ));
    }
    let layout = a.simulate.map(|l| match l {
        SimulateArg::Concat => Layout::Concat,
        SimulateArg::Raid0 => Layout::Raid0 { stripe: a.stripe },
    });
    let geometry = probe(a)?;
    let mut s = ProfileSpec::new(a.targets.clone(), device_size(layout, &geometry, a.bs)?);
    s.create_size = a.size;
    s.logical_block_size = geometry
        .iter()
        .map(|g| g.logical_block_size)
        .max()
        .unwrap_or(512);
    s.array = layout;
    s.zones = a.zones;
    s.bs = a.bs;
    s.per_zone = a.per_zone;
    s.access_time = a.access_time;
    s.burst = a.burst;
    s.engine = a.target.engine.kind().unwrap_or(EngineKind::Sync);
    s.engine_flags = crate::flags::common::engine_flags(&a.target);
    s.direct = !a.target.buffered;
    s.seed = a.seed;
    Ok(s)
}

/// The chart as text and the zones as CSV.
struct ProfilePresenter;

impl Presenter for ProfilePresenter {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        render_profile(report, opts)
    }
    fn csv(&self, report: &RunReport) -> String {
        render_profile_csv(report)
    }
}

pub fn profile(a: ProfileArgs, argv: &[String], cluster: &dyn Cluster) -> Result<Outcome, Failure> {
    cluster.single_rank("profile")?;
    // Checked before the targets are probed, so they need not exist.
    if a.zones == 0 {
        return usage(anyhow!("--zones must be greater than zero"));
    }
    if matches!(a.per_zone, PerZone::Bytes(0)) || a.per_zone == PerZone::Time(Duration::ZERO) {
        return usage(anyhow!("--per-zone must be greater than zero"));
    }
    let spec = spec_from(&a)?;
    let plan = match expand(&spec) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let bound = match spec.per_zone {
        PerZone::Bytes(b) => format!("up to {b} bytes"),
        PerZone::Time(t) => format!("up to {} s", t.as_secs_f64()),
    };
    let banner = format!(
        "iosurvey: profile: {} zones of {} bytes, {bound} each, read-only",
        spec.zones, spec.size
    );
    run_plan(
        &plan,
        &ProfilePresenter,
        &Session {
            argv,
            tflags: &a.target.options(),
            oflags: &a.out.options(),
            cluster,
            banner: Some(banner),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_zone_is_a_size_first_then_a_time() {
        assert_eq!(per_zone("64m"), Ok(PerZone::Bytes(64 << 20)));
        assert_eq!(per_zone("4096"), Ok(PerZone::Bytes(4096)));
        assert_eq!(per_zone("1s"), Ok(PerZone::Time(Duration::from_secs(1))));
        assert_eq!(
            per_zone("500ms"),
            Ok(PerZone::Time(Duration::from_millis(500)))
        );
        assert_eq!(
            per_zone("2min"),
            Ok(PerZone::Time(Duration::from_secs(120)))
        );
        assert!(per_zone("fast").unwrap_err().contains("--per-zone"));
    }
}
