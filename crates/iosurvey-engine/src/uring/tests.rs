//! Tests of the io_uring engine on temp files and sockets: I/O through the
//! ring, the fallbacks when registration is off, the checks that keep the
//! safe API sound, and the waits.

use super::*;
use crate::SqPoll;
use iosurvey_testkit::{not_running, skip};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

fn cfg(files: Vec<OwnedFd>, buffers: usize) -> EngineConfig<'static> {
    EngineConfig {
        files,
        buffers,
        buffer_size: 4096,
        alignment: 4096,
        sqpoll: None,
        iopoll: false,
        fill: Default::default(),
        verify: None,
        stop: None,
    }
}

/// The engine, or `None` (with the reason printed) where io_uring is not
/// available; under `CI=1` that fails instead.
fn ring(cfg: EngineConfig<'_>, depth: u32, reg: Registration) -> Option<UringEngine> {
    match UringEngine::with_registration(cfg, depth, 3, reg) {
        Ok(e) => Some(e),
        Err(err) => {
            not_running(&format!("io_uring unavailable here: {err}"));
            None
        }
    }
}

const ALL: Registration = Registration {
    files: true,
    buffers: true,
};
const NONE: Registration = Registration {
    files: false,
    buffers: false,
};

fn file_of(data: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(data).unwrap();
    f
}

fn open_rw(f: &tempfile::NamedTempFile) -> OwnedFd {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(f.path())
        .unwrap()
        .into()
}

fn read(buf: u32, offset: u64) -> Request {
    Request {
        file: 0,
        op: Op::Read,
        offset,
        len: 4096,
        buf,
    }
}

/// Waits for and reaps everything in flight.
fn drain(e: &mut UringEngine) -> Vec<Completion> {
    let mut got = Vec::new();
    while e.in_flight() > 0 {
        e.submit_and_wait(1, Duration::from_secs(5)).unwrap();
        e.reap(|c| {
            got.push(c);
            None
        });
    }
    got.sort_by_key(|c| c.buf);
    got
}

