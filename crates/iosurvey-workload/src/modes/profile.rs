//! `iosurvey profile` (HD Tune, zcav): read throughput against position.
//! N zones spread over the whole device (or virtual array), each one Point
//! of sequential reads; then, on request, random QD 1 reads for the access
//! time and repeated reads of one small area for the burst (cache) rate.
//! Profile never writes.

use crate::array::{ArraySpec, Layout};
use crate::model::{Bounds, Job, Mix, Pattern, Plan, Point, StreamClass, TargetSpec};
use crate::units::format_size;
use iosurvey_model::EngineKind;
use iosurvey_model::{PointParams, ProfilePosition};
use std::path::PathBuf;
use std::time::Duration;

pub use iosurvey_model::profile::{ACCESS, BURST, ZONE};

/// The access-time point: at most this many random reads, or this long.
pub const ACCESS_IOS: u64 = 1000;
pub const ACCESS_TIME: Duration = Duration::from_secs(2);
/// The burst point: reads of the first `BURST_AREA` bytes, at most this
/// many, or this long, after an unmeasured ramp that fills the cache.
pub const BURST_AREA: u64 = 1 << 20;
pub const BURST_IOS: u64 = 256;
pub const BURST_TIME: Duration = Duration::from_secs(1);
pub const BURST_RAMP: Duration = Duration::from_millis(200);

/// How much of each zone is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerZone {
    /// Bytes from the zone's start (at most the zone).
    Bytes(u64),
    /// Time spent reading from the zone's start (at most one pass).
    Time(Duration),
}

/// Everything `iosurvey profile` was asked for, with the device size the
/// command found before any I/O.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileSpec {
    pub targets: Vec<PathBuf>,
    /// Size to create a missing test file at.
    pub create_size: Option<u64>,
    /// Bytes of the target, or of the virtual array of all targets.
    pub size: u64,
    /// Largest O_DIRECT alignment of the targets (1 when buffered).
    pub logical_block_size: u64,
    /// Put several targets together (concat or raid0).
    pub array: Option<Layout>,
    pub zones: u32,
    pub bs: u64,
    pub per_zone: PerZone,
    pub access_time: bool,
    pub burst: bool,
    pub engine: EngineKind,
    pub direct: bool,
    pub seed: u64,
    /// The engine flags, written into every job.
    pub engine_flags: crate::EngineFlags,
}

impl ProfileSpec {
    /// zcav/HD Tune defaults: 100 zones, 1 MiB reads, 64 MiB per zone, QD 1
    /// on the sync engine, O_DIRECT.
    pub fn new(targets: Vec<PathBuf>, size: u64) -> Self {
        ProfileSpec {
            targets,
            create_size: None,
            size,
            logical_block_size: 512,
            array: None,
            zones: 100,
            bs: 1 << 20,
            per_zone: PerZone::Bytes(64 << 20),
            access_time: false,
            burst: false,
            engine: EngineKind::Sync,
            direct: true,
            seed: 0,
            engine_flags: crate::EngineFlags::default(),
        }
    }
}

/// A profile that cannot be expanded. Messages say what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("no target given: name a block device or a file")]
    NoTarget,
    #[error(
        "{0} targets given: profile one, or add --simulate concat to profile them as one device"
    )]
    SeveralTargets(usize),
    #[error("--{0} must be greater than zero")]
    Zero(&'static str),
    #[error("--bs {0} is too large: at most 2GiB per I/O")]
    BsTooLarge(u64),
    #[error("--bs {bs} is not a multiple of the logical block size {lbs}, which O_DIRECT needs; use a multiple of {lbs} or --buffered")]
    BsAlignment { bs: u64, lbs: u64 },
    #[error("--zones {zones} is more than the {blocks} blocks of --bs {bs} the device holds ({size} bytes); lower --zones or --bs")]
    TooManyZones {
        zones: u32,
        blocks: u64,
        bs: u64,
        size: u64,
    },
}

/// One zone: `len` bytes from `offset`, both whole blocks of `bs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    pub index: u32,
    pub offset: u64,
    pub len: u64,
}

