//! What a plan will hold in memory while it runs, computed from the plan
//! alone (before anything is opened), so that a plan over what the process
//! may use is refused instead of being killed by the kernel's OOM killer.
//!
//! The figure is the peak of one point (its I/O buffers, rings, histograms
//! and series: points run one at a time) plus what grows over the whole
//! run (the plan itself and the report, one entry per point run).

use crate::{Job, Layout, Plan, Point};
use std::time::Duration;

/// Bytes of one dense latency histogram (the stats crate's bucket table,
/// about 44k buckets of 8 bytes, rounded up).
pub const HISTOGRAM_BYTES: u64 = 360 << 10;
/// Bytes of one interval of a series (four counters).
const INTERVAL_BYTES: u64 = 32;
/// Bytes of a ring entry and its bookkeeping: a submission (64) and two
/// completions (16 each) per slot, with the slot's own state.
const SLOT_BYTES: u64 = 256;
/// Bytes of a frame record (a video job keeps at most 4096 per job).
const FRAME_RECORD_BYTES: u64 = 80;
/// Frame records a job keeps (`MAX_FRAME_RECORDS` in the model).
const FRAME_RECORDS: u64 = 4096;
/// Bytes one planned point takes, and one point of the report (its
/// totals, histograms as buckets, warnings), measured on matrix and
/// survey plans and rounded up.
const POINT_BYTES: u64 = 4 << 10;
/// The process itself before any plan: its code, its heap at start, the
/// host and target probes.
pub const PROCESS_BYTES: u64 = 32 << 20;
/// The smallest buffer stride: buffers are page-aligned.
const PAGE: u64 = 4096;

/// What a plan needs, by part, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryNeed {
    /// The I/O buffers of the largest point: every worker's slots.
    pub buffers: u64,
    /// Its rings and slot tables.
    pub rings: u64,
    /// Its histograms and interval series, per worker and class.
    pub stats: u64,
    /// Its frame records.
    pub frames: u64,
    /// The plan and the report over every point (and repeat).
    pub points: u64,
    /// The process itself ([`PROCESS_BYTES`]).
    pub process: u64,
}

impl MemoryNeed {
    /// Every part, added (saturating: a plan of absurd sizes is refused,
    /// never wrapped to a small figure).
    pub fn total(&self) -> u64 {
        [
            self.rings,
            self.stats,
            self.frames,
            self.points,
            self.process,
        ]
        .iter()
        .fold(self.buffers, |a, b| a.saturating_add(*b))
    }

    /// The part that weighs most: its bytes, its name and the flags that
    /// lower it.
    pub fn largest(&self) -> (u64, &'static str, &'static str) {
        let parts = [
            (self.buffers, "I/O buffers", "--bs, --qd or --workers"),
            (self.rings, "rings", "--qd or --workers"),
            (self.stats, "interval series", "--time or raise --interval"),
            (self.frames, "frame records", "--threads"),
            (self.points, "plan and report", "the number of points"),
        ];
        parts.into_iter().max_by_key(|p| p.0).unwrap()
    }
}

/// What `plan` needs to run `repeats` times: its heaviest point, plus every
/// point's share of the plan and the report.
pub fn plan_memory(plan: &Plan, repeats: u32) -> MemoryNeed {
    points_memory(plan.points.iter(), plan.points.len(), repeats)
}

/// What a plan of `count` points needs, its points given one at a time
/// (owned or borrowed): a plan too large to hold is judged before it is
/// built.
pub fn points_memory<P: std::borrow::Borrow<Point>>(
    points: impl Iterator<Item = P>,
    count: usize,
    repeats: u32,
) -> MemoryNeed {
    let heaviest = points
        .filter(|p| p.borrow().skip.is_none())
        .map(|p| job_memory(&p.borrow().job))
        .max_by_key(MemoryNeed::total)
        .unwrap_or_default();
    let points = (count as u64).saturating_mul(u64::from(repeats.max(1)) + 1);
    MemoryNeed {
        points: points.saturating_mul(POINT_BYTES),
        process: PROCESS_BYTES,
        ..heaviest
    }
}

