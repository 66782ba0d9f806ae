//! Tests of the worker loop, through the fault-injecting fake engine.

use super::batches::Batches;
use super::batches::Seen;
use super::clock::FakeClock;
use super::*;
use crate::fake_engine::{FakeEngine, Serial};
use crate::result::StreamResult;
use iosurvey_engine::{Op, Request};
use iosurvey_stats::SHORT_TRANSFER;
use iosurvey_workload::pattern::{Area, Region};
use iosurvey_workload::Pattern;
use iosurvey_workload::{pattern::OffsetGen, ArrayMap, Mix};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn stream(budget: Option<u64>, slots: u32, mix: Mix) -> WorkerStream {
    let area = Area {
        start: 0,
        len: 1 << 20,
    };
    let region = Region {
        base: 0,
        blocks: 256,
    };
    WorkerStream {
        index: 0,
        file: 0,
        mix,
        bs: 4096,
        slots,
        gen: OffsetGen::new(Pattern::Forward, 4096, area, vec![region], 1),
        budget: budget.unwrap_or(UNBOUNDED),
        ramp_spends: false,
        map: None,
        pieces: 1,
        trace: 0,
        sizes: None,
    }
}

fn run(
    engine: &mut FakeEngine,
    streams: Vec<WorkerStream>,
    continue_on_error: bool,
    stop: bool,
) -> JobResult {
    run_with_ramp(engine, streams, continue_on_error, stop, Duration::ZERO)
}

fn run_with_ramp(
    engine: &mut FakeEngine,
    streams: Vec<WorkerStream>,
    continue_on_error: bool,
    stop: bool,
    ramp: Duration,
) -> JobResult {
    let stop = AtomicBool::new(stop);
    let live = LiveCounters::default();
    let bounds = WorkerBounds {
        ramp,
        time: None,
        interval: Duration::from_secs(1),
        continue_on_error,
        stop: &stop,
        live: &live,
        detail: None,
        intervals: None,
        verify: None,
        backlog: None,
        warm: None,
        pace: None,
    };
    let r = run_worker(engine, streams, None, &bounds, now_ns()).unwrap();
    assert_eq!(
        live.ops.load(Ordering::Relaxed),
        r.total(Op::Read).ops + r.total(Op::Write).ops
    );
    r
}

#[test]
fn a_byte_budget_issues_exactly_that_many_ops() {
    let mut e = FakeEngine::new();
    let r = run(
        &mut e,
        vec![stream(Some(1000), 8, Mix::Write)],
        false,
        false,
    );
    assert_eq!(r.total(Op::Write).ops, 1000);
    assert_eq!(r.total(Op::Write).bytes, 1000 * 4096);
    assert_eq!(e.issued.len(), 1000);
    assert_eq!(r.error_count(), 0);
    // Forward: block after block, wrapping at the end of the region.
    assert_eq!(e.issued[0].offset, 0);
    assert_eq!(e.issued[257].offset, 4096);
}

#[test]
fn ios_issued_during_the_ramp_are_neither_counted_nor_spend_the_budget() {
    let mut e = FakeEngine::new();
    let r = run_with_ramp(
        &mut e,
        vec![stream(Some(10), 4, Mix::Read)],
        false,
        false,
        Duration::from_millis(30),
    );
    assert!(
        e.issued.len() > 10,
        "the ramp did I/O too ({} issued)",
        e.issued.len()
    );
    assert_eq!(r.total(Op::Read).ops, 10, "exactly the budget is counted");
    assert_eq!(r.total(Op::Read).latency.count(), 10);
}