#[test]
fn a_dropped_engine_holds_no_file_a_lock_can_wait_on() {
    let f = file_of(&[7u8; 4096]);
    let fd: OwnedFd = std::fs::File::open(f.path()).unwrap().into();
    rustix::fs::flock(&fd, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let Some(e) = ring(cfg(vec![fd], 1), 1, ALL) else {
        return;
    };
    let registered = e.registered_files;
    drop(e);
    // The lock goes with the last reference to the open file: once the
    // engine is dropped, a new open can take it at once.
    let again = std::fs::File::open(f.path()).unwrap();
    let got = rustix::fs::flock(&again, rustix::fs::FlockOperation::NonBlockingLockExclusive);
    assert!(
        got.is_ok() || !registered,
        "the ring still holds the file after drop: {got:?}"
    );
}

/// Three reads and a write of 4 KiB, through the paths `reg` allows.
fn reads_and_writes(reg: Registration, buffers: usize) {
    let f = file_of(&[9u8; 16384]);
    let Some(mut e) = ring(cfg(vec![open_rw(&f)], buffers), 4, reg) else {
        return;
    };
    assert_eq!(e.features().registered_files, reg.files);
    assert_eq!(
        e.features().fixed_buffers,
        reg.buffers && buffers <= MAX_FIXED_BUFFERS
    );
    for i in 0..4u32 {
        e.push(Request {
            op: if i == 3 { Op::Write } else { Op::Read },
            ..read(i, u64::from(i) * 4096)
        });
    }
    assert_eq!(e.in_flight(), 4);
    let got = drain(&mut e);
    assert!(got.iter().all(|c| c.result == 4096), "{got:?}");
    assert_eq!(got.iter().map(|c| c.buf).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert!(e.buffer_mut(0).unwrap().iter().all(|&b| b == 9));
    assert_eq!(e.in_flight(), 0);
    drop(e);
    let data = std::fs::read(f.path()).unwrap();
    assert!(
        data[12288..].iter().any(|&b| b != 9),
        "write reached the file"
    );
}

#[test]
fn reads_and_writes_through_the_ring() {
    reads_and_writes(ALL, 4);
}

#[test]
fn reads_and_writes_without_registered_files_or_buffers() {
    reads_and_writes(NONE, 4);
}

#[test]
fn reads_and_writes_with_more_buffers_than_the_kernel_registers() {
    reads_and_writes(ALL, MAX_FIXED_BUFFERS + 1);
}

#[test]
#[should_panic(expected = "request refused")]
fn a_request_longer_than_an_unregistered_buffer_panics_before_the_kernel_sees_it() {
    let f = file_of(&[9u8; 16384]);
    let Some(mut e) = ring(cfg(vec![open_rw(&f)], MAX_FIXED_BUFFERS + 1), 4, ALL) else {
        panic!("request refused (skipped: no io_uring)");
    };
    assert!(!e.features().fixed_buffers);
    // 8 KiB into the last 4 KiB buffer would run off the allocation.
    e.push(Request {
        len: 8192,
        ..read(MAX_FIXED_BUFFERS as u32, 0)
    });
}

#[test]
#[should_panic(expected = "request refused")]
fn a_buffer_in_flight_cannot_be_pushed_again() {
    let f = file_of(&[9u8; 16384]);
    let Some(mut e) = ring(cfg(vec![open_rw(&f)], 2), 2, NONE) else {
        panic!("request refused (skipped: no io_uring)");
    };
    e.push(read(1, 0));
    e.push(read(1, 4096));
}

#[test]
fn a_buffer_in_flight_is_not_handed_out() {
    let (rx, mut tx) = UnixStream::pair().unwrap();
    let Some(mut e) = ring(cfg(vec![OwnedFd::from(rx)], 2), 2, ALL) else {
        return;
    };
    // A read of an empty socket stays in flight until it has data.
    e.push(read(0, 0));
    e.submit_and_wait(0, Duration::ZERO).unwrap();
    assert!(e.buffer_mut(0).is_none());
    assert!(e.buffer_mut(1).is_some());
    assert!(e.buffer_mut(2).is_none(), "no such buffer");
    tx.write_all(b"done").unwrap();
    let got = drain(&mut e);
    assert_eq!(got[0].result, 4);
    assert_eq!(&e.buffer_mut(0).unwrap()[..4], b"done");
}

#[test]
fn a_ring_is_bound_to_the_thread_that_first_enters_the_kernel() {
    let f = file_of(&[5u8; 8192]);
    let Some(e) = ring(cfg(vec![open_rw(&f)], 2), 2, ALL) else {
        return;
    };
    if !single_issuer(&e) {
        return;
    }
    assert!(e.unbound, "a single-issuer ring starts disabled");
    // Built here, first used on another thread, which the ring takes as
    // its issuer.
    let mut e = std::thread::spawn(move || {
        let mut e = e;
        e.push(read(0, 0));
        assert_eq!(drain(&mut e)[0].result, 4096);
        e
    })
    .join()
    .unwrap();
    assert!(!e.unbound);
    // The ring kept single issuer (and so deferred task work): this thread
    // is refused.
    e.push(read(1, 4096));
    let err = e.submit_and_wait(1, Duration::from_secs(1)).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EEXIST));
}

/// One more buffer than the largest submission queue has entries.
const PAST_THE_QUEUE: usize = 32_769;

/// Whether `e`'s ring is single-issuer, the case in which the kernel
/// refuses another thread's submission (EEXIST); says why when not.
fn single_issuer(e: &UringEngine) -> bool {
    let single = e.ring.params().is_setup_single_issuer();
    if !single {
        not_running("the kernel has no single-issuer rings");
    }
    single
}

