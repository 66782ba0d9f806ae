//! `iosurvey diskperf`: SGI diskperf's sweep. Request sizes double from
//! `--min` up to `--max`; each size runs forward, backward and random, each
//! written (with `--write`) and read, as one time-bounded Point at a time.

use crate::model::{Bounds, Job, Mix, Pattern, Plan, Point, StreamClass, TargetSpec};
use crate::units::parse_size;
use iosurvey_model::video::{find_format, frame_bytes, FrameFormat, FORMATS};
use iosurvey_model::EngineKind;
use iosurvey_model::{Op, PointParams};
use std::path::PathBuf;
use std::time::Duration;

/// The bytes of frame preset `f` of the one catalogue
/// ([`iosurvey_model::video::FORMATS`], which `video` takes too): its
/// picture and DPX header, before any rounding, the same in every mode.
pub fn preset_bytes(f: &FrameFormat) -> u64 {
    frame_bytes(f.picture_bytes(), f.default_header(), 1)
}

/// A size (`4k`, `8404992`), or else a frame preset's bytes, unaligned:
/// `--max`. A size comes first, so that `2k` is 2048 bytes here.
pub fn parse_size_or_frame(s: &str) -> Result<u64, String> {
    parse_size(s).or_else(|_| {
        find_format(s.trim()).map(preset_bytes).ok_or_else(|| {
            format!(
                "give a size (4k, 8404992) or a frame preset: {}",
                preset_names()
            )
        })
    })
}

/// The frame presets' names, for messages.
pub fn preset_names() -> String {
    let names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
    names.join(", ")
}

/// The first request size: bytes as given, or a frame preset rounded up to
/// the target's block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinSize {
    Bytes(u64),
    Frame(&'static FrameFormat),
}

impl MinSize {
    /// Reads `--min`: a size (`4k`, sizes first) or a frame preset name (`hd-4444`,
    /// `8404992`).
    pub fn parse(s: &str) -> Result<MinSize, DiskperfError> {
        if let Ok(b) = parse_size(s) {
            return Ok(MinSize::Bytes(b));
        }
        find_format(s.trim())
            .map(MinSize::Frame)
            .ok_or_else(|| DiskperfError::Min(s.to_string(), preset_names()))
    }

    /// The request size in bytes; a frame is rounded up to `align`.
    pub fn bytes(self, align: u64) -> u64 {
        match self {
            MinSize::Bytes(b) => b,
            MinSize::Frame(f) => frame_bytes(f.picture_bytes(), f.default_header(), align),
        }
    }
}

/// Everything `iosurvey diskperf` was asked for, already parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskperfSpec {
    /// A file, a directory (a test file goes inside) or a block device.
    pub target: PathBuf,
    /// Size to create a missing test file at; `None` uses an existing file
    /// or device at its own size.
    pub create_size: Option<u64>,
    /// Run the write tests too (fwd_wt, bwd_wt, rnd_wt).
    pub write: bool,
    pub min: MinSize,
    /// Largest request size; `None` is 4 MiB, or 32 times the first size
    /// when that is a frame preset or above 4 MiB (six sizes, as seed 000).
    pub max: Option<u64>,
    /// What a frame preset is rounded up to: the target's O_DIRECT block size.
    pub align: u64,
    /// Measured time of each test.
    pub time: Duration,
    /// Outstanding I/Os.
    pub qd: u32,
    pub engine: EngineKind,
    pub direct: bool,
    pub seed: u64,
    /// The engine flags, written into every job.
    pub engine_flags: crate::EngineFlags,
}

impl DiskperfSpec {
    /// diskperf's defaults: 4k to 4m, 10 s a test, QD 1 on the sync engine,
    /// reads only, O_DIRECT, 4096-byte frame rounding.
    pub fn new(target: PathBuf) -> Self {
        DiskperfSpec {
            target,
            create_size: None,
            write: false,
            min: MinSize::Bytes(4096),
            max: None,
            align: 4096,
            time: Duration::from_secs(10),
            qd: 1,
            engine: EngineKind::Sync,
            direct: true,
            seed: 0,
            engine_flags: crate::EngineFlags::default(),
        }
    }
}

/// A diskperf sweep that cannot be expanded, whatever the target is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiskperfError {
    #[error("invalid --min '{0}': give a size (4k, 8404992) or a frame preset: {1}")]
    Min(String, String),
    #[error("--{0} must be greater than zero")]
    Zero(&'static str),
    #[error(
        "--max {max} is smaller than the first request size {min}; raise --max or lower --min"
    )]
    MaxBelowMin { max: u64, min: u64 },
    #[error("request size {0} is too large: at most 2GiB per I/O; lower --max")]
    TooLarge(u64),
    #[error("--engine sync has one outstanding I/O; use --engine uring for --qd {0}")]
    SyncDepth(u32),
    #[error("--qd {0} is more than {max} outstanding I/Os", max = crate::MAX_OUTSTANDING)]
    TooDeep(u32),
}

