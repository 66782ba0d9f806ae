//! The run's clock: monotonic nanoseconds, read by the runner, the
//! workers and the verify pass alike.

/// Monotonic nanoseconds (the clock of [`crate::JobResult::measure_start_ns`]).
#[inline]
pub fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}
