//! Hostile review of the engines' safe API (issue 11): sequences of safe
//! calls that try to make the kernel (or `pread`) write outside a buffer, into
//! a buffer that is handed out, or into freed memory, on `UringEngine` (with
//! registered files and fixed buffers, and with more buffers than the kernel
//! registers) and on `SyncEngine`. Each test asserts the safe outcome. The
//! holes this review found (a drop that never returned, a refused push left
//! in flight, offset -1 read as the file position, a wait's timeout that
//! wrapped, a ring that failed on another thread) are fixed, and their tests
//! run.
//!
//! A socket that never has data is the "slow device": a read on it stays in
//! flight until the test writes to the other end.

#![deny(unsafe_code)]

use iosurvey_engine::{
    BufferPool, Completion, Engine, EngineConfig, EngineError, Op, Request, SlotTable, SqPoll,
    SyncEngine, UringEngine, MAX_OFFSET,
};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BS: usize = 4096;

fn temp_file(data: &[u8]) -> tempfile::NamedTempFile {
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

/// A file of `blocks` blocks, block `i` filled with byte `i + 1`.
fn patterned_file(blocks: usize) -> tempfile::NamedTempFile {
    let data: Vec<u8> = (0..blocks * BS).map(|i| (i / BS + 1) as u8).collect();
    temp_file(&data)
}

fn cfg(files: Vec<OwnedFd>, buffers: usize, buffer_size: usize) -> EngineConfig<'static> {
    EngineConfig {
        files,
        buffers,
        buffer_size,
        alignment: 4096,
        sqpoll: None,
        iopoll: false,
        fill: Default::default(),
        verify: None,
        stop: None,
    }
}

/// The io_uring engine, or `None` (printed) where io_uring is unavailable.
fn uring(c: EngineConfig<'_>, depth: u32) -> Option<UringEngine> {
    match UringEngine::new(c, depth, 11) {
        Ok(e) => Some(e),
        Err(err) => {
            iosurvey_testkit::not_running(&format!("io_uring unavailable here: {err}"));
            None
        }
    }
}

fn read(file: u32, buf: u32, offset: u64, len: u32) -> Request {
    Request {
        file,
        op: Op::Read,
        offset,
        len,
        buf,
    }
}

/// Waits for and reaps everything in flight, sorted by buffer.
fn drain<E: Engine + ?Sized>(e: &mut E) -> Vec<Completion> {
    let mut got = Vec::new();
    let start = Instant::now();
    while e.in_flight() > 0 {
        assert!(start.elapsed() < Duration::from_secs(30), "drain hangs");
        e.submit_and_wait(e.in_flight(), Duration::from_secs(5))
            .unwrap();
        e.reap(|c| {
            got.push(c);
            None
        });
    }
    got.sort_by_key(|c| c.buf);
    got
}

/// Runs `f` on its own thread and fails if it has not returned within
/// `secs` (the thread is left behind).
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Disconnected) => match t.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => unreachable!("the thread sent nothing and did not panic"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still running after {secs} s"),
    }
}

/// Fills every buffer `i` with byte `0xA0 + i`.
fn stamp<E: Engine + ?Sized>(e: &mut E, buffers: u32) {
    for i in 0..buffers {
        e.buffer_mut(i).unwrap().fill(0xA0u8.wrapping_add(i as u8));
    }
}

fn is_stamped<E: Engine + ?Sized>(e: &mut E, i: u32) -> bool {
    let want = 0xA0u8.wrapping_add(i as u8);
    e.buffer_mut(i).unwrap().iter().all(|&b| b == want)
}

/// `f(engine)` must panic, and leave nothing in flight that was not before.
fn refused<E: Engine + ?Sized>(e: &mut E, what: &str, f: impl FnOnce(&mut E)) {
    let before = e.in_flight();
    let r = catch_unwind(AssertUnwindSafe(|| f(e)));
    assert!(r.is_err(), "{what}: accepted");
    assert_eq!(e.in_flight(), before, "{what}: a refused request counts");
}

// ---------------------------------------------------------------------------
// The engines under attack: each attack runs on every variant.

/// Which engine and which of io_uring's paths.
#[derive(Clone, Copy, Debug)]
enum Variant {
    Sync,
    /// Registered files and fixed buffers.
    Uring,
    /// More buffers than the kernel registers: plain reads and writes.
    UringPlainBuffers,
}

const VARIANTS: [Variant; 3] = [Variant::Sync, Variant::Uring, Variant::UringPlainBuffers];

/// Buffers for the variant (past 16,384 fixed buffers are off).
fn buffers_for(v: Variant) -> usize {
    match v {
        Variant::UringPlainBuffers => 16_385,
        _ => 4,
    }
}

