//! What a worker counts: runs of completions of one stream and op counted
//! at once, and the tally of statistics, series, live totals and the
//! first failure that every kind of completion records into.

use super::batches::Batches;
use super::batches::Seen;
use super::slot::Slot;
use super::WorkerBounds;
use crate::result::{IoFailure, JobResult};
use iosurvey_engine::Op;
use iosurvey_stats::SHORT_TRANSFER;
use std::sync::atomic::Ordering;

/// Completions of one reap that follow each other with one stream and op:
/// they are counted at once. Those of one submit batch among them (the
/// last ones, from `batch_from` on) took the same time, and their latency
/// is recorded as one; a reap mostly sees the end of one batch and the start
/// of the next, and the run keeps the first of the two (`prev_batch`) to be
/// recorded with the last, after the reap. They moved the same length each
/// (a block stream's I/Os are all of its block size).
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub(super) stream: u32,
    pub(super) op: Op,
    /// The key of the last completions' batch.
    pub(super) batch: u64,
    /// Completions in the run; 0 when there is none.
    pub(super) n: u64,
    /// How many of those came before the ones of batch `batch`.
    pub(super) batch_from: u64,
    /// The batch before `batch` in the run, whose latency is still to be
    /// recorded, and its completions; none when `prev_n` is 0.
    pub(super) prev_batch: u64,
    pub(super) prev_n: u64,
    /// Bytes each moved.
    pub(super) len: u32,
}

impl Run {
    /// Adds a completion of `stream`'s `op` of `len` bytes, from the submit
    /// batch `batch`: to this run, or to a new one once this run is
    /// recorded: a cut I/O's, as the block streams' reap does inline.
    #[cold]
    pub(super) fn add(
        &mut self,
        tally: &mut Tally,
        seen: Seen<'_>,
        stream: u32,
        op: Op,
        batch: u64,
        len: u32,
    ) {
        if self.batch == batch && self.stream == stream && self.op == op {
            self.n += 1;
        } else if self.stream == stream && self.op == op && self.n > 0 {
            self.next_batch(tally, seen, batch);
        } else {
            tally.record(self, seen.batches, seen.interval, seen.tc);
            *self = Run {
                stream,
                op,
                batch,
                n: 1,
                len,
                ..Run::EMPTY
            };
        }
    }

    /// Adds a completion of the next batch, `batch`, of the run's stream
    /// and op: the batch before is kept to be recorded with the run (an
    /// older one first recorded, when a reap sees three batches).
    #[inline(always)]
    pub(super) fn next_batch(&mut self, tally: &mut Tally, seen: Seen<'_>, batch: u64) {
        if self.prev_n > 0 {
            tally.record_prev(self, seen.batches, seen.interval, seen.tc);
        }
        self.prev_batch = self.batch;
        self.prev_n = self.in_batch();
        self.batch = batch;
        self.batch_from = self.n;
        self.n += 1;
    }

    pub(super) fn bytes(&self) -> u64 {
        self.n * u64::from(self.len)
    }

    /// Completions of the last batch.
    pub(super) fn in_batch(&self) -> u64 {
        self.n - self.batch_from
    }
}

impl Run {
    /// No run: no slot has this key.
    pub(super) const EMPTY: Run = Run {
        stream: 0,
        op: Op::Read,
        batch: u64::MAX,
        n: 0,
        batch_from: 0,
        prev_batch: 0,
        prev_n: 0,
        len: 0,
    };
}

/// What a worker has counted so far, for every stream it runs: the
/// statistics and series, the frames, the live totals and the first
/// failure.
pub(super) struct Tally {
    pub(super) result: JobResult,
    /// Where each local stream's results go.
    pub(super) result_of: Vec<usize>,
    pub(super) stream_done: Vec<u64>,
    pub(super) last_done: u64,
    /// I/Os of the block streams and whole frames of the frame stream.
    pub(super) live_ops: u64,
    pub(super) live_bytes: u64,
    pub(super) continue_on_error: bool,
}