#[test]
fn a_stream_whose_ramp_spends_its_budget_ends_where_its_pass_ends() {
    let mut e = FakeEngine::new();
    e.delay = Duration::from_millis(1);
    let mut st = stream(Some(256), 1, Mix::Read);
    st.ramp_spends = true;
    let r = run_with_ramp(&mut e, vec![st], false, false, Duration::from_millis(20));
    // One pass of 256 blocks in all, ramp included: nothing read twice.
    assert_eq!(e.issued.len(), 256);
    assert!(
        r.total(Op::Read).ops < 256,
        "the ramp's ops are not counted"
    );
    let mut offs: Vec<u64> = e.issued.iter().map(|q| q.offset).collect();
    offs.sort_unstable();
    offs.dedup();
    assert_eq!(offs.len(), 256);
}

#[test]
fn the_first_failed_io_stops_the_worker_and_is_recorded() {
    let mut e = FakeEngine::failing(10, false, 28);
    let r = run(
        &mut e,
        vec![stream(Some(1000), 4, Mix::Write)],
        false,
        false,
    );
    let f = r.first_failure.expect("failure recorded");
    assert_eq!(f.errno, 28);
    assert_eq!(f.op, Op::Write);
    assert_eq!(f.offset, e.issued[10].offset);
    assert_eq!(r.streams[0].write.errors[&28], 1);
    // What was already in flight completes and is counted; nothing new
    // is issued after the failure.
    assert!(e.issued.len() < 20, "{} issued", e.issued.len());
    assert_eq!(r.total(Op::Write).ops as usize, e.issued.len() - 1);
}

#[test]
fn continue_on_error_counts_every_failure_by_errno() {
    let mut e = FakeEngine::failing(100, true, 5);
    let r = run(&mut e, vec![stream(Some(300), 2, Mix::Read)], true, false);
    assert_eq!(r.total(Op::Read).ops, 100);
    assert_eq!(r.streams[0].read.errors[&5], 200);
    assert_eq!(r.first_failure.unwrap().errno, 5);
}

#[test]
fn a_stop_signal_ends_the_run_and_marks_it_interrupted() {
    let mut e = FakeEngine::new();
    let r = run(&mut e, vec![stream(None, 4, Mix::Read)], false, true);
    assert!(r.interrupted);
    // Asked before the first I/O: nothing is submitted (the first batch
    // of 4 was, before).
    assert!(
        e.issued.is_empty(),
        "{} I/Os after the stop",
        e.issued.len()
    );
}

#[test]
fn each_stream_keeps_its_own_stats_and_elapsed_time() {
    let mut e = FakeEngine::new();
    let mut second = stream(Some(500), 3, Mix::Mixed { read_pct: 50 });
    second.index = 1;
    let streams = vec![stream(Some(10), 1, Mix::Read), second];
    let r = run(&mut e, streams, false, false);
    assert_eq!(r.streams[0].read.ops, 10);
    assert_eq!(r.streams[0].write.ops, 0);
    let s1 = &r.streams[1];
    assert_eq!(s1.read.ops + s1.write.ops, 500);
    assert!(s1.read.ops > 150 && s1.write.ops > 150);
    assert!(r.streams[0].elapsed_ns <= r.streams[1].elapsed_ns);
    assert_eq!(r.elapsed_ns, r.streams[1].elapsed_ns);
}

#[test]
fn a_short_transfer_is_an_error_of_its_own_kind_not_a_completed_io() {
    // From request 10 on, every I/O moves nothing, as reads past the end
    // of a file truncated under the run do.
    let mut e = FakeEngine::short(10, 0);
    let r = run(&mut e, vec![stream(Some(100), 4, Mix::Read)], false, false);
    let f = r.first_failure.expect("the short transfer stops the run");
    assert_eq!(f.errno, SHORT_TRANSFER);
    assert_eq!(f.offset, e.issued[10].offset);
    assert_eq!(r.total(Op::Read).ops, 10);
    assert_eq!(r.total(Op::Read).bytes, 10 * 4096);
    assert_eq!(
        r.streams[0].read.errors[&SHORT_TRANSFER] as usize,
        e.issued.len() - 10
    );
}