/// Builds the variant over `files` and runs `attack` on it with the number
/// of buffers. The engine is a `Box<dyn FnMut>`-free generic: one call per
/// engine type.
fn on_each(files: impl Fn() -> Vec<OwnedFd>, buffer_size: usize, attack: &dyn Fn(&mut dyn Attack)) {
    for v in VARIANTS {
        eprintln!("variant {v:?}");
        let c = cfg(files(), buffers_for(v), buffer_size);
        match v {
            Variant::Sync => attack(&mut Target(SyncEngine::new(c, 5).unwrap(), v)),
            _ => {
                let Some(e) = uring(c, 4) else { return };
                match v {
                    Variant::UringPlainBuffers => {
                        assert!(e.features().registered_files);
                        assert!(!e.features().fixed_buffers);
                    }
                    _ => {
                        assert!(e.features().registered_files);
                        assert!(e.features().fixed_buffers);
                    }
                }
                attack(&mut Target(e, v));
            }
        }
    }
}

/// The engine methods, object-safe, for running one attack on every variant.
trait Attack {
    fn variant(&self) -> Variant;
    fn push(&mut self, req: Request);
    fn wait(&mut self, min: usize, timeout: Duration) -> std::io::Result<()>;
    fn reap_with(&mut self, f: &mut dyn FnMut(Completion) -> Option<Request>);
    fn buffer_mut(&mut self, idx: u32) -> Option<&mut [u8]>;
    fn in_flight(&self) -> usize;
}

struct Target<E>(E, Variant);

impl<E: Engine> Attack for Target<E> {
    fn variant(&self) -> Variant {
        self.1
    }
    fn push(&mut self, req: Request) {
        self.0.push(req);
    }
    fn wait(&mut self, min: usize, timeout: Duration) -> std::io::Result<()> {
        self.0.submit_and_wait(min, timeout)
    }
    fn reap_with(&mut self, f: &mut dyn FnMut(Completion) -> Option<Request>) {
        self.0.reap(f);
    }
    fn buffer_mut(&mut self, idx: u32) -> Option<&mut [u8]> {
        self.0.buffer_mut(idx)
    }
    fn in_flight(&self) -> usize {
        self.0.in_flight()
    }
}

impl Engine for dyn Attack + '_ {
    fn push(&mut self, req: Request) {
        Attack::push(self, req);
    }
    fn submit_and_wait(&mut self, min_complete: usize, timeout: Duration) -> std::io::Result<()> {
        self.wait(min_complete, timeout)
    }
    fn reap(&mut self, mut f: impl FnMut(Completion) -> Option<Request>) {
        self.reap_with(&mut f);
    }
    fn buffer_mut(&mut self, idx: u32) -> Option<&mut [u8]> {
        Attack::buffer_mut(self, idx)
    }
    fn in_flight(&self) -> usize {
        Attack::in_flight(self)
    }
    fn push_file(&mut self, _slot: u32, _op: iosurvey_engine::FileOp) {
        unreachable!("file operations are not attacked through the wrapper")
    }
    fn open_file(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        None
    }
}

// ---------------------------------------------------------------------------
// Lengths, offsets and indices.

#[test]
fn a_request_longer_than_its_buffer_is_refused_and_the_neighbours_are_untouched() {
    let f = patterned_file(8);
    // 1000-byte buffers on a 4096-byte stride: a kernel that got len 1001
    // would write inside the padding, so the refusal itself is what is checked;
    // 4096 and u32::MAX would reach the next buffer.
    on_each(|| vec![open_rw(&f)], 1000, &|e: &mut dyn Attack| {
        stamp(e, 4);
        for len in [1001, 4096, 4097, 8192, u32::MAX] {
            refused(e, &format!("len {len}"), |e| e.push(read(0, 1, 0, len)));
            assert!(e.buffer_mut(1).is_some(), "a refused buffer stays idle");
        }
        // The most a buffer takes goes through, and moves only its bytes.
        e.push(read(0, 1, 0, 1000));
        let got = drain(e);
        assert_eq!(
            got,
            [Completion {
                buf: 1,
                result: 1000
            }]
        );
        let b = e.buffer_mut(1).unwrap();
        assert!(b.iter().all(|&x| x == 1), "{:?}", e.variant());
        for i in [0, 2, 3] {
            assert!(is_stamped(e, i), "buffer {i} touched");
        }
    });
}

#[test]
fn a_zero_length_request_moves_nothing() {
    let f = patterned_file(2);
    on_each(|| vec![open_rw(&f)], BS, &|e: &mut dyn Attack| {
        stamp(e, 4);
        e.push(read(0, 2, 0, 0));
        e.push(Request {
            op: Op::Write,
            ..read(0, 3, 0, 0)
        });
        let got = drain(e);
        assert_eq!(got.iter().map(|c| c.result).collect::<Vec<_>>(), [0, 0]);
        for i in 0..4 {
            assert!(is_stamped(e, i), "buffer {i} touched");
        }
    });
    // The file is unchanged.
    assert_eq!(std::fs::read(f.path()).unwrap()[..BS], [1u8; BS]);
}

