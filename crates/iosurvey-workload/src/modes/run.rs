//! `iosurvey run`: one fio-style workload, one stream per target.

use crate::array::{ArraySpec, Layout};
use crate::model::{Bounds, Job, Mix, Pattern, Plan, Point, StreamClass, TargetSpec};
use crate::units::blocks_around;
use iosurvey_model::EngineKind;
use iosurvey_model::PointParams;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

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
}

impl Rw {
    pub const NAMES: [&'static str; 7] = [
        "read",
        "write",
        "backread",
        "backwrite",
        "randread",
        "randwrite",
        "randrw",
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    fn pattern(self) -> Pattern {
        match self {
            Rw::Read | Rw::Write => Pattern::Forward,
            Rw::BackRead | Rw::BackWrite => Pattern::Backward,
            Rw::RandRead | Rw::RandWrite | Rw::RandRw => Pattern::Random,
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
    pub bs: u64,
    pub qd: u32,
    pub workers: u32,
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
}

impl RunSpec {
    /// Defaults: sequential 1 MiB reads, QD 1, one worker, io_uring,
    /// O_DIRECT, one pass over the area.
    pub fn new(targets: Vec<PathBuf>) -> Self {
        RunSpec {
            targets,
            size: None,
            rw: Rw::Read,
            mix: None,
            bs: 1 << 20,
            qd: 1,
            workers: 1,
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
        }
    }
}

/// A run that cannot be expanded, whatever the targets are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunSpecError {
    #[error("unknown --rw '{0}': use one of read, write, backread, backwrite, randread, randwrite, randrw")]
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
}

/// The most bytes one read or write moves on Linux (`MAX_RW_COUNT`): a
/// larger block would come back short every time.
pub const MAX_IO: u64 = 0x7fff_f000;

/// Expands a run into a one-point plan.
pub fn expand(spec: &RunSpec) -> Result<Plan, RunSpecError> {
    if spec.targets.is_empty() {
        return Err(RunSpecError::NoTarget);
    }
    if spec.bs == 0 {
        return Err(RunSpecError::Zero("bs"));
    }
    if spec.bs > MAX_IO {
        return Err(RunSpecError::BsTooLarge(spec.bs));
    }
    if spec.qd == 0 {
        return Err(RunSpecError::Zero("qd"));
    }
    if spec.workers == 0 {
        return Err(RunSpecError::Zero("workers"));
    }
    if spec.time == Some(Duration::ZERO) {
        return Err(RunSpecError::Zero("time"));
    }
    if spec.bytes == Some(0) {
        return Err(RunSpecError::Zero("bytes"));
    }
    if let Some(bytes) = spec.bytes {
        if let Some((below, above)) = blocks_around(bytes, spec.bs) {
            let bs = spec.bs;
            return Err(RunSpecError::BytesNotWholeBlocks {
                bytes,
                bs,
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
    if u64::from(spec.qd) * u64::from(spec.workers) > crate::MAX_OUTSTANDING {
        return Err(RunSpecError::TooDeep {
            qd: spec.qd,
            workers: spec.workers,
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
    };
    let pattern = spec.rw.pattern();
    if spec.regions > 0 {
        if !pattern.is_sequential() {
            return Err(RunSpecError::RegionsRandom(spec.rw.name()));
        }
        if spec.regions < spec.workers {
            return Err(RunSpecError::FewerRegionsThanWorkers {
                regions: spec.regions,
                workers: spec.workers,
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
    let streams = (0..per_target)
        .map(|t| StreamClass {
            offset: spec.offset,
            span: spec.span,
            regions: spec.regions,
            array: array.clone(),
            // A created file is --size long; an existing target's area
            // ends there. Over an array --size is each member's (created)
            // size, and the array is used whole.
            limit: if array.is_none() { spec.size } else { None },
            ..StreamClass::new("main", t, mix, pattern, spec.bs, spec.qd)
        })
        .collect();
    let job = Job {
        workers: spec.workers,
        engine: spec.engine,
        direct: spec.direct,
        seed: spec.seed,
        interval: spec.interval,
        continue_on_error: spec.continue_on_error,
        verify: spec.verify,
        verify_backlog: spec.verify_backlog,
        verify_state: spec.verify_state.clone(),
        check_compression: spec.check_compression,
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
    Ok(spec.engine_flags.written(Plan {
        mode: "run".into(),
        points: vec![Point {
            index: 0,
            params: PointParams::Run,
            label: format!(
                "{} bs={} qd={} workers={}",
                spec.rw.name(),
                crate::units::format_size(spec.bs),
                spec.qd,
                spec.workers
            ),
            job,
            skip: None,
        }],
    }))
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
            (Box::new(|s| s.workers = 0), RunSpecError::Zero("workers")),
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
