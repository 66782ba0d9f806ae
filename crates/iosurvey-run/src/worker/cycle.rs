//! One worker's run: its state, the arming of every slot, and the loop
//! that steps the frame stream, submits, waits, reaps (see `complete.rs`)
//! and re-arms until the worker's bounds are met and its I/O drained.

use super::arm::Arm;
use super::backlog::Backlog;
use super::batches::Batches;
use super::clock::{thread_cpu_ns, Clock};
use super::frames::FrameWork;
use super::frames::{Ctx, FrameDriver, Next};
use super::inputs::{WarmUp, WorkerBounds, WorkerStream, UNBOUNDED};
use super::pace::Pacer;
use super::request::next_request;
use super::slot::{Kind, Slot};
use super::split::Group;
use super::tally::{publish, Run, Tally};
use super::wait::WaitPolicy;
use crate::result::{JobResult, StreamResult};
use iosurvey_engine::verify::WriteVerify;
use iosurvey_engine::{Engine, Op};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Longest a worker with a frame stream waits in the engine before it
/// looks at its bounds and its stop flag again, when no I/O completes
/// (the waits of block streams have no bound, see `Worker::timeout`).
const MAX_WAIT: Duration = Duration::from_secs(1);
const MAX_WAIT_NS: u64 = MAX_WAIT.as_nanos() as u64;

/// One worker's state between reaps. One build serves every worker: the
/// builds specialised for a plain worker and for one stream of one op
/// showed no paired effect (bench/RESULTS.md, 2026-12-03).
pub(super) struct Worker<'w> {
    pub(super) bounds: &'w WorkerBounds<'w>,
    verify: Option<&'w WriteVerify>,
    warm: Option<&'w WarmUp>,
    pub(super) streams: Vec<WorkerStream>,
    /// One per engine buffer: the block streams', then the frame stream's.
    pub(super) slots: Vec<Slot>,
    /// Submit times. On a one-at-a-time engine each slot is stamped with
    /// its own when its turn comes ([`Engine::next_up`]).
    pub(super) batches: Batches,
    /// Cut I/Os, each with its pieces' buffers; and those to re-arm once
    /// a reap is over.
    pub(super) groups: Vec<Group>,
    pub(super) regroup: Vec<u32>,
    pub(super) tally: Tally,
    /// A run of the reap set aside for one of another class (a mixed
    /// stream's reads and writes complete interleaved): each change of op
    /// swaps the two instead of ending a run and recording a latency.
    /// Empty between reaps: kept here, not in the [`Reap`], it costs a
    /// reap one compare.
    pub(super) set_aside: Run,
    pub(super) frames: Option<FrameDriver<'w>>,
    pub(super) backlog: Option<Backlog<'w>>,
    /// I/Os armed (a cut one counts once).
    pub(super) active: usize,
    /// The bounds are met (or a failure stops the run): re-arm nothing.
    pub(super) stopping: bool,
    /// Bytes the warm-up moved in this reap, not yet added to its total.
    pub(super) warm_moved: u64,
    /// When the measured phase starts; `u64::MAX` until a warm-up by
    /// bytes is over.
    pub(super) measure_start: u64,
    pub(super) end: u64,
    /// Budgets put aside during the ramp (see [`Worker::set_ramp_budgets`]).
    pub(super) ramp_budgets: Vec<u64>,
    interval_ns: u64,
    /// The interval of the series the last measured reap fell in, and
    /// when it ends (0: to be worked out at the next measured reap): a
    /// reap within it costs one compare, not a division.
    interval: usize,
    interval_end: u64,
    cpu0: u64,
    /// How many completions to wait for (see `wait.rs`).
    wait: WaitPolicy,
    /// The schedule of a rate-capped worker (see `pace.rs`).
    pub(super) pacer: Option<Pacer>,
}

/// What every completion of one reap shares: when they were seen, the
/// interval of the series they fall in, whether they are measured, and
/// the run of completions being counted (and the worker's run set aside,
/// see `Worker::set_aside`).
pub(super) struct Reap {
    pub tc: u64,
    pub interval: usize,
    /// `tc` from the start of the measured phase (a failure's time).
    pub at_ns: u64,
    pub measuring: bool,
    pub run: Run,
}