#[test]
fn offsets_near_the_end_of_the_offset_space_fail_or_read_nothing() {
    let f = patterned_file(2);
    on_each(|| vec![open_rw(&f)], BS, &|e: &mut dyn Attack| {
        stamp(e, 4);
        for offset in [
            i64::MAX as u64 - 4095,
            i64::MAX as u64,
            1u64 << 63,
            u64::MAX - 4096,
        ] {
            e.push(read(0, 1, offset, 4096));
            let got = drain(e);
            assert!(
                got[0].result <= 0,
                "{:?} at {offset:#x}: {got:?}",
                e.variant()
            );
            assert!(is_stamped(e, 0) && is_stamped(e, 2));
        }
    });
}

#[test]
fn a_read_at_offset_u64_max_reads_no_data_on_either_engine() {
    // io_uring takes offset -1 as "the file position"; the engine must fail
    // it with EINVAL as pread does, not read from wherever the file is.
    let f = patterned_file(2);
    on_each(|| vec![open_rw(&f)], BS, &|e: &mut dyn Attack| {
        stamp(e, 4);
        e.push(read(0, 1, u64::MAX, 4096));
        let got = drain(e);
        assert_eq!(got[0].result, -libc::EINVAL, "{:?}", e.variant());
        assert!(is_stamped(e, 1), "{:?}: data read at u64::MAX", e.variant());
        // A write there must not land anywhere in the file either.
        e.push(Request {
            op: Op::Write,
            ..read(0, 2, u64::MAX, 4096)
        });
        let got = drain(e);
        assert_eq!(got[0].result, -libc::EINVAL, "{:?}: write", e.variant());
        // The first offset past MAX_OFFSET fails the same way.
        e.push(read(0, 1, MAX_OFFSET + 1, 4096));
        assert_eq!(drain(e)[0].result, -libc::EINVAL, "{:?}", e.variant());
        assert!(is_stamped(e, 1));
    });
    assert_eq!(
        std::fs::read(f.path()).unwrap(),
        std::fs::read(patterned_file(2).path()).unwrap(),
        "a write at u64::MAX changed the file"
    );
}

#[test]
fn out_of_range_file_and_buffer_indices_are_refused() {
    let f = patterned_file(2);
    on_each(|| vec![open_rw(&f)], BS, &|e: &mut dyn Attack| {
        let count = buffers_for(e.variant()) as u32;
        for file in [1, 2, u32::MAX] {
            refused(e, &format!("file {file}"), |e| {
                e.push(read(file, 0, 0, 512))
            });
        }
        for buf in [count, count + 1, 1 << 16, u32::MAX] {
            refused(e, &format!("buffer {buf}"), |e| {
                e.push(read(0, buf, 0, 512))
            });
            assert!(e.buffer_mut(buf).is_none());
        }
        // The engine is still whole.
        e.push(read(0, count - 1, 0, 4096));
        assert_eq!(drain(e)[0].result, 4096);
        assert!(e.buffer_mut(count - 1).unwrap().iter().all(|&b| b == 1));
    });
}

// ---------------------------------------------------------------------------
// Buffers in flight: a socket that never has data keeps a read in flight.

/// The variant over a temp file (file 0) and one end of a socket (file 1);
/// the other end of the socket comes back.
fn with_socket(attack: &dyn Fn(&mut dyn Attack, &mut UnixStream)) {
    let f = patterned_file(4);
    let pair = std::cell::RefCell::new(Vec::new());
    let files = || {
        let (a, b) = UnixStream::pair().unwrap();
        pair.borrow_mut().push(b);
        vec![open_rw(&f), OwnedFd::from(a)]
    };
    on_each(files, BS, &|e: &mut dyn Attack| {
        if matches!(e.variant(), Variant::Sync) {
            // pread on a socket fails at once (ESPIPE): no read stays in
            // flight there, and the synchronous engine has nothing queued
            // that the kernel holds.
            return;
        }
        let mut peer = pair.borrow_mut().pop().unwrap();
        attack(e, &mut peer);
    });
}

#[test]
fn a_buffer_in_flight_is_neither_handed_out_nor_pushed_again() {
    with_socket(&|e, peer| {
        e.push(read(1, 0, 0, 4096));
        e.wait(1, Duration::ZERO).unwrap();
        assert_eq!(e.in_flight(), 1);
        assert!(e.buffer_mut(0).is_none(), "an in-flight buffer handed out");
        for req in [read(1, 0, 0, 4096), read(0, 0, 0, 512), read(0, 0, 0, 0)] {
            refused(e, "push of an in-flight buffer", |e| e.push(req));
        }
        assert!(e.buffer_mut(1).is_some());
        peer.write_all(&[0x5A; 100]).unwrap();
        let got = drain(e);
        assert_eq!(
            got,
            [Completion {
                buf: 0,
                result: 100
            }]
        );
        assert!(e.buffer_mut(0).unwrap()[..100].iter().all(|&b| b == 0x5A));
    });
}

