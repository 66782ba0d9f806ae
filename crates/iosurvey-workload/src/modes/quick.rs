//! `iosurvey quick` (and `iosurvey` with no arguments): a CrystalDiskMark-
//! style card for the storage under a directory. Sequential 1 MiB at QD 8
//! and QD 1, random 4 KiB at QD 32 and QD 1, each read and then written,
//! on one test file laid out once.

use crate::model::{Bounds, Job, Mix, Pattern, Plan, Point, StreamClass, TargetSpec};
use iosurvey_model::EngineKind;
use iosurvey_model::{Op, PointParams};
use std::path::PathBuf;
use std::time::Duration;

/// The card's tests, in order: name, pattern, block size, queue depth.
pub const TESTS: [(&str, Pattern, u64, u32); 4] = [
    ("SEQ1M Q8T1", Pattern::Forward, 1 << 20, 8),
    ("SEQ1M Q1T1", Pattern::Forward, 1 << 20, 1),
    ("RND4K Q32T1", Pattern::Random, 4096, 32),
    ("RND4K Q1T1", Pattern::Random, 4096, 1),
];

/// What `quick` was asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuickSpec {
    /// Directory (a test file goes inside), or an existing file or device.
    pub target: PathBuf,
    /// Test file size.
    pub size: u64,
    /// Measured time per test.
    pub time: Duration,
    /// Unmeasured warm-up per test.
    pub ramp: Duration,
    pub engine: EngineKind,
    pub direct: bool,
    pub seed: u64,
    /// Whether the card's write half runs: not with `--readonly`, nor on
    /// an existing file or device without `--allow-destroy`.
    pub writes: bool,
    /// Whether `target` is a directory (or a new file) to lay a test file
    /// out in at `size`; an existing file or device is used as it is.
    pub create: bool,
    /// The engine flags, written into every job.
    pub engine_flags: crate::EngineFlags,
}

impl QuickSpec {
    /// 1 GiB, 5 s per test after a 1 s warm-up, io_uring, O_DIRECT.
    pub fn new(target: PathBuf) -> Self {
        QuickSpec {
            target,
            size: 1 << 30,
            time: Duration::from_secs(5),
            ramp: Duration::from_secs(1),
            engine: EngineKind::Uring,
            direct: true,
            seed: 0,
            writes: true,
            create: true,
            engine_flags: crate::EngineFlags::default(),
        }
    }
}

/// Expands the card: the four tests read, then the four written.
pub fn expand(spec: &QuickSpec) -> Plan {
    let mut points = Vec::new();
    let halves: &[(Mix, &str)] = if spec.writes {
        &[(Mix::Read, "read"), (Mix::Write, "write")]
    } else {
        &[(Mix::Read, "read")]
    };
    for &(mix, op) in halves {
        for (name, pattern, bs, qd) in TESTS {
            // The sync engine has one I/O in flight per worker.
            let qd = if spec.engine == EngineKind::Sync {
                1
            } else {
                qd
            };
            points.push(Point {
                index: points.len(),
                label: format!("{name} {op}"),
                params: PointParams::Quick {
                    test: name.into(),
                    op: if mix.writes() { Op::Write } else { Op::Read },
                },
                job: Job {
                    engine: spec.engine,
                    direct: spec.direct,
                    seed: spec.seed,
                    ..Job::new(
                        vec![TargetSpec {
                            path: spec.target.clone(),
                            create_size: spec.create.then_some(spec.size),
                        }],
                        vec![StreamClass::new(name, 0, mix, pattern, bs, qd)],
                        Bounds {
                            time: Some(spec.time),
                            bytes: None,
                            ramp: spec.ramp,
                        },
                    )
                },
                skip: None,
            });
        }
    }
    spec.engine_flags.written(Plan {
        mode: "quick".into(),
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_read_half_alone_without_writes() {
        let mut spec = QuickSpec::new("/dev/sdx".into());
        spec.writes = false;
        let plan = expand(&spec);
        assert_eq!(plan.points.len(), 4);
        assert!(plan
            .points
            .iter()
            .all(|p| p.job.streams[0].mix == Mix::Read));
    }

    #[test]
    fn eight_points_reads_first_on_one_test_file() {
        let plan = expand(&QuickSpec::new("/mnt/x".into()));
        assert_eq!(plan.points.len(), 8);
        let labels: Vec<&str> = plan.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels[0], "SEQ1M Q8T1 read");
        assert_eq!(labels[3], "RND4K Q1T1 read");
        assert_eq!(labels[4], "SEQ1M Q8T1 write");
        assert!(plan
            .points
            .iter()
            .all(|p| p.job.targets == plan.points[0].job.targets));
        let rnd = &plan.points[6].job.streams[0];
        assert_eq!(
            (rnd.pattern, rnd.bs, rnd.outstanding, rnd.mix),
            (Pattern::Random, 4096, 32, Mix::Write)
        );
        assert!(plan
            .points
            .iter()
            .all(|p| p.job.bounds.time == Some(Duration::from_secs(5))));
    }

    #[test]
    fn the_sync_engine_runs_every_test_at_qd1() {
        let mut spec = QuickSpec::new("/mnt/x".into());
        spec.engine = EngineKind::Sync;
        assert!(expand(&spec)
            .points
            .iter()
            .all(|p| p.job.streams[0].outstanding == 1));
    }
}
