//! A fake engine for the worker tests: it completes every queued request
//! at submit time, after `delay` (exact on a fake clock), records what
//! was issued, and fails the requests it is told to. It keeps the real
//! engines' rules: a request must fit its buffer and take an idle one.

use iosurvey_engine::{Completion, Engine, Request, SlotTable};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// Buffers the fake engine has, and their size.
const BUFFERS: usize = 64;
const BUFFER_SIZE: usize = 4096;
/// Files it has: two, for the members of an array.
const FILES: usize = 2;

pub(crate) struct FakeEngine {
    slots: SlotTable,
    queued: Vec<Request>,
    done: Vec<Completion>,
    /// Every request submitted, in order.
    pub issued: Vec<Request>,
    /// Request number `fail_at` (0-based) fails with `errno`, or with
    /// `sticky` every request from it on.
    pub fail_at: Option<usize>,
    pub sticky: bool,
    pub errno: i32,
    /// Every request from number `k` on moves only `n` bytes (0 as at the
    /// end of a file truncated under the run): `Some((k, n))`.
    pub short_from: Option<(usize, i32)>,
    /// How long each submission with requests takes: real time, or exact
    /// time on `clock` when there is one.
    pub delay: Duration,
    /// A clock (nanoseconds) that each submission moves on by `delay`
    /// instead of taking it, as hyperfine's mock executor does: latencies
    /// are then known exactly, whatever else runs on the machine.
    pub clock: Option<Rc<Cell<u64>>>,
    /// Request number `k` completes only after `m` more calls to
    /// `submit_and_wait`: `Some((k, m))`, a slow I/O among fast ones.
    pub hold: Option<(usize, usize)>,
    held: Option<(Completion, usize)>,
    /// Every call to `submit_and_wait`: how many completions it was to
    /// wait for, and its timeout.
    pub waits: Vec<(usize, Duration)>,
    buf: Vec<u8>,
    /// Runs one request per submission, oldest first (see [`Serial`]).
    serial: bool,
}

impl FakeEngine {
    /// An engine that completes every request whole, at once.
    pub fn new() -> Self {
        FakeEngine {
            slots: SlotTable::new(BUFFERS, BUFFER_SIZE, FILES),
            queued: Vec::new(),
            done: Vec::new(),
            issued: Vec::new(),
            fail_at: None,
            sticky: false,
            errno: 0,
            short_from: None,
            delay: Duration::ZERO,
            clock: None,
            hold: None,
            held: None,
            waits: Vec::new(),
            buf: vec![0; BUFFERS * BUFFER_SIZE],
            serial: false,
        }
    }

    /// An engine that fails request `at` with `errno` (and every request
    /// after it when `sticky`).
    pub fn failing(at: usize, sticky: bool, errno: i32) -> Self {
        FakeEngine {
            fail_at: Some(at),
            sticky,
            errno,
            ..FakeEngine::new()
        }
    }

    /// An engine whose requests from number `at` on move `bytes` bytes
    /// each instead of their length, without an errno.
    pub fn short(at: usize, bytes: i32) -> Self {
        FakeEngine {
            short_from: Some((at, bytes)),
            ..FakeEngine::new()
        }
    }
}

impl Engine for FakeEngine {
    fn push(&mut self, req: Request) {
        self.slots.claim(&req);
        self.queued.push(req);
    }
    fn submit_and_wait(&mut self, min: usize, timeout: Duration) -> std::io::Result<()> {
        self.waits.push((min, timeout));
        match &mut self.held {
            Some((c, 0)) => {
                self.done.push(*c);
                self.held = None;
            }
            Some((_, left)) => *left -= 1,
            None => {}
        }
        if !self.done.is_empty() || self.queued.is_empty() {
            // Completions are ready, or none can come: no wait.
            return Ok(());
        }
        match &self.clock {
            Some(clock) => clock.set(clock.get() + self.delay.as_nanos() as u64),
            None => std::thread::sleep(self.delay),
        }
        let n = if self.serial { 1 } else { self.queued.len() };
        for req in self.queued.drain(..n) {
            let n = self.issued.len();
            let fail = match self.fail_at {
                Some(k) if self.sticky => n >= k,
                Some(k) => n == k,
                None => false,
            };
            let result = match self.short_from {
                _ if fail => -self.errno,
                Some((k, bytes)) if n >= k => bytes,
                _ => req.len as i32,
            };
            self.issued.push(req);
            let c = Completion {
                buf: req.buf,
                result,
            };
            match self.hold {
                Some((k, m)) if k == n => self.held = Some((c, m)),
                _ => self.done.push(c),
            }
        }
        Ok(())
    }
    fn reap(&mut self, mut f: impl FnMut(Completion) -> Option<Request>) {
        let mut done = std::mem::take(&mut self.done);
        for c in done.drain(..) {
            self.slots.release(c.buf);
            if let Some(req) = f(c) {
                self.push(req);
            }
        }
        // Keep the allocation for the next batch.
        self.done = done;
    }
    fn buffer_mut(&mut self, idx: u32) -> Option<&mut [u8]> {
        if !self.slots.is_idle(idx) {
            return None;
        }
        let start = idx as usize * BUFFER_SIZE;
        Some(&mut self.buf[start..start + BUFFER_SIZE])
    }
    fn in_flight(&self) -> usize {
        self.slots.in_flight()
    }
    /// The fake engine moves blocks only: the file operations are the
    /// real engines' (their tests run on temp directories).
    fn push_file(&mut self, _slot: u32, op: iosurvey_engine::FileOp) {
        panic!("the fake engine has no file operations: {op:?}")
    }
    fn open_file(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        None
    }
}

/// The fake engine as a one-at-a-time engine, like the sync engine: each
/// submission runs the oldest request alone.
pub(crate) struct Serial(pub FakeEngine);

impl Serial {
    pub fn new() -> Self {
        Serial(FakeEngine {
            serial: true,
            ..FakeEngine::new()
        })
    }
}

impl Engine for Serial {
    const ONE_AT_A_TIME: bool = true;

    fn push(&mut self, req: Request) {
        self.0.push(req);
    }
    fn next_up(&self) -> Option<u32> {
        self.0.queued.first().map(|r| r.buf)
    }
    fn submit_and_wait(&mut self, min: usize, timeout: Duration) -> std::io::Result<()> {
        self.0.submit_and_wait(min, timeout)
    }
    fn reap(&mut self, f: impl FnMut(Completion) -> Option<Request>) {
        self.0.reap(f);
    }
    fn buffer_mut(&mut self, idx: u32) -> Option<&mut [u8]> {
        self.0.buffer_mut(idx)
    }
    fn in_flight(&self) -> usize {
        self.0.in_flight()
    }
    fn push_file(&mut self, slot: u32, op: iosurvey_engine::FileOp) {
        self.0.push_file(slot, op);
    }
    fn open_file(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        None
    }
}
