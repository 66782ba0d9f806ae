//! A fake engine for the worker tests: it completes every request at
//! submit time (after `delay`), records what was issued, and fails the
//! requests it is told to.

use iosurvey_engine::{Completion, Engine, Request};
use std::os::fd::OwnedFd;
use std::time::Duration;

pub(crate) struct FakeEngine {
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
    /// How long each submission with requests takes.
    pub delay: Duration,
    buf: Vec<u8>,
    fd: Option<OwnedFd>,
}

impl FakeEngine {
    /// An engine that completes every request whole, at once.
    pub fn new() -> Self {
        FakeEngine {
            queued: Vec::new(),
            done: Vec::new(),
            issued: Vec::new(),
            fail_at: None,
            sticky: false,
            errno: 0,
            short_from: None,
            delay: Duration::ZERO,
            buf: vec![0; 4096],
            fd: None,
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
        self.queued.push(req);
    }
    fn submit_and_wait(&mut self, _min: usize) -> std::io::Result<()> {
        if !self.queued.is_empty() {
            std::thread::sleep(self.delay);
        }
        for req in self.queued.drain(..) {
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
            self.done.push(Completion {
                tag: req.tag,
                result,
            });
        }
        Ok(())
    }
    fn reap(&mut self, mut f: impl FnMut(Completion)) {
        for c in self.done.drain(..) {
            f(c);
        }
    }
    fn buffer_mut(&mut self, _idx: u32) -> &mut [u8] {
        &mut self.buf
    }
    fn in_flight(&self) -> usize {
        self.queued.len() + self.done.len()
    }
    /// Swaps like a real engine; the first file handed back is /dev/null.
    fn replace_file(&mut self, _idx: u32, fd: OwnedFd) -> std::io::Result<OwnedFd> {
        match self.fd.replace(fd) {
            Some(old) => Ok(old),
            None => Ok(std::fs::File::open("/dev/null")?.into()),
        }
    }
}
