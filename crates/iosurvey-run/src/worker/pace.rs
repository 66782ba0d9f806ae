//! A rate cap on one worker (`run --rate-iops`, `--rate`): its I/Os go
//! out on a schedule, the n-th no sooner than the worker's start plus n
//! over its rate (fio's `rate_process=linear`), and at most its slots in
//! flight. A paced slot that completes is parked instead of re-armed in
//! the reap; the loop releases parked slots whose turn has come before
//! each submit, and waits for the next turn otherwise. Latency is timed
//! from the submit, never from the turn: the wait for the schedule is not
//! in it.

use super::cycle::Worker;
use iosurvey_engine::Engine;
use std::sync::atomic::Ordering;

/// One worker's share of the cap: `num / den` I/Os (or bytes) per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pace {
    pub num: u64,
    pub den: u64,
    /// The cap counts bytes (`--rate`), not I/Os.
    pub bytes: bool,
}

/// The schedule of one worker, and its slots waiting for their turn.
pub(super) struct Pacer {
    pace: Pace,
    start: u64,
    /// I/Os (or bytes) issued so far.
    issued: u64,
    /// When the next may go out.
    next_due: u64,
    /// Slots waiting for their turn, none of them in flight.
    pub parked: Vec<u32>,
}

impl Pacer {
    /// A schedule at `pace` from `start` (ns); `slots` slots to park.
    pub(super) fn new(pace: Pace, start: u64, slots: usize) -> Self {
        Pacer {
            pace,
            start,
            issued: 0,
            next_due: start,
            parked: Vec::with_capacity(slots),
        }
    }

    /// When the I/O (or byte) numbered `n` may go out: start + n / rate,
    /// exact in 128 bits.
    pub(super) fn due(&self, n: u64) -> u64 {
        let Pace { num, den, .. } = self.pace;
        let ns = u128::from(n) * 1_000_000_000 * u128::from(den) / u128::from(num.max(1));
        self.start
            .saturating_add(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// An I/O of `len` bytes went out: the next one's turn.
    pub(super) fn issued(&mut self, len: u32) {
        self.issued += if self.pace.bytes { u64::from(len) } else { 1 };
        self.next_due = self.due(self.issued);
    }

    /// Whether the next I/O's turn has come at `t`.
    pub(super) fn ready(&self, t: u64) -> bool {
        t >= self.next_due
    }

    pub(super) fn next_due(&self) -> u64 {
        self.next_due
    }
}

impl Worker<'_> {
    /// Releases the parked slots whose turn has come by `ts`, each with its
    /// stream's next I/O; when the next parked slot may go (`u64::MAX`:
    /// none is parked). At the end of the run the parked slots are let go.
    #[inline(never)]
    pub(super) fn release<E: Engine>(&mut self, engine: &mut E, ts: u64) -> u64 {
        let Some(mut p) = self.pacer.take() else {
            return u64::MAX;
        };
        if ts >= self.end || self.bounds.stop.load(Ordering::Relaxed) {
            self.stopping = true;
        }
        if self.stopping {
            p.parked.clear();
        }
        let measuring = ts >= self.measure_start;
        if measuring && !self.ramp_budgets.is_empty() {
            self.restore_budgets();
        }
        while p.ready(ts) {
            let Some(buf) = p.parked.pop() else {
                break;
            };
            // Armed again; a spent budget lets it go (rearm counts it out).
            self.active += 1;
            if let Some(req) = self.rearm::<E>(buf, measuring) {
                p.issued(req.len);
                engine.push(req);
            }
        }
        let wake = match p.parked.is_empty() {
            true => u64::MAX,
            false => p.next_due(),
        };
        self.pacer = Some(p);
        wake
    }

    /// A paced slot's I/O completed: it waits for its next turn.
    #[inline(always)]
    pub(super) fn park(&mut self, buf: u32) {
        self.active -= 1;
        if let Some(p) = &mut self.pacer {
            p.parked.push(buf);
        }
    }

    /// Whether a slot waits for its turn.
    pub(super) fn any_parked(&self) -> bool {
        self.pacer.as_ref().is_some_and(|p| !p.parked.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_is_start_plus_n_over_the_rate() {
        // 1000 IOPS in all over 3 workers: one every 3 ms on each.
        let mut p = Pacer::new(
            Pace {
                num: 1000,
                den: 3,
                bytes: false,
            },
            500,
            4,
        );
        assert!(p.ready(500) && !p.ready(499));
        p.issued(4096);
        assert_eq!(p.next_due(), 500 + 3_000_000);
        assert_eq!(p.due(1000), 500 + 3_000_000_000);
        // By bytes: 1 MB/s, a 4 KiB I/O gives the next one 4096 us later.
        let mut b = Pacer::new(
            Pace {
                num: 1_000_000,
                den: 1,
                bytes: true,
            },
            0,
            1,
        );
        b.issued(4096);
        assert_eq!(b.next_due(), 4_096_000);
    }
}