#[test]
fn partial_transfers_are_counted_by_kind_with_continue_on_error() {
    // A partial write (100 bytes of 4096) is short too.
    let mut e = FakeEngine::short(50, 100);
    let r = run(&mut e, vec![stream(Some(200), 2, Mix::Write)], true, false);
    assert_eq!(r.total(Op::Write).ops, 50);
    assert_eq!(r.total(Op::Write).bytes, 50 * 4096);
    assert_eq!(r.streams[0].write.errors[&SHORT_TRANSFER], 150);
    assert_eq!(r.error_count(), 150);
}

/// Runs `streams` on `e` with a fake clock that each submission moves on
/// by exactly `e.delay`.
fn run_on_fake_clock(e: &mut FakeEngine, streams: Vec<WorkerStream>) -> JobResult {
    let clock = Rc::new(Cell::new(now_ns()));
    e.clock = Some(clock.clone());
    run_on_clock(e, streams, clock)
}

/// Runs `streams` on `e`, an engine on the fake clock `clock`.
fn run_on_clock<E: Engine>(
    e: &mut E,
    streams: Vec<WorkerStream>,
    clock: Rc<Cell<u64>>,
) -> JobResult {
    let stop = AtomicBool::new(false);
    let live = LiveCounters::default();
    let bounds = WorkerBounds {
        ramp: Duration::ZERO,
        time: None,
        interval: Duration::from_millis(50),
        continue_on_error: false,
        stop: &stop,
        live: &live,
        detail: None,
        intervals: None,
        verify: None,
        backlog: None,
        warm: None,
        pace: None,
    };
    run_worker_on(e, streams, None, &bounds, clock.get(), &FakeClock(clock)).unwrap()
}

/// A mixed stream's reads and writes complete interleaved in each reap;
/// each op keeps a run of its own, so both are counted whole, each with
/// its batch's latency, in its own histogram and series.
#[test]
fn a_mixed_streams_reads_and_writes_interleaved_in_a_reap_are_each_counted_whole() {
    let mut e = FakeEngine::new();
    e.delay = Duration::from_millis(2);
    let mix = Mix::Mixed { read_pct: 70 };
    let r = run_on_fake_clock(&mut e, vec![stream(Some(3000), 16, mix)]);
    let issued = |op| e.issued.iter().filter(|q| q.op == op).count() as u64;
    let (reads, writes) = (issued(Op::Read), issued(Op::Write));
    assert_eq!(reads + writes, 3000);
    assert!(
        reads > 1800 && writes > 600,
        "{reads} reads, {writes} writes"
    );
    for (op, n) in [(Op::Read, reads), (Op::Write, writes)] {
        let t = r.total(op);
        assert_eq!(t.ops, n, "{op:?}");
        assert_eq!(t.latency.count(), n, "{op:?}");
        assert_eq!((t.latency.min(), t.latency.max()), (2_000_000, 2_000_000));
        let s = r.streams[0].class(op);
        let ops: u64 = s.series.samples.iter().map(|x| x.ops).sum();
        let lat: u64 = s.series.samples.iter().map(|x| x.lat_sum_ns).sum();
        assert_eq!((ops, lat), (n, n * 2_000_000), "{op:?}");
    }
}

