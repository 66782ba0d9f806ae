//! Which buffers have an I/O in flight: the check that keeps every engine's
//! safe API sound. A request must fit its buffer, name a file of the table
//! and take a buffer that no other I/O holds; a buffer comes free only when
//! its completion is reaped.

use crate::Request;

/// One flag per buffer, set from push to reap.
#[derive(Debug)]
pub struct SlotTable {
    busy: Vec<bool>,
    in_flight: usize,
    buffer_size: u32,
    files: u32,
}

impl SlotTable {
    /// `buffers` buffers of `buffer_size` bytes, over a table of `files`
    /// files.
    pub fn new(buffers: usize, buffer_size: usize, files: usize) -> Self {
        SlotTable {
            busy: vec![false; buffers],
            in_flight: 0,
            buffer_size: u32::try_from(buffer_size).unwrap_or(u32::MAX),
            files: u32::try_from(files).unwrap_or(u32::MAX),
        }
    }

    /// Takes `req`'s buffer for it.
    ///
    /// # Panics
    /// When the request is longer than a buffer, names no file of the
    /// table, or its buffer is out of range or already in flight.
    #[inline]
    pub fn claim(&mut self, req: &Request) {
        let fits = (req.len <= self.buffer_size) & (req.file < self.files);
        match self.busy.get_mut(req.buf as usize) {
            Some(b) if fits && !*b => *b = true,
            _ => self.refuse(*req),
        }
        self.in_flight += 1;
    }

    /// Takes buffer `buf` for a file operation moving `len` bytes (none
    /// for an open, sync or close).
    ///
    /// # Panics
    /// When `len` is larger than a buffer, or the buffer is out of range or
    /// already in flight.
    pub fn claim_buffer(&mut self, buf: u32, len: u32) {
        let req = Request {
            file: 0,
            op: crate::Op::Read,
            offset: 0,
            len,
            buf,
        };
        match self.busy.get_mut(buf as usize) {
            Some(b) if len <= self.buffer_size && !*b => *b = true,
            _ => self.refuse(req),
        }
        self.in_flight += 1;
    }

    /// Holds buffer `buf`, whose completion is being reaped, while the
    /// caller decides what comes next: the buffer stays taken if it is
    /// re-armed for itself ([`Kept::rearm`]), and is let go otherwise, when
    /// the [`Kept`] is dropped, by a panic too.
    ///
    /// # Panics
    /// When `buf` was not in flight (a completion the engine never asked
    /// for).
    #[inline]
    pub(crate) fn hold(&mut self, buf: u32) -> Kept<'_> {
        if self.busy.get(buf as usize) != Some(&true) {
            Self::stray(buf);
        }
        Kept {
            table: self,
            buf,
            held: true,
        }
    }

    #[cold]
    #[inline(never)]
    fn refuse(&self, req: Request) -> ! {
        panic!(
            "request refused: {req:?} (buffers: {} of {} bytes, {} in flight; files: {})",
            self.busy.len(),
            self.buffer_size,
            self.in_flight,
            self.files
        )
    }

    #[cold]
    #[inline(never)]
    fn stray(buf: u32) -> ! {
        panic!("completion for buffer {buf}, which is not in flight")
    }

    /// Frees buffer `buf`: its completion was reaped.
    ///
    /// # Panics
    /// When `buf` was not in flight (a completion the engine never asked
    /// for).
    #[inline]
    pub fn release(&mut self, buf: u32) {
        match self.busy.get_mut(buf as usize) {
            Some(b) if *b => *b = false,
            _ => Self::stray(buf),
        }
        self.in_flight -= 1;
    }

    /// Whether buffer `buf` exists and no I/O holds it.
    #[inline]
    pub fn is_idle(&self, buf: u32) -> bool {
        self.busy.get(buf as usize) == Some(&false)
    }

    /// I/Os claimed and not yet released.
    #[inline]
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }
}

/// A buffer whose I/O completed, held for the request that re-arms it:
/// see [`SlotTable::hold`]. A slot re-armed with its own buffer, as a
/// worker's are, then stays taken, without the table marking it idle and
/// busy again.
pub(crate) struct Kept<'a> {
    table: &'a mut SlotTable,
    buf: u32,
    /// Whether `buf` is still held; cleared once it is let go.
    held: bool,
}

