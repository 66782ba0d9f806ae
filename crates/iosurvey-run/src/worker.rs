//! The hot loop of one worker: keep every slot's I/O in flight, time each
//! one, and count it against the job's bounds. No allocation, no lock and no
//! syscall beyond the engine's own per batch.

use crate::result::JobResult;
use arm::Arm;
pub(crate) use backlog::BacklogSpec;
pub use clock::now_ns;
use clock::Clock;
pub(crate) use clock::RealClock;
use cycle::Worker;
pub(crate) use frames::FrameShared;
pub(crate) use frames::FrameWork;
pub(crate) use inputs::{LiveCounters, WarmUp, WorkerBounds, WorkerStream, UNBOUNDED};
use iosurvey_engine::Engine;
pub(crate) use pace::Pace;
pub(crate) use sizes::SizeDraw;
use slot::Slot;
use std::sync::atomic::Ordering;
use tally::{Run, Tally};

/// Runs one worker until its bounds are met, then drains its in-flight I/O
/// (see [`Worker::run`]). `start_ns` is when the shared barrier released
/// the workers.
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
    run_worker_on(engine, streams, frames, bounds, start_ns, &RealClock)
}

/// [`run_worker`] on `clock`: the tests give it a fake clock that the fake
/// engine moves by exact amounts.
fn run_worker_on<E: Engine, C: Clock>(
    engine: &mut E,
    streams: Vec<WorkerStream>,
    frames: Option<FrameWork<'_>>,
    bounds: &WorkerBounds<'_>,
    start_ns: u64,
    clock: &C,
) -> std::io::Result<JobResult> {
    Worker::new(engine, streams, frames, bounds, start_ns)?.run(engine, clock)
}

mod arm;
mod backlog;
mod batches;
mod clock;
mod complete;
mod cycle;
mod frames;
mod inputs;
mod pace;
#[cfg(test)]
mod pace_tests;
mod request;
mod sizes;
mod slot;
mod split;
mod tally;
#[cfg(test)]
mod tests;
mod turns;
mod wait;