/// When a phase started at `from` ends under `bounds`: never without a
/// time bound.
fn deadline(bounds: &WorkerBounds<'_>, from: u64) -> u64 {
    bounds
        .time
        .map(|t| from.saturating_add(t.as_nanos() as u64))
        .unwrap_or(u64::MAX)
}

impl<'w> Worker<'w> {
    /// Sets up the worker and arms every slot; `start_ns` is when the
    /// shared barrier released the workers.
    #[inline(always)]
    pub(super) fn new<E: Engine>(
        engine: &mut E,
        streams: Vec<WorkerStream>,
        frames: Option<FrameWork<'w>>,
        bounds: &'w WorkerBounds<'w>,
        start_ns: u64,
    ) -> std::io::Result<Self> {
        let cpu0 = thread_cpu_ns();
        let warm = bounds.warm;
        // With a warm-up by bytes, nothing is measured until it is over.
        let measure_start = match warm {
            Some(_) => u64::MAX,
            None => start_ns + bounds.ramp.as_nanos() as u64,
        };
        let block_slots: usize = streams.iter().map(WorkerStream::buffers).sum();
        let frame_slots = frames.map_or(0, |fw| fw.buffers() as usize);
        let mut w = Worker {
            bounds,
            verify: bounds.verify,
            warm,
            tally: Tally::new(&streams, frames.as_ref(), bounds, start_ns),
            set_aside: Run::EMPTY,
            streams,
            slots: Vec::with_capacity(block_slots + frame_slots),
            batches: Batches::new(),
            groups: Vec::new(),
            regroup: Vec::new(),
            frames: None,
            backlog: None,
            active: 0,
            stopping: false,
            warm_moved: 0,
            measure_start,
            end: deadline(bounds, measure_start),
            ramp_budgets: Vec::new(),
            interval_ns: (bounds.interval.as_nanos() as u64).max(1),
            interval: 0,
            interval_end: 0,
            cpu0,
            wait: WaitPolicy::new(),
            pacer: bounds
                .pace
                .map(|pace| Pacer::new(pace, start_ns, block_slots)),
        };
        let counted = start_ns >= measure_start;
        if !counted {
            w.set_ramp_budgets();
        }
        w.arm_all(engine, counted);
        // The frame stream's buffers follow the block streams' slots.
        w.slots.resize(
            block_slots + frame_slots,
            Slot::new(0, Op::Read, 0, 0, false, 0),
        );
        w.frames = frames.map(|fw| {
            let local = w.streams.len() as u32;
            FrameDriver::new(fw.shared, fw.thread, local, block_slots as u32, start_ns)
        });
        if let (Some(v), Some(spec)) = (w.verify(), bounds.backlog) {
            let max_len = w.streams.iter().map(|s| s.bs as usize).max().unwrap_or(0);
            w.backlog = Some(Backlog::new(spec, v, max_len)?);
        }
        Ok(w)
    }