impl Kept<'_> {
    /// Takes `req`'s buffer for it: the held buffer, which stays taken
    /// (only the length and file are checked), or another, checked as
    /// [`SlotTable::claim`] does once the held one is let go.
    ///
    /// # Panics
    /// As [`SlotTable::claim`]; the held buffer is let go then.
    #[inline]
    pub(crate) fn rearm(mut self, req: &Request) {
        if req.buf == self.buf {
            let t = &*self.table;
            if !((req.len <= t.buffer_size) & (req.file < t.files)) {
                // The drop lets the held buffer go as the panic unwinds.
                t.refuse(*req);
            }
        } else {
            self.table.release(self.buf);
            self.held = false;
            self.table.claim(req);
        }
        // Taken by `req` now: the drop has nothing to let go.
        self.held = false;
    }
}

impl Drop for Kept<'_> {
    fn drop(&mut self) {
        if self.held {
            self.table.release(self.buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Op;

    fn req(buf: u32, len: u32, file: u32) -> Request {
        Request {
            file,
            op: Op::Read,
            offset: 0,
            len,
            buf,
        }
    }

    #[test]
    fn a_buffer_is_held_from_claim_to_release() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(1, 4096, 0));
        assert!(!t.is_idle(1));
        assert!(t.is_idle(0));
        assert!(!t.is_idle(2), "no such buffer");
        assert_eq!(t.in_flight(), 1);
        t.release(1);
        assert!(t.is_idle(1));
        assert_eq!(t.in_flight(), 0);
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_request_longer_than_its_buffer_is_refused() {
        SlotTable::new(2, 4096, 1).claim(&req(0, 4097, 0));
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_buffer_in_flight_cannot_be_claimed_again() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(0, 512, 0));
        t.claim(&req(0, 512, 0));
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_buffer_out_of_range_is_refused() {
        SlotTable::new(2, 4096, 1).claim(&req(2, 512, 0));
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_file_out_of_range_is_refused() {
        SlotTable::new(2, 4096, 1).claim(&req(0, 512, 1));
    }

    #[test]
    fn a_buffer_rearmed_for_itself_stays_held() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(1, 4096, 0));
        t.hold(1).rearm(&req(1, 4096, 0));
        assert!(!t.is_idle(1));
        assert!(t.is_idle(0));
        assert_eq!(t.in_flight(), 1);
    }

    #[test]
    fn a_held_buffer_not_rearmed_is_let_go() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(1, 4096, 0));
        drop(t.hold(1));
        assert!(t.is_idle(1));
        assert_eq!(t.in_flight(), 0);
    }

    #[test]
    fn a_rearm_with_another_buffer_lets_the_held_one_go() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(1, 4096, 0));
        t.hold(1).rearm(&req(0, 512, 0));
        assert!(t.is_idle(1));
        assert!(!t.is_idle(0));
        assert_eq!(t.in_flight(), 1);
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_rearm_with_a_buffer_in_flight_is_refused() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(0, 512, 0));
        t.claim(&req(1, 512, 0));
        t.hold(0).rearm(&req(1, 512, 0));
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_rearm_longer_than_the_buffer_is_refused() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(0, 512, 0));
        t.hold(0).rearm(&req(0, 4097, 0));
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_rearm_naming_no_file_of_the_table_is_refused() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(0, 512, 0));
        t.hold(0).rearm(&req(0, 512, 1));
    }

    /// A refused re-arm, or a panic while the buffer is held, leaves the
    /// table true: the held buffer idle, nothing else changed.
    #[test]
    fn a_panic_while_a_buffer_is_held_lets_it_go() {
        use std::panic::{catch_unwind, AssertUnwindSafe};
        let mut t = SlotTable::new(3, 4096, 1);
        for b in 0..3 {
            t.claim(&req(b, 512, 0));
        }
        let r = catch_unwind(AssertUnwindSafe(|| t.hold(0).rearm(&req(0, 8192, 0))));
        assert!(r.is_err());
        assert!(t.is_idle(0));
        assert_eq!(t.in_flight(), 2);
        let r = catch_unwind(AssertUnwindSafe(|| t.hold(1).rearm(&req(2, 512, 0))));
        assert!(r.is_err(), "2 is in flight");
        assert!(t.is_idle(1));
        assert!(!t.is_idle(2));
        assert_eq!(t.in_flight(), 1);
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _k = t.hold(2);
            panic!("the caller's");
        }));
        assert!(r.is_err());
        assert!(t.is_idle(2));
        assert_eq!(t.in_flight(), 0);
    }

    #[test]
    #[should_panic(expected = "not in flight")]
    fn a_held_buffer_must_be_in_flight() {
        let mut t = SlotTable::new(2, 4096, 1);
        let _k = t.hold(1);
    }

    #[test]
    #[should_panic(expected = "not in flight")]
    fn a_completion_for_an_idle_buffer_is_refused() {
        SlotTable::new(2, 4096, 1).release(0);
    }
}
