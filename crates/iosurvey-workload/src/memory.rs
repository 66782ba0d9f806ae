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
/// Bytes of one interval of a series (four counters and three latency
/// percentiles), and of the same interval's row the runner keeps for the
/// percentiles (the sample, its stream, op and interval number).
const INTERVAL_BYTES: u64 = 56 + 80;
/// Bytes of the mark of one class's histogram a worker keeps to cut its
/// intervals' latencies: its filled buckets, 16 bytes each, room for
/// 4096 (more than a run of minutes fills, as the encoding assumes).
const MARK_BYTES: u64 = 64 << 10;
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
///
/// Each worker holds a pool and a ring for the streams it runs: every
/// stream that is not pinned (each worker runs a share of it), and the
/// streams pinned to it (`run`'s default, survey's rings, parallel's
/// threads), which no other worker holds.
pub fn job_memory(job: &Job) -> MemoryNeed {
    let workers = u64::from(job.workers.max(1));
    let shared = WorkerLoad::of(job.streams.iter().filter(|s| s.pin.is_none()));
    let mut pinned: std::collections::BTreeMap<u32, Vec<&crate::StreamClass>> =
        std::collections::BTreeMap::new();
    for s in &job.streams {
        if let Some(p) = s.pin.filter(|&p| p < job.workers.max(1)) {
            pinned.entry(p).or_default().push(s);
        }
    }
    let per_class = (2 * (HISTOGRAM_BYTES + MARK_BYTES))
        .saturating_add(intervals(job).saturating_mul(INTERVAL_BYTES));
    // The workers that run only the shared streams, then each one that
    // runs pinned streams too.
    let plain = workers - pinned.len() as u64;
    let mut need = shared.need(per_class).times(plain);
    for streams in pinned.values() {
        let own = WorkerLoad::of(streams.iter().copied());
        let load = WorkerLoad {
            slots: shared.slots.saturating_add(own.slots),
            longest: shared.longest.max(own.longest),
            classes: shared.classes + own.classes,
        };
        need = need.plus(load.need(per_class));
    }
    need.frames = match job.frames() {
        Some(_) => FRAME_RECORDS * FRAME_RECORD_BYTES,
        None => 0,
    };
    need
}

/// What one worker runs: its buffers (one per slot, every buffer as long
/// as its longest transfer) and its classes.
#[derive(Clone, Copy, Default)]
struct WorkerLoad {
    slots: u64,
    longest: u64,
    classes: u64,
}

impl WorkerLoad {
    fn of<'a>(streams: impl Iterator<Item = &'a crate::StreamClass>) -> Self {
        streams.fold(WorkerLoad::default(), |w, s| {
            let (pieces, piece) = pieces(s.bs, s.array.as_ref().map(|a| &a.layout));
            let held = match &s.frames {
                Some(f) => u64::from(f.depth.max(1)),
                None => u64::from(s.outstanding).saturating_mul(pieces),
            };
            WorkerLoad {
                slots: w.slots.saturating_add(held),
                longest: w.longest.max(piece),
                classes: w.classes + 1,
            }
        })
    }

    /// Its pool rounded up to pages, its ring, and its histograms and
    /// series (a read and a write histogram and a series per class).
    fn need(&self, per_class: u64) -> MemoryNeed {
        let stride = self.longest.max(1).div_ceil(PAGE).saturating_mul(PAGE);
        let slots = self.slots.max(1);
        MemoryNeed {
            buffers: slots.saturating_mul(stride),
            rings: slots.saturating_mul(SLOT_BYTES),
            stats: self.classes.saturating_mul(per_class),
            ..MemoryNeed::default()
        }
    }
}

impl MemoryNeed {
    fn times(self, n: u64) -> Self {
        MemoryNeed {
            buffers: self.buffers.saturating_mul(n),
            rings: self.rings.saturating_mul(n),
            stats: self.stats.saturating_mul(n),
            ..self
        }
    }

    fn plus(self, o: MemoryNeed) -> Self {
        MemoryNeed {
            buffers: self.buffers.saturating_add(o.buffers),
            rings: self.rings.saturating_add(o.rings),
            stats: self.stats.saturating_add(o.stats),
            ..self
        }
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
        spec.workers = Some(workers);
        expand(&spec).unwrap()
    }

    #[test]
    fn buffers_are_every_workers_slots_of_the_block_size() {
        let need = plan_memory(&run(16 << 20, 1024, 64), 1);
        assert_eq!(need.buffers, 64 * 1024 * (16 << 20));
        assert_eq!(need.largest().1, "I/O buffers");
    }

    #[test]
    fn a_pinned_stream_is_counted_on_its_worker_alone() {
        let mut spec = RunSpec::new((0..64).map(|i| format!("/dev/zram{i}").into()).collect());
        spec.bs = 4096;
        spec.qd = 32;
        spec.cpus = 2;
        // The default: 64 streams dealt over 2 workers, 32 slots each.
        let dealt = job_memory(&expand(&spec).unwrap().points[0].job);
        assert_eq!(dealt.buffers, 64 * 32 * 4096);
        assert_eq!(dealt.rings, 64 * 32 * SLOT_BYTES);
        assert_eq!(
            dealt.stats,
            64 * (2 * (HISTOGRAM_BYTES + MARK_BYTES) + INTERVAL_BYTES)
        );
        // Two workers given: each runs a share of every stream, at --qd.
        spec.workers = Some(2);
        let shared = job_memory(&expand(&spec).unwrap().points[0].job);
        assert_eq!(shared.buffers, 2 * 64 * 32 * 4096);
        assert_eq!(shared.stats, 2 * dealt.stats);
        // A worker per target (the sync engine's default) holds its own.
        spec.workers = None;
        spec.qd = 1;
        spec.engine = iosurvey_model::EngineKind::Sync;
        let job = &expand(&spec).unwrap().points[0].job;
        assert_eq!(job.workers, 64);
        assert_eq!(job_memory(job).buffers, 64 * 4096);
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
        assert_eq!(
            need.stats,
            2 * (HISTOGRAM_BYTES + MARK_BYTES) + 3_600_000 * INTERVAL_BYTES
        );
        // The interval percentiles are counted: more than four counters.
        const { assert!(INTERVAL_BYTES > 4 * 8 + 3 * 8) };
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