#[test]
fn a_reap_that_panics_in_make_room_takes_no_completion() {
    // 32,769 reads complete on this thread, which the ring is bound to;
    // another thread reaps them and rearms each buffer. The first reap
    // takes the 32,768 the queue has room for and rearms them; the next
    // must make room first, the kernel refuses that thread's submission
    // (EEXIST) and make_room panics: before the reap took the completion
    // left, so that it is still there, its buffer still in flight.
    const N: usize = PAST_THE_QUEUE;
    let f = file_of(&[1u8; 4096]);
    let Some(mut e) = ring(cfg(vec![open_rw(&f)], N), 1, ALL) else {
        return;
    };
    if !single_issuer(&e) {
        return;
    }
    // The last push makes room, which binds the ring to this thread.
    for b in 0..N as u32 {
        e.push(read(b, 0));
    }
    e.ring.submitter().submit_and_wait(N).unwrap();
    let (rearmed, in_flight, mut e, idle) = std::thread::spawn(move || {
        let mut e = e;
        let mut rearmed = 0;
        e.reap(|c| {
            rearmed += 1;
            Some(read(c.buf, 0))
        });
        let r = catch_unwind(AssertUnwindSafe(|| e.reap(|c| Some(read(c.buf, 0)))));
        assert!(r.is_err(), "the kernel took the submission after all");
        let idle = (0..N as u32).filter(|&b| e.buffer_mut(b).is_some()).count();
        (rearmed, e.in_flight(), e, idle)
    })
    .join()
    .unwrap();
    assert_eq!(rearmed, N - 1, "as many as the queue had room for");
    assert_eq!(in_flight, N, "the rearms, and the one left unreaped");
    assert_eq!(idle, 0, "no buffer is handed out while its I/O is on");
    assert_eq!(drain(&mut e).len(), N);
}

