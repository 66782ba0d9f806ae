//! The frame stream of a video workload, as work items of the worker loop:
//! each worker takes the next frame, waits for its release time when
//! paced, and moves it whole. In the files layout that is an open (or
//! create), the frame's I/Os, a sync when buffered, and a close, each an
//! engine operation on the worker's queue and each timed; in the stream
//! layout it is the frame's I/Os at its place in the one target.
//!
//! The driver never waits itself. It pushes a step's operations and says
//! when it wants to be called again; the worker loop submits, waits, reaps
//! (handing the frame's completions to [`FrameDriver::complete`]) and
//! records, as for any stream.
//!
//! Pacing: frame k is released at `t0 + k / fps`, and must be done by its
//! release plus `queue` frame times. A frame not started by then is dropped
//! without I/O (skipped); one finished after it is dropped as late.

use super::batches::Seen;
use super::clock::Clock;
use super::{Arm, Run, Slot, Tally};
use crate::result::{FrameRecord, FrameStatus, IoFailure, JobResult, MAX_FRAME_RECORDS};
use iosurvey_engine::{Completion, Engine, FileOp, Op, Request};
use iosurvey_stats::SHORT_TRANSFER;
use iosurvey_target::frame_target::{frame_is_ours, is_offered, mark_frame};
use iosurvey_workload::{FrameJob, FrameLayout};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// What every worker of one frame job shares.
pub(crate) struct FrameShared<'a> {
    pub job: &'a FrameJob,
    /// Index of the frame stream in the job (its results are kept by it).
    pub stream: usize,
    /// Frame numbers in transfer order.
    pub sequence: Vec<u64>,
    /// The next place in `sequence` to take.
    pub next: AtomicU64,
    /// The measured phase's start, set by the first worker to start so
    /// that every worker paces against the same clock.
    pub t0: AtomicU64,
    /// The engine's file the frames are in: the stream layout's target,
    /// or the directory the files layout opens its frames beneath.
    pub file: u32,
    /// Bytes per I/O: a frame is cut into pieces of this size.
    pub piece: u64,
    pub direct: bool,
    /// The stream layout's target, synced after each buffered write.
    pub target_fd: &'a OwnedFd,
}

impl FrameShared<'_> {
    /// The shared clock: `now` if this worker is the first to start.
    fn start_clock(&self, now: u64) -> u64 {
        match self
            .t0
            .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => now,
            Err(t0) => t0,
        }
    }

    /// Frame transfers over every loop.
    fn transfers(&self) -> u64 {
        self.sequence.len() as u64 * u64::from(self.job.loops.max(1))
    }
}

/// A frame that failed: where and with which errno.
#[derive(Clone, Copy)]
struct Failed {
    errno: i32,
    offset: u64,
    /// A short transfer: the bytes it left undone (from `offset`), whose
    /// errno (if any) is still to be found and counted.
    short: Option<u64>,
}

impl Failed {
    fn new(errno: i32, offset: u64) -> Self {
        Failed {
            errno,
            offset,
            short: None,
        }
    }

    /// Finds the errno behind a short transfer on `fd` and counts it: a
    /// short write asks the filesystem for the space it left undone
    /// (fallocate), which answers with what a retried write would get,
    /// ENOSPC or EDQUOT; anything else (a short read, a short write with
    /// space) stays a short transfer ([`SHORT_TRANSFER`]), not an errno.
    fn settle(
        mut self,
        fd: Option<BorrowedFd<'_>>,
        op: Op,
        stream: usize,
        r: &mut JobResult,
    ) -> Self {
        if let Some(len) = self.short.take() {
            if let (Op::Write, Some(fd)) = (op, fd) {
                if let Err(e) = rustix::fs::fallocate(
                    fd,
                    rustix::fs::FallocateFlags::empty(),
                    self.offset,
                    len.max(1),
                ) {
                    if !matches!(e, Errno::OPNOTSUPP | Errno::NOSYS) {
                        self.errno = e.raw_os_error();
                    }
                }
            }
            r.streams[stream].class_mut(op).record_error(self.errno);
        }
        self
    }
}