/// A stream with a trim share (`--trim 10 --mix 70`) issues about one
/// discard in ten, and the rest 70% reads; each direction is counted in
/// its own class, whole, and the three add up to the budget.
#[test]
fn a_trim_share_is_drawn_and_counted_as_its_own_direction() {
    let mut e = FakeEngine::new();
    e.delay = Duration::from_millis(2);
    let mix = Mix::Trims {
        trim_pct: 10,
        read_pct: 70,
    };
    let r = run_on_fake_clock(&mut e, vec![stream(Some(3000), 16, mix)]);
    let issued = |op| e.issued.iter().filter(|q| q.op == op).count() as u64;
    let (reads, writes, trims) = (issued(Op::Read), issued(Op::Write), issued(Op::Trim));
    assert_eq!(reads + writes + trims, 3000);
    // 10% trims, 63% reads, 27% writes, within a few percent.
    assert!((200..400).contains(&trims), "{trims} trims");
    assert!((1700..2100).contains(&reads), "{reads} reads");
    assert!((650..1000).contains(&writes), "{writes} writes");
    for (op, n) in [(Op::Read, reads), (Op::Write, writes), (Op::Trim, trims)] {
        let t = r.total(op);
        assert_eq!(t.ops, n, "{op:?}");
        assert_eq!(t.bytes, n * 4096, "{op:?}");
        assert_eq!(t.latency.count(), n, "{op:?}");
    }
}

/// `--rw trim`: every I/O is a discard.
#[test]
fn a_trim_stream_issues_only_discards() {
    let mut e = FakeEngine::new();
    let r = run_on_fake_clock(&mut e, vec![stream(Some(100), 4, Mix::TRIM)]);
    assert!(e.issued.iter().all(|q| q.op == Op::Trim));
    assert_eq!(r.total(Op::Trim).ops, 100);
    assert_eq!(r.total(Op::Read).ops + r.total(Op::Write).ops, 0);
}

#[test]
fn a_slow_io_among_thousands_of_fast_batches_keeps_its_own_submit_time() {
    // Request 1 goes in the first batch and completes 3,000 submissions
    // later, long after its batch left the ring of recent batches; every
    // other I/O takes one 2 ms submission.
    let mut e = FakeEngine::new();
    e.delay = Duration::from_millis(2);
    e.hold = Some((1, 3000));
    let r = run_on_fake_clock(&mut e, vec![stream(Some(5000), 2, Mix::Read)]);
    let lat = &r.total(Op::Read).latency;
    assert_eq!(lat.count(), 5000);
    assert_eq!(lat.min(), 2_000_000);
    // Submissions 0 to 3,000 each took 2 ms before it was reaped.
    assert_eq!(lat.max(), 3001 * 2_000_000);
    // It is reaped with the I/Os of a later batch: each batch's latency
    // is its own, and the series adds them all up once.
    let series = &r.streams[0].read.series.samples;
    let ops: u64 = series.iter().map(|s| s.ops).sum();
    let lat_sum: u64 = series.iter().map(|s| s.lat_sum_ns).sum();
    assert_eq!(ops, 5000);
    assert_eq!(lat_sum, 4999 * 2_000_000 + 3001 * 2_000_000);
    assert!(lat.percentile(99.98) < 2_001_000, "one slow I/O alone");
}

/// The waits of a worker at QD 32 on the fake engine, each submission
/// taking `delay` on the fake clock: how many completions each was for.
fn waits_at_qd_32(delay: Duration) -> Vec<(usize, Duration)> {
    let mut e = FakeEngine::new();
    e.delay = delay;
    run_on_fake_clock(&mut e, vec![stream(Some(32 * 20), 32, Mix::Read)]);
    e.waits
}

#[test]
fn fast_completions_are_waited_for_two_at_a_time_at_qd_32_with_no_timer() {
    // 32 completions a microsecond: 320 in the 10 µs window, so the
    // worker waits for one in sixteen of the 32 in flight.
    let waits = waits_at_qd_32(Duration::from_micros(1));
    assert_eq!(waits.len(), 20);
    // Before any reap, and after the first (no rate yet): one.
    assert_eq!((waits[0].0, waits[1].0), (1, 1));
    assert!(waits[2..].iter().all(|w| w.0 == 2), "{waits:?}");
    assert!(waits.iter().all(|w| w.1 == Duration::MAX), "no time bound");
}

#[test]
fn slow_completions_are_waited_for_one_at_a_time_at_qd_32() {
    // 32 completions in 8 ms: none in the 10 µs window.
    let waits = waits_at_qd_32(Duration::from_millis(8));
    assert_eq!(waits.len(), 20);
    assert!(waits.iter().all(|w| w.0 == 1), "{waits:?}");
}

