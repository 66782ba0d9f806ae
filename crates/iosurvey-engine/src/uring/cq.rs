//! The completion ring mapped a second time, so that the reap reads each
//! completion in place and retires it with one store, without the io-uring
//! crate's queue view.
//!
//! The crate's views stay valid beside this one: each reads the shared
//! head when it is made and stores it back when dropped. No crate view of
//! the completion queue may be alive across a reap here (its drop would
//! store an older head, and the kernel would post over live entries).

use super::sq::{Map, RawParams};
use io_uring::IoUring;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};

/// `IORING_OFF_CQ_RING`, the mmap offset of the completion ring (the same
/// pages as the submission ring's on kernels with `IORING_FEAT_SINGLE_MMAP`).
const OFF_CQ_RING: libc::off_t = 0x800_0000;

/// The kernel's `struct io_uring_cqe` (the engine never asks for 32-byte
/// entries).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Cqe {
    pub(crate) user_data: u64,
    pub(crate) res: i32,
    flags: u32,
}

const _: () = assert!(std::mem::size_of::<Cqe>() == 16);

/// `IORING_SETUP_CQE32`: 32-byte completions (never set by the engine; a
/// ring with it is refused here).
const SETUP_CQE32: u32 = 1 << 11;

/// The completion ring of one `IoUring`, entry by entry.
pub(crate) struct CqRing {
    head: *const AtomicU32,
    tail: *const AtomicU32,
    mask: u32,
    cqes: *const Cqe,
    _ring: Map,
}

// SAFETY: the pointers are into the mapping this value owns; the engine
// that holds it is used by one thread at a time (`&mut self` for a reap).
unsafe impl Send for CqRing {}

impl CqRing {
    /// Maps the completion ring of `ring` a second time.
    pub(crate) fn new(ring: &IoUring) -> std::io::Result<CqRing> {
        let p = RawParams::of(ring);
        if p.flags & SETUP_CQE32 != 0 {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        let off = &p.cq_off;
        let len = off.cqes as usize + p.cq_entries as usize * std::mem::size_of::<Cqe>();
        let map = Map::new(ring.as_raw_fd(), OFF_CQ_RING, len)?;
        let at = |o: u32| map.ptr.wrapping_add(o as usize);
        // SAFETY: the offset is the kernel's, inside the mapping.
        let mask = unsafe { at(off.ring_mask).cast::<u32>().read() };
        Ok(CqRing {
            head: at(off.head).cast(),
            tail: at(off.tail).cast(),
            mask,
            cqes: at(off.cqes).cast(),
            _ring: map,
        })
    }

    /// The head (the next entry to read) and the tail (one past the last
    /// entry the kernel posted): the entries between them are ready.
    #[inline(always)]
    pub(crate) fn bounds(&self) -> (u32, u32) {
        // SAFETY: both are in the ring's mapping; only this process writes
        // the head, the kernel writes the tail (and the entries before it,
        // which the acquire makes visible).
        unsafe {
            (
                (*self.head).load(Ordering::Relaxed),
                (*self.tail).load(Ordering::Acquire),
            )
        }
    }

    /// No completion is ready.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        let (head, tail) = self.bounds();
        head == tail
    }

    /// Takes the entry at `head`, which [`CqRing::bounds`] said is ready,
    /// and hands its place back to the kernel: the head moves past it at
    /// once, so that a panic later in the reap leaves it retired.
    ///
    /// # Safety
    /// `head` is the ring's head, and an entry is ready there.
    #[inline(always)]
    pub(crate) unsafe fn take(&mut self, head: u32) -> Cqe {
        // SAFETY: the caller's contract: the entry at `head` was posted
        // (the tail's acquire load made it visible) and not yet retired;
        // it is copied out before the head moves past it.
        unsafe {
            let cqe = *self.cqes.add((head & self.mask) as usize);
            (*self.head).store(head.wrapping_add(1), Ordering::Release);
            cqe
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use io_uring::opcode;

    #[test]
    fn completions_read_in_place_are_the_kernels_and_are_retired() {
        let Ok(mut ring) = IoUring::new(4) else {
            iosurvey_testkit::skip!("no io_uring here");
        };
        let mut cq = CqRing::new(&ring).unwrap();
        assert!(cq.is_empty());
        for k in 1..=3u64 {
            let nop = opcode::Nop::new().build().user_data(k);
            // SAFETY: a NOP names nothing.
            unsafe { ring.submission().push(&nop) }.unwrap();
        }
        ring.submit_and_wait(3).unwrap();
        let (mut head, tail) = cq.bounds();
        assert_eq!(tail.wrapping_sub(head), 3);
        let mut got = Vec::new();
        while head != tail {
            // SAFETY: an entry is ready at the head.
            let c = unsafe { cq.take(head) };
            head = head.wrapping_add(1);
            got.push((c.user_data, c.res));
        }
        assert_eq!(got, [(1, 0), (2, 0), (3, 0)]);
        assert!(cq.is_empty());
        assert!(ring.completion().is_empty(), "the crate sees them retired");
    }
}