/// What one job holds while it runs.
pub fn job_memory(job: &Job) -> MemoryNeed {
    let workers = u64::from(job.workers.max(1));
    // Each worker's pool: one buffer per slot, every buffer as long as its
    // longest transfer, rounded up to a page.
    let (slots, longest) = job.streams.iter().fold((0u64, 0u64), |(n, len), s| {
        let (pieces, piece) = pieces(s.bs, s.array.as_ref().map(|a| &a.layout));
        let held = match &s.frames {
            Some(f) => u64::from(f.depth.max(1)),
            None => u64::from(s.outstanding).saturating_mul(pieces),
        };
        (n.saturating_add(held), len.max(piece))
    });
    let stride = longest.max(1).div_ceil(PAGE).saturating_mul(PAGE);
    let per_worker = slots.max(1).saturating_mul(stride);
    let classes = job.streams.len() as u64;
    let stats = workers.saturating_mul(classes).saturating_mul(
        // A read and a write histogram, and a series, per class.
        (2 * HISTOGRAM_BYTES).saturating_add(intervals(job).saturating_mul(INTERVAL_BYTES)),
    );
    let frames = match job.frames() {
        Some(_) => FRAME_RECORDS * FRAME_RECORD_BYTES,
        None => 0,
    };
    MemoryNeed {
        buffers: workers.saturating_mul(per_worker),
        rings: workers.saturating_mul(slots.max(1).saturating_mul(SLOT_BYTES)),
        stats,
        frames,
        points: 0,
        process: 0,
    }
}

/// Buffers one I/O of `bs` takes, and the length of each: one, or one per
/// piece when a raid0 stripe smaller than the I/O cuts it.
fn pieces(bs: u64, layout: Option<&Layout>) -> (u64, u64) {
    match layout {
        Some(Layout::Raid0 { stripe }) if *stripe > 0 && *stripe < bs => {
            (bs.div_ceil(*stripe) + 1, *stripe)
        }
        _ => (1, bs),
    }
}

/// Intervals of a job's series: its ramp and measured time over its
/// interval (one when it has no time bound: a byte-bounded job's length
/// is not known before it runs, and its series grows with its time).
fn intervals(job: &Job) -> u64 {
    let Some(time) = job.bounds.time else {
        return 1;
    };
    let interval = job.interval.max(Duration::from_millis(1)).as_nanos();
    let whole = (time + job.bounds.ramp).as_nanos();
    u64::try_from(whole.div_ceil(interval)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::run::{expand, RunSpec};

    fn run(bs: u64, qd: u32, workers: u32) -> Plan {
        let mut spec = RunSpec::new(vec!["/dev/null".into()]);
        spec.bs = bs;
        spec.qd = qd;
        spec.workers = workers;
        expand(&spec).unwrap()
    }

    #[test]
    fn buffers_are_every_workers_slots_of_the_block_size() {
        let need = plan_memory(&run(16 << 20, 1024, 64), 1);
        assert_eq!(need.buffers, 64 * 1024 * (16 << 20));
        assert_eq!(need.largest().1, "I/O buffers");
    }

    #[test]
    fn a_small_job_needs_little() {
        let need = plan_memory(&run(4096, 1, 1), 1);
        assert!(need.total() < PROCESS_BYTES + (8 << 20), "{need:?}");
    }

    #[test]
    fn a_long_series_at_a_short_interval_is_counted() {
        let mut plan = run(4096, 1, 1);
        plan.points[0].job.bounds.time = Some(Duration::from_secs(3600));
        plan.points[0].job.interval = Duration::from_millis(1);
        let need = plan_memory(&plan, 1);
        assert_eq!(need.stats, 2 * HISTOGRAM_BYTES + 3_600_000 * INTERVAL_BYTES);
    }

    #[test]
    fn a_stripe_smaller_than_the_io_takes_a_buffer_per_piece() {
        assert_eq!(
            pieces(1 << 20, Some(&Layout::Raid0 { stripe: 64 << 10 })),
            (17, 64 << 10)
        );
        assert_eq!(pieces(4096, Some(&Layout::Concat)), (1, 4096));
    }
}