#[test]
fn the_batch_follows_the_rate_across_the_window() {
    // 32 completions in 40 µs: 8 in the window, more than 2: waits of 2.
    // In 200 µs: 1.6 in the window: one at a time.
    let waits = waits_at_qd_32(Duration::from_micros(40));
    assert!(waits[2..].iter().all(|w| w.0 == 2), "{waits:?}");
    let waits = waits_at_qd_32(Duration::from_micros(200));
    assert!(waits.iter().all(|w| w.0 == 1), "{waits:?}");
}

#[test]
fn the_recorded_latency_is_the_time_the_engine_took() {
    // Every submission takes exactly 2 ms on the fake clock: four I/Os per
    // batch, each timed from its batch's submit to its reap, recorded four
    // at a time.
    let delay = Duration::from_millis(2);
    let mut e = FakeEngine::new();
    e.delay = delay;
    let r = run_on_fake_clock(&mut e, vec![stream(Some(400), 4, Mix::Read)]);
    let lat = &r.total(Op::Read).latency;
    assert_eq!(lat.count(), 400);
    let want = delay.as_nanos() as f64;
    let p50 = lat.percentile(50.0) as f64;
    let mean = lat.mean();
    assert!((p50 / want - 1.0).abs() < 0.05, "p50 {p50} ns");
    assert!((mean / want - 1.0).abs() < 0.05, "mean {mean} ns");
    assert_eq!((lat.min(), lat.max()), (2_000_000, 2_000_000));
    // 100 batches of 2 ms, seen at 2, 4, .. 200 ms: 24 batches in the
    // first 50 ms interval, 25 in each of the next three (from 50 ms on),
    // and the last alone at 200 ms.
    let series = &r.streams[0].read.series.samples;
    let ops: Vec<u64> = series.iter().map(|s| s.ops).collect();
    assert_eq!(ops, [96, 100, 100, 100, 4]);
    assert!(series.iter().all(|s| s.lat_sum_ns == s.ops * 2_000_000));
    assert!(series.iter().all(|s| s.lat_max_ns == 2_000_000));
    assert_eq!(r.elapsed_ns, 400 / 4 * 2_000_000);
}

#[test]
#[should_panic(expected = "request refused")]
fn the_fake_engine_refuses_a_buffer_in_flight_like_the_real_ones() {
    let mut e = FakeEngine::new();
    let req = Request {
        file: 0,
        op: Op::Read,
        offset: 0,
        len: 4096,
        buf: 3,
    };
    e.push(req);
    assert!(e.buffer_mut(3).is_none());
    e.push(req);
}

#[test]
fn a_traced_stream_keeps_the_offset_and_time_of_its_first_ios_only() {
    // Every I/O takes one 2 ms submission; the stream reads forward in
    // 4 KiB blocks, so the I/Os kept are at 0, 4096, 8192, ...
    let mut e = FakeEngine::new();
    e.delay = Duration::from_millis(2);
    let traced = WorkerStream {
        trace: 5,
        ..stream(Some(100), 1, Mix::Read)
    };
    let r = run_on_fake_clock(&mut e, vec![traced]);
    assert_eq!(r.total(Op::Read).ops, 100);
    let want: Vec<[u64; 2]> = (0..5).map(|k| [k * 4096, 2_000_000]).collect();
    assert_eq!(r.streams[0].samples, want);
    // An untraced stream keeps none.
    let r = run_on_fake_clock(
        &mut FakeEngine::new(),
        vec![stream(Some(100), 1, Mix::Read)],
    );
    assert!(r.streams[0].samples.is_empty());
}

