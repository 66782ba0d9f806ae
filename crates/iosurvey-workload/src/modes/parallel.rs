//! `iosurvey parallel`: the parallel `dd` of controller tests. One
//! sequential stream per device, all started at one barrier; with steps,
//! the same for the first 1, 2, ... N devices, to find where adding a device
//! stops adding throughput.

use crate::model::{Bounds, Job, Mix, Pattern, Plan, Point, StreamClass, TargetSpec};
use crate::units::blocks_around;
use iosurvey_model::EngineKind;
use iosurvey_model::PointParams;
use std::path::PathBuf;
use std::time::Duration;

/// What `parallel` was asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParallelSpec {
    pub devices: Vec<PathBuf>,
    /// Block size per I/O.
    pub bs: u64,
    /// Outstanding I/Os per device.
    pub qd: u32,
    /// Measured time per point; `None` with `bytes` (dd's `count=`).
    pub time: Option<Duration>,
    /// Bytes each device moves per point (dd's `count=` times `bs=`),
    /// whole blocks.
    pub bytes: Option<u64>,
    pub ramp: Duration,
    /// Device counts to run, ascending; empty runs all devices once.
    pub steps: Vec<usize>,
    pub write: bool,
    pub engine: EngineKind,
    pub direct: bool,
    /// Size to create missing files at (test files instead of devices).
    pub size: Option<u64>,
    /// Resolution of the series the common window is cut from.
    pub interval: Duration,
    /// Go round to the start of a device at its end until the time is up
    /// (`--loop`); without it a device's pass ends at its end, like dd.
    pub wrap: bool,
    /// The engine flags, written into every job.
    pub engine_flags: crate::EngineFlags,
}

impl ParallelSpec {
    /// 1 MiB reads at QD 1 for 10 s, like `dd iflag=direct bs=1M`.
    pub fn new(devices: Vec<PathBuf>) -> Self {
        ParallelSpec {
            devices,
            bs: 1 << 20,
            qd: 1,
            time: Some(Duration::from_secs(10)),
            bytes: None,
            ramp: Duration::ZERO,
            steps: Vec::new(),
            write: false,
            engine: EngineKind::Uring,
            direct: true,
            size: None,
            interval: Duration::from_millis(10),
            wrap: false,
            engine_flags: crate::EngineFlags::default(),
        }
    }
}

/// A parallel run that cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParallelError {
    #[error("no device given: name one or more block devices (or files)")]
    NoDevice,
    #[error("--{0} must be greater than zero")]
    Zero(&'static str),
    #[error("--steps {step} is more than the {devices} devices given")]
    StepTooLarge { step: usize, devices: usize },
    #[error("--steps must be ascending without repeats (got {0:?})")]
    StepsOrder(Vec<usize>),
    #[error("--engine sync has one I/O in flight per device; use --engine uring for --qd {0}")]
    SyncDepth(u32),
    #[error("{0} is named twice; every device gets one stream")]
    Duplicate(PathBuf),
    #[error("--bytes {bytes} is not a multiple of --bs {bs}: every I/O moves a whole block, as dd's count= counts blocks; give --bytes {below} or {above}")]
    BytesNotBlocks {
        bytes: u64,
        bs: u64,
        below: u64,
        above: u64,
    },
    #[error("give --time, --bytes or both: without either a device's pass would have no end but its own")]
    NoBound,
}

/// The device counts `--scale` runs when no steps are given: 1, 2, ... N.
pub fn all_steps(devices: usize) -> Vec<usize> {
    (1..=devices).collect()
}

