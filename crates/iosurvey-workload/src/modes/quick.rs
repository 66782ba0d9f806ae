//! `iosurvey quick` (and `iosurvey` with no arguments): a CrystalDiskMark-
//! style card for the storage under a directory, in one of the profiles
//! CrystalDiskMark and KDiskMark offer (each test read, then written, on
//! one test file laid out once).

use crate::model::{Bounds, Job, Mix, Pattern, Plan, Point, StreamClass, TargetSpec};
use iosurvey_model::EngineKind;
use iosurvey_model::{Op, PointParams};
use std::path::PathBuf;
use std::time::Duration;

/// One test of a card: CrystalDiskMark's `RND4K Q32T16` is 4 KiB random
/// I/O from 16 threads with 32 outstanding each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuickTest {
    pub name: &'static str,
    pub pattern: Pattern,
    pub bs: u64,
    /// Outstanding I/Os a thread (the Q).
    pub queue: u32,
    /// Threads (the T), each a worker of its own.
    pub threads: u32,
}

const fn test(
    name: &'static str,
    pattern: Pattern,
    bs: u64,
    queue: u32,
    threads: u32,
) -> QuickTest {
    QuickTest {
        name,
        pattern,
        bs,
        queue,
        threads,
    }
}

/// A card's tests under the name a user picks it by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuickProfile {
    pub name: &'static str,
    pub description: &'static str,
    pub tests: &'static [QuickTest],
}

const SEQ1M_Q8T1: QuickTest = test("SEQ1M Q8T1", Pattern::Forward, 1 << 20, 8, 1);
const SEQ1M_Q1T1: QuickTest = test("SEQ1M Q1T1", Pattern::Forward, 1 << 20, 1, 1);
const SEQ128K_Q32T1: QuickTest = test("SEQ128K Q32T1", Pattern::Forward, 128 << 10, 32, 1);
const RND4K_Q32T1: QuickTest = test("RND4K Q32T1", Pattern::Random, 4096, 32, 1);
const RND4K_Q32T16: QuickTest = test("RND4K Q32T16", Pattern::Random, 4096, 32, 16);
const RND4K_Q1T1: QuickTest = test("RND4K Q1T1", Pattern::Random, 4096, 1, 1);

/// The profiles, the default first. CrystalDiskMark 8's default is
/// KDiskMark's "Standard" preset and its "NVMe SSD" profile KDiskMark's
/// "NVMe SSD" preset (KDiskMark's `defaultBenchmarkParams`: SEQ1M Q8T1,
/// then SEQ1M Q1T1 or SEQ128K Q32T1, RND4K Q32T1 or Q32T16, RND4K Q1T1);
/// CrystalDiskMark 7's default ran RND4K at Q32T16, as KDiskMark did
/// before its presets.
pub const PROFILES: [QuickProfile; 3] = [
    QuickProfile {
        name: "cdm8",
        description: "CrystalDiskMark 8 default, KDiskMark Standard",
        tests: &[SEQ1M_Q8T1, SEQ1M_Q1T1, RND4K_Q32T1, RND4K_Q1T1],
    },
    QuickProfile {
        name: "cdm8-nvme",
        description: "CrystalDiskMark 8 NVMe SSD, KDiskMark NVMe SSD",
        tests: &[SEQ1M_Q8T1, SEQ128K_Q32T1, RND4K_Q32T16, RND4K_Q1T1],
    },
    QuickProfile {
        name: "cdm7",
        description: "CrystalDiskMark 7 default",
        tests: &[SEQ1M_Q8T1, SEQ1M_Q1T1, RND4K_Q32T16, RND4K_Q1T1],
    },
];

/// The profile called `name`.
pub fn find_profile(name: &str) -> Option<&'static QuickProfile> {
    PROFILES.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

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
    /// The card's tests.
    pub profile: &'static QuickProfile,
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
            profile: &PROFILES[0],
        }
    }
}

/// Expands the card: the profile's tests read, then written. A test of T
/// threads runs T workers with Q x T outstanding (Q each).
pub fn expand(spec: &QuickSpec) -> Plan {
    let mut points = Vec::new();
    let halves: &[(Mix, &str)] = if spec.writes {
        &[(Mix::Read, "read"), (Mix::Write, "write")]
    } else {
        &[(Mix::Read, "read")]
    };
    for &(mix, op) in halves {
        for t in spec.profile.tests {
            // The sync engine has one I/O in flight per worker.
            let queue = if spec.engine == EngineKind::Sync {
                1
            } else {
                t.queue
            };
            let name = t.name;
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
                    workers: t.threads,
                    ..Job::new(
                        vec![TargetSpec {
                            path: spec.target.clone(),
                            create_size: spec.create.then_some(spec.size),
                        }],
                        vec![StreamClass::new(
                            name,
                            0,
                            mix,
                            t.pattern,
                            t.bs,
                            queue * t.threads,
                        )],
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
    fn the_nvme_profile_runs_rnd4k_from_16_workers_32_deep_each() {
        let mut spec = QuickSpec::new("/mnt/x".into());
        spec.profile = find_profile("CDM8-NVMe").unwrap();
        let plan = expand(&spec);
        let labels: Vec<&str> = plan.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels[..4],
            [
                "SEQ1M Q8T1 read",
                "SEQ128K Q32T1 read",
                "RND4K Q32T16 read",
                "RND4K Q1T1 read"
            ]
        );
        let rnd = &plan.points[2].job;
        assert_eq!((rnd.workers, rnd.streams[0].outstanding), (16, 512));
        let seq = &plan.points[1].job;
        assert_eq!(
            (seq.workers, seq.streams[0].bs, seq.streams[0].outstanding),
            (1, 128 << 10, 32)
        );
        assert!(find_profile("cdm9").is_none());
        // Every profile has four tests, named as CrystalDiskMark names them.
        for p in PROFILES {
            assert_eq!(p.tests.len(), 4, "{}", p.name);
            for t in p.tests {
                let q = format!("Q{}T{}", t.queue, t.threads);
                assert!(t.name.ends_with(&q), "{}", t.name);
            }
        }
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
