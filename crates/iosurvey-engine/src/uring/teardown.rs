//! How an io_uring engine lets go: the I/O in flight is waited for, then
//! cancelled, for a bounded time; what is still in flight after that keeps
//! its buffers for good. The kernel never writes into freed memory, and a
//! drop never hangs on an I/O that does not end (a socket with no data, a
//! device that stopped answering).

use super::{is_transient, UringEngine, CANCEL};
use crate::Engine;
use io_uring::{opcode, types};
use std::time::{Duration, Instant};

/// How long a drop lets the I/O in flight finish on its own before it asks
/// the kernel to cancel it.
pub(super) const DROP_GRACE: Duration = Duration::from_secs(1);

/// How long a drop waits in all, the cancel included.
pub(super) const DROP_WAIT: Duration = Duration::from_secs(4);

impl UringEngine {
    /// Waits for every I/O in flight: for [`DROP_GRACE`] as it is, then
    /// cancelled where the kernel can, until [`DROP_WAIT`] is up or a wait
    /// fails (`EEXIST` on a thread the ring is not bound to). Returns
    /// whether none is left.
    fn wind_down(&mut self) -> bool {
        let start = Instant::now();
        self.reap_until(start + DROP_GRACE);
        if self.slots.in_flight() > 0 {
            self.cancel_all();
            self.reap_until(start + DROP_WAIT);
        }
        self.slots.in_flight() == 0
    }

    /// Reaps completions until nothing is in flight, `deadline` passes or
    /// a wait fails.
    fn reap_until(&mut self, deadline: Instant) {
        while self.slots.in_flight() > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.wait_for_some(left).is_err() {
                return;
            }
            // Nothing is re-armed: no room is needed, and none is made.
            self.reap_with::<false>(|_| None);
        }
    }

    /// Waits up to `timeout` for a completion. A kernel that takes no
    /// timeout with a wait (before 5.11) is polled every millisecond
    /// instead, so that this never blocks past `timeout`.
    fn wait_for_some(&mut self, timeout: Duration) -> std::io::Result<()> {
        if self.ext_arg {
            return self.submit_and_wait(1, timeout);
        }
        match self.ring.submit() {
            Ok(_) => {}
            Err(e) if is_transient(&e) => {}
            Err(e) => return Err(e),
        }
        std::thread::sleep(timeout.min(Duration::from_millis(1)));
        Ok(())
    }

    /// Asks the kernel to cancel every request of the ring: one
    /// `ASYNC_CANCEL` with `IORING_ASYNC_CANCEL_ANY` (5.19+; an older
    /// kernel fails it with `EINVAL`). A cancelled I/O completes with
    /// `-ECANCELED`; one the kernel cannot stop (a block I/O already at the
    /// device) completes in its own time, or not within the drop's bound.
    fn cancel_all(&mut self) {
        if !self.cancel {
            return;
        }
        let entry = opcode::AsyncCancel2::new(types::CancelBuilder::any())
            .build()
            .user_data(CANCEL);
        // The crate's queue writes an entry this engine's ring then no
        // longer knows.
        self.sq.forget_templates();
        let (submitter, mut sq, _) = self.ring.split();
        sq.sync();
        // SAFETY: a cancel names no buffer, path or file: the kernel reads
        // and writes nothing of the engine's for it.
        if unsafe { sq.push(&entry) }.is_err() {
            // The queue is full of entries no wait could submit.
            return;
        }
        sq.sync();
        // On a transient error the cancel stays queued for the next wait;
        // on another the wait fails as well, and the drop gives up.
        let _ = submitter.submit();
    }
}

impl Drop for UringEngine {
    /// Frees the buffers only when the kernel is done with them.
    ///
    /// A ring no thread has entered has issued nothing: whatever is queued
    /// goes with it. Otherwise `wind_down` waits for the I/O in flight,
    /// and when some is still there after its bound, the kernel may yet
    /// write into those buffers (into the pages it pinned for fixed
    /// buffers, which the allocator would hand out again) or read an
    /// open's path and `open_how`: the pool and the open arguments are
    /// leaked, never freed.
    ///
    /// The rest is released as usual even then. The ring's queues are
    /// pages the kernel allocated and maps into the process: unmapping our
    /// view frees nothing it writes, and closing the ring makes the kernel
    /// cancel what it can in its own time, taking no new entries. Each I/O
    /// the kernel took holds its own reference to its file, so the files
    /// close too.
    fn drop(&mut self) {
        let done = self.unbound || self.slots.in_flight() == 0 || self.wind_down();
        if !done {
            self.pool.leak();
            std::mem::take(&mut self.open_args).leak();
            // Not unregistering the files: on older kernels that waits for
            // every I/O using the table.
            return;
        }
        // A registered table holds its own references to the files, and
        // the kernel drops a ring's references some time after the ring is
        // closed (after the process exits, even). Dropping them now lets
        // the next run on the target get its exclusive open and its lock at
        // once.
        if self.registered_files {
            let _ = self.ring.submitter().unregister_files();
        }
    }
}