#[test]
fn a_file_operation_that_panics_in_make_room_claims_nothing() {
    // The queue is filled on another thread than the one the ring is bound
    // to; the open that finds it full panics in make_room (EEXIST), and
    // must leave neither its slot claimed nor the file state opening.
    const N: usize = PAST_THE_QUEUE;
    let f = file_of(&[1u8; 4096]);
    let dir = tempfile::tempdir().unwrap();
    let dir_fd = rustix::fs::open(
        dir.path(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .unwrap();
    let Some(mut e) = ring(cfg(vec![open_rw(&f), dir_fd], N), 1, ALL) else {
        return;
    };
    if !single_issuer(&e) {
        return;
    }
    e.push(read(0, 0));
    drain(&mut e);
    let open = FileOp::Open {
        dir: 1,
        path: CString::new("frame").unwrap(),
        flags: rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CREATE,
        mode: rustix::fs::Mode::from_raw_mode(0o644),
        base: 0,
    };
    let last = N as u32 - 1;
    let theirs = open.clone();
    let mut e = std::thread::spawn(move || {
        let mut e = e;
        for b in 0..last {
            e.push(read(b, 0));
        }
        let r = catch_unwind(AssertUnwindSafe(|| e.push_file(last, theirs)));
        assert!(r.is_err(), "the kernel took the submission after all");
        assert_eq!(e.in_flight(), N - 1, "the refused open counts as in flight");
        assert!(e.buffer_mut(last).is_some());
        e
    })
    .join()
    .unwrap();
    // Back on its thread, the engine drains and opens: no open is pending.
    drain(&mut e);
    e.push_file(last, open);
    assert!(drain(&mut e)[0].result >= 0);
    assert!(e.open_file().is_some());
}

/// An engine over one end of a socket, with a read of it in flight that
/// only the other end's data (never sent) would complete; that end too.
fn stuck_read() -> Option<(UringEngine, UnixStream)> {
    let (rx, tx) = UnixStream::pair().unwrap();
    let mut e = ring(cfg(vec![OwnedFd::from(rx)], 2), 2, ALL)?;
    e.push(read(0, 0));
    e.submit_and_wait(1, Duration::ZERO).unwrap();
    assert_eq!(e.in_flight(), 1);
    Some((e, tx))
}

#[test]
fn a_drop_cancels_a_read_that_does_not_finish_after_its_grace() {
    let Some((e, _tx)) = stuck_read() else {
        return;
    };
    assert!(e.cancel, "the kernel has ASYNC_CANCEL (5.5+)");
    let start = Instant::now();
    drop(e);
    let took = start.elapsed();
    // Waited out the grace, then the cancel ended the read at once.
    assert!(took >= teardown::DROP_GRACE, "{took:?}");
    assert!(
        took < teardown::DROP_WAIT,
        "the cancel did not end the read"
    );
}

#[test]
fn a_drop_that_cannot_cancel_leaks_the_buffers_after_its_bound() {
    let Some((mut e, mut tx)) = stuck_read() else {
        return;
    };
    // As on a kernel without ASYNC_CANCEL.
    e.cancel = false;
    let start = Instant::now();
    drop(e);
    let took = start.elapsed();
    assert!(took >= teardown::DROP_WAIT, "gave up early: {took:?}");
    assert!(took < teardown::DROP_WAIT * 2, "{took:?}");
    // Whatever the kernel still does with the read lands in leaked memory.
    let _ = tx.write_all(&[0xEE; 4096]);
}

#[test]
fn a_drop_on_a_thread_the_ring_is_not_bound_to_returns_at_once() {
    let Some((e, _tx)) = stuck_read() else {
        return;
    };
    if !single_issuer(&e) {
        return;
    }
    let took = std::thread::spawn(move || {
        let start = Instant::now();
        drop(e);
        start.elapsed()
    })
    .join()
    .unwrap();
    // Its wait fails with EEXIST: no grace, the buffers are leaked.
    assert!(took < teardown::DROP_GRACE, "{took:?}");
}

#[test]
fn a_ring_never_entered_drops_its_queue_at_once() {
    let (rx, _tx) = UnixStream::pair().unwrap();
    let Some(mut e) = ring(cfg(vec![OwnedFd::from(rx)], 2), 2, ALL) else {
        return;
    };
    if !single_issuer(&e) {
        return;
    }
    // Queued, never submitted: the kernel has not seen it.
    e.push(read(0, 0));
    let start = Instant::now();
    drop(e);
    assert!(start.elapsed() < teardown::DROP_GRACE);
}

#[test]
fn a_wait_with_nothing_completing_returns_by_its_timeout() {
    let (rx, mut tx) = UnixStream::pair().unwrap();
    let Some(mut e) = ring(cfg(vec![OwnedFd::from(rx)], 1), 1, ALL) else {
        return;
    };
    e.push(read(0, 0));
    let t = Instant::now();
    e.submit_and_wait(1, Duration::from_millis(50)).unwrap();
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(45), "{waited:?}");
    // Bounded (not a wait for ever), with room for a busy machine.
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    assert_eq!(e.features().empty_wakeups, 1, "an empty wake-up is counted");
    let mut n = 0;
    e.reap(|_| {
        n += 1;
        None
    });
    assert_eq!(n, 0);
    // The first wait enabled the ring (through the io-uring crate); the
    // next one enters the kernel directly, and is bounded the same way.
    assert!(!e.unbound);
    let t = Instant::now();
    e.submit_and_wait(1, Duration::from_millis(50)).unwrap();
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(45), "{waited:?}");
    // Bounded (not a wait for ever), with room for a busy machine.
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    assert_eq!(e.features().empty_wakeups, 2);
    tx.write_all(b"x").unwrap();
    // And a wait that something ends returns with it, well before its
    // timeout.
    let t = Instant::now();
    e.submit_and_wait(1, Duration::from_secs(5)).unwrap();
    assert!(t.elapsed() < Duration::from_secs(4));
    let mut results = Vec::new();
    e.reap(|c| {
        results.push(c.result);
        None
    });
    assert_eq!(results, [1], "the byte written was read");
}

#[test]
fn an_untimed_wait_sleeps_until_an_io_completes() {
    let (rx, mut tx) = UnixStream::pair().unwrap();
    let Some(mut e) = ring(cfg(vec![OwnedFd::from(rx)], 1), 1, ALL) else {
        return;
    };
    e.push(read(0, 0));
    e.submit_and_wait(1, Duration::from_millis(1)).unwrap();
    assert!(!e.unbound);
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        tx.write_all(b"x").unwrap();
        tx
    });
    let t = Instant::now();
    e.submit_and_wait(1, Duration::MAX).unwrap();
    let waited = t.elapsed();
    let _tx = writer.join().unwrap();
    assert!(waited >= Duration::from_millis(90), "{waited:?}");
    let mut results = Vec::new();
    e.reap(|c| {
        results.push(c.result);
        None
    });
    assert_eq!(results, [1], "the wait ended with the read");
}

