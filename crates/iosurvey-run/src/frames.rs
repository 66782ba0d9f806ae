//! The frame worker of a video workload: each thread takes the next frame,
//! waits for its release time when paced, and moves it whole. In the files
//! layout that is open (create), I/O, sync when buffered, and close, each
//! timed; in the stream layout it is the frame's I/O in the one target.
//!
//! Pacing: frame k is released at `t0 + k / fps`, and must be done by its
//! release plus `queue` frame times. A frame not started by then is dropped
//! without I/O (skipped); one finished after it is dropped as late.

use crate::frame_target::fsops::{frame_is_ours, is_offered};
use crate::guard::mark_created;
use crate::result::{
    FrameRecord, FrameStatus, IoFailure, JobResult, StreamResult, MAX_FRAME_RECORDS,
};
use crate::worker::{now_ns, thread_cpu_ns, LiveCounters};
use iosurvey_engine::{Engine, FileOp, Op, Request};
use iosurvey_stats::SHORT_TRANSFER;
use iosurvey_workload::{FrameJob, FrameLayout};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// What every frame worker of one job shares.
pub(crate) struct FrameShared<'a> {
    pub job: &'a FrameJob,
    /// Frame numbers in transfer order.
    pub sequence: Vec<u64>,
    /// The next place in `sequence` to take.
    pub next: AtomicU64,
    /// The measured phase's start, set by the first worker past the
    /// barrier so that every worker paces against the same clock.
    pub t0: AtomicU64,
    /// The frames directory (files layout); frames are opened through
    /// `target_fd`, the directory held open, never by this path.
    #[allow(dead_code)]
    pub root: PathBuf,
    /// Bytes per I/O: a frame is cut into pieces of this size.
    pub piece: u64,
    pub direct: bool,
    /// The stream layout's target, synced after each buffered write.
    pub target_fd: &'a OwnedFd,
    pub interval: Duration,
    pub continue_on_error: bool,
    pub stop: &'a AtomicBool,
}

/// A frame job's one stream class, which its I/Os are counted in.
const STREAM: usize = 0;

/// Longest one wait for a frame's pieces lasts before it is made again.
const FRAME_WAIT: Duration = Duration::from_secs(1);

impl FrameShared<'_> {
    /// The interval of the series that time `tc` falls in.
    fn interval_of(&self, tc: u64) -> usize {
        let t0 = self.t0.load(Ordering::Relaxed);
        let step = (self.interval.as_nanos() as u64).max(1);
        (tc.saturating_sub(t0) / step) as usize
    }

    fn start_clock(&self) -> u64 {
        let now = now_ns();
        match self
            .t0
            .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => now,
            Err(t0) => t0,
        }
    }
}

/// A frame that failed: where and with which errno.
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
    fn settle(mut self, fd: Option<BorrowedFd<'_>>, op: Op, result: &mut JobResult) -> Self {
        if let Some(len) = self.short.take() {
            if let (Op::Write, Some(fd)) = (op, fd) {
                if let Err(e) = rustix::fs::fallocate(
                    fd,
                    rustix::fs::FallocateFlags::empty(),
                    self.offset,
                    len.max(1),
                ) {
                    if !matches!(e, rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::NOSYS) {
                        self.errno = e.raw_os_error();
                    }
                }
            }
            result.streams[STREAM]
                .class_mut(op)
                .record_error(self.errno);
        }
        self
    }
}

/// Keeps a frame: in the tally always, as a record while there is room.
fn keep(result: &mut JobResult, rec: FrameRecord) {
    result.frame_tally.add(&rec);
    if result.frames.len() < MAX_FRAME_RECORDS {
        result.frames.push(rec);
    }
}

/// Times of one frame's parts.
#[derive(Default)]
struct Parts {
    open_ns: u64,
    io_ns: u64,
    close_ns: u64,
}

/// The errno of an engine error; one without an errno of its own is
/// EIO.
fn errno_of(e: &std::io::Error) -> i32 {
    e.raw_os_error()
        .unwrap_or_else(|| rustix::io::Errno::IO.raw_os_error())
}

/// Sleeps until `deadline` (monotonic ns) or a stop; false when stopped.
fn wait_until(deadline: u64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = now_ns();
        if now >= deadline {
            return true;
        }
        // Sleep in slices, so that Ctrl-C is seen within 50 ms.
        std::thread::sleep(Duration::from_nanos((deadline - now).min(50_000_000)));
    }
}