/// Splits the whole blocks of a `size`-byte device into `zones` contiguous
/// zones: zone i starts at block `i * blocks / zones`, so starts are spread
/// evenly, every zone holds at least one block, and together they cover
/// every whole block exactly once.
pub fn zones(size: u64, bs: u64, zones: u32) -> Result<Vec<Zone>, ProfileError> {
    if zones == 0 {
        return Err(ProfileError::Zero("zones"));
    }
    if bs == 0 {
        return Err(ProfileError::Zero("bs"));
    }
    let blocks = size / bs;
    if blocks < u64::from(zones) {
        return Err(ProfileError::TooManyZones {
            zones,
            blocks,
            bs,
            size,
        });
    }
    let start = |i: u32| (u128::from(i) * u128::from(blocks) / u128::from(zones)) as u64 * bs;
    Ok((0..zones)
        .map(|i| Zone {
            index: i,
            offset: start(i),
            len: start(i + 1) - start(i),
        })
        .collect())
}

/// Expands a profile: one Point per zone (labelled `zone I`), then
/// `access time` and `burst` when asked for.
pub fn expand(spec: &ProfileSpec) -> Result<Plan, ProfileError> {
    match spec.targets.len() {
        0 => return Err(ProfileError::NoTarget),
        1 => {}
        n if spec.array.is_none() => return Err(ProfileError::SeveralTargets(n)),
        _ => {}
    }
    if spec.bs > 1 << 31 {
        return Err(ProfileError::BsTooLarge(spec.bs));
    }
    let lbs = if spec.direct {
        spec.logical_block_size.max(1)
    } else {
        1
    };
    if spec.bs != 0 && !spec.bs.is_multiple_of(lbs) {
        return Err(ProfileError::BsAlignment { bs: spec.bs, lbs });
    }
    let per_zone_zero = match spec.per_zone {
        PerZone::Bytes(b) => b == 0,
        PerZone::Time(t) => t.is_zero(),
    };
    if per_zone_zero {
        return Err(ProfileError::Zero("per-zone"));
    }
    if spec.create_size == Some(0) {
        return Err(ProfileError::Zero("size"));
    }
    let list = zones(spec.size, spec.bs, spec.zones)?;
    let covered = list.last().map_or(0, |z| z.offset + z.len);
    let job = |stream: StreamClass, bounds: Bounds| Job {
        engine: spec.engine,
        direct: spec.direct,
        seed: spec.seed,
        ..Job::new(
            spec.targets
                .iter()
                .map(|p| TargetSpec {
                    path: p.clone(),
                    create_size: spec.create_size,
                })
                .collect(),
            vec![stream],
            bounds,
        )
    };
    let stream = |label: &str, pattern, bs, offset, span| StreamClass {
        offset,
        span,
        regions: 1,
        array: spec.array.map(|layout| ArraySpec {
            members: (0..spec.targets.len()).collect(),
            layout,
        }),
        ..StreamClass::new(label, 0, Mix::Read, pattern, bs, 1)
    };
    let mut points: Vec<Point> = Vec::new();
    let mut push = |label: String, position: ProfilePosition, job: Job| {
        points.push(Point {
            index: points.len(),
            label,
            params: PointParams::Profile { position },
            job,
            skip: None,
        })
    };
    for z in &list {
        let bounds = match spec.per_zone {
            PerZone::Bytes(b) => Bounds {
                time: None,
                bytes: Some(b.div_ceil(spec.bs).saturating_mul(spec.bs).min(z.len)),
                ramp: Duration::ZERO,
            },
            PerZone::Time(t) => Bounds {
                time: Some(t),
                bytes: Some(z.len),
                ramp: Duration::ZERO,
            },
        };
        let s = stream(ZONE, Pattern::Forward, spec.bs, z.offset, Some(z.len));
        push(
            format!("zone {}", z.index),
            ProfilePosition::Zone {
                index: z.index,
                offset: z.offset,
                len: z.len,
            },
            job(s, bounds),
        );
    }
    if spec.access_time {
        let bs = 4096u64.max(lbs);
        let bounds = Bounds {
            time: Some(ACCESS_TIME),
            bytes: Some(ACCESS_IOS * bs),
            ramp: Duration::ZERO,
        };
        let mut s = stream(ACCESS, Pattern::Random, bs, 0, Some(covered / bs * bs));
        // Each read's position and time (all of them), for the scatter HD
        // Tune draws (on one device: an array's member offsets are not
        // positions).
        if spec.array.is_none() {
            s.trace = ACCESS_IOS as u32;
        }
        push(
            "access time".into(),
            ProfilePosition::Access,
            job(s, bounds),
        );
    }
    if spec.burst {
        let area = BURST_AREA
            .div_ceil(spec.bs)
            .saturating_mul(spec.bs)
            .min(covered);
        let bounds = Bounds {
            time: Some(BURST_TIME),
            bytes: Some(BURST_IOS * spec.bs),
            ramp: BURST_RAMP,
        };
        let s = stream(BURST, Pattern::Forward, spec.bs, 0, Some(area));
        push(
            format!("burst {} over {}", format_size(spec.bs), format_size(area)),
            ProfilePosition::Burst { bs: spec.bs, area },
            job(s, bounds),
        );
    }
    Ok(spec.engine_flags.written(Plan {
        mode: "profile".into(),
        points,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn spec(size: u64) -> ProfileSpec {
        ProfileSpec::new(vec!["/dev/zram1".into()], size)
    }

    #[test]
    fn ten_zones_of_a_gib_start_every_tenth_rounded_down_to_the_block() {
        let z = zones(1 << 30, 1 << 20, 10).unwrap();
        let starts: Vec<u64> = z.iter().map(|z| z.offset >> 20).collect();
        assert_eq!(starts, [0, 102, 204, 307, 409, 512, 614, 716, 819, 921]);
        assert_eq!(z[9].offset + z[9].len, 1 << 30);
        assert_eq!(z[0].len, 102 << 20);
        // Only the tail past the last whole block is left unread.
        let z = zones((10 << 20) + 12345, 1 << 20, 3).unwrap();
        assert_eq!(z[2].offset + z[2].len, 10 << 20);
    }

    #[test]
    fn each_zone_is_one_point_of_forward_reads_bounded_per_zone() {
        let mut s = spec(100 << 20);
        s.zones = 4;
        s.per_zone = PerZone::Bytes(8 << 20);
        let plan = expand(&s).unwrap();
        assert_eq!(plan.mode, "profile");
        assert_eq!(plan.points.len(), 4);
        for (i, p) in plan.points.iter().enumerate() {
            let st = &p.job.streams[0];
            assert_eq!(p.label, format!("zone {i}"));
            assert_eq!(st.label, ZONE);
            assert_eq!(
                (st.pattern, st.mix, st.outstanding),
                (Pattern::Forward, Mix::Read, 1)
            );
            assert_eq!(st.offset, i as u64 * (25 << 20));
            assert_eq!(st.span, Some(25 << 20));
            assert_eq!(p.job.bounds.bytes, Some(8 << 20));
            assert!(!p.job.writes());
        }
        // More than a zone holds reads the zone once.
        s.per_zone = PerZone::Bytes(1 << 30);
        assert_eq!(
            expand(&s).unwrap().points[0].job.bounds.bytes,
            Some(25 << 20)
        );
        // A time bound stops at one pass too; a part block rounds up.
        s.per_zone = PerZone::Time(Duration::from_secs(1));
        let b = expand(&s).unwrap().points[3].job.bounds;
        assert_eq!(
            (b.time, b.bytes),
            (Some(Duration::from_secs(1)), Some(25 << 20))
        );
        s.per_zone = PerZone::Bytes(1);
        assert_eq!(
            expand(&s).unwrap().points[0].job.bounds.bytes,
            Some(1 << 20)
        );
    }

    #[test]
    fn access_time_and_burst_add_a_point_each() {
        let mut s = spec(64 << 20);
        s.zones = 2;
        s.access_time = true;
        s.burst = true;
        s.logical_block_size = 8192;
        let plan = expand(&s).unwrap();
        assert_eq!(plan.points.len(), 4);
        let a = &plan.points[2].job.streams[0];
        assert_eq!(
            (a.label.as_str(), a.pattern, a.bs),
            (ACCESS, Pattern::Random, 8192)
        );
        assert_eq!((a.offset, a.span), (0, Some(64 << 20)));
        assert_eq!(plan.points[2].job.bounds.bytes, Some(1000 * 8192));
        let b = &plan.points[3];
        assert_eq!(b.label, "burst 1MiB over 1MiB");
        let st = &b.job.streams[0];
        assert_eq!(
            (st.label.as_str(), st.pattern, st.span),
            (BURST, Pattern::Forward, Some(1 << 20))
        );
        assert_eq!(b.job.bounds.ramp, BURST_RAMP);
        assert!(plan.points.iter().all(|p| !p.job.writes()));
    }

    #[test]
    fn concat_profiles_every_target_as_one_array() {
        let mut s = spec(128 << 20);
        s.targets.push("/dev/loop9".into());
        assert_eq!(expand(&s), Err(ProfileError::SeveralTargets(2)));
        s.array = Some(Layout::Concat);
        s.zones = 8;
        let plan = expand(&s).unwrap();
        for p in &plan.points {
            let st = &p.job.streams[0];
            assert_eq!(st.array.as_ref().unwrap().members, [0, 1]);
            assert_eq!(p.job.targets.len(), 2);
        }
        assert_eq!(plan.points[4].job.streams[0].offset, 64 << 20);
    }

    #[test]
    fn bad_specs_are_refused() {
        type Edit = Box<dyn Fn(&mut ProfileSpec)>;
        let cases: Vec<(Edit, ProfileError)> = vec![
            (Box::new(|s| s.zones = 0), ProfileError::Zero("zones")),
            (Box::new(|s| s.bs = 0), ProfileError::Zero("bs")),
            (
                Box::new(|s| s.per_zone = PerZone::Bytes(0)),
                ProfileError::Zero("per-zone"),
            ),
            (
                Box::new(|s| s.per_zone = PerZone::Time(Duration::ZERO)),
                ProfileError::Zero("per-zone"),
            ),
            (
                Box::new(|s| s.bs = 3000),
                ProfileError::BsAlignment { bs: 3000, lbs: 512 },
            ),
            (
                Box::new(|s| s.zones = 17),
                ProfileError::TooManyZones {
                    zones: 17,
                    blocks: 16,
                    bs: 1 << 20,
                    size: 16 << 20,
                },
            ),
            (Box::new(|s| s.targets.clear()), ProfileError::NoTarget),
            (
                Box::new(|s| s.bs = 4 << 30),
                ProfileError::BsTooLarge(4 << 30),
            ),
        ];
        for (edit, want) in cases {
            let mut s = spec(16 << 20);
            edit(&mut s);
            assert_eq!(expand(&s), Err(want));
        }
        let mut s = spec(16 << 20);
        s.bs = 3000;
        s.direct = false;
        assert!(expand(&s).is_ok(), "buffered reads need no alignment");
    }

    proptest! {
        /// The zones tile the device's whole blocks: the first starts at 0,
        /// each starts where the last ended, all are aligned and non-empty,
        /// the last ends at or before the end (within one block of it), and
        /// starts are within a block of i * size / zones.
        #[test]
        fn zones_cover_the_device_exactly(
            size in 1u64..(1 << 44), bs_shift in 9u32..24, n in 1u32..2000,
        ) {
            let bs = 1u64 << bs_shift;
            match zones(size, bs, n) {
                Err(ProfileError::TooManyZones { .. }) => prop_assert!(size / bs < u64::from(n)),
                Err(e) => prop_assert!(false, "{e}"),
                Ok(z) => {
                    prop_assert_eq!(z.len(), n as usize);
                    prop_assert_eq!(z[0].offset, 0);
                    let mut end = 0;
                    for (i, zone) in z.iter().enumerate() {
                        prop_assert_eq!(zone.index as usize, i);
                        prop_assert_eq!(zone.offset, end, "no gap, no overlap");
                        prop_assert!(zone.len >= bs);
                        prop_assert_eq!(zone.offset % bs, 0);
                        prop_assert_eq!(zone.len % bs, 0);
                        let ideal = (u128::from(size) * i as u128 / u128::from(n)) as u64;
                        prop_assert!(zone.offset <= ideal && ideal - zone.offset < 2 * bs);
                        end = zone.offset + zone.len;
                    }
                    prop_assert!(end <= size && size - end < bs);
                }
            }
        }
    }
}