/// Where the frame in hand is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// No frame in hand: take the next.
    Idle,
    /// Frame `k` of the sequence waits for its release at `at`.
    Waiting { k: u64, at: u64 },
    /// The open of a new frame file (`O_CREAT|O_EXCL`) is in flight.
    Creating,
    /// The open of an existing frame file is in flight: for reading, or
    /// for rewriting one the create found.
    Opening,
    /// The frame's pieces are in flight.
    Moving,
    /// The sync of a buffered frame file is in flight.
    Syncing,
    /// The close of the frame file is in flight.
    Closing,
    /// Every frame is taken, or the worker stops.
    Finished,
}

/// What the worker loop does next for the frame stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Operations are in flight: wait for completions.
    InFlight,
    /// Nothing is in flight until the next frame's release at this time.
    WakeAt(u64),
    /// The stream is done.
    Finished,
}

/// One worker's frame stream.
pub(super) struct FrameDriver<'a> {
    shared: &'a FrameShared<'a>,
    /// The worker's number, kept in each frame's record.
    thread: u32,
    /// The stream's index in the worker's list, and its first buffer.
    local: u32,
    base: u32,
    t0: u64,
    state: State,
    /// The frame in hand and its record.
    rec: FrameRecord,
    deadline: Option<u64>,
    /// When the step in flight began.
    step_ns: u64,
    /// The frame's pieces, those pushed and those back.
    pieces: u32,
    pushed: u32,
    pieces_done: u32,
    /// The result of the file operation in flight, once reaped.
    op_result: Option<i32>,
    failed: Option<Failed>,
    /// A frame failed and the run does not go on after failures.
    pub(super) stop_worker: bool,
}

/// What a step of the driver works with: the worker's engine, its slots,
/// its tally and its clock, read afresh after anything that takes time.
pub(super) struct Ctx<'c, E> {
    pub engine: &'c mut E,
    pub arm: Arm<'c>,
    pub tally: &'c mut Tally,
    pub clock: &'c dyn Clock,
}

impl<'a> FrameDriver<'a> {
    /// The frame stream of worker `thread`, as stream `local` of its list
    /// with buffers from `base` on, started at `now`.
    pub(super) fn new(
        shared: &'a FrameShared<'a>,
        thread: u32,
        local: u32,
        base: u32,
        now: u64,
    ) -> Self {
        FrameDriver {
            shared,
            thread,
            local,
            base,
            t0: shared.start_clock(now),
            state: State::Idle,
            rec: FrameRecord::started(0, thread, 0),
            deadline: None,
            step_ns: 0,
            pieces: 0,
            pushed: 0,
            pieces_done: 0,
            op_result: None,
            failed: None,
            stop_worker: false,
        }
    }

    /// The index of the file the frames go to (a stream's target).
    pub(super) fn file(&self) -> u32 {
        self.shared.file
    }

    /// Where the current frame's bytes sit in the sequence of frames, for
    /// `--verify`: a frame in its own file is verified as if the frames
    /// were one stream, frame `k` at `k` frame sizes (the stream layout's
    /// requests are there already).
    pub(super) fn verify_base(&self) -> u64 {
        match self.shared.job.layout {
            FrameLayout::Stream => 0,
            FrameLayout::Files { .. } => self.rec.frame * self.shared.job.frame_bytes,
        }
    }

    pub(super) fn finished(&self) -> bool {
        self.state == State::Finished
    }

