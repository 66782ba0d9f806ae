//! The submission ring mapped a second time, so that a read or a write is
//! written straight into its ring entry: the io-uring crate's `push` takes
//! a finished entry and copies it, which costs a second 64-byte copy per
//! I/O.
//!
//! The crate's own queue views stay valid beside this one: each view reads
//! the shared tail when it is made and stores it back when dropped, and
//! [`SqRing::push_with`] stores the tail after every entry. No crate view
//! may be alive across a `push_with` (its drop would store an older tail).
//!
//! The ring also remembers which template each of its entries holds (see
//! [`SqRing::push_keyed`]): a read or write pushed into an entry that
//! already holds its file's and op's template writes only the fields that
//! change from one I/O to the next, not the whole 64 bytes.

use super::sqe::Sqe;
use io_uring::{IoUring, Parameters};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};

/// The kernel's `struct io_uring_params`, which [`Parameters`] wraps
/// (`repr(transparent)`): its offsets of the submission ring's fields.
#[repr(C)]
pub(super) struct RawParams {
    sq_entries: u32,
    pub(super) cq_entries: u32,
    pub(super) flags: u32,
    sq_thread_cpu: u32,
    sq_thread_idle: u32,
    features: u32,
    wq_fd: u32,
    resv: [u32; 3],
    sq_off: SqOffsets,
    pub(super) cq_off: CqOffsets,
}

/// The kernel's `struct io_cqring_offsets`.
#[repr(C)]
pub(super) struct CqOffsets {
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) ring_mask: u32,
    pub(super) ring_entries: u32,
    overflow: u32,
    pub(super) cqes: u32,
    flags: u32,
    resv1: u32,
    user_addr: u64,
}

impl RawParams {
    /// The parameters the kernel filled in for `ring`.
    pub(super) fn of(ring: &IoUring) -> &RawParams {
        let params: *const Parameters = ring.params();
        // SAFETY: `Parameters` is `repr(transparent)` over the kernel's
        // `io_uring_params`, which `RawParams` mirrors (the sizes are
        // checked below); the ring's parameters are as the kernel filled
        // them in, and live as long as the ring.
        unsafe { &*params.cast::<RawParams>() }
    }
}

/// The kernel's `struct io_sqring_offsets`.
#[repr(C)]
struct SqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    flags: u32,
    dropped: u32,
    array: u32,
    resv1: u32,
    user_addr: u64,
}

const _: () = assert!(std::mem::size_of::<RawParams>() == std::mem::size_of::<Parameters>());
const _: () = assert!(std::mem::size_of::<RawParams>() == 120);
const _: () = assert!(std::mem::size_of::<Sqe>() == 64);

/// `IORING_OFF_SQ_RING` and `IORING_OFF_SQES`, the mmap offsets of the
/// ring's head, tail and index array, and of its entries.
const OFF_SQ_RING: libc::off_t = 0;
const OFF_SQES: libc::off_t = 0x1000_0000;
/// `IORING_SETUP_NO_SQARRAY`: the ring has no index array (the engine
/// never sets it; a ring with it is refused here).
const SETUP_NO_SQARRAY: u32 = 1 << 16;

/// One shared mapping, unmapped on drop.
pub(super) struct Map {
    pub(super) ptr: *mut u8,
    len: usize,
}

impl Map {
    pub(super) fn new(fd: i32, offset: libc::off_t, len: usize) -> std::io::Result<Map> {
        // SAFETY: a fresh shared mapping of the ring's own memory; nothing
        // else is at the address the kernel picks.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                offset,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Map {
            ptr: ptr.cast(),
            len,
        })
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The submission ring of one `IoUring`, entry by entry.
pub(crate) struct SqRing {
    head: *const AtomicU32,
    tail: *const AtomicU32,
    mask: u32,
    entries: u32,
    sqes: *mut Sqe,
    /// For each entry, the key of the template it holds whole (see
    /// [`SqRing::push_keyed`]), or [`NO_TEMPLATE`].
    held: Box<[u64]>,
    _ring: Map,
    _sqes: Map,
}

