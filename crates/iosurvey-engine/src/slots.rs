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

    /// [`SlotTable::claim`] right after `released` was released: when the
    /// request is for that same buffer (a slot re-armed with its own
    /// buffer, as a worker does), it is known to be a buffer of the table
    /// and idle, and only the length and file are checked.
    ///
    /// # Safety
    /// `release(released)` returned, and nothing was claimed since.
    #[inline]
    pub(crate) unsafe fn claim_again(&mut self, released: u32, req: &Request) {
        if req.buf != released {
            return self.claim(req);
        }
        let fits = (req.len <= self.buffer_size) & (req.file < self.files);
        if !fits {
            self.refuse(*req);
        }
        let i = released as usize;
        debug_assert!(i < self.busy.len() && !self.busy[i]);
        // SAFETY: the caller's contract: `release(released)` found it in
        // the table (it panics on a buffer out of range) and marked it
        // idle, and nothing claimed it since.
        unsafe { *self.busy.get_unchecked_mut(i) = true };
        self.in_flight += 1;
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
    fn a_buffer_claimed_again_after_its_release_is_held() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(1, 4096, 0));
        t.release(1);
        // SAFETY: 1 was just released.
        unsafe { t.claim_again(1, &req(1, 4096, 0)) };
        assert!(!t.is_idle(1));
        assert_eq!(t.in_flight(), 1);
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_claim_again_of_another_buffer_is_checked_as_a_claim() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(0, 512, 0));
        t.claim(&req(1, 512, 0));
        t.release(0);
        // SAFETY: 0 was just released; the request names 1, in flight.
        unsafe { t.claim_again(0, &req(1, 512, 0)) };
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_claim_again_longer_than_the_buffer_is_refused() {
        let mut t = SlotTable::new(2, 4096, 1);
        t.claim(&req(0, 512, 0));
        t.release(0);
        // SAFETY: 0 was just released.
        unsafe { t.claim_again(0, &req(0, 4097, 0)) };
    }

    #[test]
    #[should_panic(expected = "not in flight")]
    fn a_completion_for_an_idle_buffer_is_refused() {
        SlotTable::new(2, 4096, 1).release(0);
    }
}