    /// Takes a completion on one of the stream's buffers.
    #[inline(never)]
    pub(super) fn complete(&mut self, c: Completion, slot: &Slot, tally: &mut Tally, at: Seen<'_>) {
        if self.state != State::Moving {
            self.op_result = Some(c.result);
            return;
        }
        self.pieces_done += 1;
        if c.result == slot.len as i32 {
            if slot.counted {
                let run = Run {
                    stream: self.local,
                    op: slot.op,
                    batch: slot.batch,
                    n: 1,
                    len: slot.len,
                    ..Run::EMPTY
                };
                tally.record_io(&run, at.batches, at.interval, at.tc);
            }
            return;
        }
        let stream = tally.result_of[self.local as usize];
        let errno = if c.result < 0 {
            -c.result
        } else {
            SHORT_TRANSFER
        };
        if c.result < 0 || self.failed.is_some() {
            self.failed.get_or_insert(Failed::new(errno, slot.offset));
            if slot.counted {
                tally.result.streams[stream]
                    .class_mut(slot.op)
                    .record_error(errno);
            }
        } else {
            // A short transfer, the frame's first failure: the frame is
            // not whole (end of file, or no space left). Its errno, if any,
            // is found and counted once the frame's pieces are in, with the
            // file at hand.
            let moved = c.result as u64;
            self.failed = Some(Failed {
                short: Some(u64::from(slot.len) - moved),
                ..Failed::new(SHORT_TRANSFER, slot.offset + moved)
            });
        }
    }

    /// Moves the frame in hand as far as it goes without waiting: pushes
    /// the next step's operations, or finishes the frame and takes the
    /// next. `stopping`: take no new frame.
    pub(super) fn advance<E: Engine>(&mut self, cx: &mut Ctx<'_, E>, stopping: bool) -> Next {
        loop {
            match self.state {
                State::Finished => return Next::Finished,
                State::Idle | State::Waiting { .. } if stopping || self.stop_worker => {
                    self.state = State::Finished;
                }
                State::Idle => self.take(),
                State::Waiting { at, k } => {
                    if cx.clock.now() < at {
                        return Next::WakeAt(at);
                    }
                    self.start(cx, k);
                }
                State::Creating | State::Opening | State::Syncing | State::Closing => {
                    let Some(r) = self.op_result.take() else {
                        return Next::InFlight;
                    };
                    self.step_done(cx, r);
                }
                State::Moving if self.pieces_done < self.pushed => return Next::InFlight,
                // One-at-a-time engines get a frame's pieces one by one,
                // and none after a failed one.
                State::Moving if self.pushed < self.pieces && self.failed.is_none() => {
                    self.push_piece(cx);
                }
                State::Moving => self.moved(cx),
            }
        }
    }

    /// Takes the next frame of the sequence, released at once unless paced.
    fn take(&mut self) {
        let sh = self.shared;
        let n = sh.transfers();
        let k = sh.next.fetch_add(1, Ordering::Relaxed);
        if k >= n {
            self.state = State::Finished;
            return;
        }
        let (at, deadline) = match sh.job.fps {
            Some(fps) => {
                let at = |k: u64| self.t0 + fps.duration_of(k).as_nanos() as u64;
                (at(k), Some(at(k + u64::from(sh.job.queue))))
            }
            None => (0, None),
        };
        self.deadline = deadline;
        self.state = State::Waiting { k, at };
    }

    /// Starts frame `k` of the sequence: skips it when it is past its
    /// deadline, else pushes its open or its pieces.
    fn start<E: Engine>(&mut self, cx: &mut Ctx<'_, E>, k: u64) {
        let sh = self.shared;
        let frame = sh.sequence[(k % sh.sequence.len() as u64) as usize];
        let now = cx.clock.now();
        self.rec = FrameRecord::started(frame, self.thread, now - self.t0);
        self.failed = None;
        self.op_result = None;
        if self.deadline.is_some_and(|d| now > d) {
            keep(&mut cx.tally.result, self.rec);
            self.state = State::Idle;
            return;
        }
        match sh.job.layout {
            FrameLayout::Stream => self.push_pieces(cx),
            FrameLayout::Files { .. } => {
                if sh.job.op == Op::Read {
                    // Untimed: the open timed is the engine's.
                    if let Err(e) = self.plain_file_at() {
                        self.step_ns = cx.clock.now();
                        self.fail(Failed::new(e.raw_os_error(), 0));
                        self.finish(cx);
                        return;
                    }
                }
                let (flags, state) = match sh.job.op {
                    Op::Read => (OFlags::RDONLY | OFlags::NONBLOCK, State::Opening),
                    Op::Write | Op::Trim => (
                        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
                        State::Creating,
                    ),
                };
                self.step_ns = now;
                self.push_open(cx, flags);
                self.state = state;
            }
        }
    }