#[test]
fn a_warm_up_by_bytes_moves_them_unmeasured_then_measures_the_budget() {
    // 100 blocks of warm-up, then a budget of 500 blocks counted: the
    // warm-up's I/Os (and those already in flight when it ends) are
    // neither counted nor spend the budget.
    let mut e = FakeEngine::new();
    let stop = AtomicBool::new(false);
    let live = LiveCounters::default();
    let warm = WarmUp::new(100 * 4096);
    let bounds = WorkerBounds {
        ramp: Duration::ZERO,
        time: None,
        interval: Duration::from_secs(1),
        continue_on_error: false,
        stop: &stop,
        live: &live,
        detail: None,
        intervals: None,
        verify: None,
        backlog: None,
        warm: Some(&warm),
        pace: None,
    };
    let r = run_worker(
        &mut e,
        vec![stream(Some(500), 4, Mix::Read)],
        None,
        &bounds,
        now_ns(),
    )
    .unwrap();
    assert_eq!(r.total(Op::Read).ops, 500);
    assert!(warm.moved.load(Ordering::Relaxed) >= 100 * 4096);
    let issued = e.issued.len();
    assert!(
        (600..=600 + 8).contains(&issued),
        "100 warm-up blocks, a few in flight at its end, then 500: {issued}"
    );
    assert!(r.measure_start_ns > 0);
    assert_eq!(r.measure_start_ns, warm.done_at.load(Ordering::Relaxed));
}

/// A stream of 16 KiB I/Os over a raid0 array of two members with a 4 KiB
/// stripe: each I/O is cut into four pieces.
fn cut_stream(budget: u64, slots: u32) -> WorkerStream {
    use iosurvey_workload::{ArraySpec, Layout};
    let spec = ArraySpec {
        members: vec![0, 1],
        layout: Layout::Raid0 { stripe: 4096 },
    };
    let map = ArrayMap::new(&spec, &[1 << 20, 1 << 20], 16384).unwrap();
    let area = Area {
        start: 0,
        len: 2 << 20,
    };
    let region = Region {
        base: 0,
        blocks: 128,
    };
    WorkerStream {
        bs: 16384,
        gen: OffsetGen::new(Pattern::Forward, 16384, area, vec![region], 1),
        pieces: map.max_pieces(16384, 0) as u32,
        map: Some(map),
        budget,
        ..stream(None, slots, Mix::Read)
    }
}

#[test]
fn a_striped_io_larger_than_the_stripe_goes_out_in_pieces_and_counts_once() {
    let mut e = FakeEngine::new();
    e.delay = Duration::from_millis(2);
    // The second piece of the first I/O completes three submissions late:
    // its I/O takes 4 submissions, the others one each.
    e.hold = Some((1, 3));
    let mut st = cut_stream(10, 2);
    st.trace = 10;
    let r = run_on_fake_clock(&mut e, vec![st]);
    let read = r.total(Op::Read);
    assert_eq!((read.ops, read.bytes), (10, 10 * 16384));
    assert_eq!(read.latency.count(), 10);
    assert_eq!(read.latency.min(), 2_000_000);
    assert_eq!(read.latency.max(), 4 * 2_000_000, "timed to its last piece");
    // Forty pieces of one stripe, round robin over the members: array
    // bytes 0..16 KiB are stripes 0..3, on a@0, b@0, a@4k, b@4k.
    assert_eq!(e.issued.len(), 40);
    assert!(e.issued.iter().all(|q| q.len == 4096));
    let first: Vec<(u32, u64)> = e.issued[..4].iter().map(|q| (q.file, q.offset)).collect();
    assert_eq!(first, [(0, 0), (1, 0), (0, 4096), (1, 4096)]);
    // A piece's buffer is never in flight twice (the fake engine panics):
    // the two I/Os in flight use buffers 0..3 and 4..7.
    assert!(e.issued.iter().all(|q| q.buf < 8));
    // The trace keeps each I/O's offset in the array and its whole time,
    // as they complete: the first I/O after the second.
    let samples = &r.streams[0].samples;
    assert_eq!(samples.len(), 10);
    assert_eq!(samples[0], [16384, 2_000_000]);
    assert!(samples.contains(&[0, 4 * 2_000_000]));
}

