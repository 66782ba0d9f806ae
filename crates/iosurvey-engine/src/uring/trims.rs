//! Discards on the io_uring engine, done as fio does them: synchronously
//! (`BLKDISCARD`) at the submit that follows their push, each handed to
//! the reap by a NOP that carries its result (as a file operation done
//! synchronously is). The reap has one path for every completion, so the
//! worker's completion handler stays inlined there; a discard's latency is
//! the caller's submit to its reap: the ioctl and the NOP's trip.

use super::{Sqe, UringEngine, TRIM_DONE};
use io_uring::opcode;
use std::os::fd::AsFd;

impl UringEngine {
    /// Does the discards pushed since the last submit, in order, and
    /// queues a NOP for each, marked with its slot and carrying its result.
    #[cold]
    #[inline(never)]
    pub(super) fn run_trims(&mut self) {
        let mut trims = std::mem::take(&mut self.trims);
        for req in trims.drain(..) {
            let fd = self.files[req.file as usize].as_fd();
            let result = crate::discard::discard(fd, req.offset, req.len);
            self.sync_results[req.buf as usize] = Some(result);
            // The push of the discard reserved its entry and left it free.
            Self::reserve(
                &self.ring.submitter(),
                &self.sq,
                self.sqpoll,
                &mut self.unbound,
            );
            let entry = Sqe::from_entry(
                opcode::Nop::new()
                    .build()
                    .user_data(TRIM_DONE | u64::from(req.buf)),
            );
            // SAFETY: the reserve left a free entry, and no view of the
            // crate's queue is alive; a NOP names no buffer or file, and
            // the slot stays held until its completion is reaped.
            unsafe { self.sq.push_with(|sqe| *sqe = entry) };
        }
        // The list keeps its room for the next discards.
        self.trims = trims;
    }
}