/// The six tests of one size, in diskperf's column order.
pub const TESTS: [(&str, Pattern, Mix); 6] = [
    ("fwd_wt", Pattern::Forward, Mix::Write),
    ("fwd_rd", Pattern::Forward, Mix::Read),
    ("bwd_wt", Pattern::Backward, Mix::Write),
    ("bwd_rd", Pattern::Backward, Mix::Read),
    ("rnd_wt", Pattern::Random, Mix::Write),
    ("rnd_rd", Pattern::Random, Mix::Read),
];

/// The largest request size of one I/O.
const MAX_BS: u64 = 1 << 31;

/// The request sizes of the sweep: the first size, doubling while it is at
/// most the largest.
pub fn sizes(spec: &DiskperfSpec) -> Result<Vec<u64>, DiskperfError> {
    let min = spec.min.bytes(spec.align);
    if min == 0 {
        return Err(DiskperfError::Zero("min"));
    }
    let max = match spec.max {
        Some(m) => m,
        None if matches!(spec.min, MinSize::Frame(_)) || min > 4 << 20 => min.saturating_mul(32),
        None => 4 << 20,
    };
    if max < min {
        return Err(DiskperfError::MaxBelowMin { max, min });
    }
    let mut out = Vec::new();
    let mut s = min;
    while s <= max {
        if s > MAX_BS {
            return Err(DiskperfError::TooLarge(s));
        }
        out.push(s);
        match s.checked_mul(2) {
            Some(next) => s = next,
            None => break,
        }
    }
    Ok(out)
}