    /// `--verify`'s generation maps.
    #[inline(always)]
    pub(super) fn verify(&self) -> Option<&'w WriteVerify> {
        self.verify
    }

    /// Ops issued during the ramp do not spend the budget, unless the
    /// stream says they do: the budgets are put aside until the ramp ends,
    /// so that the completion handler spends without asking which phase
    /// it is in.
    fn set_ramp_budgets(&mut self) {
        for st in &mut self.streams {
            self.ramp_budgets.push(st.budget);
            if !st.ramp_spends {
                st.budget = UNBOUNDED;
            }
        }
    }

    /// Arms every slot. Slots of different streams interleave so that a
    /// one-at-a-time engine serves the streams in turn.
    fn arm_all<E: Engine>(&mut self, engine: &mut E, counted: bool) {
        let max_slots = self.streams.iter().map(|s| s.slots).max().unwrap_or(0);
        for k in 0..max_slots {
            for si in 0..self.streams.len() {
                if k >= self.streams[si].slots {
                    continue;
                }
                if self.streams[si].pieces > 1 {
                    self.arm_group(engine, si, counted);
                } else {
                    self.arm_slot(engine, si, counted);
                }
            }
        }
    }

    /// Arms the next slot with the first I/O of stream `si`, if its budget
    /// has one.
    fn arm_slot<E: Engine>(&mut self, engine: &mut E, si: usize, counted: bool) {
        let idx = self.slots.len() as u32;
        let verify = self.verify();
        let sized = self.streams[si].sizes.is_some();
        let kind = match (verify, sized) {
            (Some(_), _) => Kind::Verified,
            (None, true) => Kind::Sized,
            (None, false) => Kind::Block,
        };
        // A paced slot waits for its turn (see `Worker::release`).
        if self.pacer.is_some() {
            self.slots.push(Slot {
                kind: Kind::Paced,
                ..Slot::new(si as u32, Op::Read, 0, self.streams[si].bs, counted, 0)
            });
            if let Some(p) = &mut self.pacer {
                p.parked.push(idx);
            }
            return;
        }
        let st = &mut self.streams[si];
        let next = match sized {
            true => next_request::<true>(st, idx, verify),
            false => next_request::<false>(st, idx, verify),
        };
        if let Some(req) = next {
            self.active += 1;
            let batch = self.batches.current();
            self.slots.push(Slot {
                kind,
                ..Slot::new(si as u32, req.op, req.offset, req.len, counted, batch)
            });
            engine.push(req);
        }
    }

    /// Takes buffers for one cut I/O of stream `si` (one per piece) and
    /// arms them with its first I/O.
    fn arm_group<E: Engine>(&mut self, engine: &mut E, si: usize, counted: bool) {
        let idx = self.slots.len() as u32;
        let pieces = self.streams[si].pieces as usize;
        self.slots.resize(
            self.slots.len() + pieces,
            Slot::new(0, Op::Read, 0, 0, false, 0),
        );
        let gi = self.groups.len() as u32;
        self.groups.push(Group::new(idx));
        let mut arm = Arm {
            slots: &mut self.slots,
            batches: &self.batches,
            counted,
        };
        let g = &mut self.groups[gi as usize];
        if arm.group(engine, g, gi, si as u32, &mut self.streams[si]) {
            self.active += 1;
        }
    }

    /// Runs the worker until its bounds are met, then drains its I/O.
    ///
    /// Each slot owns one buffer of the engine; a completion of a block
    /// stream re-arms its slot from inside the engine's reap. The I/Os of
    /// one submit batch share its submit time, those of one reap share
    /// their completion time, and the time and stop bounds are checked
    /// once per batch. A frame stream's slots are armed by its driver
    /// between reaps, and counted by the same tally.
    #[inline(always)]
    pub(super) fn run<E: Engine, C: Clock>(
        mut self,
        engine: &mut E,
        clock: &C,
    ) -> std::io::Result<JobResult> {
        loop {
            let (ts, mut wake) = self.step_frames(engine, clock);
            if self.pacer.is_some() {
                wake = wake.min(self.release(engine, ts));
            }
            if engine.in_flight() == 0 {
                if self.all_done() {
                    break;
                }
                debug_assert_eq!(
                    self.active, 0,
                    "a block stream's slot is armed with nothing in flight"
                );
                // Only a paced stream (frames, or blocks under a rate
                // cap) has nothing in flight: it sleeps until its next
                // release, and looks at its bounds at least once a second
                // meanwhile.
                clock.sleep_until(wake.min(self.end).min(ts + MAX_WAIT_NS));
                continue;
            }
            self.stamp_submit(engine, ts);
            let timeout = self.timeout(ts, wake);
            // A one-at-a-time engine runs one request per call, whatever
            // it is asked to wait for: it needs no wait policy.
            // A paced worker waits for one: each completion's slot may
            // be due again at once.
            let want = match E::ONE_AT_A_TIME || self.pacer.is_some() {
                true => 1,
                false => self.wait.want(engine.in_flight()),
            };
            engine.submit_and_wait(want, timeout)?;
            let mut reap = self.start_reap(clock.now());
            let mut found = 0;
            engine.reap(|c| {
                found += 1;
                self.complete::<E>(c, &mut reap)
            });
            if !E::ONE_AT_A_TIME {
                self.wait.reaped(found, reap.tc);
            }
            self.end_reap(engine, &reap);
        }
        Ok(self.finish(engine))
    }

    /// Lets the frame stream push what it can now; the time after (its
    /// steps take time: opens, checks, stamping), and when it wants to be
    /// called again (`u64::MAX`: whenever).
    #[inline(always)]
    fn step_frames<E: Engine, C: Clock>(&mut self, engine: &mut E, clock: &C) -> (u64, u64) {
        let ts = clock.now();
        let Some(fd) = &mut self.frames else {
            return (ts, u64::MAX);
        };
        if ts >= self.end || self.bounds.stop.load(Ordering::Relaxed) {
            self.stopping = true;
        }
        let mut cx = Ctx {
            engine,
            arm: Arm {
                slots: &mut self.slots,
                batches: &self.batches,
                counted: ts >= self.measure_start,
            },
            tally: &mut self.tally,
            clock,
        };
        let wake = match fd.advance(&mut cx, self.stopping) {
            Next::WakeAt(at) => at,
            _ => u64::MAX,
        };
        self.stopping |= fd.stop_worker;
        publish(self.bounds, &self.tally);
        (clock.now(), wake)
    }

    /// Nothing is armed and the frame stream (if any) is over.
    fn all_done(&self) -> bool {
        self.active == 0
            && !self.any_parked()
            && self.frames.as_ref().is_none_or(FrameDriver::finished)
    }

    /// Gives the batch about to go out its submit time `ts` (or, on a
    /// one-at-a-time engine, the slot whose turn it is).
    #[inline(always)]
    fn stamp_submit<E: Engine>(&mut self, engine: &E, ts: u64) {
        if E::ONE_AT_A_TIME {
            if let Some(i) = engine.next_up() {
                self.slots[i as usize].batch = Batches::stamped(ts);
            }
        } else {
            self.batches.submit(ts, &mut self.slots);
        }
    }

    /// How long a wait begun at `ts` may last: with no frame stream to
    /// wake, no bound ([`Duration::MAX`]), since the wait is for I/O in
    /// flight and the worker cannot leave before that I/O is back anyway;
    /// else to the end of the run or the frame stream's wake-up, and at
    /// most [`MAX_WAIT`].
    ///
    /// A bound costs a timer per wait that sleeps: on these virtual
    /// machines the timed waits took about a third of the workers' CPU
    /// samples (perf, 2 workers on zram), and without them CPU per I/O
    /// fell to 0.83-0.85 of fio's with 2 and 8 workers and with one under
    /// load (bench/RESULTS.md, 2026-12-03, issue 30). The time bound is
    /// then seen at the next completion, as the stop flag is.
    #[inline(always)]
    fn timeout(&self, ts: u64, wake: u64) -> Duration {
        if wake == u64::MAX {
            return Duration::MAX;
        }
        let left = self.end.min(wake).saturating_sub(ts);
        // At most MAX_WAIT (one second): a Duration without a division.
        if left > 0 && left < MAX_WAIT_NS {
            Duration::new(0, left as u32)
        } else {
            MAX_WAIT
        }
    }

    /// What the completions about to be reaped at `tc` share; the bounds
    /// are checked, and the ramp's budgets restored once it is over.
    #[inline(always)]
    fn start_reap(&mut self, tc: u64) -> Reap {
        if tc >= self.end || self.bounds.stop.load(Ordering::Relaxed) {
            self.stopping = true;
        }
        let measuring = tc >= self.measure_start;
        if measuring && !self.ramp_budgets.is_empty() {
            self.restore_budgets();
        }
        let interval = if measuring {
            if tc >= self.interval_end {
                self.next_interval(tc);
            }
            self.interval
        } else {
            0
        };
        Reap {
            tc,
            interval,
            at_ns: tc.saturating_sub(self.measure_start),
            measuring,
            run: Run::EMPTY,
        }
    }

    /// A measured reap at `tc` is past the interval the last one fell in:
    /// the interval it falls in, and when that ends.
    #[cold]
    fn next_interval(&mut self, tc: u64) {
        let i = (tc - self.measure_start) / self.interval_ns;
        // What completed since the last boundary is all in the interval
        // the last reap fell in.
        if let Some(slot) = self.bounds.intervals {
            slot.cut(&self.tally.result, self.interval, i);
        }
        self.interval = i as usize;
        self.interval_end = self
            .measure_start
            .saturating_add((i + 1).saturating_mul(self.interval_ns));
        // The classes as of the boundary: this reap is not counted yet.
        if let Some(slot) = self.bounds.detail {
            slot.publish(&self.tally.result, i);
        }
    }

    /// The ramp is over: the budgets put aside come back.
    #[cold]
    pub(super) fn restore_budgets(&mut self) {
        for (st, b) in self.streams.iter_mut().zip(self.ramp_budgets.drain(..)) {
            if !st.ramp_spends {
                st.budget = b;
            }
        }
    }

    /// After a reap: records its last runs, ends a warm-up whose bytes are
    /// moved, publishes the live totals, runs a backlog check when due,
    /// and re-arms the cut I/Os it finished.
    #[inline(always)]
    fn end_reap<E: Engine>(&mut self, engine: &mut E, reap: &Reap) {
        self.tally
            .record(&reap.run, &self.batches, reap.interval, reap.tc);
        if self.set_aside.n > 0 {
            let other = std::mem::replace(&mut self.set_aside, Run::EMPTY);
            self.tally
                .record_apart(&other, &self.batches, reap.interval, reap.tc);
        }
        self.advance_warm_up(reap.tc);
        publish(self.bounds, &self.tally);
        if let Some(b) = &mut self.backlog {
            b.check_if_due();
        }
        // The cut I/Os whose last piece this reap saw, whole.
        if !self.regroup.is_empty() {
            self.rearm_groups(engine, reap.measuring);
        }
    }

    /// Adds this reap's warm-up bytes (counted once, as they are moved);
    /// once the warm-up is over, by this worker's count or another's, the
    /// measured phase starts where it ended.
    fn advance_warm_up(&mut self, tc: u64) {
        if let (Some(w), u64::MAX) = (self.warm, self.measure_start) {
            if let Some(at) = w.advance(std::mem::take(&mut self.warm_moved), tc) {
                self.measure_start = at;
                self.interval_end = 0;
                self.end = deadline(self.bounds, at);
            }
        }
    }

    /// Re-arms the cut I/Os whose last piece the reap saw.
    #[inline(never)]
    fn rearm_groups<E: Engine>(&mut self, engine: &mut E, measuring: bool) {
        for gi in self.regroup.drain(..) {
            let g = &mut self.groups[gi as usize];
            let si = self.slots[g.first as usize].stream;
            let mut arm = Arm {
                slots: &mut self.slots,
                batches: &self.batches,
                counted: measuring,
            };
            if !arm.group(engine, g, gi, si, &mut self.streams[si as usize]) {
                self.active -= 1;
            }
        }
    }

    /// The worker's result once its I/O is drained.
    fn finish<E: Engine>(self, engine: &E) -> JobResult {
        debug_assert_eq!(engine.in_flight(), 0);
        let measure_start = self.measure_start;
        if let Some(slot) = self.bounds.intervals {
            slot.close(&self.tally.result, self.interval);
        }
        let mut result = self.tally.result;
        result.elapsed_ns = self.tally.last_done.saturating_sub(measure_start);
        for (r, done) in result.streams.iter_mut().zip(self.tally.stream_done) {
            r.elapsed_ns = done.saturating_sub(measure_start);
        }
        // A split's counts by size, kept by the stream's index in the job.
        for st in self.streams {
            if let (Some(sizes), Some(r)) = (st.sizes, result.streams.get_mut(st.index)) {
                r.sizes = sizes.ops;
            }
        }
        result.first_done_ns = result.elapsed_ns;
        // A warm-up that never ended (a stop, a failure) measured nothing.
        result.measure_start_ns = if measure_start == u64::MAX {
            0
        } else {
            measure_start
        };
        result.interrupted = self.bounds.stop.load(Ordering::Relaxed);
        result.engine = engine.features();
        result.cpu.workers_ns = thread_cpu_ns() - self.cpu0;
        result.verify = self.backlog.map(|b| b.summary);
        result
    }
}

impl Tally {
    /// An empty tally for a worker's block streams and frame stream.
    fn new(
        streams: &[WorkerStream],
        frames: Option<&FrameWork<'_>>,
        bounds: &WorkerBounds<'_>,
        start_ns: u64,
    ) -> Self {
        let mut result_of: Vec<usize> = streams.iter().map(|s| s.index).collect();
        if let Some(fw) = frames {
            result_of.push(fw.shared.stream);
        }
        let n_results = result_of.iter().map(|i| i + 1).max().unwrap_or(0);
        Tally {
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
        }
    }
}