    /// Checks that what is at the frame's path is a regular file before it
    /// is opened for real: looked at with `O_PATH` beneath the frames
    /// directory, without following a symlink, so that a device node or a
    /// FIFO put there during the run is never opened (a tape's open and
    /// close alone can write); a symlink fails with `ELOOP`, anything else
    /// with `EEXIST`.
    fn plain_file_at(&self) -> Result<(), Errno> {
        let sh = self.shared;
        let rel = sh.job.frame_path(Path::new(""), self.rec.frame);
        let fd =
            iosurvey_engine::open_beneath(sh.target_fd.as_fd(), &rel, OFlags::PATH, Mode::empty())?;
        let st = rustix::fs::fstat(&fd)?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Ok(()),
            // As an open that met it would say.
            FileType::Symlink => Err(Errno::LOOP),
            _ => Err(Errno::EXIST),
        }
    }

    /// Pushes an open of the frame file beneath the frames directory (the
    /// engine's file `file`), never through a symlink; `O_DIRECT` is added
    /// for direct runs.
    fn push_open<E: Engine>(&mut self, cx: &mut Ctx<'_, E>, flags: OFlags) {
        let sh = self.shared;
        let rel = sh.job.frame_path(Path::new(""), self.rec.frame);
        let direct = if sh.direct {
            OFlags::DIRECT
        } else {
            OFlags::empty()
        };
        let path = CString::new(rel.as_os_str().as_bytes())
            .expect("frame paths are made of numbers and separators");
        let op = FileOp::Open {
            dir: sh.file,
            path,
            flags: flags | direct,
            mode: Mode::from_raw_mode(0o644),
            base: self.verify_base(),
        };
        cx.arm.file_op(cx.engine, self.base, self.local, op);
    }

    /// Pushes a sync or a close of the frame file, as step `state`.
    fn push_file_op<E: Engine>(&mut self, cx: &mut Ctx<'_, E>, op: FileOp, state: State) {
        self.step_ns = cx.clock.now();
        cx.arm.file_op(cx.engine, self.base, self.local, op);
        self.state = state;
    }

    /// Pushes a frame's pieces: all at once, or the first on a
    /// one-at-a-time engine. (The engine generates every sector written,
    /// unique, see `iosurvey_engine::data`.)
    fn push_pieces<E: Engine>(&mut self, cx: &mut Ctx<'_, E>) {
        let sh = self.shared;
        self.pieces = sh.job.frame_bytes.div_ceil(sh.piece) as u32;
        self.pushed = 0;
        self.pieces_done = 0;
        self.rec.io_ns = 0;
        self.state = State::Moving;
        self.step_ns = cx.clock.now();
        let first = if E::ONE_AT_A_TIME {
            self.pieces.min(1)
        } else {
            self.pieces
        };
        for _ in 0..first {
            self.push_piece(cx);
        }
    }

    /// Pushes the frame's next piece.
    fn push_piece<E: Engine>(&mut self, cx: &mut Ctx<'_, E>) {
        let sh = self.shared;
        let fj = sh.job;
        let i = u64::from(self.pushed);
        let off = i * sh.piece;
        let (base, open_file) = match fj.layout {
            FrameLayout::Stream => (self.rec.frame * fj.frame_bytes, false),
            FrameLayout::Files { .. } => (0, true),
        };
        let req = Request {
            file: sh.file,
            op: fj.op,
            offset: base + off,
            len: (fj.frame_bytes - off).min(sh.piece) as u32,
            buf: self.base + self.pushed,
        };
        cx.arm.piece(cx.engine, self.local, req, open_file);
        self.pushed += 1;
    }

    /// A file operation of the frame came back with `r`.
    fn step_done<E: Engine>(&mut self, cx: &mut Ctx<'_, E>, r: i32) {
        let errno = || Errno::from_raw_os_error(-r);
        match self.state {
            State::Creating if r >= 0 => match cx.engine.open_file() {
                Some(fd) => {
                    mark_frame(fd);
                    self.opened(cx);
                }
                None => self.open_failed(cx, Errno::BADF),
            },
            // A frame file is there already: rewritten only if checked.
            State::Creating if errno() == Errno::EXIST => match self.plain_file_at() {
                Ok(()) => {
                    self.push_open(cx, OFlags::WRONLY | OFlags::NONBLOCK);
                    self.state = State::Opening;
                }
                Err(e) => {
                    self.rec.open_ns = cx.clock.now() - self.step_ns;
                    self.fail(Failed::new(e.raw_os_error(), 0));
                    self.finish(cx);
                }
            },
            State::Creating | State::Opening if r < 0 => {
                self.rec.open_ns = cx.clock.now() - self.step_ns;
                self.fail(Failed::new(-r, 0));
                self.finish(cx);
            }
            State::Opening => match self.judge(cx.engine) {
                Ok(()) => self.opened(cx),
                Err(e) => self.open_failed(cx, e),
            },
            State::Syncing => {
                self.rec.io_ns += cx.clock.now() - self.step_ns;
                if r < 0 {
                    self.fail(Failed::new(-r, 0));
                }
                self.push_file_op(cx, FileOp::Close, State::Closing);
            }
            State::Closing => {
                self.rec.close_ns = cx.clock.now() - self.step_ns;
                if r < 0 {
                    self.fail(Failed::new(-r, 0));
                }
                self.finish(cx);
            }
            s => unreachable!("a file operation completed in state {s:?}"),
        }
    }

    /// The frame file is open and checked: the open is timed with its
    /// checks, and the pieces go out (none for an empty frame, which goes
    /// on to its sync and close).
    fn opened<E: Engine>(&mut self, cx: &mut Ctx<'_, E>) {
        self.rec.open_ns = cx.clock.now() - self.step_ns;
        self.push_pieces(cx);
    }

    /// The open file was refused by a check: the refusal is the failure,
    /// and the file is closed.
    fn open_failed<E: Engine>(&mut self, cx: &mut Ctx<'_, E>, e: Errno) {
        self.rec.open_ns = cx.clock.now() - self.step_ns;
        self.fail(Failed::new(e.raw_os_error(), 0));
        if cx.engine.open_file().is_some() {
            self.push_file_op(cx, FileOp::Close, State::Closing);
        } else {
            self.finish(cx);
        }
    }

    /// Checks the file the open found: a regular file (it was opened with
    /// `O_NONBLOCK`, so that a FIFO does not block the open, which is then
    /// cleared since the engines block); for writing, one this tool
    /// created (or the user offered with `--allow-destroy`), truncated.
    fn judge<E: Engine>(&self, engine: &mut E) -> Result<(), Errno> {
        let fd = engine.open_file().ok_or(Errno::BADF)?;
        let st = rustix::fs::fstat(fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(Errno::EXIST);
        }
        rustix::fs::fcntl_setfl(fd, rustix::fs::fcntl_getfl(fd)? - OFlags::NONBLOCK)?;
        if self.shared.job.op == Op::Write {
            if !frame_is_ours(fd) && !is_offered(fd) {
                return Err(Errno::EXIST);
            }
            rustix::fs::ftruncate(fd, 0)?;
        }
        Ok(())
    }

    /// Every piece is in: settles a failure, then syncs a buffered write
    /// and closes a frame file.
    fn moved<E: Engine>(&mut self, cx: &mut Ctx<'_, E>) {
        let sh = self.shared;
        let fj = sh.job;
        // An empty frame moved nothing: no I/O time.
        self.rec.io_ns = if self.pieces == 0 {
            0
        } else {
            cx.clock.now() - self.step_ns
        };
        let files = matches!(fj.layout, FrameLayout::Files { .. });
        if let Some(f) = self.failed.take() {
            let fd = if files {
                cx.engine.open_file()
            } else {
                Some(sh.target_fd.as_fd())
            };
            let stream = cx.tally.result_of[self.local as usize];
            self.failed = Some(f.settle(fd, fj.op, stream, &mut cx.tally.result));
        }
        let sync = fj.op == Op::Write && !sh.direct && self.failed.is_none();
        if files {
            let (op, state) = if sync {
                (FileOp::Sync { data_only: false }, State::Syncing)
            } else {
                (FileOp::Close, State::Closing)
            };
            self.push_file_op(cx, op, state);
            return;
        }
        if sync {
            // The stream layout's one target is a file of the engine's
            // table, not a frame file: its data sync is a plain call, timed.
            let t = cx.clock.now();
            let synced = rustix::fs::fdatasync(sh.target_fd);
            self.rec.io_ns += cx.clock.now() - t;
            if let Err(e) = synced {
                self.fail(Failed::new(
                    e.raw_os_error(),
                    self.rec.frame * fj.frame_bytes,
                ));
            }
        }
        self.finish(cx);
    }

    fn fail(&mut self, f: Failed) {
        self.failed.get_or_insert(f);
    }

    /// The frame is over now: its record is kept with its status, and a
    /// failure stops the run unless it goes on after failures.
    fn finish<E: Engine>(&mut self, cx: &mut Ctx<'_, E>) {
        let sh = self.shared;
        let now = cx.clock.now();
        let tally = &mut *cx.tally;
        let stream = tally.result_of[self.local as usize];
        self.rec.end_ns = now - self.t0;
        tally.last_done = tally.last_done.max(now);
        tally.stream_done[stream] = tally.stream_done[stream].max(now);
        match self.failed {
            None => {
                self.rec.bytes = sh.job.frame_bytes;
                self.rec.status = if self.deadline.is_some_and(|d| now > d) {
                    FrameStatus::Late
                } else {
                    FrameStatus::Done
                };
                tally.live_ops += 1;
                tally.live_bytes += sh.job.frame_bytes;
            }
            Some(f) => {
                self.rec.status = FrameStatus::Failed;
                self.rec.errno = Some(f.errno);
                tally.result.first_failure.get_or_insert(IoFailure {
                    stream,
                    op: sh.job.op,
                    offset: f.offset,
                    errno: f.errno,
                    at_ns: now - self.t0,
                });
                if !tally.continue_on_error {
                    // The other workers stop at their next frame.
                    sh.next.store(sh.transfers(), Ordering::Relaxed);
                    self.stop_worker = true;
                }
            }
        }
        keep(&mut tally.result, self.rec);
        self.state = State::Idle;
    }
}

/// A frame stream on one worker: what the workers share, and this
/// worker's number (kept in each frame's record).
#[derive(Clone, Copy)]
pub(crate) struct FrameWork<'a> {
    pub shared: &'a FrameShared<'a>,
    pub thread: u32,
}

impl FrameWork<'_> {
    /// Buffers the frame stream uses: one per piece in flight.
    pub(crate) fn buffers(&self) -> u32 {
        self.shared.job.depth.max(1)
    }
}

/// Keeps a frame: in the tally always, as a record while there is room.
fn keep(result: &mut JobResult, rec: FrameRecord) {
    result.frame_tally.add(&rec);
    if result.frames.len() < MAX_FRAME_RECORDS {
        result.frames.push(rec);
    }
}

#[cfg(test)]
mod tests;
