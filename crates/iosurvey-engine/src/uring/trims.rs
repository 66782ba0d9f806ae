//! Discards on the io_uring engine, done as fio does them: synchronously
//! (`BLKDISCARD`) at the submit that follows their push, and handed to the
//! next reap as completions already there, ahead of the ring's. A discard
//! takes no entry of the ring, and its latency is the caller's submit to
//! its reap: the ioctl, not a trip through the ring.

use super::UringEngine;
use crate::{Completion, Request};
use std::os::fd::AsFd;

impl UringEngine {
    /// Does the discards pushed since the last submit, in order; each
    /// completion waits for the next reap.
    #[cold]
    #[inline(never)]
    pub(super) fn run_trims(&mut self) {
        for req in self.trims.drain(..) {
            let fd = self.files[req.file as usize].as_fd();
            let result = crate::discard::discard(fd, req.offset, req.len);
            self.trimmed.push(Completion {
                buf: req.buf,
                result,
            });
        }
    }

    /// Hands the discards done to `f`, as the reap hands the ring's
    /// completions: the buffer stays held while `f` sees it, and a request
    /// `f` returns for it is pushed (a discard among them is done at the
    /// next submit).
    #[cold]
    #[inline(never)]
    pub(super) fn reap_trimmed(&mut self, f: &mut impl FnMut(Completion) -> Option<Request>) {
        let mut done = std::mem::take(&mut self.trimmed);
        for c in done.drain(..) {
            let kept = self.slots.hold(c.buf);
            let Some(req) = f(c) else {
                continue;
            };
            // A re-arm needs a free entry: the ring's completions count
            // their room after these (a drop's reaps re-arm nothing).
            Self::reserve(
                &self.ring.submitter(),
                &self.sq,
                self.sqpoll,
                &mut self.unbound,
            );
            kept.rearm(&req);
            // SAFETY: the re-arm checked that `req.buf` is a slot, and the
            // slot table has one per buffer of the pool.
            let ptr = unsafe { self.pool.ptr_unchecked(req.buf) };
            // SAFETY: the reserve left a free entry, and no view of the
            // crate's queue is alive; the re-arm claimed the request.
            unsafe { self.push_claimed(ptr, &req) };
        }
        // The list keeps its room for the next discards.
        if self.trimmed.is_empty() {
            self.trimmed = done;
        }
    }
}
