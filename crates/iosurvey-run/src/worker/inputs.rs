//! What a worker is given: its streams, its bounds, the warm-up and the
//! counters it publishes. A leaf of the worker module: the loop, the tally
//! and the request makers all read it, and it reads none of them.

use super::backlog::BacklogSpec;
use iosurvey_engine::verify::WriteVerify;
use iosurvey_workload::{pattern::OffsetGen, ArrayMap, Mix};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// One stream's share on one worker.
pub(crate) struct WorkerStream {
    /// Index of the stream in the job (results are kept by it).
    pub index: usize,
    pub file: u32,
    pub mix: Mix,
    pub bs: u32,
    pub slots: u32,
    pub gen: OffsetGen,
    /// Ops left to issue in the measured phase; [`UNBOUNDED`] for a stream
    /// bounded by time alone (2^64 - 1 ops, which no run reaches: one
    /// compare and decrement per I/O, and no case for "no budget").
    pub budget: u64,
    /// The ramp's ops spend the budget too: a stream bounded by one pass
    /// that does not wrap (`parallel` without `--loop`) ends at the end of
    /// its area, ramp or not.
    pub ramp_spends: bool,
    /// Maps the stream's offsets onto the members of a virtual array.
    pub map: Option<ArrayMap>,
    /// The most pieces a striped array cuts one of its I/Os into (one per
    /// stripe it touches); 1 when none is cut. A cut I/O takes as many
    /// buffers, and completes with its last piece.
    pub pieces: u32,
    /// Measured I/Os whose offset and latency are still to be kept
    /// (profile's access times by position); counts down as they are.
    pub trace: u32,
    /// A block-size split: each I/O's size is drawn from it (`bs` is then
    /// the largest, and `budget` is in bytes, not ops).
    pub sizes: Option<Box<super::SizeDraw>>,
}

impl WorkerStream {
    /// Engine buffers the stream takes: one per I/O in flight, or one per
    /// piece of each when a striped array cuts its I/Os.
    pub(crate) fn buffers(&self) -> usize {
        self.slots as usize * self.pieces as usize
    }

    /// The most bytes one of its buffers moves: its block size, or a
    /// stripe when its I/Os are cut.
    pub(crate) fn buffer_len(&self) -> u64 {
        match self.map.as_ref().and_then(ArrayMap::stripe) {
            Some(stripe) if self.pieces > 1 => stripe.min(u64::from(self.bs)),
            _ => u64::from(self.bs),
        }
    }
}

/// Live totals one worker publishes for the progress display.
#[derive(Default)]
#[repr(align(64))]
pub(crate) struct LiveCounters {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
}

/// Shared bounds and signals.
pub(crate) struct WorkerBounds<'a> {
    pub ramp: Duration,
    pub time: Option<Duration>,
    pub interval: Duration,
    pub continue_on_error: bool,
    pub stop: &'a AtomicBool,
    pub live: &'a LiveCounters,
    /// Where the worker publishes its classes once per interval, when an
    /// observer wants them (`--metrics-file`, `--metrics-push`).
    pub detail: Option<&'a crate::live::LiveSlot>,
    /// Where the worker cuts its classes' latencies at each interval
    /// boundary, for the interval percentiles.
    pub intervals: Option<&'a crate::intervals::IntervalSlot>,
    /// `--verify`: the generation maps the writes reserve their blocks in.
    pub verify: Option<&'a WriteVerify>,
    /// `--verify-backlog N`: read back every N writes during the job.
    pub backlog: Option<BacklogSpec<'a>>,
    /// A warm-up bounded by bytes moved, shared by the job's workers.
    pub warm: Option<&'a WarmUp>,
    /// This worker's share of a rate cap (`run --rate-iops`, `--rate`).
    pub pace: Option<super::Pace>,
}

/// An unmeasured warm-up that ends once its bytes are moved, by all the
/// job's workers together: the first worker to see the total reached sets
/// the measured phase's start, and every worker measures from there.
#[derive(Debug, Default)]
pub(crate) struct WarmUp {
    pub bytes: u64,
    pub(super) moved: AtomicU64,
    /// When the measured phase starts (monotonic ns); 0 until then.
    pub(super) done_at: AtomicU64,
}

impl WarmUp {
    pub(crate) fn new(bytes: u64) -> Self {
        WarmUp {
            bytes,
            ..Default::default()
        }
    }

    /// Adds `moved` bytes seen at `now`; the start of the measured phase
    /// once the warm-up is over, by this worker's count or another's.
    pub(super) fn advance(&self, moved: u64, now: u64) -> Option<u64> {
        let total = self.moved.fetch_add(moved, Ordering::Relaxed) + moved;
        if total >= self.bytes {
            let _ = self
                .done_at
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire);
        }
        match self.done_at.load(Ordering::Acquire) {
            0 => None,
            at => Some(at),
        }
    }
}

/// The budget of a stream bounded by time alone.
pub(crate) const UNBOUNDED: u64 = u64::MAX;