#[test]
fn a_reap_callback_cannot_rearm_another_in_flight_buffer() {
    with_socket(&|e, peer| {
        stamp(e, 4);
        e.push(read(1, 1, 0, 4096)); // held by the socket
        e.push(read(0, 0, 0, 4096));
        e.wait(1, Duration::from_secs(5)).unwrap();
        let r = catch_unwind(AssertUnwindSafe(|| {
            e.reap(|c| {
                assert_eq!(c.buf, 0);
                Some(read(0, 1, 0, 4096))
            })
        }));
        assert!(r.is_err(), "rearmed buffer 1 while the socket holds it");
        assert_eq!(e.in_flight(), 1, "buffer 0 came free, buffer 1 is held");
        assert!(e.buffer_mut(0).is_some());
        assert!(e.buffer_mut(1).is_none());
        peer.write_all(&[0x33; 10]).unwrap();
        assert_eq!(drain(e), [Completion { buf: 1, result: 10 }]);
        assert!(is_stamped(e, 2) && is_stamped(e, 3));
    });
}

#[test]
fn a_reap_callback_cannot_hand_the_same_buffer_to_two_completions() {
    let f = patterned_file(4);
    on_each(|| vec![open_rw(&f)], BS, &|e: &mut dyn Attack| {
        e.push(read(0, 0, 0, 4096));
        e.push(read(0, 1, 4096, 4096));
        let r = catch_unwind(AssertUnwindSafe(|| {
            let start = Instant::now();
            while e.in_flight() > 0 && start.elapsed() < Duration::from_secs(10) {
                e.wait(2, Duration::from_secs(1)).unwrap();
                // Every completion rearms buffer 3: the second must be refused.
                e.reap(|_| Some(read(0, 3, 8192, 4096)));
            }
        }));
        assert!(r.is_err(), "{:?}: buffer 3 given to two I/Os", e.variant());
        assert_eq!(e.in_flight(), 1, "buffer 3 alone is in flight");
        assert!(e.buffer_mut(3).is_none());
        let got = drain(e);
        assert_eq!(
            got,
            [Completion {
                buf: 3,
                result: 4096
            }]
        );
        assert!(e.buffer_mut(3).unwrap().iter().all(|&b| b == 3));
    });
}

#[test]
fn a_reap_callback_may_rearm_a_different_idle_buffer() {
    let f = patterned_file(4);
    on_each(|| vec![open_rw(&f)], BS, &|e: &mut dyn Attack| {
        e.push(read(0, 0, 0, 4096));
        let mut next = vec![read(0, 2, 8192, 4096), read(0, 0, 4096, 4096)];
        let mut got = Vec::new();
        while e.in_flight() > 0 {
            e.wait(1, Duration::from_secs(5)).unwrap();
            e.reap(|c| {
                got.push(c);
                next.pop()
            });
        }
        assert_eq!(got.len(), 3);
        assert!(e.buffer_mut(0).unwrap().iter().all(|&b| b == 2));
        assert!(e.buffer_mut(2).unwrap().iter().all(|&b| b == 3));
    });
}

// ---------------------------------------------------------------------------
// Panics in the middle.

#[test]
fn a_panic_in_the_reap_callback_leaves_the_engine_consistent() {
    with_socket(&|e, peer| {
        stamp(e, 4);
        e.push(read(1, 2, 0, 4096)); // held by the socket
        e.push(read(0, 0, 0, 4096));
        e.push(read(0, 1, 4096, 4096));
        let start = Instant::now();
        while e.in_flight() > 1 && start.elapsed() < Duration::from_secs(10) {
            e.wait(3, Duration::from_secs(1)).unwrap();
            let r = catch_unwind(AssertUnwindSafe(|| {
                e.reap(|c| panic!("the callback panics on {c:?}"))
            }));
            // Each panic consumes exactly the completion it was given.
            let _ = r;
        }
        assert_eq!(e.in_flight(), 1, "only the socket read is left");
        assert!(e.buffer_mut(0).unwrap().iter().all(|&b| b == 1));
        assert!(e.buffer_mut(1).unwrap().iter().all(|&b| b == 2));
        assert!(e.buffer_mut(2).is_none(), "the socket read still holds it");
        peer.write_all(&[0x44; 7]).unwrap();
        assert_eq!(drain(e), [Completion { buf: 2, result: 7 }]);
        assert!(e.buffer_mut(2).unwrap()[..7].iter().all(|&b| b == 0x44));
        assert!(is_stamped(e, 3));
    });
}

