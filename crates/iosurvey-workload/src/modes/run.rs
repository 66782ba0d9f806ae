//! `iosurvey run`: one fio-style workload, one stream per target; a sweep
//! of `--qd` or `--bs` values runs it once per value, one point each.

use crate::array::{ArraySpec, Layout};
use crate::model::{Bounds, Job, Mix, Pattern, Plan, Point, StreamClass, TargetSpec};
use crate::units::blocks_around;
use iosurvey_model::PointParams;
use iosurvey_model::{Dist, EngineKind, RateCap};
pub use split::{parse_bs, BsArg};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;
pub use sweep::{parse_bs_list, parse_qd_list, sweep_values, SweepValue};
pub use trim::TrimError;

mod split;
mod sweep;
mod trim;

/// The `--rw` workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rw {
    Read,
    Write,
    BackRead,
    BackWrite,
    RandRead,
    RandWrite,
    RandRw,
    /// Sequential discards of --bs blocks (fio's rw=trim).
    Trim,
    /// Random discards (fio's rw=randtrim).
    RandTrim,
}

impl Rw {
    pub const NAMES: [&'static str; 9] = [
        "read",
        "write",
        "backread",
        "backwrite",
        "randread",
        "randwrite",
        "randrw",
        "trim",
        "randtrim",
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    fn pattern(self) -> Pattern {
        match self {
            Rw::Read | Rw::Write | Rw::Trim => Pattern::Forward,
            Rw::BackRead | Rw::BackWrite => Pattern::Backward,
            Rw::RandRead | Rw::RandWrite | Rw::RandRw | Rw::RandTrim => Pattern::Random,
        }
    }
}

impl FromStr for Rw {
    type Err = RunSpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "backread" => Rw::BackRead,
            "backwrite" => Rw::BackWrite,
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "randrw" => Rw::RandRw,
            "trim" => Rw::Trim,
            "randtrim" => Rw::RandTrim,
            _ => return Err(RunSpecError::Rw(s.to_string())),
        })
    }
}

/// Everything `iosurvey run` was asked for, already parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    pub targets: Vec<PathBuf>,
    pub size: Option<u64>,
    pub rw: Rw,
    /// Percentage of reads for `randrw`.
    pub mix: Option<u8>,
    /// `--trim PCT`: percent of I/Os that are discards (1 to 100), the
    /// rest as `rw` and `mix` say.
    pub trim: Option<u8>,
    pub bs: u64,
    /// Outstanding I/Os of each target's stream on each worker that runs
    /// it (fio's iodepth per job).
    pub qd: u32,
    /// `--qd 1,2,4`: the depths to sweep, one point each, in this order;
    /// fewer than two: `qd` alone.
    pub qd_sweep: Vec<u32>,
    /// `--bs 4k,64k`: the block sizes to sweep, one point each (each with
    /// every depth of `qd_sweep`); fewer than two: `bs` alone.
    pub bs_sweep: Vec<u64>,
    /// `--bs 4k:70,64k:30`: each I/O's size drawn from this split (`bs`
    /// and `bs_sweep` are then not read).
    pub bs_split: Option<iosurvey_model::BsSplit>,
    /// `--workers`: every target's stream shared by this many workers,
    /// each with `qd` of it in flight. `None`: the default, each target's
    /// stream one worker's alone (see [`default_workers`]).
    pub workers: Option<u32>,
    /// CPUs of the machine (the caller's `available_parallelism`: `expand`
    /// is pure): the default's cap when more than
    /// [`DEFAULT_MAX_WORKERS`].
    pub cpus: u32,
    pub engine: EngineKind,
    pub direct: bool,
    pub time: Option<Duration>,
    pub bytes: Option<u64>,
    pub ramp: Duration,
    pub offset: u64,
    pub span: Option<u64>,
    pub regions: u32,
    pub seed: u64,
    pub interval: Duration,
    pub continue_on_error: bool,
    /// `--verify`.
    pub verify: bool,
    /// `--verify-backlog N`.
    pub verify_backlog: Option<u32>,
    /// `--verify-state DIR`.
    pub verify_state: Option<PathBuf>,
    /// `--check-compression`.
    pub check_compression: bool,
    /// Put the targets together as one virtual array (one stream over it)
    /// instead of one stream per target.
    pub simulate: Option<Layout>,
    /// The engine flags, written into every job.
    pub engine_flags: crate::EngineFlags,
    /// `--dist`: how a random workload spreads its I/Os over the blocks.
    pub dist: Dist,
    /// `--rate-iops`, `--rate`: the cap on the rate I/Os are issued at.
    pub rate: Option<RateCap>,
}