/// Expands into one point per step.
pub fn expand(spec: &ParallelSpec) -> Result<Plan, ParallelError> {
    let n = spec.devices.len();
    if n == 0 {
        return Err(ParallelError::NoDevice);
    }
    for (i, d) in spec.devices.iter().enumerate() {
        if spec.devices[..i].contains(d) {
            return Err(ParallelError::Duplicate(d.clone()));
        }
    }
    if spec.bs == 0 {
        return Err(ParallelError::Zero("bs"));
    }
    if spec.qd == 0 {
        return Err(ParallelError::Zero("qd"));
    }
    if spec.time.is_some_and(|t| t.is_zero()) {
        return Err(ParallelError::Zero("time"));
    }
    if let Some(bytes) = spec.bytes {
        if bytes == 0 {
            return Err(ParallelError::Zero("bytes"));
        }
        if let Some((below, above)) = blocks_around(bytes, spec.bs) {
            let bs = spec.bs;
            return Err(ParallelError::BytesNotBlocks {
                bytes,
                bs,
                below,
                above,
            });
        }
    }
    if spec.time.is_none() && spec.bytes.is_none() {
        return Err(ParallelError::NoBound);
    }
    if spec.engine == EngineKind::Sync && spec.qd > 1 {
        return Err(ParallelError::SyncDepth(spec.qd));
    }
    let steps = if spec.steps.is_empty() {
        vec![n]
    } else {
        spec.steps.clone()
    };
    if steps.contains(&0) {
        return Err(ParallelError::Zero("steps"));
    }
    if let Some(&step) = steps.iter().find(|&&s| s > n) {
        return Err(ParallelError::StepTooLarge { step, devices: n });
    }
    if steps.windows(2).any(|w| w[0] >= w[1]) {
        return Err(ParallelError::StepsOrder(steps));
    }
    let targets: Vec<TargetSpec> = spec
        .devices
        .iter()
        .map(|p| TargetSpec {
            path: p.clone(),
            create_size: spec.size,
        })
        .collect();
    let sync = spec.engine == EngineKind::Sync;
    let points = steps
        .iter()
        .enumerate()
        .map(|(index, &count)| Point {
            index,
            label: format!("{count} device{}", if count == 1 { "" } else { "s" }),
            params: PointParams::Parallel { devices: count },
            job: Job {
                workers: if sync { count as u32 } else { 1 },
                engine: spec.engine,
                direct: spec.direct,
                interval: spec.interval,
                ..Job::new(
                    // Every point opens every device (targets are opened
                    // once per plan); only the first `count` get a stream.
                    targets.clone(),
                    (0..count)
                        .map(|t| StreamClass {
                            regions: 1,
                            wrap: spec.wrap,
                            // pread blocks: one thread per device, as dd has.
                            pin: sync.then_some(t as u32),
                            ..StreamClass::new(
                                format!("dev{t}"),
                                t,
                                if spec.write { Mix::Write } else { Mix::Read },
                                Pattern::Forward,
                                spec.bs,
                                spec.qd,
                            )
                        })
                        .collect(),
                    Bounds {
                        time: spec.time,
                        bytes: spec.bytes,
                        ramp: spec.ramp,
                    },
                )
            },
            skip: None,
        })
        .collect();
    Ok(spec.engine_flags.written(Plan {
        mode: "parallel".into(),
        points,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(n: usize) -> ParallelSpec {
        ParallelSpec::new(
            (0..n)
                .map(|i| PathBuf::from(format!("/dev/loop{i}")))
                .collect(),
        )
    }

    #[test]
    fn bytes_bound_each_device_like_dds_count() {
        let mut s = spec(2);
        s.time = None;
        s.bytes = Some(64 << 20);
        let plan = expand(&s).unwrap();
        let b = plan.points[0].job.bounds;
        assert_eq!((b.time, b.bytes), (None, Some(64 << 20)));
        s.bytes = Some((64 << 20) + 4096);
        let e = expand(&s).unwrap_err().to_string();
        assert!(e.contains("give --bytes 67108864 or 68157440"), "{e}");
        s.bytes = None;
        assert_eq!(expand(&s).unwrap_err(), ParallelError::NoBound);
        s.bytes = Some(0);
        assert_eq!(expand(&s).unwrap_err(), ParallelError::Zero("bytes"));
    }

    #[test]
    fn one_stream_per_device_at_one_barrier() {
        let plan = expand(&spec(3)).unwrap();
        assert_eq!(plan.points.len(), 1);
        let job = &plan.points[0].job;
        assert_eq!(job.streams.len(), 3);
        assert!(job
            .streams
            .iter()
            .enumerate()
            .all(|(i, s)| s.target == i && s.pattern == Pattern::Forward));
        assert_eq!(job.workers, 1);
        assert!(job
            .streams
            .iter()
            .all(|s| s.pin.is_none() && s.mix == Mix::Read));
        // Like dd, a device's pass ends at its end unless --loop.
        assert!(job.streams.iter().all(|s| !s.wrap));
        let mut looped = spec(3);
        looped.wrap = true;
        let job = &expand(&looped).unwrap().points[0].job;
        assert!(job.streams.iter().all(|s| s.wrap));
    }

    #[test]
    fn scaling_steps_use_the_first_devices_and_sync_pins_a_thread_each() {
        let mut s = spec(4);
        s.steps = all_steps(4);
        s.engine = EngineKind::Sync;
        s.write = true;
        let plan = expand(&s).unwrap();
        let counts: Vec<usize> = plan.points.iter().map(|p| p.job.streams.len()).collect();
        assert_eq!(counts, [1, 2, 3, 4]);
        let last = &plan.points[3].job;
        assert_eq!(last.workers, 4);
        assert_eq!(last.streams[2].pin, Some(2));
        assert!(last.writes());
        assert!(plan.points.iter().all(|p| p.job.targets.len() == 4));
    }

    #[test]
    fn bad_steps_are_refused() {
        let mut s = spec(2);
        s.steps = vec![1, 3];
        assert_eq!(
            expand(&s),
            Err(ParallelError::StepTooLarge {
                step: 3,
                devices: 2
            })
        );
        s.steps = vec![2, 1];
        assert!(matches!(expand(&s), Err(ParallelError::StepsOrder(_))));
        s.steps = vec![];
        s.devices.push("/dev/loop0".into());
        assert!(matches!(expand(&s), Err(ParallelError::Duplicate(_))));
    }
}