#[test]
fn a_failed_piece_fails_its_io_once() {
    let mut e = FakeEngine::failing(5, false, 5);
    let r = run(&mut e, vec![cut_stream(10, 2)], true, false);
    let read = r.total(Op::Read);
    assert_eq!(read.ops, 9, "the I/O of the failed piece is not counted");
    assert_eq!(r.streams[0].read.errors[&5], 1);
    // Piece 5 is the second piece of the second I/O (array bytes 20 KiB
    // on, stripe 5): the failure names its member and offset there, as a
    // plain I/O's names its own.
    let f = r.first_failure.unwrap();
    assert_eq!((e.issued[5].file, e.issued[5].offset), (1, 8192));
    assert_eq!(f.offset, 8192);
    assert_eq!(e.issued.len(), 40);
}

#[test]
fn a_striped_run_on_the_one_at_a_time_engine_times_an_io_from_its_first_piece() {
    let mut e = Serial::new();
    e.0.delay = Duration::from_millis(2);
    let clock = Rc::new(Cell::new(now_ns()));
    e.0.clock = Some(clock.clone());
    let r = run_on_clock(&mut e, vec![cut_stream(5, 1)], clock);
    let read = r.total(Op::Read);
    assert_eq!(read.ops, 5);
    // Four pieces in turn, 2 ms each.
    assert_eq!(read.latency.min(), 4 * 2_000_000);
    assert_eq!(read.latency.max(), 4 * 2_000_000);
}

/// On a one-at-a-time engine each I/O's latency starts when its turn
/// comes (`Engine::next_up`), not when it was queued behind the others:
/// at QD 4, every latency is one request's 2 ms, none 8 ms.
#[test]
fn a_one_at_a_time_engine_times_each_io_from_its_turn_not_its_queueing() {
    let mut e = Serial::new();
    e.0.delay = Duration::from_millis(2);
    let clock = Rc::new(Cell::new(now_ns()));
    e.0.clock = Some(clock.clone());
    let r = run_on_clock(&mut e, vec![stream(Some(12), 4, Mix::Read)], clock);
    let read = r.total(Op::Read);
    assert_eq!(read.ops, 12);
    assert_eq!(read.latency.min(), 2_000_000);
    assert_eq!(read.latency.max(), 2_000_000);
    assert_eq!(e.0.issued.len(), 12);
}

/// A run that spans three submit batches of one stream and op (as a reap
/// can): each batch's latency is recorded with its own count, the oldest
/// when the third comes, the last two with the run.
#[test]
fn a_run_over_three_batches_records_each_batchs_latency_once() {
    let mut batches = Batches::new();
    for ts in [1_000, 2_000, 3_000] {
        batches.submit(ts, &mut []);
    }
    let mut tally = Tally {
        result: JobResult {
            streams: vec![StreamResult::default()],
            ..Default::default()
        },
        result_of: vec![0],
        stream_done: vec![0],
        last_done: 0,
        live_ops: 0,
        live_bytes: 0,
        continue_on_error: false,
    };
    let tc = 10_000;
    let mut run = Run::EMPTY;
    for (batch, n) in [(0, 2), (1, 3), (2, 1)] {
        for _ in 0..n {
            let seen = Seen {
                batches: &batches,
                interval: 0,
                tc,
            };
            run.add(&mut tally, seen, 0, Op::Read, batch, 4096);
        }
    }
    tally.record(&run, &batches, 0, tc);
    let read = &tally.result.streams[0].read;
    assert_eq!(read.ops, 6);
    assert_eq!(read.bytes, 6 * 4096);
    assert_eq!(read.latency.count(), 6);
    assert_eq!((read.latency.min(), read.latency.max()), (7_000, 9_000));
    // Each in its bucket (three significant digits).
    let p = |q| read.latency.percentile(q);
    assert!(
        (7_000..7_010).contains(&p(100.0 / 6.0)),
        "{}",
        p(100.0 / 6.0)
    );
    assert!((8_000..8_010).contains(&p(50.0)), "{}", p(50.0));
    assert!((8_000..8_010).contains(&p(4.0 / 6.0 * 100.0)));
    assert!((9_000..9_010).contains(&p(5.0 / 6.0 * 100.0)));
    assert!((9_000..9_010).contains(&p(100.0)));
    let s = &read.series.samples[0];
    assert_eq!((s.ops, s.bytes), (6, 6 * 4096));
    assert_eq!(s.lat_sum_ns, 2 * 9_000 + 3 * 8_000 + 7_000);
    assert_eq!(s.lat_max_ns, 9_000);
    assert_eq!((tally.live_ops, tally.live_bytes), (6, 6 * 4096));
}