#[test]
fn a_panic_in_the_reap_after_a_rearm_hands_the_rearm_and_the_rest_over() {
    let f = patterned_file(4);
    let Some(mut e) = uring(cfg(vec![open_rw(&f)], 4, BS), 4) else {
        return;
    };
    for b in 0..3 {
        e.push(read(0, b, BS as u64 * u64::from(b), BS as u32));
    }
    // Until all three have completed before a reap.
    let start = Instant::now();
    loop {
        e.submit_and_wait(3, Duration::from_secs(1)).unwrap();
        let mut first = None;
        let mut seen = 0;
        let r = catch_unwind(AssertUnwindSafe(|| {
            e.reap(|c| {
                seen += 1;
                assert_eq!(c.result, BS as i32);
                if seen == 1 {
                    // The first is re-armed with the fourth block.
                    first = Some(c.buf);
                    Some(read(0, c.buf, 3 * BS as u64, BS as u32))
                } else {
                    panic!("the callback panics on {c:?}")
                }
            })
        }));
        if seen <= 1 {
            // None or one had completed (the wait may end by its timeout
            // or a signal; three are in flight again): wait for more.
            assert!(r.is_ok());
            assert!(start.elapsed() < Duration::from_secs(10));
            continue;
        }
        assert!(r.is_err());
        // The re-arm went to the kernel's side of the queue, the
        // completion the panic was given was consumed, and the others are
        // still there to be reaped once: of three in flight, two were
        // reaped and one re-armed.
        assert_eq!(e.in_flight(), 2);
        let got = drain(&mut e);
        let rearmed = first.unwrap();
        assert!(got.contains(&Completion {
            buf: rearmed,
            result: BS as i32
        }));
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(e.buffer_mut(rearmed).unwrap().iter().all(|&b| b == 4));
        break;
    }
}

#[test]
fn an_engine_dropped_while_unwinding_from_the_callback_waits_for_the_kernel() {
    let f = patterned_file(2);
    let (a, mut peer) = UnixStream::pair().unwrap();
    let Some(mut e) = uring(cfg(vec![open_rw(&f), a.into()], 4, BS), 4) else {
        return;
    };
    e.push(read(1, 1, 0, 4096));
    e.push(read(0, 0, 0, 4096));
    e.submit_and_wait(1, Duration::from_secs(5)).unwrap();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        peer.write_all(&[9; 64]).unwrap();
        peer
    });
    let start = Instant::now();
    let r = catch_unwind(AssertUnwindSafe(move || {
        // The engine is moved in: the panic drops it with the socket read
        // in flight, and Drop must wait for the kernel.
        e.reap(|_| panic!("panic with an I/O in flight"));
        drop(e);
    }));
    assert!(r.is_err());
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "Drop returned before the kernel finished the read"
    );
    drop(writer.join().unwrap());
}

// ---------------------------------------------------------------------------
// Drop with I/O in flight.

#[test]
fn drop_waits_for_a_slow_read_before_freeing_the_buffers() {
    let f = patterned_file(1);
    let (a, mut peer) = UnixStream::pair().unwrap();
    let Some(mut e) = uring(cfg(vec![open_rw(&f), a.into()], 4, BS), 4) else {
        return;
    };
    for b in 0..4 {
        e.push(read(1, b, 0, 4096));
    }
    e.submit_and_wait(1, Duration::ZERO).unwrap();
    assert_eq!(e.in_flight(), 4);
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        // Enough for all four reads, some of it after Drop started.
        for _ in 0..4 {
            peer.write_all(&[0xEE; 4096]).unwrap();
        }
        peer
    });
    let start = Instant::now();
    drop(e);
    assert!(start.elapsed() >= Duration::from_millis(250));
    drop(writer.join().unwrap());
    // A fresh engine reuses the heap: the kernel writes into nothing freed
    // (a write after free would show as 0xEE here, or crash the allocator).
    let Some(mut e2) = uring(cfg(vec![open_rw(&f)], 4, BS), 4) else {
        return;
    };
    for b in 0..4 {
        assert!(e2.buffer_mut(b).unwrap().iter().any(|&x| x != 0xEE));
    }
}

#[test]
fn drop_of_an_engine_whose_read_never_completes_returns() {
    let f = patterned_file(1);
    let (a, peer) = UnixStream::pair().unwrap();
    let c = cfg(vec![open_rw(&f), a.into()], 4, BS);
    // Built, used and dropped on one thread (the ring is single-issuer: on
    // another thread Drop's wait fails with EEXIST and it leaks at once).
    // Drop must cancel the read (or leak the buffers after a bound) and
    // return, not wait on 1 s timeouts forever.
    within(15, "Drop with a read that never completes", move || {
        let Some(mut e) = uring(c, 4) else { return };
        e.push(read(1, 0, 0, 4096));
        e.submit_and_wait(1, Duration::ZERO).unwrap();
        drop(e);
    });
    drop(peer);
}