impl RunSpec {
    /// Defaults: sequential 1 MiB reads, QD 1, a worker per target (one
    /// CPU assumed), io_uring, O_DIRECT, one pass over the area.
    pub fn new(targets: Vec<PathBuf>) -> Self {
        RunSpec {
            targets,
            size: None,
            rw: Rw::Read,
            mix: None,
            trim: None,
            bs: 1 << 20,
            qd: 1,
            qd_sweep: Vec::new(),
            bs_sweep: Vec::new(),
            bs_split: None,
            workers: None,
            cpus: 1,
            engine: EngineKind::Uring,
            direct: true,
            time: None,
            bytes: None,
            ramp: Duration::ZERO,
            offset: 0,
            span: None,
            regions: 0,
            seed: 0,
            interval: Duration::from_secs(1),
            continue_on_error: false,
            verify: false,
            verify_backlog: None,
            verify_state: None,
            check_compression: false,
            simulate: None,
            engine_flags: crate::EngineFlags::default(),
            dist: Dist::Uniform,
            rate: None,
        }
    }
}

/// A run that cannot be expanded, whatever the targets are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunSpecError {
    #[error("unknown --rw '{0}': use one of read, write, backread, backwrite, randread, randwrite, randrw, trim, randtrim")]
    Rw(String),
    #[error("no target given: name a file or a block device")]
    NoTarget,
    #[error("--{0} must be greater than zero")]
    Zero(&'static str),
    #[error("--bs {0} is too large: Linux moves at most {MAX_IO} bytes (2GiB less 4KiB) per I/O")]
    BsTooLarge(u64),
    #[error("--bytes {bytes} is not a multiple of --bs {bs}: every I/O moves a whole block, so the bound cannot be met exactly; give --bytes {below} or {above}")]
    BytesNotWholeBlocks {
        bytes: u64,
        bs: u64,
        below: u64,
        above: u64,
    },
    #[error("--mix {0} is out of range: give the percentage of reads, 0 to 100")]
    MixRange(u32),
    #[error("--mix only applies to --rw randrw")]
    MixWithoutRandrw,
    #[error("--engine sync has one outstanding I/O per worker; use --workers {0} or --engine uring for --qd {0}")]
    SyncDepth(u32),
    #[error(
        "--qd {qd} x --workers {workers} is more than {} outstanding I/Os per target",
        crate::MAX_OUTSTANDING
    )]
    TooDeep { qd: u32, workers: u32 },
    #[error(
        "--regions applies to sequential patterns (read, write, backread, backwrite), not {0}"
    )]
    RegionsRandom(&'static str),
    #[error("--regions {regions} is fewer than --workers {workers}: every worker needs a region")]
    FewerRegionsThanWorkers { regions: u32, workers: u32 },
    #[error("--interval must be at least 1ms")]
    Interval,
    #[error("--{flag} {list}: {why}")]
    List {
        flag: &'static str,
        list: String,
        why: String,
    },
    #[error("--bs with a split ({0}) cannot go with --{1}: {2}")]
    SplitWith(String, &'static str, &'static str),
    #[error("--verify proves one point's writes; a sweep (--qd or --bs with several values) runs several: verify one point at a time")]
    VerifySweep,
    #[error("--dist {dist} applies to random workloads (randread, randwrite, randrw, randtrim), not {rw}")]
    DistSequential { dist: Dist, rw: &'static str },
    #[error("--verify does not take --dist {0} with writes: no two writes of a block may be in flight together, and a skewed stream would wait on its few hot blocks; verify with --dist uniform")]
    VerifySkewed(Dist),
    #[error("--rate and --rate-iops do not apply with --simulate: a striped array cuts I/Os into pieces the schedule does not count; drop one")]
    RateSimulate,
    #[error(transparent)]
    Trim(#[from] TrimError),
}

/// The most bytes one read or write moves on Linux (`MAX_RW_COUNT`): a
/// larger block would come back short every time.
pub const MAX_IO: u64 = 0x7fff_f000;

/// The most workers the default gives a run over many targets, unless the
/// machine has more CPUs: past it the targets are dealt round-robin.
pub const DEFAULT_MAX_WORKERS: u32 = 64;

/// Workers a run of `streams` streams gets when `--workers` is not given:
/// one per stream, as fio gives each job its own thread, up to
/// [`DEFAULT_MAX_WORKERS`] or `cpus` if more (the streams are then dealt
/// round-robin, each still one worker's alone). Measured on a 2-CPU VM
/// shared with other work (bench/targets.sh, bench/RESULTS.md), 64 targets
/// ran fastest so: 2 workers (one per CPU) reached 0.34 of fio's IOPS, 8
/// workers 0.59, 64 workers 0.70; with the untimed wait of issue 30 §2,
/// 64 workers reached 1.24 of fio's IOPS on the same VM when quiet and
/// 1.21 beside two busy loops. Never more than there are streams, never
/// none.
pub fn default_workers(streams: usize, cpus: u32) -> u32 {
    let streams = u32::try_from(streams).unwrap_or(u32::MAX).max(1);
    streams.min(DEFAULT_MAX_WORKERS.max(cpus))
}

/// Expands a run into its plan: one point, or one per value of a sweep
/// (see [`sweep_values`]), each checked as a run of its own.
pub fn expand(spec: &RunSpec) -> Result<Plan, RunSpecError> {
    let values = sweep_values(spec);
    if let Some(split) = &spec.bs_split {
        let with = |flag, why| RunSpecError::SplitWith(split.describe(), flag, why);
        if spec.verify {
            return Err(with(
                "verify",
                "the verify layer keeps blocks of one size per run; verify a run of one --bs",
            ));
        }
        if spec.simulate.is_some() {
            return Err(with(
                "simulate",
                "an array cuts I/Os of one size into stripes; give one --bs",
            ));
        }
    }
    if spec.verify && values.len() > 1 {
        return Err(RunSpecError::VerifySweep);
    }
    let mut points = Vec::with_capacity(values.len());
    for (index, v) in values.into_iter().enumerate() {
        let mut one = spec.clone();
        (one.qd, one.bs) = (v.qd, v.bs);
        points.push(Point {
            index,
            params: v.params,
            ..expand_point(&one)?
        });
    }
    Ok(spec.engine_flags.written(Plan {
        mode: "run".into(),
        points,
    }))
}

/// The one point of `spec`'s `qd` and `bs` (its sweeps are not read).
fn expand_point(spec: &RunSpec) -> Result<Point, RunSpecError> {
    if spec.targets.is_empty() {
        return Err(RunSpecError::NoTarget);
    }
    // With a split, the largest size (the buffers' length) is checked,
    // and a byte bound is one of whole units its offsets step by.
    let (bs, unit) = match &spec.bs_split {
        Some(split) => (split.max_bs(), split.align()),
        None => (spec.bs, spec.bs),
    };
    if bs == 0 {
        return Err(RunSpecError::Zero("bs"));
    }
    if bs > MAX_IO {
        return Err(RunSpecError::BsTooLarge(bs));
    }
    if spec.qd == 0 {
        return Err(RunSpecError::Zero("qd"));
    }
    if spec.workers == Some(0) {
        return Err(RunSpecError::Zero("workers"));
    }
    if spec.time == Some(Duration::ZERO) {
        return Err(RunSpecError::Zero("time"));
    }
    if spec.bytes == Some(0) {
        return Err(RunSpecError::Zero("bytes"));
    }
    if let Some(bytes) = spec.bytes {
        if let Some((below, above)) = blocks_around(bytes, unit) {
            return Err(RunSpecError::BytesNotWholeBlocks {
                bytes,
                bs: unit,
                below,
                above,
            });
        }
    }
    if spec.size == Some(0) {
        return Err(RunSpecError::Zero("size"));
    }
    if spec.span == Some(0) {
        return Err(RunSpecError::Zero("span"));
    }
    if spec.interval < Duration::from_millis(1) {
        return Err(RunSpecError::Interval);
    }
    // Each target's stream has --qd in flight on every worker that runs
    // it: every worker given by --workers, one by default.
    let sharing = spec.workers.unwrap_or(1);
    if u64::from(spec.qd) * u64::from(sharing) > crate::MAX_OUTSTANDING {
        return Err(RunSpecError::TooDeep {
            qd: spec.qd,
            workers: sharing,
        });
    }
    if spec.engine == EngineKind::Sync && spec.qd > 1 {
        return Err(RunSpecError::SyncDepth(spec.qd));
    }
    let mix = match (spec.rw, spec.mix) {
        (Rw::RandRw, Some(p)) if p > 100 => return Err(RunSpecError::MixRange(p.into())),
        (Rw::RandRw, p) => Mix::Mixed {
            read_pct: p.unwrap_or(50),
        },
        (_, Some(_)) => return Err(RunSpecError::MixWithoutRandrw),
        (Rw::Read | Rw::BackRead | Rw::RandRead, None) => Mix::Read,
        (Rw::Write | Rw::BackWrite | Rw::RandWrite, None) => Mix::Write,
        (Rw::Trim | Rw::RandTrim, None) => Mix::TRIM,
    };
    let mix = trim::with_trims(&trim::Asked {
        mix,
        trim: spec.trim,
        all_trims: matches!(spec.rw, Rw::Trim | Rw::RandTrim).then(|| spec.rw.name()),
        verify: spec.verify,
        check_compression: spec.check_compression,
        simulate: spec.simulate.is_some(),
    })?;
    if spec.rate.is_some() && spec.simulate.is_some() {
        return Err(RunSpecError::RateSimulate);
    }
    let pattern = spec.rw.pattern();
    if !spec.dist.is_uniform() && pattern.is_sequential() {
        return Err(RunSpecError::DistSequential {
            dist: spec.dist,
            rw: spec.rw.name(),
        });
    }
    if !spec.dist.is_uniform() && spec.verify && mix.writes() {
        return Err(RunSpecError::VerifySkewed(spec.dist));
    }
    if spec.regions > 0 {
        if !pattern.is_sequential() {
            return Err(RunSpecError::RegionsRandom(spec.rw.name()));
        }
        if spec.regions < sharing {
            return Err(RunSpecError::FewerRegionsThanWorkers {
                regions: spec.regions,
                workers: sharing,
            });
        }
    }
    let targets = spec
        .targets
        .iter()
        .map(|p| TargetSpec {
            path: p.clone(),
            create_size: spec.size,
        })
        .collect();
    let array = spec.simulate.map(|layout| ArraySpec {
        members: (0..spec.targets.len()).collect(),
        layout,
    });
    let per_target = if array.is_some() {
        1
    } else {
        spec.targets.len()
    };
    // Given --workers, every worker runs a share of every stream; by
    // default each stream is one worker's alone, dealt round-robin.
    let (workers, pin) = match spec.workers {
        Some(w) => (w, None),
        None => {
            let w = default_workers(per_target, spec.cpus);
            (w, (w > 1).then_some(w))
        }
    };
    let streams = (0..per_target)
        .map(|t| StreamClass {
            pin: pin.map(|w| t as u32 % w),
            offset: spec.offset,
            span: spec.span,
            regions: spec.regions,
            array: array.clone(),
            // A created file is --size long; an existing target's area
            // ends there. Over an array --size is each member's (created)
            // size, and the array is used whole.
            limit: if array.is_none() { spec.size } else { None },
            split: spec.bs_split.clone(),
            dist: spec.dist,
            ..StreamClass::new("main", t, mix, pattern, bs, spec.qd)
        })
        .collect();
    let job = Job {
        workers,
        engine: spec.engine,
        direct: spec.direct,
        seed: spec.seed,
        interval: spec.interval,
        continue_on_error: spec.continue_on_error,
        verify: spec.verify,
        verify_backlog: spec.verify_backlog,
        verify_state: spec.verify_state.clone(),
        check_compression: spec.check_compression,
        rate: spec.rate,
        ..Job::new(
            targets,
            streams,
            Bounds {
                time: spec.time,
                bytes: spec.bytes,
                ramp: spec.ramp,
            },
        )
    };
    Ok(Point {
        index: 0,
        params: PointParams::RUN,
        label: format!(
            "{}{} bs={} qd={} workers={}",
            spec.rw.name(),
            spec.trim
                .map_or_else(String::new, |t| format!(" trim={t}%")),
            spec.bs_split
                .as_ref()
                .map_or_else(|| crate::units::format_size(bs), |s| s.describe()),
            spec.qd,
            workers
        ),
        job,
        skip: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RunSpec {
        RunSpec::new(vec!["/a".into(), "/b".into()])
    }

    #[test]
    fn one_stream_per_target() {
        let mut s = spec();
        s.rw = Rw::RandRw;
        s.mix = Some(70);
        s.qd = 16;
        let plan = expand(&s).unwrap();
        let job = &plan.points[0].job;
        assert_eq!(job.streams.len(), 2);
        assert_eq!(job.streams[1].target, 1);
        assert_eq!(job.streams[0].mix, Mix::Mixed { read_pct: 70 });
        assert_eq!(job.streams[0].pattern, Pattern::Random);
        assert_eq!(job.streams[0].outstanding, 16);
    }

    #[test]
    fn trim_and_randtrim_are_all_discards_through_the_write_guard() {
        for (rw, pattern) in [("trim", Pattern::Forward), ("randtrim", Pattern::Random)] {
            let mut s = spec();
            s.rw = rw.parse().unwrap();
            let p = expand(&s).unwrap();
            let job = &p.points[0].job;
            assert_eq!(
                (job.streams[0].mix, job.streams[0].pattern),
                (Mix::TRIM, pattern)
            );
            assert!(job.writes_target(1) && job.trims_target(1));
            assert!(p.points[0].label.starts_with(&format!("{rw} ")));
        }
        let mut s = spec();
        s.rw = Rw::RandRw;
        s.trim = Some(10);
        let p = expand(&s).unwrap();
        assert!(p.points[0].label.starts_with("randrw trim=10% "));
        s.trim = Some(0);
        assert_eq!(expand(&s), Err(RunSpecError::Trim(TrimError::Range(0))));
    }

    fn targets(n: usize) -> RunSpec {
        RunSpec::new((0..n).map(|i| format!("/dev/zram{i}").into()).collect())
    }

    #[test]
    fn by_default_each_target_is_one_workers_alone() {
        let mut s = targets(5);
        s.qd = 32;
        s.cpus = 2;
        let job = &expand(&s).unwrap().points[0].job;
        assert_eq!(job.workers, 5);
        assert!(job
            .streams
            .iter()
            .enumerate()
            .all(|(t, st)| st.pin == Some(t as u32)));
        // --qd stays each target's depth.
        assert!(job.streams.iter().all(|st| st.outstanding == 32));
        assert!(expand(&s).unwrap().points[0].label.ends_with("workers=5"));
        // The sync engine alike: fio's psync jobs, a thread each.
        s.qd = 1;
        s.engine = EngineKind::Sync;
        assert_eq!(expand(&s).unwrap().points[0].job.workers, 5);
    }

    #[test]
    fn past_the_cap_the_targets_are_dealt_round_robin() {
        let n = DEFAULT_MAX_WORKERS as usize + 3;
        let mut s = targets(n);
        s.cpus = 2;
        let job = &expand(&s).unwrap().points[0].job;
        assert_eq!(job.workers, DEFAULT_MAX_WORKERS);
        let pins: Vec<u32> = job.streams.iter().map(|st| st.pin.unwrap()).collect();
        assert_eq!(pins[..3], [0, 1, 2]);
        assert_eq!(pins[n - 3..], [0, 1, 2]);
        // A machine with more CPUs than the cap: a worker per target.
        s.cpus = 256;
        assert_eq!(expand(&s).unwrap().points[0].job.workers, n as u32);
        assert_eq!(default_workers(0, 1), 1);
    }

    #[test]
    fn one_target_or_one_array_is_one_unpinned_worker_by_default() {
        let mut s = targets(1);
        s.cpus = 8;
        let job = &expand(&s).unwrap().points[0].job;
        assert_eq!(job.workers, 1);
        assert_eq!(job.streams[0].pin, None);
        let mut s = targets(4);
        s.cpus = 8;
        s.simulate = Some(Layout::Concat);
        let job = &expand(&s).unwrap().points[0].job;
        assert_eq!((job.workers, job.streams.len()), (1, 1));
    }

    #[test]
    fn given_workers_share_every_targets_stream() {
        let mut s = targets(3);
        s.cpus = 8;
        s.qd = 4;
        s.workers = Some(1);
        let job = &expand(&s).unwrap().points[0].job;
        assert_eq!(job.workers, 1);
        assert!(job.streams.iter().all(|st| st.pin.is_none()));
        s.workers = Some(6);
        let plan = expand(&s).unwrap();
        let job = &plan.points[0].job;
        assert_eq!(job.workers, 6);
        assert!(job
            .streams
            .iter()
            .all(|st| st.pin.is_none() && st.outstanding == 4));
        assert!(plan.points[0].label.ends_with("workers=6"));
        // --regions is checked against the given workers only.
        s.regions = 2;
        assert_eq!(
            expand(&s),
            Err(RunSpecError::FewerRegionsThanWorkers {
                regions: 2,
                workers: 6
            })
        );
        s.workers = None;
        assert!(expand(&s).is_ok());
    }

    #[test]
    fn simulate_makes_one_stream_over_an_array_of_every_target() {
        let mut s = spec();
        s.rw = Rw::Write;
        s.simulate = Some(Layout::Raid0 { stripe: 1 << 20 });
        let job = &expand(&s).unwrap().points[0].job;
        assert_eq!(job.streams.len(), 1);
        let a = job.streams[0].array.as_ref().unwrap();
        assert_eq!(a.members, [0, 1]);
        assert!(
            job.writes_target(0) && job.writes_target(1),
            "the guard sees every member"
        );
    }

    #[test]
    fn every_rw_name_parses_back() {
        for name in Rw::NAMES {
            assert_eq!(name.parse::<Rw>().unwrap().name(), name);
        }
        assert!("randwrtie".parse::<Rw>().is_err());
    }

    #[test]
    fn a_random_workload_carries_its_distribution() {
        let mut s = spec();
        s.rw = Rw::RandRw;
        s.dist = Dist::Pareto { h: 0.2 };
        let job = &expand(&s).unwrap().points[0].job;
        assert!(job.streams.iter().all(|st| st.dist == s.dist));
        assert_eq!(
            expand(&spec()).unwrap().points[0].job.streams[0].dist,
            Dist::Uniform
        );
    }

    #[test]
    fn backward_workloads_are_backward() {
        let mut s = spec();
        s.rw = Rw::BackWrite;
        let job = &expand(&s).unwrap().points[0].job;
        assert_eq!(job.streams[0].pattern, Pattern::Backward);
        assert_eq!(job.streams[0].mix, Mix::Write);
        assert!(job.writes());
    }

    #[test]
    fn bad_specs_are_refused() {
        type Edit = Box<dyn Fn(&mut RunSpec)>;
        let cases: Vec<(Edit, RunSpecError)> = vec![
            (Box::new(|s| s.bs = 0), RunSpecError::Zero("bs")),
            (Box::new(|s| s.qd = 0), RunSpecError::Zero("qd")),
            (
                Box::new(|s| s.workers = Some(0)),
                RunSpecError::Zero("workers"),
            ),
            (
                Box::new(|s| s.time = Some(Duration::ZERO)),
                RunSpecError::Zero("time"),
            ),
            (
                Box::new(|s| s.mix = Some(50)),
                RunSpecError::MixWithoutRandrw,
            ),
            (
                Box::new(|s| {
                    s.rw = Rw::RandRw;
                    s.mix = Some(101)
                }),
                RunSpecError::MixRange(101),
            ),
            (
                Box::new(|s| {
                    s.engine = EngineKind::Sync;
                    s.qd = 4
                }),
                RunSpecError::SyncDepth(4),
            ),
            (
                Box::new(|s| {
                    s.rw = Rw::RandRead;
                    s.regions = 2
                }),
                RunSpecError::RegionsRandom("randread"),
            ),
            (Box::new(|s| s.targets.clear()), RunSpecError::NoTarget),
            (
                Box::new(|s| {
                    s.bs = 64 << 10;
                    s.bytes = Some(1000 << 10)
                }),
                RunSpecError::BytesNotWholeBlocks {
                    bytes: 1000 << 10,
                    bs: 64 << 10,
                    below: 960 << 10,
                    above: 1 << 20,
                },
            ),
            (
                Box::new(|s| s.dist = Dist::Zipf { theta: 1.2 }),
                RunSpecError::DistSequential {
                    dist: Dist::Zipf { theta: 1.2 },
                    rw: "read",
                },
            ),
            (
                Box::new(|s| {
                    s.rw = Rw::RandWrite;
                    s.verify = true;
                    s.dist = Dist::Pareto { h: 0.1 };
                }),
                RunSpecError::VerifySkewed(Dist::Pareto { h: 0.1 }),
            ),
            (
                Box::new(|s| {
                    s.simulate = Some(Layout::Concat);
                    s.rate = Some(
                        crate::rate::parse_rate("100", iosurvey_model::RateUnit::Iops).unwrap(),
                    )
                }),
                RunSpecError::RateSimulate,
            ),
            (
                Box::new(|s| s.bs = MAX_IO + 4096),
                RunSpecError::BsTooLarge(MAX_IO + 4096),
            ),
        ];
        for (edit, want) in cases {
            let mut s = spec();
            edit(&mut s);
            assert_eq!(expand(&s), Err(want));
        }
    }
}