/// `n` random 4 KiB reads at queue depth `qd` on `fd`, each completion
/// re-arming its buffer from inside the reap, waiting as the worker does
/// (for one in sixteen of those in flight); returns the results.
fn reads_at_depth(e: &mut UringEngine, n: u64, qd: u32, blocks: u64) -> Vec<i32> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next_offset = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % blocks) * 4096
    };
    let mut issued = 0;
    for buf in 0..qd {
        e.push(read(buf, next_offset()));
        issued += 1;
    }
    let mut results = Vec::new();
    while e.in_flight() > 0 {
        e.submit_and_wait((e.in_flight() / 16).max(1), Duration::from_secs(5))
            .unwrap();
        e.reap(|c| {
            results.push(c.result);
            (issued < n).then(|| {
                issued += 1;
                read(c.buf, next_offset())
            })
        });
    }
    results
}

#[test]
fn a_queue_of_32_direct_reads_never_wakes_up_for_nothing() {
    let blocks = 4096;
    let f = file_of(&vec![6u8; blocks * 4096]);
    let direct = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(f.path());
    // O_DIRECT reads go to the device and complete later, not inline.
    let fd: OwnedFd = match direct {
        Ok(d) => d.into(),
        Err(_) => std::fs::File::open(f.path()).unwrap().into(),
    };
    let Some(mut e) = ring(cfg(vec![fd], 32), 32, ALL) else {
        return;
    };
    let results = reads_at_depth(&mut e, 5000, 32, blocks as u64);
    assert_eq!(results.len(), 5000);
    assert!(results.iter().all(|&r| r == 4096));
    assert_eq!(e.features().empty_wakeups, 0);
}

#[test]
fn a_submission_polling_thread_does_the_reads() {
    let f = file_of(&[2u8; 65536]);
    let mut c = cfg(vec![open_rw(&f)], 8);
    c.sqpoll = Some(SqPoll {
        cpu: None,
        idle_ms: 10,
    });
    let Some(mut e) = ring(c, 8, ALL) else {
        return;
    };
    assert!(e.features().sqpoll);
    let results = reads_at_depth(&mut e, 500, 8, 16);
    assert_eq!(results, vec![4096; 500]);
}

#[test]
fn a_polling_mode_the_kernel_refuses_is_an_error_not_a_fallback() {
    let f = file_of(&[2u8; 4096]);
    let mut c = cfg(vec![open_rw(&f)], 1);
    // No machine here has this CPU.
    c.sqpoll = Some(SqPoll {
        cpu: Some(1 << 20),
        idle_ms: 10,
    });
    match UringEngine::new(c, 1, 1) {
        Err(EngineError::UringMode { flag, .. }) => assert_eq!(flag, "--sqpoll"),
        Err(other) => panic!("not the polling mode's error: {other}"),
        Ok(_) => panic!("a ring on a CPU that does not exist"),
    }
}

#[test]
fn completions_are_polled_with_iopoll() {
    let f = file_of(&[2u8; 65536]);
    let direct = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(f.path());
    let Ok(direct) = direct else {
        skip!("no O_DIRECT on the temp directory");
    };
    let mut c = cfg(vec![direct.into()], 4);
    c.iopoll = true;
    let Some(mut e) = ring(c, 4, ALL) else {
        return;
    };
    let feat = e.features();
    assert!(feat.iopoll);
    assert_eq!(feat.reap_window_us, None, "a polled wait has no window");
    let results = reads_at_depth(&mut e, 200, 4, 16);
    assert_eq!(results.len(), 200);
    // A file system without polled I/O fails each read with EOPNOTSUPP,
    // as data, not as a setup error.
    let ok = results.iter().all(|&r| r == 4096);
    let unsupported = results.iter().all(|&r| r == -libc::EOPNOTSUPP);
    assert!(ok || unsupported, "{:?}", &results[..8]);
}

#[test]
fn a_short_read_comes_back_as_the_bytes_it_moved() {
    // 6000 bytes: the second block is partial, the third past the end.
    let f = file_of(&[4u8; 6000]);
    let fd: OwnedFd = std::fs::File::open(f.path()).unwrap().into();
    let Some(mut e) = ring(cfg(vec![fd], 3), 3, ALL) else {
        return;
    };
    for i in 0..3u32 {
        e.push(read(i, u64::from(i) * 4096));
    }
    let results: Vec<i32> = drain(&mut e).iter().map(|c| c.result).collect();
    assert_eq!(results, [4096, 6000 - 4096, 0]);
}