// ---------------------------------------------------------------------------
// Waits.

#[test]
fn a_zero_timeout_returns_at_once_with_the_read_still_in_flight() {
    with_socket(&|e, peer| {
        e.push(read(1, 0, 0, 4096));
        let start = Instant::now();
        for _ in 0..100 {
            e.wait(1, Duration::ZERO).unwrap();
            e.reap(|c| panic!("nothing completed: {c:?}"));
        }
        assert!(start.elapsed() < Duration::from_secs(2));
        assert_eq!(e.in_flight(), 1);
        peer.write_all(&[1]).unwrap();
        assert_eq!(drain(e)[0].result, 1);
    });
}

#[test]
fn a_minimum_larger_than_what_is_in_flight_is_clamped() {
    let f = patterned_file(4);
    on_each(|| vec![open_rw(&f)], BS, &|e: &mut dyn Attack| {
        e.push(read(0, 0, 0, 4096));
        let start = Instant::now();
        e.wait(usize::MAX, Duration::from_secs(10)).unwrap();
        e.wait(0, Duration::from_secs(10)).unwrap();
        let mut got = 0;
        e.reap(|_| {
            got += 1;
            None
        });
        assert_eq!(got, 1);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "waited for I/O that was never pushed"
        );
        // Nothing in flight: no wait at all.
        e.wait(usize::MAX, Duration::MAX).unwrap();
    });
}

/// A wait with `timeout` on a socket read that gets data after 300 ms:
/// whether the completion was there when the wait returned.
fn waited_for_the_data(timeout: Duration) -> Option<bool> {
    let f = patterned_file(1);
    let (a, mut peer) = UnixStream::pair().unwrap();
    let mut e = uring(cfg(vec![open_rw(&f), a.into()], 2, BS), 2)?;
    e.push(read(1, 0, 0, 4096));
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        peer.write_all(&[3; 3]).unwrap();
        peer
    });
    e.submit_and_wait(1, timeout).unwrap();
    let mut got = false;
    e.reap(|_| {
        got = true;
        None
    });
    drop(writer.join().unwrap());
    drain(&mut e);
    Some(got)
}

#[test]
fn a_long_timeout_waits_for_the_completion() {
    assert_ne!(waited_for_the_data(Duration::from_secs(3600)), Some(false));
}

#[test]
fn a_huge_timeout_waits_for_the_completion() {
    assert_ne!(waited_for_the_data(Duration::MAX), Some(false));
    assert_ne!(
        waited_for_the_data(Duration::from_secs(1 << 63)),
        Some(false)
    );
}

// ---------------------------------------------------------------------------
// The submission queue, and the polling modes.

#[test]
fn more_pushes_than_the_ring_has_entries_go_through() {
    // 33,000 buffers: past 16,384 (no fixed buffers) and past the largest
    // ring (32,768 entries), so pushes find the queue full and make room.
    const N: usize = 33_000;
    let f = patterned_file(16);
    let Some(mut e) = uring(cfg(vec![open_rw(&f)], N, 512), 1) else {
        return;
    };
    assert!(!e.features().fixed_buffers);
    for b in 0..N as u32 {
        e.push(read(0, b, u64::from(b % 16) * BS as u64, 512));
    }
    assert_eq!(e.in_flight(), N);
    let got = drain(&mut e);
    assert_eq!(got.len(), N);
    assert!(got.iter().all(|c| c.result == 512));
    for b in [0u32, 15, 32_767, 32_768, N as u32 - 1] {
        let want = (b % 16 + 1) as u8;
        assert!(
            e.buffer_mut(b).unwrap().iter().all(|&x| x == want),
            "buffer {b}"
        );
    }
}

#[test]
fn more_in_flight_than_the_completion_queue_holds_go_through() {
    // 70,000 I/Os in flight: past the completion queue (2 x 32,768), so
    // the kernel keeps the excess on its overflow list while pushes make
    // room in the submission queue; nothing may be lost or livelock.
    const N: usize = 70_000;
    let f = patterned_file(16);
    let c = cfg(vec![open_rw(&f)], N, 512);
    let got = within(120, "70,000 in flight", move || {
        let mut e = uring(c, 1)?;
        for b in 0..N as u32 {
            e.push(read(0, b, u64::from(b % 16) * BS as u64, 512));
        }
        let got = drain(&mut e);
        let last = e.buffer_mut(N as u32 - 1).unwrap().to_vec();
        Some((got, last))
    });
    let Some((got, last)) = got else { return };
    assert_eq!(got.len(), N);
    assert!(got.iter().all(|c| c.result == 512));
    let want = ((N - 1) % 16 + 1) as u8;
    assert!(last.iter().all(|&x| x == want));
}