// SAFETY: the pointers are into mappings this value owns; the engine that
// holds it is used by one thread at a time (`&mut self` for every push).
unsafe impl Send for SqRing {}

impl SqRing {
    /// Maps the submission ring of `ring` a second time.
    pub(crate) fn new(ring: &IoUring) -> std::io::Result<SqRing> {
        let p = RawParams::of(ring);
        if p.flags & SETUP_NO_SQARRAY != 0 {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        let fd = ring.as_raw_fd();
        let ring_len = p.sq_off.array as usize + p.sq_entries as usize * 4;
        let ring_map = Map::new(fd, OFF_SQ_RING, ring_len)?;
        let sqes_map = Map::new(
            fd,
            OFF_SQES,
            p.sq_entries as usize * std::mem::size_of::<Sqe>(),
        )?;
        let at = |off: u32| ring_map.ptr.wrapping_add(off as usize);
        // SAFETY: the offsets are the kernel's, inside the mapping.
        let (mask, entries) = unsafe {
            (
                at(p.sq_off.ring_mask).cast::<u32>().read(),
                at(p.sq_off.ring_entries).cast::<u32>().read(),
            )
        };
        Ok(SqRing {
            head: at(p.sq_off.head).cast(),
            tail: at(p.sq_off.tail).cast(),
            mask,
            entries,
            sqes: sqes_map.ptr.cast(),
            held: vec![NO_TEMPLATE; entries as usize].into_boxed_slice(),
            _ring: ring_map,
            _sqes: sqes_map,
        })
    }

    /// The ring has no free entry (the kernel, or a polling thread, has
    /// not taken the ones queued yet).
    #[inline(always)]
    pub(crate) fn is_full(&self) -> bool {
        // SAFETY: both are in the ring's mapping; the kernel writes the
        // head, only this process the tail.
        let (head, tail) = unsafe {
            (
                (*self.head).load(Ordering::Acquire),
                (*self.tail).load(Ordering::Relaxed),
            )
        };
        tail.wrapping_sub(head) >= self.entries
    }

    /// Entries queued and not yet taken by the kernel.
    #[inline(always)]
    pub(crate) fn queued(&self) -> u32 {
        self.entries - self.free()
    }

    /// Free entries.
    #[inline(always)]
    pub(crate) fn free(&self) -> u32 {
        // SAFETY: as in `is_full`.
        let (head, tail) = unsafe {
            (
                (*self.head).load(Ordering::Acquire),
                (*self.tail).load(Ordering::Relaxed),
            )
        };
        self.entries - tail.wrapping_sub(head)
    }

    /// Writes the next entry in place with `fill`, then hands it to the
    /// kernel's side of the queue (the next submit takes it).
    ///
    /// # Safety
    /// The ring has a free entry, no view of the io-uring crate's queue is
    /// alive, and the entry `fill` writes names only buffers, paths and
    /// files that stay valid until its completion is reaped.
    #[inline(always)]
    pub(crate) unsafe fn push_with(&mut self, fill: impl FnOnce(&mut Sqe)) {
        // SAFETY: the caller's contract; the entry holds no template after.
        unsafe {
            self.push_keyed(|sqe, _| {
                fill(sqe);
                NO_TEMPLATE
            })
        }
    }

    /// As [`SqRing::push_with`], but `fill` is also given the key of the
    /// template the entry holds whole (written by an earlier `fill` that
    /// returned that key, and untouched since), or [`NO_TEMPLATE`], and
    /// returns the key of the template it leaves there whole: `fill` may
    /// then skip writing the fields that the template already holds.
    ///
    /// # Safety
    /// As [`SqRing::push_with`]; and `fill` returns a key other than
    /// [`NO_TEMPLATE`] only when every field it did not write is that
    /// template's, and does not panic once it has written part of the
    /// entry (the entry would keep its old key).
    #[inline(always)]
    pub(crate) unsafe fn push_keyed(&mut self, fill: impl FnOnce(&mut Sqe, u64) -> u64) {
        debug_assert!(!self.is_full());
        // SAFETY: the caller's contract; the slot at the tail is free, so
        // the kernel reads nothing of it until the tail moves past it. The
        // slot is below `entries`, the length of `held`.
        unsafe {
            let tail = (*self.tail).load(Ordering::Relaxed);
            let i = (tail & self.mask) as usize;
            let held = self.held.get_unchecked_mut(i);
            *held = fill(&mut *self.sqes.add(i), *held);
            (*self.tail).store(tail.wrapping_add(1), Ordering::Release);
        }
    }

    /// Forgets which templates the entries hold: before anything writes
    /// them other than through this ring (the io-uring crate's queue).
    pub(crate) fn forget_templates(&mut self) {
        self.held.fill(NO_TEMPLATE);
    }
}

/// The key of no template (see [`SqRing::push_keyed`]).
pub(crate) const NO_TEMPLATE: u64 = 0;

#[cfg(test)]
mod tests {
    use super::*;
    use io_uring::opcode;