/// Runs frames until every frame is taken, a stop, or (without
/// continue-on-error) a failure. In the files layout the engine's file
/// slot 0 holds a placeholder between frames.
pub(crate) fn run_frames<E: Engine>(
    engine: &mut E,
    shared: &FrameShared<'_>,
    thread: u32,
    live: &LiveCounters,
) -> std::io::Result<JobResult> {
    let cpu0 = thread_cpu_ns();
    let t0 = shared.start_clock();
    let fj = shared.job;
    let per_loop = shared.sequence.len() as u64;
    let n = per_loop * u64::from(fj.loops.max(1));
    let mut result = JobResult {
        streams: vec![StreamResult::default(); STREAM + 1],
        ..Default::default()
    };
    let mut last_end = t0;
    let (mut live_ops, mut live_bytes) = (0u64, 0u64);
    let mut stopped = false;

    loop {
        if shared.stop.load(Ordering::Relaxed) {
            stopped = true;
            break;
        }
        let k = shared.next.fetch_add(1, Ordering::Relaxed);
        if k >= n {
            break;
        }
        let frame = shared.sequence[(k % per_loop.max(1)) as usize];
        // Paced: released at k / fps, due `queue` frame times later.
        let deadline = match fj.fps {
            Some(fps) => {
                let at = |k: u64| t0 + fps.duration_of(k).as_nanos() as u64;
                if !wait_until(at(k), shared.stop) {
                    stopped = true;
                    break;
                }
                Some(at(k + u64::from(fj.queue)))
            }
            None => None,
        };
        let start = now_ns();
        let mut rec = FrameRecord {
            frame,
            thread,
            start_ns: start - t0,
            end_ns: start - t0,
            open_ns: 0,
            io_ns: 0,
            close_ns: 0,
            bytes: 0,
            status: FrameStatus::Skipped,
            errno: None,
        };
        if deadline.is_some_and(|d| start > d) {
            keep(&mut result, rec);
            continue;
        }
        let mut parts = Parts::default();
        let outcome = match fj.layout {
            FrameLayout::Stream => stream_frame(engine, shared, frame, &mut parts, &mut result),
            FrameLayout::Files { .. } => file_frame(engine, shared, frame, &mut parts, &mut result),
        };
        let end = now_ns();
        rec.end_ns = end - t0;
        rec.open_ns = parts.open_ns;
        rec.io_ns = parts.io_ns;
        rec.close_ns = parts.close_ns;
        last_end = last_end.max(end);
        match outcome {
            Ok(()) => {
                rec.bytes = fj.frame_bytes;
                rec.status = if deadline.is_some_and(|d| end > d) {
                    FrameStatus::Late
                } else {
                    FrameStatus::Done
                };
                live_ops += 1;
                live_bytes += fj.frame_bytes;
                live.ops.store(live_ops, Ordering::Relaxed);
                live.bytes.store(live_bytes, Ordering::Relaxed);
            }
            Err(f) => {
                rec.status = FrameStatus::Failed;
                rec.errno = Some(f.errno);
                result.first_failure.get_or_insert(IoFailure {
                    stream: STREAM,
                    op: fj.op,
                    offset: f.offset,
                    errno: f.errno,
                    at_ns: end - t0,
                });
            }
        }
        keep(&mut result, rec);
        if rec.status == FrameStatus::Failed && !shared.continue_on_error {
            // The other threads stop at their next frame.
            shared.next.store(n, Ordering::Relaxed);
            break;
        }
    }
    let elapsed = last_end - t0;
    result.elapsed_ns = elapsed;
    result.first_done_ns = elapsed;
    result.streams[STREAM].elapsed_ns = elapsed;
    result.interrupted = stopped;
    result.engine = engine.features();
    result.cpu.workers_ns = thread_cpu_ns() - cpu0;
    Ok(result)
}

/// Syncs a buffered write, the whole file (a new frame file's size with
/// it) or its data only; returns the time it took.
fn sync(fd: &OwnedFd, whole: bool, offset: u64) -> Result<u64, Failed> {
    let t = now_ns();
    let synced = if whole {
        rustix::fs::fsync(fd)
    } else {
        rustix::fs::fdatasync(fd)
    };
    let ns = now_ns() - t;
    synced
        .map(|()| ns)
        .map_err(|e| Failed::new(e.raw_os_error(), offset))
}

/// Moves one frame of the stream layout: its I/O at its place in the one
/// target, and a data sync when buffered.
fn stream_frame<E: Engine>(
    engine: &mut E,
    shared: &FrameShared<'_>,
    frame: u64,
    parts: &mut Parts,
    result: &mut JobResult,
) -> Result<(), Failed> {
    let fj = shared.job;
    let base = frame * fj.frame_bytes;
    parts.io_ns = frame_io(engine, shared, frame, base, false, result)
        .map_err(|f| f.settle(Some(shared.target_fd.as_fd()), fj.op, result))?;
    if fj.op == Op::Write && !shared.direct {
        parts.io_ns += sync(shared.target_fd, false, base)?;
    }
    Ok(())
}

