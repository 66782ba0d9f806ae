//! The sample of blocks read back after a point from the areas it read,
//! to tell how much of them was never written: an unwritten (or trimmed)
//! block reads as zeros, and SSDs and thin LUNs answer it without touching
//! the media. The report judges the share (`unwritten_area`).

use crate::verify::read_full;
use iosurvey_engine::verify::BLOCK;
use iosurvey_engine::BufferPool;
use iosurvey_model::rng::Rng;
use iosurvey_model::ReadSample;
use iosurvey_target::target::{io_alignment, OpenTarget};
use iosurvey_workload::pattern::resolve_area;
use iosurvey_workload::{ArrayMap, FrameLayout, Job, StreamClass};
use std::os::fd::AsFd;

/// Blocks sampled per point from the areas it read: enough that a share
/// of zeros is known to within about 12 points at 95% confidence, few
/// enough (64 random reads) to cost little after a point.
pub(crate) const SAMPLED_BLOCKS: u64 = 64;

/// Where a reading stream's bytes lie.
enum Area {
    /// `len` bytes from `start` of target `target`.
    Plain { target: usize, start: u64, len: u64 },
    /// `len` bytes from `start` of a virtual array.
    Array { map: ArrayMap, start: u64, len: u64 },
}

impl Area {
    /// The area a reading stream covered, if it has one to sample: a
    /// block stream's (on a target or an array), or the frames of a
    /// stream layout, back to back from the start.
    fn of(s: &StreamClass, job: &Job, targets: &[OpenTarget]) -> Option<Area> {
        let t = targets.get(s.target)?;
        let size = |full: u64| s.limit.map_or(full, |l| l.min(full));
        if let Some(f) = &s.frames {
            return matches!(f.layout, FrameLayout::Stream).then(|| Area::Plain {
                target: s.target,
                start: 0,
                len: (f.frames * f.frame_bytes).min(t.size),
            });
        }
        if let Some(a) = &s.array {
            // A limit bounds each member, not the array.
            let sizes: Vec<u64> = targets.iter().map(|t| size(t.size)).collect();
            let map = ArrayMap::new(a, &sizes, job.max_bs()).ok()?;
            let r = resolve_area(map.size(), s.offset, s.span, s.bs).ok()?;
            return Some(Area::Array {
                map,
                start: r.start,
                len: r.len,
            });
        }
        let r = resolve_area(size(t.size), s.offset, s.span, s.bs).ok()?;
        Some(Area::Plain {
            target: s.target,
            start: r.start,
            len: r.len,
        })
    }

    /// The target and offset of the `align`-sized block number `pick`
    /// (below [`Area::blocks`]).
    fn block(&self, pick: u64, align: u64) -> (usize, u64) {
        match self {
            Area::Plain { target, start, .. } => (*target, start + pick * align),
            Area::Array { map, start, .. } => {
                let (member, off) = map.locate(start + pick * align);
                (member as usize, off / align * align)
            }
        }
    }

    fn blocks(&self, align: u64) -> u64 {
        match self {
            Area::Plain { len, .. } | Area::Array { len, .. } => len / align,
        }
    }
}

/// Reads [`SAMPLED_BLOCKS`] blocks at random (the job's seed) over the
/// areas the job's reading streams covered, in turn, and counts those that
/// are all zeros.
pub(crate) fn sample_reads(job: &Job, targets: &[OpenTarget]) -> Option<ReadSample> {
    let areas: Vec<Area> = job
        .streams
        .iter()
        .filter(|s| s.mix.reads())
        .filter_map(|s| Area::of(s, job, targets))
        .collect();
    if areas.is_empty() {
        return None;
    }
    let align = io_alignment(targets).max(BLOCK);
    let mut pool = BufferPool::new(1, align, align, 0, None).ok()?;
    let mut out = ReadSample::default();
    let mut rng = Rng::new(job.seed);
    for k in 0..SAMPLED_BLOCKS {
        let area = &areas[(k as usize) % areas.len()];
        let blocks = area.blocks(align as u64);
        if blocks == 0 {
            continue;
        }
        let (ti, off) = area.block(rng.below(blocks), align as u64);
        let Some(t) = targets.get(ti) else {
            continue;
        };
        let buf = &mut pool.get_mut(0)[..align];
        if read_full(t.fd.as_fd(), buf, off).0 == align {
            out.blocks += 1;
            out.zero_blocks += u64::from(buf.iter().all(|&b| b == 0));
        }
    }
    Some(out)
}
