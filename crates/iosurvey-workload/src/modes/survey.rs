//! `iosurvey survey`: Lustre sgpdd-survey's sweep. Record size, then
//! concurrent regions per device, then outstanding I/Os per device, each
//! doubling; every device at once, each region one sequential pass.

use crate::model::{Bounds, Job, Mix, Pattern, Plan, Point, StreamClass, TargetSpec};
use crate::units::format_size;
use iosurvey_model::EngineKind;
use iosurvey_model::{Op, PointParams};
use std::path::PathBuf;
use std::time::Duration;

pub use crate::MAX_OUTSTANDING;
/// Largest record size.
pub const MAX_RSZ: u64 = 1 << 30;

/// What each pass over the regions does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Write,
    Read,
}

impl Action {
    /// Every action, in the order a survey runs them by default.
    pub const ALL: [Action; 2] = [Action::Write, Action::Read];

    pub fn name(self) -> &'static str {
        match self {
            Action::Write => "write",
            Action::Read => "read",
        }
    }
}

/// `write,read` (commas or spaces, as sgpdd-survey's `actions="write read"`).
pub fn parse_actions(s: &str) -> Result<Vec<Action>, SurveyError> {
    let actions = s
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|a| !a.is_empty())
        .map(|a| {
            Action::ALL
                .into_iter()
                .find(|x| x.name() == a)
                .ok_or_else(|| SurveyError::Action(a.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if actions.is_empty() {
        return Err(SurveyError::NoAction);
    }
    Ok(actions)
}

/// Everything `iosurvey survey` was asked for, plus what it learnt of the
/// devices and the machine before any I/O (so that expanding stays pure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SurveySpec {
    pub devices: Vec<PathBuf>,
    /// Logical block size of each device, in the order of `devices`.
    pub block_sizes: Vec<u64>,
    /// Bytes surveyed per device (`size` in sgpdd-survey, there in MB).
    pub size: u64,
    pub rsz_lo: u64,
    pub rsz_hi: u64,
    pub crg_lo: u32,
    pub crg_hi: u32,
    pub thr_lo: u32,
    pub thr_hi: u32,
    pub actions: Vec<Action>,
    /// Logical blocks skipped before the first region.
    pub boundary: u64,
    /// Skip points with more than this many outstanding I/Os per region
    /// (sgpdd-survey's `SG_MAX_QUEUE`).
    pub max_per_region: u32,
    /// RAM of the machine in bytes, for the `ENOMEM` pre-check.
    pub mem_total: u64,
    pub engine: EngineKind,
    pub direct: bool,
    pub seed: u64,
    /// A point also ends when this time is up (`--time`), its regions then
    /// cut short of their pass; `None`: each region's pass, as sgp_dd's
    /// count= moves.
    pub time: Option<Duration>,
    /// The engine flags, written into every job.
    pub engine_flags: crate::EngineFlags,
}

impl SurveySpec {
    /// sgpdd-survey's defaults: 1 MiB records, 1 to 256 regions, 1 to 4096
    /// outstanding I/Os, write then read, a 1024-block boundary, at most 16
    /// I/Os per region; io_uring and O_DIRECT; no memory limit.
    pub fn new(devices: Vec<PathBuf>, block_sizes: Vec<u64>, size: u64) -> Self {
        SurveySpec {
            devices,
            block_sizes,
            size,
            rsz_lo: 1 << 20,
            rsz_hi: 1 << 20,
            crg_lo: 1,
            crg_hi: 256,
            thr_lo: 1,
            thr_hi: 4096,
            actions: vec![Action::Write, Action::Read],
            boundary: 1024,
            max_per_region: 16,
            mem_total: u64::MAX,
            engine: EngineKind::Uring,
            direct: true,
            seed: 0,
            time: None,
            engine_flags: crate::EngineFlags::default(),
        }
    }

    /// Where the regions of device `i` start: `boundary` logical blocks in.
    pub fn first_offset(&self, i: usize) -> Option<u64> {
        self.boundary.checked_mul(self.block_sizes[i])
    }

    /// Bytes device `i` must hold: the boundary plus `size`. A missing
    /// test file is created at this size.
    pub fn needed_bytes(&self, i: usize) -> Option<u64> {
        self.first_offset(i)?.checked_add(self.size)
    }
}

/// A survey that cannot be expanded, whatever the devices do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SurveyError {
    #[error("no device given: name one or more block devices (or files)")]
    NoDevice,
    #[error("{0} is named twice; every device gets its own regions")]
    Duplicate(PathBuf),
    #[error("--{0} must be greater than zero")]
    Zero(&'static str),
    #[error("--{name}lo {lo} is greater than --{name}hi {hi}")]
    Range {
        name: &'static str,
        lo: u64,
        hi: u64,
    },
    #[error("unknown action '{0}': use write, read or both (e.g. --actions write,read)")]
    Action(String),
    #[error("--actions is empty: give write, read or write,read")]
    NoAction,
    #[error("{path}: record size {rsz} is not a multiple of its logical block size {lbs}; use a multiple of {lbs} for --rszlo")]
    RszAlignment { path: PathBuf, rsz: u64, lbs: u64 },
    #[error("--rszhi {0} is too large: at most 1GiB per I/O")]
    RszTooLarge(u64),
    #[error("--boundary {0} blocks is too large")]
    Boundary(u64),
    #[error("--size {size} bytes split into {crg} regions leaves less than one {rsz}-byte record per region; {}", region_advice(*fit))]
    RegionTooSmall {
        size: u64,
        crg: u32,
        rsz: u64,
        fit: u64,
    },
    #[error("every point is skipped: thr must be at least crg and at most {max} x crg (--max-per-region {max}); widen --thrlo/--thrhi or --crglo/--crghi")]
    NothingToRun { max: u32 },
    #[error("thr {thr} over crg {crg} is more than {MAX_OUTSTANDING} outstanding I/Os in one region, which one ring drives; lower --thrhi or raise --crglo")]
    TooDeep { thr: u32, crg: u32 },
    #[error("--engine sync has one I/O in flight, and the survey's thr counts outstanding I/Os; use --engine uring")]
    SyncDepth,
    #[error("{block_sizes} block sizes given for {devices} devices")]
    BlockSizes { devices: usize, block_sizes: usize },
}

/// What to change when the regions are too small: fewer regions while one
/// record still fits in `--size`, else a larger `--size` or smaller records.
fn region_advice(fit: u64) -> String {
    if fit > 0 {
        format!("raise --size, or lower --crghi (to {fit} at most) or --rszhi")
    } else {
        "one record is larger than --size: raise --size or lower --rszhi".into()
    }
}

/// `lo`, `2 lo`, `4 lo`, ... up to `hi`.
fn doubling(lo: u64, hi: u64) -> impl Iterator<Item = u64> {
    std::iter::successors(Some(lo), |v| v.checked_mul(2)).take_while(move |&v| v <= hi)
}

/// The (crg, thr) pairs sgpdd-survey runs for each record size: doubling
/// crg, then thr, skipping `thr < crg` and `thr / crg > max_per_region`.
pub fn sweep(spec: &SurveySpec) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for crg in doubling(spec.crg_lo.into(), spec.crg_hi.into()) {
        for thr in doubling(spec.thr_lo.into(), spec.thr_hi.into()) {
            if thr < crg || thr / crg > u64::from(spec.max_per_region) {
                continue;
            }
            out.push((crg as u32, thr as u32));
        }
    }
    out
}

/// The point label: `rsz=1MiB crg=4 thr=16 write` (per-device values).
pub fn label(rsz: u64, crg: u32, thr: u32, action: Action) -> String {
    format!(
        "rsz={} crg={crg} thr={thr} {}",
        format_size(rsz),
        action.name()
    )
}

/// sgpdd-survey's memory check, in KiB:
/// `(rsz*thr/crg + 64) * crg * ndevs > MemTotal`.
fn out_of_memory(spec: &SurveySpec, rsz: u64, crg: u32, thr: u32) -> bool {
    let rsz_kib = u128::from(rsz / 1024);
    let need = (rsz_kib * u128::from(thr) / u128::from(crg) + 64)
        * u128::from(crg)
        * spec.devices.len() as u128;
    need > u128::from(spec.mem_total / 1024)
}

fn check(spec: &SurveySpec) -> Result<(), SurveyError> {
    let n = spec.devices.len();
    if n == 0 {
        return Err(SurveyError::NoDevice);
    }
    if spec.block_sizes.len() != n {
        return Err(SurveyError::BlockSizes {
            devices: n,
            block_sizes: spec.block_sizes.len(),
        });
    }
    for (i, d) in spec.devices.iter().enumerate() {
        if spec.devices[..i].contains(d) {
            return Err(SurveyError::Duplicate(d.clone()));
        }
    }
    let zeros: [(&'static str, u64); 9] = [
        ("size", spec.size),
        ("rszlo", spec.rsz_lo),
        ("rszhi", spec.rsz_hi),
        ("crglo", spec.crg_lo.into()),
        ("crghi", spec.crg_hi.into()),
        ("thrlo", spec.thr_lo.into()),
        ("thrhi", spec.thr_hi.into()),
        ("max-per-region", spec.max_per_region.into()),
        ("time", spec.time.map_or(1, |t| t.as_nanos() as u64)),
    ];
    if let Some((name, _)) = zeros.iter().find(|(_, v)| *v == 0) {
        return Err(SurveyError::Zero(name));
    }
    let ranges: [(&'static str, u64, u64); 3] = [
        ("rsz", spec.rsz_lo, spec.rsz_hi),
        ("crg", spec.crg_lo.into(), spec.crg_hi.into()),
        ("thr", spec.thr_lo.into(), spec.thr_hi.into()),
    ];
    if let Some(&(name, lo, hi)) = ranges.iter().find(|(_, lo, hi)| lo > hi) {
        return Err(SurveyError::Range { name, lo, hi });
    }
    if spec.actions.is_empty() {
        return Err(SurveyError::NoAction);
    }
    if spec.rsz_hi > MAX_RSZ {
        return Err(SurveyError::RszTooLarge(spec.rsz_hi));
    }
    for (path, &lbs) in spec.devices.iter().zip(&spec.block_sizes) {
        if lbs == 0 || !spec.rsz_lo.is_multiple_of(lbs) {
            return Err(SurveyError::RszAlignment {
                path: path.clone(),
                rsz: spec.rsz_lo,
                lbs,
            });
        }
    }
    if (0..n).any(|i| spec.needed_bytes(i).is_none()) {
        return Err(SurveyError::Boundary(spec.boundary));
    }
    Ok(())
}

/// The regions of device `i` for `crg` regions of `rsz` records: their
/// offsets (`boundary + j * size/crg`, in whole logical blocks) and the
/// length of each (whole records).
pub fn regions(spec: &SurveySpec, i: usize, crg: u32, rsz: u64) -> (Vec<u64>, u64) {
    let lbs = spec.block_sizes[i];
    let stride = spec.size / lbs / u64::from(crg) * lbs;
    let span = stride / rsz * rsz;
    let first = spec.first_offset(i).unwrap_or(0);
    let offsets = (0..u64::from(crg)).map(|j| first + j * stride).collect();
    (offsets, span)
}

/// The streams of one (rsz, crg, thr) point: one per region per device,
/// each sharing thr/crg of its device's outstanding I/Os.
fn streams(
    spec: &SurveySpec,
    rsz: u64,
    crg: u32,
    thr: u32,
) -> Result<Vec<StreamClass>, SurveyError> {
    let n = spec.devices.len();
    let outstanding = u64::from(thr / crg) * u64::from(crg) * n as u64;
    if u64::from(thr / crg) > MAX_OUTSTANDING {
        return Err(SurveyError::TooDeep { thr, crg });
    }
    if spec.engine == EngineKind::Sync && outstanding > 1 {
        return Err(SurveyError::SyncDepth);
    }
    let mut out = Vec::with_capacity(n * crg as usize);
    for i in 0..n {
        let (offsets, span) = regions(spec, i, crg, rsz);
        if span == 0 {
            let (size, fit) = (spec.size, spec.size / rsz);
            return Err(SurveyError::RegionTooSmall {
                size,
                crg,
                rsz,
                fit,
            });
        }
        out.extend(
            offsets
                .into_iter()
                .enumerate()
                .map(|(j, offset)| StreamClass {
                    offset,
                    span: Some(span),
                    regions: 1,
                    pin: None,
                    // One pass, never round again, whatever --time leaves.
                    wrap: false,
                    ..StreamClass::new(
                        format!("dev{i} r{j}"),
                        i,
                        Mix::Read,
                        Pattern::Forward,
                        rsz,
                        thr / crg,
                    )
                }),
        );
    }
    // One ring holds up to MAX_OUTSTANDING I/Os: a deeper point (17 LUNs
    // at thr 4096 is 69,632) spreads its regions over as many rings, each
    // driven by a worker of its own, whole regions to a ring.
    if outstanding > MAX_OUTSTANDING {
        let (mut ring, mut depth) = (0u32, 0u64);
        for s in &mut out {
            if depth + u64::from(s.outstanding) > MAX_OUTSTANDING {
                ring += 1;
                depth = 0;
            }
            depth += u64::from(s.outstanding);
            s.pin = Some(ring);
        }
    }
    Ok(out)
}

/// Rings (workers) the streams of a point need: one, or one per ring its
/// regions were spread over.
fn rings(streams: &[StreamClass]) -> u32 {
    streams
        .iter()
        .filter_map(|s| s.pin)
        .max()
        .map_or(1, |r| r + 1)
}

/// Expands a survey into one point per (rsz, crg, thr, action), in
/// sgpdd-survey's order; points over the memory check are marked `ENOMEM`.
pub fn expand(spec: &SurveySpec) -> Result<Plan, SurveyError> {
    check(spec)?;
    let pairs = sweep(spec);
    if pairs.is_empty() {
        let max = spec.max_per_region;
        return Err(SurveyError::NothingToRun { max });
    }
    let targets: Vec<TargetSpec> = (0..spec.devices.len())
        .map(|i| TargetSpec {
            path: spec.devices[i].clone(),
            create_size: spec.needed_bytes(i),
        })
        .collect();
    let mut points = Vec::new();
    for rsz in doubling(spec.rsz_lo, spec.rsz_hi) {
        for &(crg, thr) in &pairs {
            let streams = streams(spec, rsz, crg, thr)?;
            let workers = rings(&streams);
            let skip = out_of_memory(spec, rsz, crg, thr).then(|| "ENOMEM".to_string());
            for &action in &spec.actions {
                let mix = match action {
                    Action::Write => Mix::Write,
                    Action::Read => Mix::Read,
                };
                let streams = streams.iter().map(|s| StreamClass { mix, ..s.clone() });
                points.push(Point {
                    index: points.len(),
                    label: label(rsz, crg, thr, action),
                    params: PointParams::Survey {
                        rsz,
                        crg,
                        thr,
                        action: match action {
                            Action::Write => Op::Write,
                            Action::Read => Op::Read,
                        },
                    },
                    // One ring (one worker) drives every slot: thr is
                    // outstanding I/Os, not threads.
                    job: Job {
                        workers,
                        engine: spec.engine,
                        direct: spec.direct,
                        seed: spec.seed,
                        // A failed region is counted (`<k> failed`) and the
                        // others go on, as separate sgp_dd processes do.
                        continue_on_error: true,
                        ..Job::new(
                            targets.clone(),
                            streams.collect(),
                            // One pass over every region, as sgp_dd's
                            // count=, or --time, whichever ends first.
                            Bounds {
                                time: spec.time,
                                bytes: None,
                                ramp: Duration::ZERO,
                            },
                        )
                    },
                    skip: skip.clone(),
                });
            }
        }
    }
    Ok(spec.engine_flags.written(Plan {
        mode: "survey".into(),
        points,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(devices: &[&str], crg: (u32, u32), thr: (u32, u32)) -> SurveySpec {
        let devices: Vec<PathBuf> = devices.iter().map(PathBuf::from).collect();
        let n = devices.len();
        let mut s = SurveySpec::new(devices, vec![512; n], 64 << 20);
        (s.crg_lo, s.crg_hi, s.thr_lo, s.thr_hi) = (crg.0, crg.1, thr.0, thr.1);
        s
    }

    fn labels(plan: &Plan) -> Vec<&str> {
        plan.points.iter().map(|p| p.label.as_str()).collect()
    }

    #[test]
    fn the_sweep_doubles_rsz_then_crg_then_thr_and_skips_like_sgpdd() {
        let mut s = spec(&["/dev/a"], (1, 4), (1, 8));
        s.max_per_region = 4;
        let want = "[(1, 1), (1, 2), (1, 4), (2, 2), (2, 4), (2, 8), (4, 4), (4, 8)]";
        assert_eq!(format!("{:?}", sweep(&s)), want);
        (s.rsz_lo, s.rsz_hi, s.actions) = (4096, 8192, vec![Action::Read]);
        let plan = expand(&s).unwrap();
        let l = labels(&plan);
        assert_eq!(l.len(), 16);
        assert_eq!(l[0], "rsz=4KiB crg=1 thr=1 read");
        assert_eq!(l[7], "rsz=4KiB crg=4 thr=8 read");
        assert_eq!(l[8], "rsz=8KiB crg=1 thr=1 read");
        // crg 2 thr 8: two regions, thr/crg = 4 outstanding each.
        let job = &plan.points[5].job;
        assert_eq!((job.streams.len(), job.streams[1].outstanding), (2, 4));
        assert!(plan.points.iter().enumerate().all(|(i, p)| p.index == i));
        // 16 per region by default; non-powers of two divide down.
        let s = spec(&["/dev/a"], (2, 2), (3, 48));
        assert_eq!(sweep(&s), [(2, 3), (2, 6), (2, 12), (2, 24)]);
        let plan = expand(&s).unwrap();
        let per_region = plan.points.iter().map(|p| p.job.streams[0].outstanding);
        assert!(per_region.eq([1, 1, 3, 3, 6, 6, 12, 12]));
    }

    #[test]
    fn a_point_deeper_than_a_ring_spreads_whole_regions_over_rings() {
        // sgpdd-survey's 17 LUNs at thr 4096, crg 16: 69,632 outstanding.
        let devs: Vec<String> = (0..17).map(|i| format!("/dev/d{i}")).collect();
        let devs: Vec<&str> = devs.iter().map(String::as_str).collect();
        let mut sp = spec(&devs, (16, 16), (4096, 4096));
        sp.max_per_region = 4096;
        let plan = expand(&sp).unwrap();
        let job = &plan.points[0].job;
        assert_eq!(job.workers, 2);
        let depth = |w: u32| -> u64 {
            job.streams
                .iter()
                .filter(|s| s.pin == Some(w))
                .map(|s| u64::from(s.outstanding))
                .sum()
        };
        assert_eq!(depth(0), 65536);
        assert_eq!(depth(0) + depth(1), 17 * 4096);
        assert!(job
            .streams
            .iter()
            .all(|s| s.outstanding == 256 && s.pin.is_some()));
        // A point that fits one ring keeps one worker, unpinned.
        let plan = expand(&spec(&devs, (16, 16), (64, 64))).unwrap();
        assert_eq!(plan.points[0].job.workers, 1);
        assert!(plan.points[0].job.streams.iter().all(|s| s.pin.is_none()));
    }

    #[test]
    fn actions_follow_each_point_and_every_device_runs_at_once() {
        let plan = expand(&spec(&["/dev/a", "/dev/b"], (2, 2), (4, 4))).unwrap();
        assert_eq!(plan.mode, "survey");
        assert_eq!(
            labels(&plan),
            ["rsz=1MiB crg=2 thr=4 write", "rsz=1MiB crg=2 thr=4 read"]
        );
        let job = &plan.points[0].job;
        assert_eq!(
            (job.workers, job.bounds.time, job.bounds.bytes),
            (1, None, None)
        );
        let shape = |p: &Point| -> Vec<String> {
            let s = p.job.streams.iter();
            s.map(|s| {
                format!(
                    "{} {} {:?} {:?} {} {}",
                    s.label, s.target, s.mix, s.pattern, s.outstanding, s.regions
                )
            })
            .collect()
        };
        assert_eq!(
            shape(&plan.points[0]),
            [
                "dev0 r0 0 Write Forward 2 1",
                "dev0 r1 0 Write Forward 2 1",
                "dev1 r0 1 Write Forward 2 1",
                "dev1 r1 1 Write Forward 2 1"
            ]
        );
        assert_eq!(shape(&plan.points[1])[3], "dev1 r1 1 Read Forward 2 1");
    }

    #[test]
    fn regions_start_after_the_boundary_and_split_the_size() {
        let mut s = spec(&["/dev/a", "/dev/b"], (4, 4), (4, 4));
        (s.block_sizes, s.size, s.actions) = (vec![512, 4096], 10 << 20, vec![Action::Read]);
        let plan = expand(&s).unwrap();
        let streams = &plan.points[0].job.streams;
        // 10 MiB / 4 = 2.5 MiB apart; each region holds two whole 1 MiB records.
        let stride = 10 << 20 >> 2;
        let got: Vec<(u64, Option<u64>)> = streams.iter().map(|s| (s.offset, s.span)).collect();
        let want: Vec<(u64, Option<u64>)> = [512u64, 4096]
            .iter()
            .flat_map(|lbs| (0..4).map(move |j| (1024 * lbs + j * stride, Some(2 << 20))))
            .collect();
        assert_eq!(got, want);
        let need = (10 << 20) + 1024 * 4096;
        assert_eq!(plan.points[0].job.targets[1].create_size, Some(need));
        assert!(streams.iter().all(|s| s.offset + s.span.unwrap() <= need));
    }

    #[test]
    fn points_over_the_memory_check_are_marked_enomem() {
        let mut s = spec(&["/dev/a", "/dev/b"], (1, 2), (1, 2));
        // (1024*thr/crg + 64) * crg * 2 KiB: 2176 and 4224 at crg 1, 4352 at crg 2.
        s.mem_total = 4224 * 1024;
        let plan = expand(&s).unwrap();
        let skips: Vec<Option<&str>> = plan.points.iter().map(|p| p.skip.as_deref()).collect();
        let no = None;
        let enomem = Some("ENOMEM");
        assert_eq!(skips, [no, no, no, no, enomem, enomem]);
        assert_eq!(plan.points[4].label, "rsz=1MiB crg=2 thr=2 write");
    }

    #[test]
    fn actions_parse_with_commas_or_spaces() {
        use Action::*;
        assert_eq!(parse_actions("write,read"), Ok(vec![Write, Read]));
        assert_eq!(parse_actions("read write"), Ok(vec![Read, Write]));
        assert_eq!(
            parse_actions("wirte"),
            Err(SurveyError::Action("wirte".into()))
        );
        assert_eq!(parse_actions(" , "), Err(SurveyError::NoAction));
    }

    #[test]
    fn bad_specs_are_refused_with_a_message_naming_the_flag() {
        type Edit = fn(&mut SurveySpec);
        #[rustfmt::skip]
        let cases: [(Edit, &str); 16] = [
            (|s| s.size = 0, "--size must be greater than zero"),
            (|s| s.crg_lo = 0, "--crglo must be greater than zero"),
            (|s| s.thr_hi = 0, "--thrhi must be greater than zero"),
            (|s| s.max_per_region = 0, "--max-per-region must be"),
            (|s| s.crg_lo = 8, "--crglo 8 is greater than --crghi 4"),
            (|s| s.rsz_lo = 2 << 20, "--rszlo 2097152 is greater than --rszhi"),
            (|s| (s.rsz_lo, s.block_sizes[0]) = (6144, 4096), "not a multiple of its logical block size 4096"),
            (|s| (s.thr_hi, s.crg_lo) = (2, 4), "every point is skipped"),
            (|s| (s.size, s.crg_lo) = (1 << 20, 2), "lower --crghi (to 1 at most)"),
            (|s| s.size = 512 << 10, "one record is larger than --size: raise --size or lower --rszhi"),
            (|s| (s.crg_lo, s.crg_hi, s.thr_lo, s.thr_hi, s.max_per_region) = (1, 1, 1 << 17, 1 << 17, 1 << 17), "more than 65536 outstanding I/Os in one region"),
            (|s| s.engine = EngineKind::Sync, "use --engine uring"),
            (|s| s.actions.clear(), "--actions is empty"),
            (|s| s.rsz_hi = 4 << 30, "at most 1GiB per I/O"),
            (|s| s.devices.push("/dev/b".into()), "1 block sizes given for 2 devices"),
            (|s| s.boundary = u64::MAX, "--boundary 18446744073709551615 blocks"),
        ];
        for (edit, want) in cases {
            let mut s = spec(&["/dev/a"], (1, 4), (1, 64));
            edit(&mut s);
            let got = expand(&s).expect_err(want).to_string();
            assert!(got.contains(want), "{got:?} does not say {want:?}");
        }
        let dup = spec(&["/dev/a", "/dev/a"], (1, 1), (1, 1));
        assert_eq!(expand(&dup), Err(SurveyError::Duplicate("/dev/a".into())));
        let mut sync = spec(&["/dev/a"], (1, 1), (1, 1));
        sync.engine = EngineKind::Sync;
        assert!(expand(&sync).is_ok(), "one I/O in flight is fine for sync");
    }
}
