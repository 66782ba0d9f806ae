//! `iosurvey matrix`: Oracle ORION's small/large I/O matrix. Each point is
//! one job over one virtual array of every target (concat or raid0), with a
//! `small` class of random I/Os and a `large` class of random I/Os or
//! sequential streams running together and measured apart. The load levels
//! are ORION's, from `num_disks` (see [`levels`]).

mod levels;

pub use levels::{cells, large_levels, small_levels, MatrixType};

use crate::array::{ArraySpec, Layout};
use crate::model::{Bounds, Job, Mix, Pattern, Plan, Point, StreamClass, TargetSpec};
use iosurvey_model::EngineKind;
use iosurvey_model::PointParams;
use std::path::PathBuf;
use std::time::Duration;

pub use crate::MAX_OUTSTANDING;

/// ORION's `-run` levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunLevel {
    /// The basic matrix (row 0 and column 0).
    Simple,
    /// The detailed matrix (every combination).
    Normal,
    /// The matrix type given (`--matrix`, default basic).
    Advanced,
    /// Small random I/Os only, at increasing load: the maximum IOPS.
    Oltp,
    /// Large random I/Os only, at increasing load: the maximum MB/s.
    Dss,
}

impl RunLevel {
    pub fn name(self) -> &'static str {
        match self {
            RunLevel::Simple => "simple",
            RunLevel::Normal => "normal",
            RunLevel::Advanced => "advanced",
            RunLevel::Oltp => "oltp",
            RunLevel::Dss => "dss",
        }
    }
}

/// ORION's cache warm-up without `-cache_size`: about 2 minutes of load
/// before each large sequential point.
pub const ORION_DEFAULT_WARM: Duration = Duration::from_secs(120);

/// The cache warm-up before each point with large sequential I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warm {
    Time(Duration),
    /// Bytes moved, unmeasured, by the point's own load (ORION's
    /// `-cache_size`).
    Bytes(u64),
}

impl Warm {
    /// The unmeasured ramp by time it gives (none for a warm-up by bytes).
    pub fn ramp(self) -> Duration {
        match self {
            Warm::Time(t) => t,
            Warm::Bytes(_) => Duration::ZERO,
        }
    }

    /// The bytes of a warm-up by bytes (0 for one by time).
    pub fn bytes(self) -> u64 {
        match self {
            Warm::Time(_) => 0,
            Warm::Bytes(b) => b,
        }
    }
}

/// Everything `iosurvey matrix` was asked for, already parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixSpec {
    pub targets: Vec<PathBuf>,
    /// Size to create missing test files at (ORION needs them to exist).
    pub create_size: Option<u64>,
    pub run: RunLevel,
    /// Spindles; sets the load levels. `None`: the number of targets.
    pub num_disks: Option<u32>,
    pub size_small: u64,
    pub size_large: u64,
    /// Large I/Os as `num_large` sequential streams instead of random.
    pub sequential: bool,
    /// Outstanding I/Os per sequential stream.
    pub num_streamio: u32,
    pub layout: Layout,
    /// Percentage of writes in both classes.
    pub write_pct: u8,
    pub duration: Duration,
    pub warm: Warm,
    /// Only with `RunLevel::Advanced`; default basic.
    pub matrix: Option<MatrixType>,
    pub num_small: Option<u32>,
    pub num_large: Option<u32>,
    pub engine: EngineKind,
    pub direct: bool,
    pub seed: u64,
    /// The engine flags, written into every job.
    pub engine_flags: crate::EngineFlags,
}

impl MatrixSpec {
    /// ORION's defaults: `-run advanced -matrix basic`, 8 KiB small and
    /// 1 MiB large random I/Os, concat, reads only, 60 s a point, no
    /// warm-up, 4 I/Os per sequential stream.
    pub fn new(targets: Vec<PathBuf>) -> Self {
        MatrixSpec {
            targets,
            create_size: None,
            run: RunLevel::Advanced,
            num_disks: None,
            size_small: 8 << 10,
            size_large: 1 << 20,
            sequential: false,
            num_streamio: 4,
            layout: Layout::Concat,
            write_pct: 0,
            duration: Duration::from_secs(60),
            warm: Warm::Time(Duration::ZERO),
            matrix: None,
            num_small: None,
            num_large: None,
            engine: EngineKind::Uring,
            direct: true,
            seed: 0,
            engine_flags: crate::EngineFlags::default(),
        }
    }

