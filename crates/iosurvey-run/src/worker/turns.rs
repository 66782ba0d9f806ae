//! The turns of a rate-capped worker (see `pace.rs`): a paced slot that
//! completes is parked instead of re-armed in the reap, at most its slots
//! in flight; the loop releases the parked slots whose turn has come
//! before each submit, and waits for the next turn otherwise. Latency is
//! timed from the submit, never from the turn: the wait for the schedule
//! is not in it.

use super::cycle::Worker;
use iosurvey_engine::Engine;
use std::sync::atomic::Ordering;

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
            // A time bound reached while waiting for the schedule: the
            // measured window is the whole time, not up to the last
            // completion (at 1 IOPS for 5 s, 5 I/Os in 5 s, not in 4).
            if !self.stopping && ts >= self.end && self.measure_start != u64::MAX {
                self.tally.last_done = self.tally.last_done.max(self.end);
                for done in &mut self.tally.stream_done {
                    *done = (*done).max(self.end);
                }
            }
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
            let sized = self.streams[self.slots[buf as usize].stream as usize]
                .sizes
                .is_some();
            let next = match sized {
                true => self.rearm::<E, true>(buf, measuring),
                false => self.rearm::<E, false>(buf, measuring),
            };
            if let Some(req) = next {
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