/// More completions than the submission queue has room for re-arms (a
/// pool larger than the largest ring): a reap takes as many as it can
/// re-arm, leaves the others in the completion queue, and the next reap
/// takes them; each completion is seen once, each re-arm completes.
#[test]
fn a_reap_takes_no_more_completions_than_it_can_rearm() {
    const BUFS: u32 = 40_000;
    let f = file_of(&[7u8; 4096]);
    let mut c = cfg(vec![open_rw(&f)], BUFS as usize);
    c.buffer_size = 512;
    c.alignment = 512;
    let Some(mut e) = ring(c, BUFS, ALL) else {
        return;
    };
    let small = |buf| Request {
        len: 512,
        ..read(buf, 0)
    };
    let room = e.sq.free();
    assert!(room < BUFS, "the ring is smaller than the pool: {room}");
    // Pushing past the queue's size submits what it holds.
    for b in 0..BUFS {
        e.push(small(b));
    }
    e.ring.submitter().submit_and_wait(BUFS as usize).unwrap();
    let ready = |e: &UringEngine| {
        let (head, tail) = e.cq.bounds();
        tail.wrapping_sub(head)
    };
    assert_eq!(ready(&e), BUFS);
    let mut seen = vec![0u32; BUFS as usize];
    let mut first = 0;
    e.reap(|c| {
        assert_eq!(c.result, 512);
        seen[c.buf as usize] += 1;
        first += 1;
        Some(small(c.buf))
    });
    assert_eq!(first, room, "as many as the queue had room for");
    assert_eq!(ready(&e), BUFS - room, "the others are left for later");
    assert_eq!(e.in_flight(), BUFS as usize);
    // The queue is full of re-arms: the next reap makes room first.
    let mut rest = 0;
    e.reap(|c| {
        assert_eq!(c.result, 512);
        seen[c.buf as usize] += 1;
        rest += 1;
        None
    });
    assert_eq!(rest, BUFS - room);
    assert!(seen.iter().all(|&n| n == 1), "each completion once");
    assert_eq!(e.in_flight(), room as usize, "the re-arms");
    let mut again = 0;
    while e.in_flight() > 0 {
        e.submit_and_wait(e.in_flight(), Duration::from_secs(5))
            .unwrap();
        e.reap(|c| {
            assert_eq!(c.result, 512);
            again += 1;
            None
        });
    }
    assert_eq!(again, room);
}

/// A discard is done at the next submit and reaped beside the ring's
/// reads with its own result: here, on a regular file, the ioctl's
/// `-ENOTTY`; a re-arm from the reap with a discard goes the same way.
/// (On devices, `run_trim` in the binary's tests.)
#[test]
fn a_discard_completes_through_the_ring_with_its_own_result() {
    let f = file_of(&[5u8; 16384]);
    let Some(mut e) = ring(cfg(vec![open_rw(&f)], 3), 4, ALL) else {
        return;
    };
    let trim = |buf| Request {
        op: Op::Trim,
        ..read(buf, 4096)
    };
    e.push(read(0, 0));
    e.push(trim(1));
    e.push(read(2, 8192));
    let mut got = drain(&mut e);
    got.sort_by_key(|c| c.buf);
    let results: Vec<i32> = got.iter().map(|c| c.result).collect();
    assert_eq!(results, [4096, -libc::ENOTTY, 4096]);
    // A read re-armed as a discard from inside the reap.
    e.push(read(0, 0));
    let mut rearmed = false;
    e.submit_and_wait(1, Duration::from_secs(5)).unwrap();
    e.reap(|c| {
        assert_eq!(c.result, 4096);
        rearmed = true;
        Some(trim(c.buf))
    });
    assert!(rearmed);
    let got = drain(&mut e);
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].buf, got[0].result), (0, -libc::ENOTTY));
    assert_eq!(e.in_flight(), 0);
}