/// A stream of 1 KiB and 4 KiB reads (the fake engine's buffers are
/// 4 KiB), half each, forward over 1 MiB, with a budget of `budget` bytes.
fn split_stream(budget: u64, slots: u32) -> WorkerStream {
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
    let region = Region {
        base: 0,
        blocks: 1024,
    };
    WorkerStream {
        bs: 4096,
        gen: OffsetGen::sized(Pattern::Forward, &split, area, vec![region], 1),
        budget,
        sizes: Some(Box::new(SizeDraw::new(&split))),
        ..stream(None, slots, Mix::Read)
    }
}

#[test]
fn a_split_streams_ios_are_counted_by_their_own_size() {
    let mut e = FakeEngine::new();
    let r = run(&mut e, vec![split_stream(3 << 20, 4)], false, false);
    let s = &r.streams[0];
    let lens: Vec<u32> = e.issued.iter().map(|q| q.len).collect();
    assert!(lens.iter().all(|&l| l == 1024 || l == 4096));
    let small = lens.iter().filter(|&&l| l == 1024).count() as u64;
    assert_eq!(s.sizes, [small, lens.len() as u64 - small]);
    assert!(small > 0 && small < lens.len() as u64, "both sizes drawn");
    // Every I/O counted once, with its own length, and its latency.
    assert_eq!(s.read.ops, lens.len() as u64);
    let moved: u64 = lens.iter().map(|&l| u64::from(l)).sum();
    assert_eq!(s.read.bytes, moved);
    assert_eq!(s.read.latency.count(), s.read.ops);
    // The byte budget is met by whole I/Os: less than one more past it.
    assert!((3 << 20..(3 << 20) + 4096).contains(&moved), "{moved}");
    // Forward, each I/O just after the one before, back to the start
    // only at the end of the area.
    for w in e.issued.windows(2) {
        let next = w[0].offset + u64::from(w[0].len);
        assert!(
            w[1].offset == next || (w[1].offset == 0 && next == 1 << 20),
            "{w:?}"
        );
    }
}

#[test]
fn a_split_streams_pass_reads_each_kib_of_its_area_once() {
    // A budget of one pass (1 MiB): the sizes drawn tile the area, the
    // last I/Os drawn again where a 4 KiB one would run past its end.
    let mut e = FakeEngine::new();
    let r = run(&mut e, vec![split_stream(1 << 20, 4)], false, false);
    let mut per_kib = vec![0u32; 1024];
    for q in &e.issued {
        for k in q.offset / 1024..(q.offset + u64::from(q.len)) / 1024 {
            per_kib[k as usize] += 1;
        }
    }
    let wrong: Vec<usize> = (0..1024).filter(|&k| per_kib[k] != 1).collect();
    assert!(wrong.is_empty(), "KiB done other than once: {wrong:?}");
    assert_eq!(r.streams[0].read.bytes, 1 << 20);
}
