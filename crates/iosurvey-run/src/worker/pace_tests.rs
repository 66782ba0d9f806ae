//! Tests of rate-capped workers on the fake engine and the fake clock:
//! the schedule is kept to the nanosecond, latency leaves out the wait
//! for the schedule, and a device slower than the cap sets the pace.

use super::clock::FakeClock;
use super::*;
use crate::fake_engine::FakeEngine;
use iosurvey_engine::Op;
use iosurvey_workload::pattern::{Area, OffsetGen};
use iosurvey_workload::{Mix, Pattern};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn stream(budget: u64, slots: u32) -> WorkerStream {
    let area = Area {
        start: 0,
        len: 1 << 20,
    };
    WorkerStream {
        index: 0,
        file: 0,
        mix: Mix::Read,
        bs: 4096,
        slots,
        gen: OffsetGen::new(Pattern::Random, 4096, area, Vec::new(), 1),
        budget,
        ramp_spends: false,
        map: None,
        pieces: 1,
        trace: 0,
        sizes: None,
    }
}

/// Runs `st` at `pace` on a fake engine whose every submission takes
/// `delay`, on a fake clock, bounded by `time` if given.
fn paced(st: WorkerStream, pace: Pace, delay: Duration, time: Option<Duration>) -> JobResult {
    paced_on(&mut FakeEngine::new(), st, pace, delay, time)
}

/// [`paced`] on engine `e`, which keeps what was issued.
fn paced_on(
    e: &mut FakeEngine,
    st: WorkerStream,
    pace: Pace,
    delay: Duration,
    time: Option<Duration>,
) -> JobResult {
    let clock = Rc::new(Cell::new(1_000_000_000));
    e.delay = delay;
    e.clock = Some(clock.clone());
    let stop = AtomicBool::new(false);
    let live = LiveCounters::default();
    let bounds = WorkerBounds {
        ramp: Duration::ZERO,
        time,
        interval: Duration::from_secs(1),
        continue_on_error: false,
        stop: &stop,
        live: &live,
        detail: None,
        verify: None,
        backlog: None,
        warm: None,
        pace: Some(pace),
        intervals: None,
    };
    run_worker_on(e, vec![st], None, &bounds, clock.get(), &FakeClock(clock)).unwrap()
}

const IOPS_1000: Pace = Pace {
    num: 1000,
    den: 1,
    bytes: false,
};

#[test]
fn a_paced_worker_issues_on_schedule_and_times_the_device_alone() {
    // 1000 IOPS, a device that takes 100 us: I/O n goes out at n ms and
    // is back 100 us later, whatever the depth.
    for qd in [1, 4] {
        let r = paced(stream(50, qd), IOPS_1000, Duration::from_micros(100), None);
        let lat = &r.total(Op::Read).latency;
        assert_eq!(lat.count(), 50);
        assert_eq!((lat.min(), lat.max()), (100_000, 100_000), "qd {qd}");
        // The last went out at 49 ms.
        assert_eq!(r.elapsed_ns, 49_000_000 + 100_000, "qd {qd}");
    }
}

#[test]
fn a_time_bound_gives_the_rate_times_the_time() {
    // 1000 IOPS in all over 4 workers: 250 each, for 2 s.
    let quarter = Pace {
        num: 1000,
        den: 4,
        bytes: false,
    };
    let r = paced(
        stream(UNBOUNDED, 8),
        quarter,
        Duration::from_micros(50),
        Some(Duration::from_secs(2)),
    );
    assert_eq!(r.total(Op::Read).ops, 500);
    // The window is the time given, not up to the last completion (at
    // 1996.05 ms): 250 IOPS, not a little more.
    assert_eq!(r.elapsed_ns, 2_000_000_000);
    assert_eq!(r.streams[0].elapsed_ns, 2_000_000_000);
}

#[test]
fn a_byte_cap_paces_by_the_bytes_moved() {
    // 4096000 bytes/s: one 4 KiB I/O per ms.
    let bytes = Pace {
        num: 4_096_000,
        den: 1,
        bytes: true,
    };
    let r = paced(stream(20, 2), bytes, Duration::from_micros(10), None);
    assert_eq!(r.elapsed_ns, 19_000_000 + 10_000);
}

#[test]
fn a_device_slower_than_the_cap_sets_the_pace_and_its_latency_stays_its_own() {
    // 3 ms per I/O at QD 1 against a schedule of one per ms: the schedule
    // falls behind, each I/O goes out as the last comes back, and its
    // latency is the device's 3 ms, not the time it waited for its turn.
    let r = paced(stream(20, 1), IOPS_1000, Duration::from_millis(3), None);
    let lat = &r.total(Op::Read).latency;
    assert_eq!((lat.min(), lat.max()), (3_000_000, 3_000_000));
    assert_eq!(r.elapsed_ns, 20 * 3_000_000);
}

#[test]
fn a_paced_split_stream_counts_each_size_and_paces_by_its_bytes() {
    // 1 KiB and 4 KiB reads, half each, 64 KiB in all, at 4096000 bytes/s:
    // each I/O goes out when the bytes before it are due.
    let split = iosurvey_model::BsSplit {
        shares: vec![
            iosurvey_model::SizeShare::new(1024, 50),
            iosurvey_model::SizeShare::new(4096, 50),
        ],
    };
    let area = Area {
        start: 0,
        len: 1 << 20,
    };
    let st = WorkerStream {
        gen: OffsetGen::new(Pattern::Random, 1024, area, Vec::new(), 1),
        budget: 64 << 10,
        sizes: Some(Box::new(super::sizes::SizeDraw::new(&split))),
        ..stream(0, 2)
    };
    let bytes = Pace {
        num: 4_096_000,
        den: 1,
        bytes: true,
    };
    let mut e = FakeEngine::new();
    let r = paced_on(&mut e, st, bytes, Duration::from_micros(10), None);
    let lens: Vec<u64> = e.issued.iter().map(|q| u64::from(q.len)).collect();
    let small = lens.iter().filter(|&&l| l == 1024).count() as u64;
    assert!(small > 0 && small < lens.len() as u64, "both sizes drawn");
    assert_eq!(r.streams[0].sizes, [small, lens.len() as u64 - small]);
    let moved: u64 = lens.iter().sum();
    assert_eq!(r.total(Op::Read).bytes, moved);
    assert!((64 << 10..(64 << 10) + 4096).contains(&moved), "{moved}");
    // The last went out when the bytes before it were due.
    let before = moved - lens.last().unwrap();
    let due = before * 1_000_000_000 / 4_096_000;
    assert!(
        r.elapsed_ns.abs_diff(due + 10_000) <= 1_000,
        "{} against {}",
        r.elapsed_ns,
        due + 10_000
    );
}
