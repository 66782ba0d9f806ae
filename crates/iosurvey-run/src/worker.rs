//! The hot loop of one worker: keep every slot's I/O in flight, time each
//! one, and count it against the job's bounds. No allocation, no lock and no
//! syscall beyond the engine's own per batch.

use crate::result::{IoFailure, JobResult, StreamResult};
use backlog::Backlog;
pub(crate) use backlog::BacklogSpec;
use batches::Batches;
pub(crate) use frames::FrameShared;
use frames::{Ctx, FrameDriver, Next, Seen};
use iosurvey_engine::verify::WriteVerify;
use iosurvey_engine::{Engine, FileOp, Op, Request};
use iosurvey_stats::SHORT_TRANSFER;
use iosurvey_workload::{pattern::OffsetGen, ArrayMap, Mix};
use split::Group;
use std::collections::VecDeque;
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
    /// `--verify`: the generation maps the writes reserve their blocks in.
    pub verify: Option<&'a WriteVerify>,
    /// `--verify-backlog N`: read back every N writes during the job.
    pub backlog: Option<BacklogSpec<'a>>,
    /// A warm-up bounded by bytes moved, shared by the job's workers.
    pub warm: Option<&'a WarmUp>,
}

/// An unmeasured warm-up that ends once its bytes are moved, by all the
/// job's workers together: the first worker to see the total reached sets
/// the measured phase's start, and every worker measures from there.
#[derive(Debug, Default)]
pub(crate) struct WarmUp {
    pub bytes: u64,
    moved: AtomicU64,
    /// When the measured phase starts (monotonic ns); 0 until then.
    done_at: AtomicU64,
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
    fn advance(&self, moved: u64, now: u64) -> Option<u64> {
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

/// One slot: the I/O its buffer has in flight.
#[derive(Clone, Copy)]
pub(super) struct Slot {
    /// Index of the stream in the worker's list.
    stream: u32,
    len: u32,
    op: Op,
    /// Issued in the measured phase (after the ramp): only these are
    /// counted, and only these spend the byte budget.
    counted: bool,
    offset: u64,
    /// The submit batch that carried it (see [`Batches`]).
    batch: u64,
    /// One of the frame stream's: its completions go to the frame driver.
    frame: bool,
    /// A piece of a cut I/O, of group `group` (see [`Group`]).
    piece: bool,
    group: u32,
}

impl Slot {
    /// A slot of stream `stream` armed with `op` of `len` bytes at
    /// `offset`, for the batch `batch`.
    fn new(stream: u32, op: Op, offset: u64, len: u32, counted: bool, batch: u64) -> Self {
        Slot {
            stream,
            len,
            op,
            counted,
            offset,
            batch,
            frame: false,
            piece: false,
            group: 0,
        }
    }
}

/// Arms the frame stream's slots outside the reap: each push takes the
/// key of the batch it goes out in (or its turn, on one-at-a-time engines)
/// as the block streams' do.
pub(super) struct Arm<'a> {
    slots: &'a mut [Slot],
    batches: &'a Batches,
    fifo: &'a mut VecDeque<u32>,
    /// Pushed in the measured phase.
    counted: bool,
}

impl Arm<'_> {
    fn set<E: Engine>(&mut self, stream: u32, op: Op, offset: u64, len: u32, buf: u32) {
        self.slots[buf as usize] = Slot {
            frame: true,
            ..Slot::new(
                stream,
                op,
                offset,
                len,
                self.counted,
                self.batches.current(),
            )
        };
        if E::ONE_AT_A_TIME {
            self.fifo.push_back(buf);
        }
    }

    /// Pushes a piece of a frame for stream `stream`: a block request, or
    /// with `open_file` the same I/O on the engine's open file.
    fn piece<E: Engine>(&mut self, engine: &mut E, stream: u32, req: Request, open_file: bool) {
        self.set::<E>(stream, req.op, req.offset, req.len, req.buf);
        if open_file {
            let io = FileOp::Io {
                op: req.op,
                offset: req.offset,
                len: req.len,
            };
            engine.push_file(req.buf, io);
        } else {
            engine.push(req);
        }
    }

    /// Pushes a file operation (open, sync, close) on buffer `buf`.
    fn file_op<E: Engine>(&mut self, engine: &mut E, buf: u32, stream: u32, op: FileOp) {
        self.set::<E>(stream, Op::Read, 0, 0, buf);
        engine.push_file(buf, op);
    }
}