#[test]
fn a_submission_polling_ring_refuses_and_survives_the_same_attacks() {
    let f = patterned_file(4);
    let (a, mut peer) = UnixStream::pair().unwrap();
    let mut c = cfg(vec![open_rw(&f), a.into()], 4, BS);
    c.sqpoll = Some(SqPoll {
        cpu: None,
        idle_ms: 1,
    });
    let Some(mut e) = uring(c, 4) else { return };
    assert!(e.features().sqpoll);
    e.push(read(1, 0, 0, 4096));
    refused(&mut e, "in-flight buffer", |e| e.push(read(0, 0, 0, 4096)));
    refused(&mut e, "overlong", |e| e.push(read(0, 1, 0, 4097)));
    refused(&mut e, "no such file", |e| e.push(read(2, 1, 0, 512)));
    assert!(e.buffer_mut(0).is_none());
    e.push(read(0, 1, 4096, 4096));
    std::thread::sleep(Duration::from_millis(20)); // the poller sleeps
    e.submit_and_wait(1, Duration::from_secs(5)).unwrap();
    peer.write_all(&[8; 8]).unwrap();
    let got = drain(&mut e);
    assert_eq!(
        got,
        [
            Completion { buf: 0, result: 8 },
            Completion {
                buf: 1,
                result: 4096
            }
        ]
    );
    // Drop with a slow read in flight under SQPOLL.
    e.push(read(1, 2, 0, 4096));
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        peer.write_all(&[8; 8]).unwrap();
        peer
    });
    within(30, "Drop under SQPOLL", move || drop(e));
    drop(writer.join().unwrap());
}

#[test]
fn a_polled_ring_fails_reads_it_cannot_poll_as_data() {
    // IOPOLL on a buffered temp file and on a socket: the kernel cannot
    // poll either; each read must come back (as an error), not hang.
    let f = patterned_file(4);
    let (a, _peer) = UnixStream::pair().unwrap();
    let mut c = cfg(vec![open_rw(&f), a.into()], 4, BS);
    c.iopoll = true;
    // Built on the thread that uses it (single issuer).
    let got = within(30, "IOPOLL reads", move || {
        let Some(mut e) = uring(c, 4) else {
            return Vec::new();
        };
        assert!(e.features().iopoll);
        e.push(read(0, 0, 0, 4096));
        e.push(read(1, 1, 0, 4096));
        refused(&mut e, "overlong", |e| e.push(read(0, 2, 0, 4097)));
        let got = drain(&mut e);
        drop(e);
        got
    });
    assert!(got.len() == 2 || got.is_empty());
    for c in got {
        assert!(c.result == 4096 || c.result < 0, "{c:?}");
    }
}

// ---------------------------------------------------------------------------
// Engines on other threads, file replacement.

#[test]
fn an_engine_built_on_one_thread_works_on_another() {
    // UringEngine is Send; the ring is set up single-issuer when the kernel
    // has it, bound to the thread that first enters the kernel with it:
    // here this one, so the moved engine may fail (EEXIST).
    let f = patterned_file(4);
    let Some(mut e) = uring(cfg(vec![open_rw(&f)], 4, BS), 4) else {
        return;
    };
    e.push(read(0, 0, 0, 4096));
    drain(&mut e);
    let r = within(30, "engine on another thread", move || {
        e.push(read(0, 1, 4096, 4096));
        let r = e.submit_and_wait(1, Duration::from_secs(5));
        (r.map_err(|x| x.to_string()), e)
    });
    let (res, mut e) = r;
    if let Err(err) = &res {
        eprintln!("FINDING: the moved engine fails: {err}");
    }
    // Whatever the result, the engine must still drop cleanly here.
    let _ = e.buffer_mut(0);
    within(30, "Drop of the moved-back engine", move || drop(e));
}

#[test]
fn an_engine_built_on_one_thread_reads_on_another() {
    // The runner builds engines where they run, but nothing stops a caller
    // from moving one before its first use.
    let f = patterned_file(4);
    let Some(mut e) = uring(cfg(vec![open_rw(&f)], 4, BS), 4) else {
        return;
    };
    let got = within(30, "engine on another thread", move || {
        e.push(read(0, 1, 4096, 4096));
        drain(&mut e)
    });
    assert_eq!(
        got,
        [Completion {
            buf: 1,
            result: 4096
        }]
    );
}