/// Moves one frame of the files layout through the engine's file
/// operations: open (create), I/O, sync when buffered, close, each timed.
fn file_frame<E: Engine>(
    engine: &mut E,
    shared: &FrameShared<'_>,
    frame: u64,
    parts: &mut Parts,
    result: &mut JobResult,
) -> Result<(), Failed> {
    let fj = shared.job;
    // Relative to the frames directory (the engine's file 0): never
    // through a symlink, new frames created exclusively and marked,
    // existing ones rewritten only when marked.
    let rel = fj.frame_path(Path::new(""), frame);
    let t = now_ns();
    let opened = open_frame(engine, &rel, fj.op, shared.direct);
    parts.open_ns = now_ns() - t;
    opened.map_err(|e| Failed::new(e.raw_os_error(), 0))?;
    let mut moved = frame_io(engine, shared, frame, 0, true, result)
        .map_err(|f| f.settle(engine.open_file(), fj.op, result));
    if let (Ok(io_ns), Op::Write, false) = (&mut moved, fj.op, shared.direct) {
        let t = now_ns();
        let synced = run_one(engine, FileOp::Sync { data_only: false });
        *io_ns += now_ns() - t;
        if synced < 0 {
            moved = Err(Failed::new(-synced, 0));
        }
    }
    // A failed wait may have left pieces in flight: the close waits for
    // them (the engine refuses to close a file with I/O on it).
    while engine.in_flight() > 0 {
        if engine.submit_and_wait(1, FRAME_WAIT).is_ok() {
            engine.reap(|_| None);
        }
    }
    let t = now_ns();
    let closed = run_one(engine, FileOp::Close);
    parts.close_ns = now_ns() - t;
    parts.io_ns = moved?;
    if closed < 0 {
        return Err(Failed::new(-closed, 0));
    }
    Ok(())
}

/// Runs one file operation on slot 0 and waits for it; returns its result.
fn run_one<E: Engine>(engine: &mut E, op: FileOp) -> i32 {
    engine.push_file(0, op);
    let mut result = -Errno::IO.raw_os_error();
    while engine.in_flight() > 0 {
        if let Err(e) = engine.submit_and_wait(1, FRAME_WAIT) {
            result = -errno_of(&e);
            continue;
        }
        engine.reap(|c| {
            result = c.result;
            None
        });
    }
    result
}

/// Opens `rel` beneath the frames directory (engine file 0) with `flags`
/// (the engine adds `O_NOFOLLOW|O_CLOEXEC` and resolves beneath the
/// directory without symlinks).
fn open_at<E: Engine>(engine: &mut E, rel: &Path, flags: OFlags) -> Result<(), Errno> {
    use std::os::unix::ffi::OsStrExt;
    let path = CString::new(rel.as_os_str().as_bytes()).map_err(|_| Errno::INVAL)?;
    let r = run_one(
        engine,
        FileOp::Open {
            dir: 0,
            path,
            flags,
            mode: Mode::from_raw_mode(0o644),
        },
    );
    if r < 0 {
        Err(Errno::from_raw_os_error(-r))
    } else {
        Ok(())
    }
}

/// Closes the engine's open file after a refusal; the refusal is the
/// error that counts.
fn close_refused<E: Engine>(engine: &mut E, errno: Errno) -> Errno {
    run_one(engine, FileOp::Close);
    errno
}

/// Checks that the file just opened (with `O_NONBLOCK`, so that a FIFO
/// does not block the open) is a regular file, and clears `O_NONBLOCK`
/// (the engines must block); a refused file is closed with `EEXIST`.
fn judge_regular<E: Engine>(engine: &mut E) -> Result<(), Errno> {
    let fd = engine.open_file().ok_or(Errno::BADF)?;
    let checked = rustix::fs::fstat(fd).and_then(|st| {
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(Errno::EXIST);
        }
        rustix::fs::fcntl_setfl(fd, rustix::fs::fcntl_getfl(fd)? - OFlags::NONBLOCK)
    });
    checked.map_err(|e| close_refused(engine, e))
}

/// Opens frame `rel` in the engine for one transfer, with the rules of
/// the frames directory: reading, a regular file; writing, a new frame
/// created with `O_CREAT|O_EXCL` and marked, or an existing one written
/// only when its descriptor carries the mark (or was offered with
/// `--allow-destroy`), truncated. Anything else fails with `EEXIST`.
fn open_frame<E: Engine>(engine: &mut E, rel: &Path, op: Op, direct: bool) -> Result<(), Errno> {
    let direct = if direct {
        OFlags::DIRECT
    } else {
        OFlags::empty()
    };
    if op == Op::Read {
        open_at(engine, rel, OFlags::RDONLY | OFlags::NONBLOCK | direct)?;
        return judge_regular(engine);
    }
    let create = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | direct;
    match open_at(engine, rel, create) {
        Ok(()) => {
            mark_created(engine.open_file().ok_or(Errno::BADF)?);
            Ok(())
        }
        Err(Errno::EXIST) => {
            open_at(engine, rel, OFlags::WRONLY | OFlags::NONBLOCK | direct)?;
            judge_regular(engine)?;
            let fd = engine.open_file().ok_or(Errno::BADF)?;
            if !frame_is_ours(fd) && !is_offered(fd) {
                return Err(close_refused(engine, Errno::EXIST));
            }
            rustix::fs::ftruncate(fd, 0).map_err(|e| close_refused(engine, e))
        }
        Err(e) => Err(e),
    }
}