/// Completions of one reap that follow each other with one stream and op:
/// they are counted at once. Those of one submit batch among them (the
/// last ones, from `batch_from` on) took the same time, and their latency
/// is recorded as one; a reap mostly sees the end of one batch and the start
/// of the next, and the run keeps the first of the two (`prev_batch`) to be
/// recorded with the last, after the reap. They moved the same length each
/// (a block stream's I/Os are all of its block size).
#[derive(Clone, Copy)]
pub(super) struct Run {
    stream: u32,
    op: Op,
    /// The key of the last completions' batch.
    batch: u64,
    /// Completions in the run; 0 when there is none.
    n: u64,
    /// How many of those came before the ones of batch `batch`.
    batch_from: u64,
    /// The batch before `batch` in the run, whose latency is still to be
    /// recorded, and its completions; none when `prev_n` is 0.
    prev_batch: u64,
    prev_n: u64,
    /// Bytes each moved.
    len: u32,
}

impl Run {
    /// Adds a completion of `stream`'s `op` of `len` bytes, from the submit
    /// batch `batch`: to this run, or to a new one once this run is
    /// recorded: a cut I/O's, as the block streams' reap does inline.
    #[cold]
    fn add(
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
    fn next_batch(&mut self, tally: &mut Tally, seen: Seen<'_>, batch: u64) {
        if self.prev_n > 0 {
            tally.record_prev(self, seen.batches, seen.interval, seen.tc);
        }
        self.prev_batch = self.batch;
        self.prev_n = self.in_batch();
        self.batch = batch;
        self.batch_from = self.n;
        self.n += 1;
    }

    fn bytes(&self) -> u64 {
        self.n * u64::from(self.len)
    }

    /// Completions of the last batch.
    fn in_batch(&self) -> u64 {
        self.n - self.batch_from
    }
}

impl Run {
    /// No run: no slot has this key.
    const EMPTY: Run = Run {
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
    result: JobResult,
    /// Where each local stream's results go.
    result_of: Vec<usize>,
    stream_done: Vec<u64>,
    last_done: u64,
    /// I/Os of the block streams and whole frames of the frame stream.
    live_ops: u64,
    live_bytes: u64,
    continue_on_error: bool,
}

impl Tally {
    /// Records `run` of a block stream, whose I/Os were seen complete at
    /// `tc`.
    #[inline]
    fn record(&mut self, run: &Run, batches: &Batches, interval: usize, tc: u64) {
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
    fn record_apart(&mut self, run: &Run, batches: &Batches, interval: usize, tc: u64) {
        self.record(run, batches, interval, tc);
    }

    /// Records `run` in its stream's statistics and series: the latency
    /// of its last batch and of the one before, and its count; the live
    /// totals are the caller's.
    #[inline(always)]
    fn record_io(&mut self, run: &Run, batches: &Batches, interval: usize, tc: u64) {
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
    fn record_prev(&mut self, run: &Run, batches: &Batches, interval: usize, tc: u64) {
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
    fn sample(&mut self, slot: &Slot, lat_ns: u64) {
        let job_stream = self.result_of[slot.stream as usize];
        self.result.streams[job_stream]
            .samples
            .push([slot.offset, lat_ns]);
    }

    /// Counts a completion that did not move its whole length, and keeps
    /// the worker's first.
    #[cold]
    #[inline(never)]
    fn fail(&mut self, slot: &Slot, result: i32, at_ns: u64) {
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

/// A worker's `SOLO` kind (see [`run_worker_at`]): any streams.
const NOT_SOLO: u8 = 0;
/// One stream that only reads one file.
const SOLO_READS: u8 = 1;
/// One stream that only writes one file.
const SOLO_WRITES: u8 = 2;

/// The budget of a stream bounded by time alone.
pub(crate) const UNBOUNDED: u64 = u64::MAX;

/// Longest a worker waits in the engine before it looks at its stop flag
/// again, when no I/O completes.
const MAX_WAIT: Duration = Duration::from_secs(1);
const MAX_WAIT_NS: u64 = MAX_WAIT.as_nanos() as u64;

pub use crate::clock::now_ns;

pub(crate) fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A frame stream on one worker: what the workers share, and this
/// worker's number (kept in each frame's record).
#[derive(Clone, Copy)]
pub(crate) struct FrameWork<'a> {
    pub shared: &'a FrameShared<'a>,
    pub thread: u32,
}

impl FrameWork<'_> {
    /// Buffers the frame stream uses: one per piece in flight.
    pub(crate) fn buffers(&self) -> u32 {
        self.shared.job.depth.max(1)
    }
}

/// Runs one worker until its bounds are met, then drains its in-flight I/O.
/// `start_ns` is when the shared barrier released the workers.
///
/// Each slot owns one buffer of the engine; a completion of a block stream
/// re-arms its slot from inside the engine's reap. The I/Os of one submit
/// batch share its submit time, those of one reap share their completion
/// time, and the time and stop bounds are checked once per batch. A frame
/// stream's slots (after the block streams') are armed by its driver
/// between reaps, and counted by the same tally.
pub(crate) fn run_worker<E: Engine>(
    engine: &mut E,
    streams: Vec<WorkerStream>,
    frames: Option<FrameWork<'_>>,
    bounds: &WorkerBounds<'_>,
    start_ns: u64,
) -> std::io::Result<JobResult> {
    // A stop asked before the first I/O (during the set-up of gigabytes of
    // buffers, say) submits nothing: not even the first batch.
    if bounds.stop.load(Ordering::Relaxed) {
        return Ok(JobResult {
            interrupted: true,
            ..Default::default()
        });
    }
    run_worker_on(engine, streams, frames, bounds, start_ns, now_ns)
}

/// [`run_worker_at`] on the clock `now`, built four times: for a worker
/// with no frame stream, no `--verify`, no traced stream and no cut I/O,
/// whose completions then skip those checks; for such a worker with one
/// stream that only reads, or only writes, one file, whose completions
/// also skip looking up their stream and op; and for the others.
#[inline(always)]
fn run_worker_on<E: Engine>(
    engine: &mut E,
    streams: Vec<WorkerStream>,
    frames: Option<FrameWork<'_>>,
    bounds: &WorkerBounds<'_>,
    start_ns: u64,
    now: impl Fn() -> u64,
) -> std::io::Result<JobResult> {
    if frames.is_none()
        && bounds.verify.is_none()
        && bounds.warm.is_none()
        && streams.iter().all(|s| s.trace == 0 && s.pieces == 1)
    {
        match &streams[..] {
            [one] if one.map.is_none() && one.mix == Mix::Read => {
                run_worker_at::<E, true, SOLO_READS>(engine, streams, None, bounds, start_ns, now)
            }
            [one] if one.map.is_none() && one.mix == Mix::Write => {
                run_worker_at::<E, true, SOLO_WRITES>(engine, streams, None, bounds, start_ns, now)
            }
            _ => run_worker_at::<E, true, NOT_SOLO>(engine, streams, None, bounds, start_ns, now),
        }
    } else {
        run_worker_at::<E, false, NOT_SOLO>(engine, streams, frames, bounds, start_ns, now)
    }
}

/// [`run_worker`] on the clock `now` (monotonic nanoseconds): the tests
/// give it one that the fake engine moves by exact amounts. `PLAIN`: the
/// worker has no frame stream, nothing to verify, no traced stream and no
/// cut I/O. `SOLO` (with `PLAIN` only; see [`SOLO_READS`]): the worker
/// has one stream, which only reads or only writes, on one file (no
/// array): every slot's stream is 0 and its op is known.
#[inline(always)]
fn run_worker_at<E: Engine, const PLAIN: bool, const SOLO: u8>(
    engine: &mut E,
    mut streams: Vec<WorkerStream>,
    frames: Option<FrameWork<'_>>,
    bounds: &WorkerBounds<'_>,
    start_ns: u64,
    now: impl Fn() -> u64,
) -> std::io::Result<JobResult> {
    let cpu0 = thread_cpu_ns();
    let warm = if PLAIN { None } else { bounds.warm };
    // With a warm-up by bytes, nothing is measured until it is over.
    let mut measure_start = match warm {
        Some(_) => u64::MAX,
        None => start_ns + bounds.ramp.as_nanos() as u64,
    };
    let deadline = |from: u64| {
        bounds
            .time
            .map(|t| from.saturating_add(t.as_nanos() as u64))
            .unwrap_or(u64::MAX)
    };
    let mut end = deadline(measure_start);
    let mut warm_moved = 0u64;
    let interval_ns = (bounds.interval.as_nanos() as u64).max(1);
    let verify = if PLAIN { None } else { bounds.verify };

    let mut result_of: Vec<usize> = streams.iter().map(|s| s.index).collect();
    if let Some(fw) = &frames {
        result_of.push(fw.shared.stream);
    }
    let n_results = result_of.iter().map(|i| i + 1).max().unwrap_or(0);
    let mut tally = Tally {
        result: JobResult {
            streams: vec![StreamResult::default(); n_results],
            ..Default::default()
        },
        result_of,
        stream_done: vec![start_ns; n_results],
        last_done: start_ns,
        live_ops: 0,
        live_bytes: 0,
        continue_on_error: bounds.continue_on_error,
    };
    let block_slots: usize = streams.iter().map(WorkerStream::buffers).sum();
    let frame_slots = frames.map_or(0, |fw| fw.buffers() as usize);
    let mut slots: Vec<Slot> = Vec::with_capacity(block_slots + frame_slots);
    let mut batches = Batches::new();
    // One-at-a-time engines: slots pushed and not yet run, oldest first.
    // Each is stamped with its own submit time when its turn comes.
    let mut armed: Vec<u32> = Vec::new();
    let mut armed_fifo: VecDeque<u32> = VecDeque::new();

    // Arm every slot. Slots of different streams interleave so that a
    // one-at-a-time engine serves the streams in turn.
    let max_slots = streams.iter().map(|s| s.slots).max().unwrap_or(0);
    let counted = start_ns >= measure_start;
    // Ops issued during the ramp do not spend the budget, unless the
    // stream says they do: the budgets are put aside until the ramp ends,
    // so that the completion handler spends without asking which phase
    // it is in.
    let mut ramp_budgets: Vec<u64> = Vec::new();
    if !counted {
        for st in &mut streams {
            ramp_budgets.push(st.budget);
            if !st.ramp_spends {
                st.budget = UNBOUNDED;
            }
        }
    }
    // I/Os armed (a cut one counts once).
    let mut active = 0usize;
    // Cut I/Os, each with its pieces' buffers; and those to re-arm once a
    // reap is over.
    let mut groups: Vec<Group> = Vec::new();
    let mut regroup: Vec<u32> = Vec::new();
    for k in 0..max_slots {
        for (si, st) in streams.iter_mut().enumerate() {
            if k >= st.slots {
                continue;
            }
            let idx = slots.len() as u32;
            if !PLAIN && st.pieces > 1 {
                let pieces = st.pieces as usize;
                slots.resize(slots.len() + pieces, Slot::new(0, Op::Read, 0, 0, false, 0));
                let gi = groups.len() as u32;
                groups.push(Group::new(idx));
                let mut arm = Arm {
                    slots: &mut slots,
                    batches: &batches,
                    fifo: &mut armed_fifo,
                    counted,
                };
                if arm.group(engine, &mut groups[gi as usize], gi, si as u32, st) {
                    active += 1;
                }
                continue;
            }
            if let Some(req) = next_request::<SOLO>(st, idx, verify) {
                active += 1;
                let batch = batches.current();
                slots.push(Slot::new(
                    si as u32, req.op, req.offset, req.len, counted, batch,
                ));
                engine.push(req);
                if E::ONE_AT_A_TIME {
                    armed_fifo.push_back(idx);
                }
            }
        }
    }
    // The frame stream's buffers follow the block streams' slots.
    let frame_base = block_slots as u32;
    slots.resize(
        block_slots + frame_slots,
        Slot::new(0, Op::Read, 0, 0, false, 0),
    );
    let mut frames = frames.map(|fw| {
        let local = streams.len() as u32;
        FrameDriver::new(fw.shared, fw.thread, local, frame_base, start_ns)
    });
    let mut stopping = false;
    let mut backlog = match (verify, bounds.backlog) {
        (Some(v), Some(spec)) => {
            let max_len = streams.iter().map(|s| s.bs as usize).max().unwrap_or(0);
            Some(Backlog::new(spec, v, max_len)?)
        }
        _ => None,
    };

    loop {
        let mut ts = now();
        let mut wake = u64::MAX;
        if let Some(fd) = &mut frames {
            if ts >= end || bounds.stop.load(Ordering::Relaxed) {
                stopping = true;
            }
            let mut cx = Ctx {
                engine: &mut *engine,
                arm: Arm {
                    slots: &mut slots,
                    batches: &batches,
                    fifo: &mut armed_fifo,
                    counted: ts >= measure_start,
                },
                tally: &mut tally,
                clock: &now,
            };
            if let Next::WakeAt(at) = fd.advance(&mut cx, stopping) {
                wake = at;
            }
            stopping |= fd.stop_worker;
            publish(bounds, &tally);
            // The driver's steps take time (opens, checks, stamping): what
            // it pushed goes out now.
            ts = now();
        }
        if engine.in_flight() == 0 {
            if active == 0 && frames.as_ref().is_none_or(FrameDriver::finished) {
                break;
            }
            debug_assert_eq!(
                active, 0,
                "a block stream's slot is armed with nothing in flight"
            );
            // Only a paced frame stream has nothing in flight: it sleeps
            // until its next release, and looks at its bounds at least
            // once a second meanwhile.
            let until = wake.min(end).min(ts + MAX_WAIT_NS);
            std::thread::sleep(Duration::from_nanos(until.saturating_sub(ts)));
            continue;
        }
        if E::ONE_AT_A_TIME {
            if let Some(i) = armed_fifo.pop_front() {
                slots[i as usize].batch = Batches::stamped(ts);
            }
        } else {
            batches.submit(ts, &mut slots);
        }
        let bound = end.min(wake);
        // At most MAX_WAIT (one second): a Duration without a division.
        let left = bound.saturating_sub(ts);
        let timeout = if left > 0 && left < MAX_WAIT_NS {
            Duration::new(0, left as u32)
        } else {
            MAX_WAIT
        };
        engine.submit_and_wait(wait_nr(engine.in_flight()), timeout)?;
        let tc = now();
        if tc >= end || bounds.stop.load(Ordering::Relaxed) {
            stopping = true;
        }
        let measuring = tc >= measure_start;
        if measuring && !ramp_budgets.is_empty() {
            for (st, b) in streams.iter_mut().zip(ramp_budgets.drain(..)) {
                if !st.ramp_spends {
                    st.budget = b;
                }
            }
        }
        let interval = if measuring {
            ((tc - measure_start) / interval_ns) as usize
        } else {
            0
        };
        let at_ns = tc.saturating_sub(measure_start);
        let mut run = Run::EMPTY;
        engine.reap(|c| {
            let slot = &mut slots[c.buf as usize];
            if !PLAIN && slot.frame {
                let seen = Seen {
                    batches: &batches,
                    interval,
                    tc,
                };
                if let Some(fd) = &mut frames {
                    // A frame piece written in one stream: its blocks
                    // hold their new generation (frames are never in
                    // flight twice).
                    if let (Some(v), Op::Write, false) = (verify, slot.op, slot.len == 0) {
                        let whole = c.result == slot.len as i32;
                        let at = fd.verify_base() + slot.offset;
                        v.maps[fd.file() as usize].commit(at, slot.len, whole);
                    }
                    fd.complete(c, slot, &mut tally, seen);
                }
                return None;
            }
            if !PLAIN && slot.piece {
                // A piece of a cut I/O: the I/O completes with its last.
                let s = *slot;
                let g = &mut groups[s.group as usize];
                // Its first failed piece is the I/O's failure, at the
                // member and offset of that piece, as a plain I/O's is.
                if c.result != s.len as i32 {
                    if !g.failed {
                        g.failed = true;
                        tally.fail(&s, c.result, at_ns);
                    }
                    if !bounds.continue_on_error {
                        stopping = true;
                    }
                }
                g.left -= 1;
                if g.left > 0 {
                    return None;
                }
                if !g.failed && !s.counted {
                    warm_moved += u64::from(streams[s.stream as usize].bs);
                } else if !g.failed {
                    // Timed from the submit of its first piece.
                    let batch = slots[g.first as usize].batch;
                    let st = &mut streams[s.stream as usize];
                    if st.trace > 0 {
                        st.trace -= 1;
                        let lat = tc - batches.submitted_ns(batch);
                        tally.sample(
                            &Slot {
                                offset: g.offset,
                                ..s
                            },
                            lat,
                        );
                    }
                    let seen = Seen {
                        batches: &batches,
                        interval,
                        tc,
                    };
                    run.add(&mut tally, seen, s.stream, s.op, batch, st.bs);
                }
                if stopping {
                    active -= 1;
                } else {
                    regroup.push(s.group);
                }
                return None;
            }
            // One compare: anything but the whole length is a failure, a
            // negative errno or a short transfer (fewer bytes than asked,
            // as at the end of a file truncated under the run).
            if let Some(v) = verify {
                if slot.op == Op::Write {
                    let file = streams[slot.stream as usize].file;
                    let whole = c.result == slot.len as i32;
                    v.maps[file as usize].commit(slot.offset, slot.len, whole);
                    if let (Some(b), true) = (&mut backlog, whole) {
                        b.written(file, slot.offset, slot.len);
                    }
                }
            }
            if c.result != slot.len as i32 {
                tally.fail(slot, c.result, at_ns);
                if !bounds.continue_on_error {
                    stopping = true;
                }
            } else if !PLAIN && !slot.counted {
                warm_moved += u64::from(slot.len);
            } else if slot.counted {
                if !PLAIN && streams[slot.stream as usize].trace > 0 {
                    streams[slot.stream as usize].trace -= 1;
                    let lat = tc - batches.submitted_ns(slot.batch);
                    tally.sample(slot, lat);
                }
                // One stream of one op: every run is of that stream and op.
                let same_class =
                    SOLO != NOT_SOLO || (run.stream == slot.stream && run.op == slot.op);
                if run.batch == slot.batch && same_class {
                    run.n += 1;
                } else if same_class && run.n > 0 {
                    let seen = Seen {
                        batches: &batches,
                        interval,
                        tc,
                    };
                    run.next_batch(&mut tally, seen, slot.batch);
                } else {
                    // A reap's first completion starts the first run: no
                    // call then.
                    if run.n > 0 {
                        tally.record_apart(&run, &batches, interval, tc);
                    }
                    run = Run {
                        stream: slot.stream,
                        op: slot.op,
                        batch: slot.batch,
                        n: 1,
                        len: slot.len,
                        ..Run::EMPTY
                    };
                }
            }
            if stopping {
                active -= 1;
                return None;
            }
            let si = if SOLO != NOT_SOLO {
                0
            } else {
                slot.stream as usize
            };
            let next = next_request::<SOLO>(&mut streams[si], c.buf, verify);
            match next {
                Some(req) => {
                    if SOLO == NOT_SOLO {
                        slot.op = req.op;
                    }
                    slot.offset = req.offset;
                    slot.counted = measuring;
                    if E::ONE_AT_A_TIME {
                        armed.push(c.buf);
                    } else {
                        slot.batch = batches.current();
                    }
                }
                None => active -= 1,
            }
            next
        });
        tally.record(&run, &batches, interval, tc);
        if let (Some(w), u64::MAX) = (warm, measure_start) {
            // The warm-up's bytes are counted once, as they are moved.
            if let Some(at) = w.advance(std::mem::take(&mut warm_moved), tc) {
                measure_start = at;
                end = deadline(at);
            }
        }
        publish(bounds, &tally);
        if let Some(b) = &mut backlog {
            b.check_if_due();
        }
        // In the engine's order: the slots this reap re-armed come before
        // anything the frame driver pushes next.
        if E::ONE_AT_A_TIME {
            armed_fifo.extend(armed.drain(..));
        }
        // Then the cut I/Os whose last piece this reap saw, whole.
        if !PLAIN {
            for gi in regroup.drain(..) {
                let g = &mut groups[gi as usize];
                let si = slots[g.first as usize].stream;
                let mut arm = Arm {
                    slots: &mut slots,
                    batches: &batches,
                    fifo: &mut armed_fifo,
                    counted: measuring,
                };
                if !arm.group(engine, g, gi, si, &mut streams[si as usize]) {
                    active -= 1;
                }
            }
        }
    }
    debug_assert_eq!(engine.in_flight(), 0);
    let mut result = tally.result;
    result.elapsed_ns = tally.last_done.saturating_sub(measure_start);
    for (r, done) in result.streams.iter_mut().zip(tally.stream_done) {
        r.elapsed_ns = done.saturating_sub(measure_start);
    }
    result.first_done_ns = result.elapsed_ns;
    // A warm-up that never ended (a stop, a failure) measured nothing.
    result.measure_start_ns = if measure_start == u64::MAX {
        0
    } else {
        measure_start
    };
    result.interrupted = bounds.stop.load(Ordering::Relaxed);
    result.engine = engine.features();
    result.cpu.workers_ns = thread_cpu_ns() - cpu0;
    result.verify = backlog.map(|b| b.summary);
    Ok(result)
}

/// Publishes the worker's live totals for the progress display.
#[inline]
fn publish(bounds: &WorkerBounds<'_>, tally: &Tally) {
    bounds.live.ops.store(tally.live_ops, Ordering::Relaxed);
    bounds.live.bytes.store(tally.live_bytes, Ordering::Relaxed);
}

/// The error kind of a completion that did not move its whole length: the
/// errno of a failed I/O, or [`SHORT_TRANSFER`] for one that moved fewer
/// bytes (none at all included) without an errno.
#[cold]
fn failure_kind(result: i32) -> i32 {
    if result < 0 {
        -result
    } else {
        SHORT_TRANSFER
    }
}

/// The next request of `st` for slot `slot`, or `None` once its budget is
/// spent (during the ramp, a budget put aside is [`UNBOUNDED`]). With
/// `--verify`, a write's blocks are reserved in the generation map first:
/// an offset whose blocks a write already has in flight is drawn again.
/// `SOLO` other than [`NOT_SOLO`]: `st` only reads, or only writes, and
/// has no array map.
#[inline(always)]
fn next_request<const SOLO: u8>(
    st: &mut WorkerStream,
    slot: u32,
    verify: Option<&WriteVerify>,
) -> Option<Request> {
    let (op, offset) = next_op::<SOLO>(st, verify)?;
    let (file, offset) = match &st.map {
        _ if SOLO != NOT_SOLO => (st.file, offset),
        None => (st.file, offset),
        Some(m) => m.locate(offset),
    };
    Some(Request {
        file,
        op,
        offset,
        len: st.bs,
        buf: slot,
    })
}

/// The op and offset (in the stream's target, or its array) of the next
/// I/O of `st`, or `None` once its budget is spent; see [`next_request`].
#[inline(always)]
fn next_op<const SOLO: u8>(
    st: &mut WorkerStream,
    verify: Option<&WriteVerify>,
) -> Option<(Op, u64)> {
    if st.budget == 0 {
        return None;
    }
    st.budget -= 1;
    let op = match (SOLO, st.mix) {
        (SOLO_READS, _) | (_, Mix::Read) => Op::Read,
        (SOLO_WRITES, _) | (_, Mix::Write) => Op::Write,
        (_, mixed) => mixed.op(st.gen.roll_percent()),
    };
    let mut offset = st.gen.next_offset();
    if let (Some(v), Op::Write) = (verify, op) {
        offset = reserve(v, st, offset);
    }
    Some((op, offset))
}

/// Reserves the blocks of a write at `offset` (or at the next offsets the
/// stream draws, while a write of the same blocks is in flight).
#[cold]
fn reserve(v: &WriteVerify, st: &mut WorkerStream, mut offset: u64) -> u64 {
    let map = &v.maps[st.file as usize];
    // The job's checks leave each worker room for several times its
    // writes in flight: a free offset comes within a few draws.
    while !map.try_reserve(offset, st.bs) {
        std::hint::spin_loop();
        offset = st.gen.next_offset();
    }
    offset
}

/// How many completions to wait for: one in sixteen of those in flight,
/// so that a deep queue is reaped in batches, while the engine bounds how
/// long a finished I/O can wait to be seen. One in eight (4 at QD 32) had
/// the worker sleep once per 12 I/Os or so on zram, some 45% more context
/// switches per I/O than fio; at one in sixteen it sleeps a third as often,
/// and holds a finished I/O for less time (see bench/RESULTS.md).
#[inline]
fn wait_nr(in_flight: usize) -> usize {
    (in_flight / 16).max(1)
}

mod backlog;
mod batches;
mod frames;
mod split;
#[cfg(test)]
mod tests;
