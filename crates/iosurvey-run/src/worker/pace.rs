//! A rate cap on one worker (`run --rate-iops`, `--rate`): the schedule
//! its I/Os go out on, the n-th no sooner than the worker's start plus n
//! over its rate (fio's `rate_process=linear`), and its slots waiting for
//! their turn. Pure: the worker's loop moves it (see `turns.rs`).

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