    fn nop(user_data: u64) -> io_uring::squeue::Entry {
        opcode::Nop::new().build().user_data(user_data)
    }

    #[test]
    fn entries_written_in_place_and_through_the_crate_go_out_in_order() {
        let Ok(mut ring) = IoUring::new(4) else {
            iosurvey_testkit::skip!("no io_uring here");
        };
        let mut sq = SqRing::new(&ring).unwrap();
        assert_eq!(sq.free(), 4);
        // SAFETY: a NOP names nothing; there is room, and no crate view.
        unsafe { sq.push_with(|e| *e = Sqe::from_entry(nop(1))) };
        // SAFETY: as above.
        unsafe { ring.submission().push(&nop(2)) }.unwrap();
        for k in [3, 4] {
            // SAFETY: as above; the crate's view was dropped.
            unsafe { sq.push_with(|e| *e = Sqe::from_entry(nop(k))) };
        }
        assert!(sq.is_full(), "four queued in a ring of four");
        assert_eq!(sq.free(), 0);
        ring.submit_and_wait(4).unwrap();
        assert_eq!(sq.free(), 4, "the kernel took all four");
        let got: Vec<u64> = ring.completion().map(|c| c.user_data()).collect();
        assert_eq!(got, [1, 2, 3, 4]);
    }

    #[test]
    fn an_entry_is_said_to_hold_a_template_only_while_it_does() {
        let Ok(mut ring) = IoUring::new(2) else {
            iosurvey_testkit::skip!("no io_uring here");
        };
        let mut sq = SqRing::new(&ring).unwrap();
        let entries = sq.free();
        // What each push finds in its entry, in ring order.
        let mut found = Vec::new();
        let round = |ring: &mut IoUring, sq: &mut SqRing, key: u64, found: &mut Vec<u64>| {
            for k in 0..entries {
                // SAFETY: a NOP names nothing; there is room, and no crate
                // view; the NOP is all the template `key` stands for here.
                unsafe {
                    sq.push_keyed(|e, held| {
                        found.push(held);
                        *e = Sqe::from_entry(nop(u64::from(k)));
                        key
                    })
                };
            }
            ring.submit_and_wait(entries as usize).unwrap();
            ring.completion().for_each(drop);
        };
        round(&mut ring, &mut sq, 7, &mut found);
        round(&mut ring, &mut sq, 7, &mut found);
        round(&mut ring, &mut sq, NO_TEMPLATE, &mut found);
        round(&mut ring, &mut sq, 9, &mut found);
        sq.forget_templates();
        round(&mut ring, &mut sq, 9, &mut found);
        // A plain push leaves no template.
        // SAFETY: as above.
        unsafe { sq.push_with(|e| *e = Sqe::from_entry(nop(5))) };
        ring.submit_and_wait(1).unwrap();
        ring.completion().for_each(drop);
        round(&mut ring, &mut sq, 9, &mut found);
        let n = entries as usize;
        // Each round finds what the one before left; the last starts one
        // entry on, after the plain push's, which it finds last.
        let want: Vec<u64> = [0, 7, 7, 0, 0]
            .iter()
            .flat_map(|&k| std::iter::repeat_n(k, n))
            .chain(std::iter::repeat_n(9, n - 1))
            .chain(std::iter::once(NO_TEMPLATE))
            .collect();
        assert_eq!(found, want);
    }
}