/// Expands the sweep: for each size, fwd write, fwd read, bwd write, bwd
/// read, rnd write, rnd read (the writes only with `write`). Each point is
/// labelled `"<size> <column>"`, e.g. `"4096 fwd_wt"`.
pub fn expand(spec: &DiskperfSpec) -> Result<Plan, DiskperfError> {
    if spec.time.is_zero() {
        return Err(DiskperfError::Zero("time"));
    }
    if spec.qd == 0 {
        return Err(DiskperfError::Zero("qd"));
    }
    if u64::from(spec.qd) > crate::MAX_OUTSTANDING {
        return Err(DiskperfError::TooDeep(spec.qd));
    }
    if spec.create_size == Some(0) {
        return Err(DiskperfError::Zero("size"));
    }
    if spec.engine == EngineKind::Sync && spec.qd > 1 {
        return Err(DiskperfError::SyncDepth(spec.qd));
    }
    let target = TargetSpec {
        path: spec.target.clone(),
        create_size: spec.create_size,
    };
    let mut points = Vec::new();
    for bs in sizes(spec)? {
        for (column, pattern, mix) in TESTS {
            if mix.writes() && !spec.write {
                continue;
            }
            points.push(Point {
                index: points.len(),
                label: format!("{bs} {column}"),
                params: PointParams::Diskperf {
                    size: bs,
                    pattern,
                    op: if mix.writes() { Op::Write } else { Op::Read },
                },
                job: Job {
                    engine: spec.engine,
                    direct: spec.direct,
                    seed: spec.seed,
                    ..Job::new(
                        vec![target.clone()],
                        vec![StreamClass::new(column, 0, mix, pattern, bs, spec.qd)],
                        Bounds {
                            time: Some(spec.time),
                            bytes: None,
                            ramp: Duration::ZERO,
                        },
                    )
                },
                skip: None,
            });
        }
    }
    Ok(spec.engine_flags.written(Plan {
        mode: "diskperf".into(),
        points,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> DiskperfSpec {
        DiskperfSpec::new("/dev/zram1".into())
    }

    fn sizes_of(plan: &Plan) -> Vec<u64> {
        let mut v: Vec<u64> = plan.points.iter().map(|p| p.job.streams[0].bs).collect();
        v.dedup();
        v
    }

    #[test]
    fn sizes_double_from_a_min_that_is_not_a_power_of_two() {
        let mut s = spec();
        s.min = MinSize::Bytes(8404992);
        s.max = Some(268959744);
        let plan = expand(&s).unwrap();
        assert_eq!(
            sizes_of(&plan),
            [8404992, 16809984, 33619968, 67239936, 134479872, 268959744]
        );
        // A max between two sizes stops below it.
        s.max = Some(268959743);
        assert_eq!(sizes(&s).unwrap().len(), 5);
        // Seed 000's sweep is also the default for a first size above 4m.
        s.max = None;
        assert_eq!(sizes(&s).unwrap().last(), Some(&268959744));
    }

    #[test]
    fn defaults_run_4k_to_4m_reads_at_qd1_sync() {
        let plan = expand(&spec()).unwrap();
        assert_eq!(plan.mode, "diskperf");
        assert_eq!(sizes_of(&plan).len(), 11);
        assert_eq!(sizes_of(&plan)[10], 4 << 20);
        assert_eq!(plan.points.len(), 33);
        assert!(plan.points.iter().all(|p| {
            let j = &p.job;
            j.workers == 1
                && j.engine == EngineKind::Sync
                && j.streams[0].outstanding == 1
                && j.bounds.time == Some(Duration::from_secs(10))
                && !j.writes()
        }));
    }

    #[test]
    fn six_points_per_size_with_write_in_diskperf_column_order() {
        let mut s = spec();
        s.write = true;
        s.max = Some(8192);
        let plan = expand(&s).unwrap();
        let labels: Vec<&str> = plan.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "4096 fwd_wt",
                "4096 fwd_rd",
                "4096 bwd_wt",
                "4096 bwd_rd",
                "4096 rnd_wt",
                "4096 rnd_rd",
                "8192 fwd_wt",
                "8192 fwd_rd",
                "8192 bwd_wt",
                "8192 bwd_rd",
                "8192 rnd_wt",
                "8192 rnd_rd",
            ]
        );
        let shapes: Vec<(Pattern, Mix)> = plan.points[..6]
            .iter()
            .map(|p| (p.job.streams[0].pattern, p.job.streams[0].mix))
            .collect();
        assert_eq!(shapes, TESTS.iter().map(|t| (t.1, t.2)).collect::<Vec<_>>());
        assert!(plan.points.iter().enumerate().all(|(i, p)| p.index == i));
    }

    #[test]
    fn three_read_points_per_size_without_write() {
        let mut s = spec();
        s.max = Some(8192);
        let plan = expand(&s).unwrap();
        let labels: Vec<&str> = plan.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "4096 fwd_rd",
                "4096 bwd_rd",
                "4096 rnd_rd",
                "8192 fwd_rd",
                "8192 bwd_rd",
                "8192 rnd_rd"
            ]
        );
    }

    #[test]
    fn frame_presets_round_up_to_the_block_size_and_sweep_32_frames() {
        let frame = |name: &str| match MinSize::parse(name).unwrap() {
            MinSize::Frame(f) => f,
            other => panic!("{name} parsed as {other:?}"),
        };
        // The one catalogue's names: video's.
        assert_eq!(preset_bytes(frame("hd-4444")), 1920 * 1080 * 4);
        assert_eq!(preset_bytes(frame("HD-422")), 1920 * 1080 * 2);
        assert_eq!(preset_bytes(frame("pal-422")), 829440);
        assert_eq!(preset_bytes(frame("ntsc-4444")), 720 * 486 * 4);
        assert_eq!(preset_bytes(frame("uhd-4444")), 3840 * 2160 * 4);
        // 829440 is 202.5 blocks of 4096, so it rounds up to 203.
        assert_eq!(MinSize::Frame(frame("pal-422")).bytes(4096), 203 * 4096);
        assert_eq!(MinSize::Frame(frame("pal-422")).bytes(512), 829440);
        // Seed 000's 8306688 is HD 4:4:4:4 rounded up to 16 KiB.
        assert_eq!(MinSize::Frame(frame("hd-4444")).bytes(16384), 8306688);
        let mut s = spec();
        s.min = MinSize::parse("ntsc-422").unwrap();
        s.align = 512;
        let got = sizes(&s).unwrap();
        assert_eq!(got.len(), 6);
        // 720x486x2 = 699840 is not a multiple of 512: 1367 blocks.
        assert_eq!(got[0], 1367 * 512);
        assert_eq!(got[5], 1367 * 512 * 32);
        // A size before a preset: 2k and 4k are bytes here; DPX by its name.
        assert_eq!(MinSize::parse("4k"), Ok(MinSize::Bytes(4096)));
        assert_eq!(MinSize::parse("2k"), Ok(MinSize::Bytes(2048)));
        assert_eq!(preset_bytes(frame("dpx-2k")), 2048 * 1556 * 4 + 65536);
        assert_eq!(parse_size_or_frame("hd-4444"), Ok(1920 * 1080 * 4));
        assert_eq!(parse_size_or_frame("4m"), Ok(4 << 20));
        assert!(matches!(
            MinSize::parse("hd-555"),
            Err(DiskperfError::Min(..))
        ));
    }

    #[test]
    fn bad_specs_are_refused() {
        type Edit = Box<dyn Fn(&mut DiskperfSpec)>;
        let cases: Vec<(Edit, DiskperfError)> = vec![
            (
                Box::new(|s| s.min = MinSize::Bytes(0)),
                DiskperfError::Zero("min"),
            ),
            (
                Box::new(|s| s.max = Some(2048)),
                DiskperfError::MaxBelowMin {
                    max: 2048,
                    min: 4096,
                },
            ),
            (
                Box::new(|s| s.time = Duration::ZERO),
                DiskperfError::Zero("time"),
            ),
            (Box::new(|s| s.qd = 0), DiskperfError::Zero("qd")),
            (Box::new(|s| s.qd = 4), DiskperfError::SyncDepth(4)),
            (
                Box::new(|s| s.create_size = Some(0)),
                DiskperfError::Zero("size"),
            ),
            (
                Box::new(|s| {
                    s.min = MinSize::Bytes(3 << 30);
                    s.max = Some(4 << 30)
                }),
                DiskperfError::TooLarge(3 << 30),
            ),
        ];
        for (edit, want) in cases {
            let mut s = spec();
            edit(&mut s);
            assert_eq!(expand(&s), Err(want));
        }
        let mut s = spec();
        s.engine = EngineKind::Uring;
        s.qd = 4;
        assert_eq!(expand(&s).unwrap().points[0].job.streams[0].outstanding, 4);
    }
}
