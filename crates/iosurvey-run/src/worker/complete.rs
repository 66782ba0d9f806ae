//! Completion handling, one function per stream kind: the slot's one-byte
//! [`Kind`] picks it. A block stream's I/O is counted and its slot
//! re-armed inside the reap; under `--verify` a write's blocks first take
//! their new generation; a piece of a cut I/O completes its I/O with the
//! last piece; a frame stream's operation goes to its driver.

use super::batches::Seen;
use super::cycle::{Reap, Worker};
use super::request::next_request;
use super::slot::{Kind, Slot};
use super::tally::Run;
use iosurvey_engine::{Completion, Engine, Op, Request};

impl Worker<'_> {
    /// Takes completion `c`, seen in `reap`: the request its slot is
    /// re-armed with, if any.
    #[inline(always)]
    pub(super) fn complete<E: Engine>(
        &mut self,
        c: Completion,
        reap: &mut Reap,
    ) -> Option<Request> {
        match self.slots[c.buf as usize].kind {
            Kind::Block => self.complete_block::<E, false, false>(c, reap),
            Kind::Verified => {
                self.commit_write(c);
                self.complete_block::<E, false, false>(c, reap)
            }
            Kind::Paced => self.complete_paced::<E>(c, reap),
            Kind::Sized => self.complete_sized::<E, false>(c, reap),
            Kind::Piece => {
                self.complete_piece(c, reap);
                None
            }
            Kind::Frame => {
                self.complete_frame(c, reap);
                None
            }
        }
    }

    /// A paced stream's I/O (its write committed under `--verify`).
    /// Inlined like the others: an arm out of line returns its request
    /// through memory, and the match then puts every arm's there (a plain
    /// read cost 18 instructions more, by callgrind).
    #[inline(always)]
    fn complete_paced<E: Engine>(&mut self, c: Completion, reap: &mut Reap) -> Option<Request> {
        self.commit_write(c);
        let stream = self.slots[c.buf as usize].stream as usize;
        match self.streams[stream].sizes.is_some() {
            true => self.complete_sized::<E, true>(c, reap),
            false => self.complete_block::<E, false, true>(c, reap),
        }
    }

    /// An I/O of a stream with a block-size split: counted by its size,
    /// in a run of I/Os of its length alone (a run moves one length each:
    /// the run of another length is recorded first), then as a block
    /// I/O, and re-armed with a new size (a paced one parked until its
    /// turn).
    #[inline(always)]
    fn complete_sized<E: Engine, const PACED: bool>(
        &mut self,
        c: Completion,
        reap: &mut Reap,
    ) -> Option<Request> {
        let slot = self.slots[c.buf as usize];
        if c.result == slot.len as i32 && slot.counted {
            if reap.run.n > 0 && reap.run.len != slot.len {
                self.tally
                    .record_apart(&reap.run, &self.batches, reap.interval, reap.tc);
                reap.run = Run::EMPTY;
            }
            if let Some(sizes) = &mut self.streams[slot.stream as usize].sizes {
                sizes.count(slot.len);
            }
        }
        self.complete_block::<E, true, PACED>(c, reap)
    }

    /// A block stream's I/O: counted (or failed, or moved in the warm-up),
    /// then its slot re-armed unless the worker is stopping. `SIZED`: of a
    /// stream with a block-size split; a `PACED` one's slot is parked until
    /// its turn (see `pace.rs`).
    #[inline(always)]
    fn complete_block<E: Engine, const SIZED: bool, const PACED: bool>(
        &mut self,
        c: Completion,
        reap: &mut Reap,
    ) -> Option<Request> {
        let slot = &self.slots[c.buf as usize];
        // One compare: anything but the whole length is a failure, a
        // negative errno or a short transfer (fewer bytes than asked, as
        // at the end of a file truncated under the run).
        if c.result != slot.len as i32 {
            self.tally.fail(slot, c.result, reap.at_ns);
            if !self.bounds.continue_on_error {
                self.stopping = true;
            }
        } else if !slot.counted {
            self.warm_moved += u64::from(slot.len);
        } else if slot.counted {
            if self.streams[slot.stream as usize].trace > 0 {
                self.trace(c.buf, reap.tc);
            }
            self.count_block(c.buf, reap);
        }
        if self.stopping {
            self.active -= 1;
            return None;
        }
        if PACED {
            self.park(c.buf);
            return None;
        }
        self.rearm::<E, SIZED>(c.buf, reap.measuring)
    }

    /// Adds the block I/O of slot `buf` to the reap's run: one more of its
    /// batch, the first of the next batch, or the start of a new run once
    /// the one before is recorded.
    #[inline(always)]
    fn count_block(&mut self, buf: u32, reap: &mut Reap) {
        let slot = &self.slots[buf as usize];
        let run = &mut reap.run;
        let same_class = run.stream == slot.stream && run.op == slot.op;
        if run.batch == slot.batch && same_class {
            run.n += 1;
        } else if same_class && run.n > 0 {
            let seen = Seen {
                batches: &self.batches,
                interval: reap.interval,
                tc: reap.tc,
            };
            run.next_batch(&mut self.tally, seen, slot.batch);
        } else {
            // A reap's first completion starts the first run: no call
            // then. Another class's run is set aside, or swapped back.
            if run.n > 0 && self.swap_runs(buf, reap) {
                return;
            }
            let slot = &self.slots[buf as usize];
            reap.run = Run {
                stream: slot.stream,
                op: slot.op,
                batch: slot.batch,
                n: 1,
                len: slot.len,
                ..Run::EMPTY
            };
        }
    }

    /// The reap's run is of another stream or op than slot `buf`'s I/O
    /// (a mixed stream's reads and writes complete interleaved): the run
    /// set aside is swapped in when it is of the slot's class, and the
    /// I/O counted in it (true); else the run is set aside in its place,
    /// the one there recorded first, and a new run is to start (false).
    #[inline(never)]
    fn swap_runs(&mut self, buf: u32, reap: &mut Reap) -> bool {
        let slot = &self.slots[buf as usize];
        let other = &self.set_aside;
        if other.n > 0
            && other.stream == slot.stream
            && other.op == slot.op
            && other.len == slot.len
        {
            std::mem::swap(&mut reap.run, &mut self.set_aside);
            let run = &mut reap.run;
            if run.batch == slot.batch {
                run.n += 1;
            } else {
                let seen = Seen {
                    batches: &self.batches,
                    interval: reap.interval,
                    tc: reap.tc,
                };
                run.next_batch(&mut self.tally, seen, slot.batch);
            }
            return true;
        }
        if other.n > 0 {
            self.tally
                .record_apart(other, &self.batches, reap.interval, reap.tc);
        }
        self.set_aside = reap.run;
        false
    }

    /// Keeps the offset and latency of a traced stream's I/O on slot `buf`.
    #[cold]
    #[inline(never)]
    fn trace(&mut self, buf: u32, tc: u64) {
        let slot = &self.slots[buf as usize];
        self.streams[slot.stream as usize].trace -= 1;
        let lat = tc - self.batches.submitted_ns(slot.batch);
        self.tally.sample(slot, lat);
    }

    /// Re-arms slot `buf` with its stream's next I/O, or lets it go once
    /// the stream's budget is spent.
    #[inline(always)]
    pub(super) fn rearm<E: Engine, const SIZED: bool>(
        &mut self,
        buf: u32,
        measuring: bool,
    ) -> Option<Request> {
        let verify = self.verify();
        let slot = &mut self.slots[buf as usize];
        let si = slot.stream as usize;
        let next = next_request::<SIZED>(&mut self.streams[si], buf, verify);
        match next {
            Some(req) => {
                slot.op = req.op;
                slot.offset = req.offset;
                if SIZED {
                    slot.len = req.len;
                }
                slot.counted = measuring;
                // A one-at-a-time engine's slot is stamped when its turn
                // comes (`Worker::stamp_submit`).
                if !E::ONE_AT_A_TIME {
                    slot.batch = self.batches.current();
                }
            }
            None => self.active -= 1,
        }
        next
    }

    /// `--verify`: a block (or paced) write's blocks hold their new generation once
    /// it completes (whole or not), and a whole one is queued for the
    /// backlog's read-back.
    #[inline(never)]
    fn commit_write(&mut self, c: Completion) {
        let slot = &self.slots[c.buf as usize];
        let Some(v) = self.verify() else {
            return;
        };
        if slot.op != Op::Write {
            return;
        }
        let file = self.streams[slot.stream as usize].file;
        let whole = c.result == slot.len as i32;
        v.maps[file as usize].commit(slot.offset, slot.len, whole);
        if let (Some(b), true) = (&mut self.backlog, whole) {
            b.written(file, slot.offset, slot.len);
        }
    }

    /// A piece of a cut I/O: the I/O completes with its last piece, timed
    /// from the submit of its first, and is re-armed after the reap.
    #[inline(never)]
    fn complete_piece(&mut self, c: Completion, reap: &mut Reap) {
        let s = self.slots[c.buf as usize];
        let g = &mut self.groups[s.group as usize];
        // Its first failed piece is the I/O's failure, at the member and
        // offset of that piece, as a plain I/O's is.
        if c.result != s.len as i32 {
            if !g.failed {
                g.failed = true;
                self.tally.fail(&s, c.result, reap.at_ns);
            }
            if !self.bounds.continue_on_error {
                self.stopping = true;
            }
        }
        g.left -= 1;
        if g.left > 0 {
            return;
        }
        if !g.failed && !s.counted {
            self.warm_moved += u64::from(self.streams[s.stream as usize].bs);
        } else if !g.failed {
            let batch = self.slots[g.first as usize].batch;
            let st = &mut self.streams[s.stream as usize];
            if st.trace > 0 {
                st.trace -= 1;
                let lat = reap.tc - self.batches.submitted_ns(batch);
                let at = Slot {
                    offset: g.offset,
                    ..s
                };
                self.tally.sample(&at, lat);
            }
            let seen = Seen {
                batches: &self.batches,
                interval: reap.interval,
                tc: reap.tc,
            };
            reap.run
                .add(&mut self.tally, seen, s.stream, s.op, batch, st.bs);
        }
        if self.stopping {
            self.active -= 1;
        } else {
            self.regroup.push(s.group);
        }
    }

    /// One of the frame stream's operations, for its driver. A frame
    /// piece written: its blocks hold their new generation (frames are
    /// never in flight twice).
    #[inline(never)]
    fn complete_frame(&mut self, c: Completion, reap: &Reap) {
        let verify = self.verify();
        let Some(fd) = &mut self.frames else {
            return;
        };
        let slot = &self.slots[c.buf as usize];
        if let (Some(v), Op::Write, false) = (verify, slot.op, slot.len == 0) {
            let whole = c.result == slot.len as i32;
            let at = fd.verify_base() + slot.offset;
            v.maps[fd.file() as usize].commit(at, slot.len, whole);
        }
        let seen = Seen {
            batches: &self.batches,
            interval: reap.interval,
            tc: reap.tc,
        };
        fd.complete(c, slot, &mut self.tally, seen);
    }
}