    /// `num_disks`, or the number of targets.
    pub fn disks(&self) -> u32 {
        self.num_disks.unwrap_or(self.targets.len() as u32)
    }
}

/// A matrix that cannot be expanded, whatever the targets are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatrixError {
    #[error("no target given: name files or block devices, or list them in <testname>.lun, one per line")]
    NoTarget,
    #[error("{0} is named twice; name every target once")]
    Duplicate(PathBuf),
    #[error("--{0} must be greater than zero")]
    Zero(&'static str),
    #[error("--write-pct {0} is out of range: give the percentage of writes, 0 to 100")]
    WriteRange(u8),
    #[error("--matrix applies to --run advanced only; --run {0} sets its own matrix")]
    MatrixNotAdvanced(&'static str),
    #[error("--matrix {matrix} needs --{flag}")]
    Needs {
        matrix: &'static str,
        flag: &'static str,
    },
    #[error("--size-{0} {1} is too large: at most 1GiB per I/O")]
    TooLarge(&'static str, u64),
    #[error("{0} outstanding I/Os in one point is more than {MAX_OUTSTANDING}; lower --num-disks, --num-small, --num-large or --num-streamio")]
    TooDeep(u64),
    #[error("--engine sync has one I/O in flight, and the matrix's loads are outstanding I/Os; use --engine uring")]
    SyncDepth,
    #[error("the matrix is empty: --num-small and --num-large are both 0")]
    Empty,
}

/// The matrix type a run level runs, and whether small and large I/O are on.
fn shape(spec: &MatrixSpec) -> Result<MatrixType, MatrixError> {
    let kind = match (spec.run, spec.matrix) {
        (RunLevel::Advanced, m) => m.unwrap_or(MatrixType::Basic),
        (r, Some(_)) => return Err(MatrixError::MatrixNotAdvanced(r.name())),
        (RunLevel::Normal, None) => MatrixType::Detailed,
        (_, None) => MatrixType::Basic,
    };
    let needs_small = matches!(kind, MatrixType::Col | MatrixType::Point | MatrixType::Max);
    let needs_large = matches!(kind, MatrixType::Row | MatrixType::Point | MatrixType::Max);
    let flag = if needs_small && spec.num_small.is_none() {
        Some("num-small")
    } else if needs_large && spec.num_large.is_none() {
        Some("num-large")
    } else {
        None
    };
    if let Some(flag) = flag {
        let matrix = kind.name();
        return Err(MatrixError::Needs { matrix, flag });
    }
    Ok(kind)
}

fn check(spec: &MatrixSpec) -> Result<(), MatrixError> {
    if spec.targets.is_empty() {
        return Err(MatrixError::NoTarget);
    }
    for (i, t) in spec.targets.iter().enumerate() {
        if spec.targets[..i].contains(t) {
            return Err(MatrixError::Duplicate(t.clone()));
        }
    }
    let zeros: [(&'static str, u64); 5] = [
        ("num-disks", spec.disks().into()),
        ("size-small", spec.size_small),
        ("size-large", spec.size_large),
        ("num-streamio", spec.num_streamio.into()),
        ("time", spec.duration.as_nanos() as u64),
    ];
    if let Some((name, _)) = zeros.iter().find(|(_, v)| *v == 0) {
        return Err(MatrixError::Zero(name));
    }
    if spec.write_pct > 100 {
        return Err(MatrixError::WriteRange(spec.write_pct));
    }
    for (name, bs) in [("small", spec.size_small), ("large", spec.size_large)] {
        if bs > 1 << 30 {
            return Err(MatrixError::TooLarge(name, bs));
        }
    }
    // A stripe smaller than an I/O is allowed, as in ORION: the I/O is cut
    // into one piece per stripe it touches.
    if let Layout::Raid0 { stripe: 0 } = spec.layout {
        return Err(MatrixError::Zero("stripe"));
    }
    Ok(())
}

/// The point label presenters rebuild the matrix from.
pub fn label(small: u32, large: u32) -> String {
    format!("small={small} large={large}")
}

/// Expands a matrix into one point per (small, large) cell, large outer.
pub fn expand(spec: &MatrixSpec) -> Result<Plan, MatrixError> {
    let points = each_point(spec)?.collect::<Result<Vec<_>, _>>()?;
    Ok(spec.engine_flags.written(Plan {
        mode: "matrix".into(),
        points,
    }))
}

/// The points of the matrix, built one at a time (with their number), so
/// that a plan of millions of points can be judged (its memory, say)
/// before it is held whole.
pub fn each_point(
    spec: &MatrixSpec,
) -> Result<impl ExactSizeIterator<Item = Result<Point, MatrixError>> + '_, MatrixError> {
    check(spec)?;
    let kind = shape(spec)?;
    let disks = spec.disks();
    let mut list = cells(kind, disks, spec.num_small, spec.num_large);
    match spec.run {
        RunLevel::Oltp => list.retain(|&(_, l)| l == 0),
        RunLevel::Dss => list.retain(|&(s, _)| s == 0),
        _ => {}
    }
    if list.is_empty() {
        return Err(MatrixError::Empty);
    }
    let targets: Vec<TargetSpec> = spec
        .targets
        .iter()
        .map(|p| TargetSpec {
            path: p.clone(),
            create_size: spec.create_size,
        })
        .collect();
    Ok(list
        .into_iter()
        .enumerate()
        .map(move |(index, (small, large))| point(spec, &targets, index, small, large)))
}

/// The point of `small` and `large` outstanding I/Os, the `index`th.
fn point(
    spec: &MatrixSpec,
    targets: &[TargetSpec],
    index: usize,
    small: u32,
    large: u32,
) -> Result<Point, MatrixError> {
    let array = ArraySpec {
        members: (0..targets.len()).collect(),
        layout: spec.layout,
    };
    let mix = match spec.write_pct {
        0 => Mix::Read,
        w => Mix::Mixed { read_pct: 100 - w },
    };
    let class = |label: &str, pattern, bs, outstanding, regions| StreamClass {
        regions,
        array: Some(array.clone()),
        ..StreamClass::new(label, 0, mix, pattern, bs, outstanding)
    };
    let mut streams = Vec::with_capacity(2);
    if small > 0 {
        streams.push(class("small", Pattern::Random, spec.size_small, small, 0));
    }
    if large > 0 {
        streams.push(if spec.sequential {
            let depth = u64::from(large) * u64::from(spec.num_streamio);
            let depth = u32::try_from(depth).map_err(|_| MatrixError::TooDeep(depth))?;
            class("large", Pattern::Forward, spec.size_large, depth, large)
        } else {
            class("large", Pattern::Random, spec.size_large, large, 0)
        });
    }
    // As ORION's documentation has it, the cache is warmed before each
    // point with large sequential I/O, where the last point's blocks
    // would otherwise be cache hits.
    let warmed = spec.sequential && large > 0;
    let depth: u64 = streams.iter().map(|s| u64::from(s.outstanding)).sum();
    if depth > MAX_OUTSTANDING {
        return Err(MatrixError::TooDeep(depth));
    }
    if spec.engine == EngineKind::Sync && depth > 1 {
        return Err(MatrixError::SyncDepth);
    }
    Ok(Point {
        index,
        label: label(small, large),
        params: PointParams::Matrix { small, large },
        // One ring keeps every slot of both classes in flight.
        job: Job {
            engine: spec.engine,
            direct: spec.direct,
            seed: spec.seed,
            warm_bytes: if warmed { spec.warm.bytes() } else { 0 },
            ..Job::new(
                targets.to_vec(),
                streams,
                Bounds {
                    time: Some(spec.duration),
                    bytes: None,
                    ramp: if warmed {
                        spec.warm.ramp()
                    } else {
                        Duration::ZERO
                    },
                },
            )
        },
        skip: None,
    })
}

#[cfg(test)]
mod tests;