impl Tally {
    /// Records `run` of a block stream, whose I/Os were seen complete at
    /// `tc`.
    #[inline]
    pub(super) fn record(&mut self, run: &Run, batches: &Batches, interval: usize, tc: u64) {
        if run.n == 0 {
            return;
        }
        self.record_io(run, batches, interval, tc);
        self.live_ops += run.n;
        self.live_bytes += run.bytes();
    }

    /// [`Tally::record`] out of line: for the reap, where the inlined
    /// body would cost the hot path registers (about 3 instructions per
    /// I/O); after the reap it is inlined, which saves a call per reap.
    #[inline(never)]
    pub(super) fn record_apart(&mut self, run: &Run, batches: &Batches, interval: usize, tc: u64) {
        self.record(run, batches, interval, tc);
    }

    /// Records `run` in its stream's statistics and series: the latency
    /// of its last batch and of the one before, and its count; the live
    /// totals are the caller's.
    #[inline(always)]
    pub(super) fn record_io(&mut self, run: &Run, batches: &Batches, interval: usize, tc: u64) {
        let job_stream = self.result_of[run.stream as usize];
        let class = self.result.streams[job_stream].class_mut(run.op);
        if run.prev_n > 0 {
            class.record_latency(
                interval,
                run.prev_n,
                tc - batches.submitted_ns(run.prev_batch),
            );
        }
        class.record_latency(
            interval,
            run.in_batch(),
            tc - batches.submitted_ns(run.batch),
        );
        class.record_count(interval, run.n, run.bytes());
        self.last_done = tc;
        self.stream_done[job_stream] = tc;
    }

    /// Records the latency of the batch before the run's last, when a
    /// third comes in one reap; its count comes with the whole run.
    #[cold]
    #[inline(never)]
    pub(super) fn record_prev(&mut self, run: &Run, batches: &Batches, interval: usize, tc: u64) {
        let job_stream = self.result_of[run.stream as usize];
        self.result.streams[job_stream]
            .class_mut(run.op)
            .record_latency(
                interval,
                run.prev_n,
                tc - batches.submitted_ns(run.prev_batch),
            );
    }

    /// Keeps the offset and latency of a traced stream's I/O.
    #[cold]
    pub(super) fn sample(&mut self, slot: &Slot, lat_ns: u64) {
        let job_stream = self.result_of[slot.stream as usize];
        self.result.streams[job_stream]
            .samples
            .push([slot.offset, lat_ns]);
    }

    /// Counts a completion that did not move its whole length, and keeps
    /// the worker's first.
    #[cold]
    #[inline(never)]
    pub(super) fn fail(&mut self, slot: &Slot, result: i32, at_ns: u64) {
        let job_stream = self.result_of[slot.stream as usize];
        let errno = failure_kind(result);
        if slot.counted {
            self.result.streams[job_stream]
                .class_mut(slot.op)
                .record_error(errno);
        }
        if self.result.first_failure.is_none() {
            self.result.first_failure = Some(IoFailure {
                stream: job_stream,
                op: slot.op,
                offset: slot.offset,
                errno,
                at_ns,
            });
        }
    }
}

/// Publishes the worker's live totals for the progress display.
#[inline]
pub(super) fn publish(bounds: &WorkerBounds<'_>, tally: &Tally) {
    bounds.live.ops.store(tally.live_ops, Ordering::Relaxed);
    bounds.live.bytes.store(tally.live_bytes, Ordering::Relaxed);
}

/// The error kind of a completion that did not move its whole length: the
/// errno of a failed I/O, or [`SHORT_TRANSFER`] for one that moved fewer
/// bytes (none at all included) without an errno.
#[cold]
pub(super) fn failure_kind(result: i32) -> i32 {
    if result < 0 {
        -result
    } else {
        SHORT_TRANSFER
    }
}
