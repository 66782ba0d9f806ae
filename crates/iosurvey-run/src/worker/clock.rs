//! The worker's time: monotonic nanoseconds to read, and a wait until a
//! given instant. Production reads the real clock; tests give a fake one
//! that only moves when the fake engine or a wait moves it, so that
//! latencies, intervals and frame pacing are checked to the nanosecond.

#[cfg(test)]
use std::cell::Cell;
#[cfg(test)]
use std::rc::Rc;
use std::time::Duration;

/// A monotonic clock in nanoseconds, and a way to let time pass on it.
pub(crate) trait Clock {
    /// Now, in nanoseconds on this clock.
    fn now(&self) -> u64;
    /// Returns at `t` or later (at once when `t` has passed).
    fn sleep_until(&self, t: u64);
}

/// The system's monotonic clock (the clock of
/// [`crate::JobResult::measure_start_ns`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct RealClock;

impl Clock for RealClock {
    #[inline]
    fn now(&self) -> u64 {
        now_ns()
    }

    fn sleep_until(&self, t: u64) {
        let now = now_ns();
        if t > now {
            std::thread::sleep(Duration::from_nanos(t - now));
        }
    }
}

/// A clock that stands still until it is moved: by the fake engine, which
/// adds its delay to it at each submission, or by a wait, which moves it
/// to the instant waited for. Shared with the engine through the `Rc`.
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct FakeClock(pub Rc<Cell<u64>>);

#[cfg(test)]
impl FakeClock {
    /// A fake clock that reads `t` until moved.
    pub(crate) fn at(t: u64) -> Self {
        FakeClock(Rc::new(Cell::new(t)))
    }
}

#[cfg(test)]
impl Clock for FakeClock {
    fn now(&self) -> u64 {
        self.0.get()
    }

    fn sleep_until(&self, t: u64) {
        self.0.set(self.0.get().max(t));
    }
}

/// Monotonic nanoseconds: one clock for the runner, the workers and the
/// verify pass (crate::clock, a leaf they all read).
pub use crate::clock::now_ns;

/// CPU time of the calling thread, in nanoseconds.
pub(crate) fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}