/// Makes every 4 KiB block of frame `frame` unique before it is written:
/// the frame's number and the block's offset in it go in its first 16
/// bytes. Storage that dedupes or compresses cannot shrink the frames.
fn stamp<E: Engine>(engine: &mut E, frame: u64, piece: u64, frame_bytes: u64) {
    for (i, off) in (0..frame_bytes).step_by(piece as usize).enumerate() {
        let len = (frame_bytes - off).min(piece) as usize;
        let buf = engine
            .buffer_mut(i as u32)
            .expect("no piece of a frame is in flight while the frame is stamped");
        let n = len.min(buf.len());
        for (b, block) in buf[..n].chunks_mut(4096).enumerate() {
            if block.len() >= 16 {
                block[..8].copy_from_slice(&frame.to_le_bytes());
                block[8..16].copy_from_slice(&(off + b as u64 * 4096).to_le_bytes());
            }
        }
    }
}

/// Reads or writes one frame at `base` (in the engine's open file when
/// `open_file`, else in its file 0), cut into pieces
/// that are all in flight at once; returns the time it took. Each piece is
/// counted in the stream's statistics.
fn frame_io<E: Engine>(
    engine: &mut E,
    shared: &FrameShared<'_>,
    frame: u64,
    base: u64,
    open_file: bool,
    result: &mut JobResult,
) -> Result<u64, Failed> {
    let fj = shared.job;
    let pieces = fj.frame_bytes.div_ceil(shared.piece);
    if pieces == 0 {
        // An empty frame: nothing to move.
        return Ok(0);
    }
    if fj.op == Op::Write {
        stamp(engine, frame, shared.piece, fj.frame_bytes);
    }
    let start = now_ns();
    let mut failed: Option<Failed> = None;
    let push = |engine: &mut E, i: u64| {
        let off = i * shared.piece;
        let len = (fj.frame_bytes - off).min(shared.piece) as u32;
        if open_file {
            let io = FileOp::Io {
                op: fj.op,
                offset: base + off,
                len,
            };
            engine.push_file(i as u32, io);
        } else {
            engine.push(Request {
                file: 0,
                op: fj.op,
                offset: base + off,
                len,
                buf: i as u32,
            });
        }
    };
    let mut next = 0;
    let mut done = 0;
    if E::ONE_AT_A_TIME {
        push(engine, 0);
        next = 1;
    } else {
        while next < pieces {
            push(engine, next);
            next += 1;
        }
    }
    let mut submitted = start;
    while done < pieces {
        if let Err(e) = engine.submit_and_wait(1, FRAME_WAIT) {
            return Err(Failed::new(errno_of(&e), base));
        }
        let tc = now_ns();
        let slot = shared.interval_of(tc);
        let stats = result.streams[STREAM].class_mut(fj.op);
        let mut finished = 0;
        engine.reap(|c| {
            finished += 1;
            let piece = u64::from(c.buf);
            let offset = base + piece * shared.piece;
            let want = (fj.frame_bytes - piece * shared.piece).min(shared.piece);
            if c.result < 0 {
                stats.record_error(-c.result);
                failed.get_or_insert(Failed::new(-c.result, offset));
            } else if (c.result as u64) < want {
                // A short transfer: the frame is not whole (end of file,
                // or no space left). The frame's first failure has its
                // errno (if any) found and counted by the caller, which
                // holds the file; any other counts as a short transfer.
                if failed.is_some() {
                    stats.record_error(SHORT_TRANSFER);
                } else {
                    failed = Some(Failed {
                        short: Some(want - c.result as u64),
                        ..Failed::new(SHORT_TRANSFER, offset + c.result as u64)
                    });
                }
            } else {
                stats.record(slot, c.result as u64, tc - submitted);
            }
            None
        });
        done += finished;
        if E::ONE_AT_A_TIME && next < pieces && failed.is_none() {
            push(engine, next);
            next += 1;
            submitted = now_ns();
        }
        if failed.is_some() && next == done {
            break;
        }
    }
    match failed {
        Some(f) => Err(f),
        None => Ok(now_ns() - start),
    }
}

#[cfg(test)]
mod tests;
