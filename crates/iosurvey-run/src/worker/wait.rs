//! The wait policy: how many completions a worker waits for before its
//! next reap. Pure: its inputs are the I/Os in flight, what the last reap
//! found and when (the worker's clock), so that it is tested exactly on
//! the fake clock.
//!
//! Chosen by measurement (bench/workers.sh, bench/RESULTS.md 2026-12-03,
//! issue 30): the worker's waits have no timer (see `Worker::timeout`),
//! so the kernel's batch window no longer bounds how long a wait for
//! several holds the first; the policy bounds it instead, by waiting for
//! several only when the last reap's rate has them arrive within
//! [`WINDOW_NS`]. On zram (completions every few microseconds from
//! io_uring's worker thread) that is 2 at QD 32, as the earlier fixed one
//! in sixteen; on a disk it is 1, and no finished I/O waits for another.

use iosurvey_engine::uring::REAP_WINDOW_US;

/// How long a wait for several may expect to hold the first: the batch
/// window the timed waits had the kernel enforce.
pub(crate) const WINDOW_NS: u64 = REAP_WINDOW_US as u64 * 1000;

/// Waits are for at most one in `DIVISOR` of the I/Os in flight, so that a
/// deep queue is reaped in batches.
const DIVISOR: usize = 16;

/// How many completions a worker waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WaitPolicy {
    /// When the last reap was (`None`: no reap yet).
    last_tc: Option<u64>,
    /// How many completions the last reap's rate brings in
    /// [`WINDOW_NS`].
    per_window: u64,
}

impl WaitPolicy {
    /// Before any reap: one completion at a time.
    pub(crate) const fn new() -> Self {
        WaitPolicy {
            last_tc: None,
            per_window: 1,
        }
    }

    /// How many completions to wait for with `in_flight` I/Os out: one in
    /// [`DIVISOR`] of them, at most as many as the last reap's rate brings
    /// in [`WINDOW_NS`], and at least one.
    #[inline(always)]
    pub(crate) fn want(&self, in_flight: usize) -> usize {
        let cap = usize::try_from(self.per_window).unwrap_or(usize::MAX);
        (in_flight / DIVISOR).min(cap).max(1)
    }

    /// Records a reap at `tc` that found `found` completions: they came
    /// in the time since the reap before.
    #[inline(always)]
    pub(crate) fn reaped(&mut self, found: usize, tc: u64) {
        if let Some(last) = self.last_tc {
            let dt = tc.saturating_sub(last).max(1);
            self.per_window = (found as u64).saturating_mul(WINDOW_NS) / dt;
        }
        self.last_tc = Some(tc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_any_reap_a_worker_waits_for_one() {
        let p = WaitPolicy::new();
        assert_eq!(p.want(32), 1);
        assert_eq!(p.want(1), 1);
    }

    #[test]
    fn fast_completions_are_waited_for_in_batches_of_one_in_sixteen() {
        let mut p = WaitPolicy::new();
        p.reaped(4, 1_000_000);
        // 8 completions in 10 µs: 8 in the window.
        p.reaped(8, 1_010_000);
        assert_eq!(p.want(32), 2);
        assert_eq!(p.want(64), 4);
        assert_eq!(p.want(256), 8, "capped by the rate");
        assert_eq!(p.want(8), 1);
    }

    #[test]
    fn a_batch_is_no_larger_than_the_window_brings_at_the_last_rate() {
        let mut p = WaitPolicy::new();
        p.reaped(1, 0);
        // 3 completions in 10 µs: 3 in the window.
        p.reaped(3, WINDOW_NS);
        assert_eq!(p.want(64), 3);
        // 3 in 15 µs: 2 in the window (rounded down).
        p.reaped(3, WINDOW_NS + 15_000);
        assert_eq!(p.want(64), 2);
        // 1 in 10,001 ns: fewer than one in the window: one at a time.
        p.reaped(1, WINDOW_NS + 15_000 + WINDOW_NS + 1);
        assert_eq!(p.want(64), 1);
    }

    #[test]
    fn slow_completions_are_waited_for_one_at_a_time() {
        let mut p = WaitPolicy::new();
        p.reaped(1, 0);
        // A disk: 32 completions in 8 ms.
        p.reaped(32, 8_000_000);
        assert_eq!(p.want(32), 1);
        assert_eq!(p.want(2048), 1);
    }

    #[test]
    fn a_reap_that_found_nothing_waits_for_one() {
        let mut p = WaitPolicy::new();
        p.reaped(1, 0);
        p.reaped(32, 1_000);
        assert_eq!(p.want(64), 4);
        p.reaped(0, 2_000);
        assert_eq!(p.want(64), 1);
    }

    #[test]
    fn reaps_at_the_same_instant_count_as_one_nanosecond_apart() {
        // The fake clock stands still: the rate is as high as it gets.
        let mut p = WaitPolicy::new();
        p.reaped(2, 500);
        p.reaped(2, 500);
        assert_eq!(p.want(64), 4);
    }
}
