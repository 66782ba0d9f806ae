//! The hot loop of one worker: keep every slot's I/O in flight, time each
//! one, and count it against the job's bounds. No allocation, no lock and no
//! syscall beyond the engine's own per batch.

use crate::result::{IoFailure, JobResult, StreamResult};
use iosurvey_engine::{Completion, Engine, Op, Request};
use iosurvey_stats::SHORT_TRANSFER;
use iosurvey_workload::{pattern::OffsetGen, ArrayMap, Mix};
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
    /// Ops left to issue in the measured phase; `None` is unbounded.
    pub budget: Option<u64>,
    /// The ramp's ops spend the budget too: a stream bounded by one pass
    /// that does not wrap (`parallel` without `--loop`) ends at the end of
    /// its area, ramp or not.
    pub ramp_spends: bool,
    /// Maps the stream's offsets onto the members of a virtual array.
    pub map: Option<ArrayMap>,
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
}

#[derive(Clone, Copy)]
struct Slot {
    stream: u32,
    req: Request,
    submitted_ns: u64,
    /// Issued in the measured phase (after the ramp): only these are
    /// counted, and only these spend the byte budget.
    counted: bool,
}

/// Monotonic nanoseconds.
#[inline]
pub(crate) fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

pub(crate) fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Runs one worker until its bounds are met, then drains its in-flight I/O.
/// `start_ns` is when the shared barrier released the workers.
pub(crate) fn run_worker<E: Engine>(
    engine: &mut E,
    mut streams: Vec<WorkerStream>,
    bounds: &WorkerBounds<'_>,
    start_ns: u64,
) -> std::io::Result<JobResult> {
    let cpu0 = thread_cpu_ns();
    let measure_start = start_ns + bounds.ramp.as_nanos() as u64;
    let end = bounds
        .time
        .map(|t| measure_start + t.as_nanos() as u64)
        .unwrap_or(u64::MAX);
    let interval_ns = (bounds.interval.as_nanos() as u64).max(1);

    let n_results = streams.iter().map(|s| s.index + 1).max().unwrap_or(0);
    let mut result = JobResult {
        streams: vec![StreamResult::default(); n_results],
        ..Default::default()
    };
    // Where each local stream's results go.
    let result_of: Vec<usize> = streams.iter().map(|s| s.index).collect();
    let total_slots: usize = streams.iter().map(|s| s.slots as usize).sum();
    let mut slots: Vec<Slot> = Vec::with_capacity(total_slots);
    let mut ready: VecDeque<u32> = VecDeque::with_capacity(total_slots);
    let mut completions: Vec<Completion> = Vec::with_capacity(total_slots);

    // Arm every slot. Slots of different streams interleave so that a
    // one-at-a-time engine serves the streams in turn.
    let max_slots = streams.iter().map(|s| s.slots).max().unwrap_or(0);
    for k in 0..max_slots {
        for (si, st) in streams.iter_mut().enumerate() {
            if k >= st.slots {
                continue;
            }
            let idx = slots.len() as u32;
            let counted = start_ns >= measure_start;
            let req = next_request(st, idx, counted);
            if let Some(req) = req {
                slots.push(Slot {
                    stream: si as u32,
                    req,
                    submitted_ns: 0,
                    counted,
                });
                ready.push_back(idx);
            }
        }
    }
    let mut active = ready.len();
    let mut stopping = false;
    let mut last_done = start_ns;
    let mut stream_done = vec![start_ns; n_results];
    let (mut live_ops, mut live_bytes) = (0u64, 0u64);

    while active > 0 {
        let ts = now_ns();
        if E::ONE_AT_A_TIME {
            if let Some(i) = ready.pop_front() {
                let s = &mut slots[i as usize];
                s.submitted_ns = ts;
                engine.push(s.req);
            }
        } else {
            for &i in &ready {
                let s = &mut slots[i as usize];
                s.submitted_ns = ts;
                engine.push(s.req);
            }
            ready.clear();
        }
        engine.submit_and_wait(wait_nr(engine.in_flight()))?;
        let tc = now_ns();
        engine.reap(|c| completions.push(c));
        if tc >= end || bounds.stop.load(Ordering::Relaxed) {
            stopping = true;
        }
        let measuring = tc >= measure_start;
        let interval = if measuring {
            ((tc - measure_start) / interval_ns) as usize
        } else {
            0
        };
        for c in completions.drain(..) {
            let slot = &mut slots[c.tag as usize];
            let job_stream = result_of[slot.stream as usize];
            let stats = result.streams[job_stream].class_mut(slot.req.op);
            // One compare: anything but the whole length is a failure, a
            // negative errno or a short transfer (fewer bytes than asked,
            // as at the end of a file truncated under the run).
            if c.result != slot.req.len as i32 {
                let errno = failure_kind(c.result);
                if slot.counted {
                    stats.record_error(errno);
                }
                if result.first_failure.is_none() {
                    result.first_failure = Some(IoFailure {
                        stream: job_stream,
                        op: slot.req.op,
                        offset: slot.req.offset,
                        errno,
                        at_ns: tc.saturating_sub(measure_start),
                    });
                }
                if !bounds.continue_on_error {
                    stopping = true;
                }
            } else if slot.counted {
                let lat = tc - slot.submitted_ns;
                stats.record(interval, c.result as u64, lat);
                live_ops += 1;
                live_bytes += c.result as u64;
                last_done = tc;
                stream_done[job_stream] = tc;
            }
            let next = if stopping {
                None
            } else {
                next_request(&mut streams[slot.stream as usize], c.tag as u32, measuring)
            };
            match next {
                Some(req) => {
                    slot.req = req;
                    slot.counted = measuring;
                    ready.push_back(c.tag as u32);
                }
                None => active -= 1,
            }
        }
        bounds.live.ops.store(live_ops, Ordering::Relaxed);
        bounds.live.bytes.store(live_bytes, Ordering::Relaxed);
    }
    debug_assert_eq!(engine.in_flight(), 0);
    result.elapsed_ns = last_done.saturating_sub(measure_start);
    for (r, done) in result.streams.iter_mut().zip(stream_done) {
        r.elapsed_ns = done.saturating_sub(measure_start);
    }
    result.first_done_ns = result.elapsed_ns;
    result.interrupted = bounds.stop.load(Ordering::Relaxed);
    result.engine = engine.features();
    result.cpu.workers_ns = thread_cpu_ns() - cpu0;
    Ok(result)
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
/// spent. Ops issued during the ramp do not count against the budget,
/// unless the stream says they do.
#[inline]
fn next_request(st: &mut WorkerStream, slot: u32, measuring: bool) -> Option<Request> {
    if measuring || st.ramp_spends {
        if let Some(b) = &mut st.budget {
            if *b == 0 {
                return None;
            }
            *b -= 1;
        }
    }
    let op = match st.mix {
        Mix::Read => Op::Read,
        Mix::Write => Op::Write,
        mixed => mixed.op(st.gen.roll_percent()),
    };
    let offset = st.gen.next_offset();
    let (file, offset) = match &st.map {
        None => (st.file, offset),
        Some(m) => m.locate(offset),
    };
    Some(Request {
        file,
        op,
        offset,
        len: st.bs,
        buf: slot,
        tag: u64::from(slot),
    })
}

/// How many completions to wait for: one in eight of those in flight, so
/// that a deep queue is reaped in batches (fewer wake-ups, less CPU per I/O),
/// while the engine bounds how long a finished I/O can wait to be seen.
#[inline]
fn wait_nr(in_flight: usize) -> usize {
    (in_flight / 8).max(1)
}

#[cfg(test)]
mod tests;