#[test]
fn a_push_that_panics_leaves_nothing_in_flight() {
    // 32,769 buffers: the last push finds the 32,768-entry queue full and
    // enters the kernel, which refuses (EEXIST): the single-issuer ring is
    // bound to this thread, which entered the kernel with it first, and the
    // pushes run on another. make_room panics, and the push must not have
    // claimed its buffer by then.
    const N: usize = 32_769;
    let f = patterned_file(1);
    let Some(mut e) = uring(cfg(vec![open_rw(&f)], N, 512), 1) else {
        return;
    };
    e.push(read(0, 0, 0, 512));
    assert_eq!(drain(&mut e)[0].result, 512);
    let (in_flight, idle) = within(60, "pushes on another thread", move || {
        let mut e = e;
        for b in 0..N as u32 - 1 {
            e.push(read(0, b, 0, 512));
        }
        let r = catch_unwind(AssertUnwindSafe(|| e.push(read(0, N as u32 - 1, 0, 512))));
        assert!(r.is_err(), "the kernel took the submission after all");
        let out = (e.in_flight(), e.buffer_mut(N as u32 - 1).is_some());
        drop(e); // its wait fails (EEXIST): Drop leaks the buffers, no hang
        out
    });
    assert_eq!(in_flight, N - 1, "the refused push counts as in flight");
    assert!(idle, "the refused push's buffer is never handed out again");
}

#[test]
fn a_public_slot_table_is_its_own_and_cannot_free_an_engines_buffer() {
    let f = patterned_file(1);
    let (a, mut peer) = UnixStream::pair().unwrap();
    let Some(mut e) = uring(cfg(vec![open_rw(&f), a.into()], 2, BS), 2) else {
        return;
    };
    e.push(read(1, 0, 0, 4096));
    // A table of the same shape, driven through every public method, shares
    // nothing with the engine's private one.
    let mut t = SlotTable::new(2, BS, 2);
    t.claim(&read(1, 0, 0, 4096));
    t.release(0);
    assert!(t.is_idle(0));
    assert!(catch_unwind(AssertUnwindSafe(|| t.release(0))).is_err());
    assert!(e.buffer_mut(0).is_none());
    assert_eq!(e.in_flight(), 1);
    // Sizes past u32 saturate; lengths are still checked.
    let mut big = SlotTable::new(1, usize::MAX, usize::MAX);
    big.claim(&read(u32::MAX - 1, 0, 0, u32::MAX));
    assert!(catch_unwind(AssertUnwindSafe(|| big.claim(&read(0, 0, 0, 1)))).is_err());
    peer.write_all(&[1]).unwrap();
    drain(&mut e);
}

#[test]
fn zero_buffers_or_zero_sized_buffers_are_safe() {
    let f = patterned_file(1);
    for (buffers, size) in [(0, BS), (2, 0), (0, 0)] {
        let mut s = SyncEngine::new(cfg(vec![open_rw(&f)], buffers, size), 1).unwrap();
        assert!(catch_unwind(AssertUnwindSafe(|| s.push(read(0, 0, 0, size as u32 + 1)))).is_err());
        s.push(read(0, 0, 0, size as u32));
        drain(&mut s);
        if let Some(mut e) = uring(cfg(vec![open_rw(&f)], buffers, size), 1) {
            refused(&mut e, "one byte past", |e| {
                e.push(read(0, 0, 0, size as u32 + 1))
            });
            e.push(read(0, 0, 0, size as u32));
            assert_eq!(drain(&mut e)[0].result, size as i32);
        }
    }
}

#[test]
fn a_buffer_size_near_usize_max_is_an_allocation_error() {
    // stride = size.div_ceil(alignment) * alignment wraps to 0 for size >
    // usize::MAX - alignment + 1 (overflow checks are off in release): the
    // pool then allocates 0 bytes (UB for alloc_zeroed) and hands out
    // slices of usize::MAX bytes over it, and the slot table accepts any
    // u32 length, so a read writes into the heap.
    for size in [usize::MAX, usize::MAX - 4094, 1usize << 63 | 1] {
        let r = catch_unwind(|| BufferPool::new(1, size, 4096, 0, None).map(|p| p.size()));
        assert!(
            matches!(r, Ok(Err(EngineError::Alloc { .. }))),
            "size {size:#x}: {:?}",
            r.map(|x| x.map_err(|e| e.to_string()))
        );
        let f = patterned_file(1);
        let r = catch_unwind(|| SyncEngine::new(cfg(vec![open_rw(&f)], 1, size), 1).err());
        assert!(matches!(r, Ok(Some(EngineError::Alloc { .. }))));
    }
}

#[test]
fn huge_pools_and_alignments_are_errors_or_panics_not_ub() {
    for (count, size, align) in [
        (usize::MAX, BS, 4096),
        (1 << 40, BS, 4096),
        (2, usize::MAX / 2, 4096),
        (1, BS, 1 << 62),
        (1, BS, usize::MAX),
    ] {
        let r = catch_unwind(|| BufferPool::new(count, size, align, 0, None).map(|p| p.count()));
        assert!(
            matches!(r, Err(_) | Ok(Err(_))),
            "count {count} size {size} align {align}: allocated"
        );
    }
}
