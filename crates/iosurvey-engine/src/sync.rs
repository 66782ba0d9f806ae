//! The synchronous engine: `pread`/`pwrite`, one request per
//! [`Engine::submit_and_wait`], oldest first.

use crate::data::Stamper;
use crate::fileops::{self, FileState};
use crate::{
    BufferPool, Completion, Engine, EngineConfig, EngineError, EngineFeatures, FileOp, Op, Request,
    SlotTable,
};
use std::collections::VecDeque;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::Duration;

/// pread/pwrite, one request at a time in queue order.
pub struct SyncEngine {
    files: Vec<OwnedFd>,
    pool: BufferPool,
    slots: SlotTable,
    queued: VecDeque<Queued>,
    done: Option<Completion>,
    file: FileState,
    /// Makes each block of each write unique.
    stamper: Stamper,
}

/// A queued work item: an I/O on a file of the table, or a file operation
/// (its slot, and the descriptor a close gives up). The file operation is
/// boxed: as large as an open's path, it would make every queued I/O as
/// large, and each I/O is moved in and out of the queue (12 instructions
/// an I/O on the sync path, callgrind, bench/RESULTS.md; a ring of slot
/// numbers with each slot's work kept in place cost 5 more than the
/// queue of whole items, not 12 less).
enum Queued {
    Io(Request),
    File(Box<(u32, FileOp, Option<OwnedFd>)>),
}

impl SyncEngine {
    /// The engine over `cfg`'s files. It has no polling modes: `sqpoll` and
    /// `iopoll` are io_uring's, and are not used here (its features say so).
    pub fn new(cfg: EngineConfig<'_>, seed: u64) -> Result<Self, EngineError> {
        let pool = BufferPool::new(cfg.buffers, cfg.buffer_size, cfg.alignment, seed, cfg.stop)?;
        Ok(SyncEngine {
            slots: SlotTable::new(pool.count(), pool.size(), cfg.files.len()),
            files: cfg.files,
            pool,
            queued: VecDeque::with_capacity(cfg.buffers),
            done: None,
            file: FileState::new(cfg.buffers),
            stamper: Stamper::with_verify(cfg.fill, cfg.verify.clone()),
        })
    }
}

impl Engine for SyncEngine {
    const ONE_AT_A_TIME: bool = true;

    #[inline]
    fn push(&mut self, req: Request) {
        self.slots.claim(&req);
        self.queued.push_back(Queued::Io(req));
    }

    #[inline]
    fn next_up(&self) -> Option<u32> {
        match self.queued.front()? {
            Queued::Io(req) => Some(req.buf),
            Queued::File(f) => Some(f.0),
        }
    }

    /// Runs the oldest queued request, unless a completion is still to be
    /// reaped. A synchronous call never waits for nothing, so the timeout
    /// does not apply.
    #[inline]
    fn submit_and_wait(&mut self, _min_complete: usize, _timeout: Duration) -> std::io::Result<()> {
        if self.done.is_some() {
            return Ok(());
        }
        let req = match self.queued.pop_front() {
            None => return Ok(()),
            Some(Queued::Io(req)) => req,
            Some(Queued::File(f)) => {
                let (slot, op, fd) = *f;
                let result = self.run_file_op(slot, op, fd);
                self.file.finish(slot, result);
                self.done = Some(Completion { buf: slot, result });
                return Ok(());
            }
        };
        let fd = &self.files[req.file as usize];
        // The claim checked that `len` fits the buffer.
        let len = req.len as usize;
        let result = match req.op {
            Op::Read => pread(
                fd.as_fd(),
                &mut self.pool.get_mut(req.buf)[..len],
                req.offset,
            ),
            Op::Write => {
                let buf = &mut self.pool.get_mut(req.buf)[..len];
                self.stamper.stamp_write(buf, req.file, req.offset);
                pwrite(fd.as_fd(), buf, req.offset)
            }
            Op::Trim => crate::discard::discard(fd.as_fd(), req.offset, req.len),
        };
        self.done = Some(Completion {
            buf: req.buf,
            result,
        });
        Ok(())
    }

    #[inline]
    fn reap(&mut self, mut f: impl FnMut(Completion) -> Option<Request>) {
        if let Some(c) = self.done.take() {
            self.slots.release(c.buf);
            if let Some(req) = f(c) {
                self.push(req);
            }
        }
    }

    fn buffer_mut(&mut self, idx: u32) -> Option<&mut [u8]> {
        if self.slots.is_idle(idx) {
            Some(self.pool.get_mut(idx))
        } else {
            None
        }
    }

    fn in_flight(&self) -> usize {
        self.slots.in_flight()
    }

    fn push_file(&mut self, slot: u32, op: FileOp) {
        let fd = self
            .file
            .claim(&mut self.slots, self.files.len(), slot, &op);
        self.queued
            .push_back(Queued::File(Box::new((slot, op, fd))));
    }

    fn open_file(&self) -> Option<BorrowedFd<'_>> {
        self.file.file()
    }

    fn features(&self) -> EngineFeatures {
        EngineFeatures::default()
    }
}

impl SyncEngine {
    /// Runs one file operation, as a completion result.
    fn run_file_op(&mut self, slot: u32, op: FileOp, fd: Option<OwnedFd>) -> i32 {
        match op {
            FileOp::Open {
                dir,
                path,
                flags,
                mode,
                ..
            } => fileops::open_sync(self.files[dir as usize].as_fd(), &path, flags, mode),
            FileOp::Io { op, offset, len } => {
                let Some(fd) = self.file.file() else {
                    return -libc::EBADF;
                };
                let len = len as usize;
                let res = match op {
                    Op::Read => rustix::io::pread(fd, &mut self.pool.get_mut(slot)[..len], offset),
                    Op::Write => {
                        let buf = &mut self.pool.get_mut(slot)[..len];
                        let place = self.file.stamp_place(offset);
                        self.stamper.stamp_file_write(buf, offset, place);
                        rustix::io::pwrite(fd, buf, offset)
                    }
                    // A frame's file takes no discards.
                    Op::Trim => return -libc::EOPNOTSUPP,
                };
                res.map_or_else(|e| -e.raw_os_error(), |n| n as i32)
            }
            FileOp::Sync { data_only } => match self.file.file() {
                Some(fd) => fileops::sync_sync(fd, data_only),
                None => -libc::EBADF,
            },
            FileOp::Close => fd.map_or(-libc::EBADF, fileops::close_sync),
        }
    }
}

/// pread(2) as the system call itself, its result as a completion's (bytes
/// moved, or a negative errno). glibc's `pread` is a thread cancellation
/// point: it turns asynchronous cancellation on and off round the call,
/// some 30 instructions per I/O (callgrind, bench/RESULTS.md), for threads
/// iosurvey never cancels.
#[inline]
fn pread(fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> i32 {
    // SAFETY: `buf` is memory the call may write, `buf.len()` bytes of it,
    // borrowed mutably for the call; `fd` is open for the call's length.
    let n = unsafe {
        libc::syscall(
            libc::SYS_pread64,
            fd.as_raw_fd(),
            buf.as_mut_ptr(),
            buf.len(),
            offset as libc::off_t,
        )
    };
    syscall_result(n)
}

/// pwrite(2) as the system call itself; see [`pread`].
#[inline]
fn pwrite(fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> i32 {
    // SAFETY: `buf` is memory the call may read, `buf.len()` bytes of it,
    // borrowed for the call; `fd` is open for the call's length.
    let n = unsafe {
        libc::syscall(
            libc::SYS_pwrite64,
            fd.as_raw_fd(),
            buf.as_ptr(),
            buf.len(),
            offset as libc::off_t,
        )
    };
    syscall_result(n)
}

/// A completion's result from a system call's return: bytes moved, or the
/// negative errno of a failure. (An I/O is at most a buffer: it fits an
/// i32, as the buffer pool's sizes do.)
#[inline]
fn syscall_result(n: libc::c_long) -> i32 {
    if n < 0 {
        -std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    } else {
        n as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn engine(data: &[u8], buffers: usize) -> (tempfile::NamedTempFile, SyncEngine) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(data).unwrap();
        let fd: OwnedFd = std::fs::File::open(f.path()).unwrap().into();
        let cfg = EngineConfig {
            files: vec![fd],
            buffers,
            buffer_size: 4096,
            alignment: 4096,
            sqpoll: None,
            iopoll: false,
            fill: Default::default(),
            verify: None,
            stop: None,
        };
        (f, SyncEngine::new(cfg, 1).unwrap())
    }

    fn read(buf: u32, offset: u64) -> Request {
        Request {
            file: 0,
            op: Op::Read,
            offset,
            len: 4096,
            buf,
        }
    }

    /// Runs every queued request, one per call, and returns the completions.
    fn drain(e: &mut SyncEngine) -> Vec<Completion> {
        let mut got = Vec::new();
        while e.in_flight() > 0 {
            e.submit_and_wait(1, Duration::from_secs(1)).unwrap();
            e.reap(|c| {
                got.push(c);
                None
            });
        }
        got
    }

    /// A discard runs when its turn comes, as reads do; a regular file
    /// takes none (`-ENOTTY`).
    #[test]
    fn a_discard_runs_in_turn_with_its_own_result() {
        let (_f, mut e) = engine(&[7u8; 8192], 2);
        e.push(Request {
            op: Op::Trim,
            ..read(0, 0)
        });
        e.push(read(1, 4096));
        let got = drain(&mut e);
        assert_eq!(
            got,
            [
                Completion {
                    buf: 0,
                    result: -libc::ENOTTY
                },
                Completion {
                    buf: 1,
                    result: 4096
                }
            ]
        );
    }

    #[test]
    fn reads_back_what_the_file_holds_and_reports_errno() {
        let (_f, mut e) = engine(&[7u8; 8192], 2);
        e.push(read(1, 4096));
        e.push(Request {
            op: Op::Write,
            buf: 0,
            ..read(1, 4096)
        });
        // One request per call, oldest first.
        e.submit_and_wait(2, Duration::ZERO).unwrap();
        assert_eq!(e.in_flight(), 2);
        let got = drain(&mut e);
        assert_eq!(
            got[0],
            Completion {
                buf: 1,
                result: 4096
            }
        );
        // The file is open read-only: the write fails with EBADF.
        assert_eq!(got[1].buf, 0);
        assert_eq!(got[1].result, -libc::EBADF);
        assert!(e.buffer_mut(1).unwrap().iter().all(|&b| b == 7));
        assert_eq!(e.in_flight(), 0);
        assert_eq!(e.features(), EngineFeatures::default());
    }

    #[test]
    fn a_short_read_comes_back_as_the_bytes_it_moved() {
        // 6000 bytes: the second block is partial, the third past the end.
        let (_f, mut e) = engine(&[3u8; 6000], 1);
        let mut got = Vec::new();
        for offset in [0, 4096, 8192] {
            e.push(read(0, offset));
            got.extend(drain(&mut e).iter().map(|c| c.result));
        }
        assert_eq!(got, [4096, 6000 - 4096, 0]);
    }

    #[test]
    fn the_reap_callback_rearms_the_buffer_it_was_given() {
        let (_f, mut e) = engine(&[5u8; 16384], 1);
        e.push(read(0, 0));
        let mut offsets = vec![4096, 8192, 12288];
        let mut results = Vec::new();
        while e.in_flight() > 0 {
            e.submit_and_wait(1, Duration::from_secs(1)).unwrap();
            e.reap(|c| {
                results.push(c.result);
                offsets.pop().map(|o| read(c.buf, o))
            });
        }
        assert_eq!(results, [4096; 4]);
    }

    #[test]
    fn requests_run_oldest_first_as_the_queue_wraps_round() {
        // Three buffers, each re-armed as it completes, with another
        // pushed in between: every request in the order it was pushed,
        // over many turns.
        let (_f, mut e) = engine(&[9u8; 4096 * 64], 3);
        let mut pushed = Vec::new();
        for buf in 0..3 {
            e.push(read(buf, u64::from(buf) * 4096));
            pushed.push(u64::from(buf) * 4096);
        }
        let mut next = 3u64;
        let mut ran = Vec::new();
        while e.in_flight() > 0 {
            let up = e.next_up().unwrap();
            e.submit_and_wait(1, Duration::ZERO).unwrap();
            e.reap(|c| {
                assert_eq!(c.buf, up, "the slot next_up named");
                assert_eq!(c.result, 4096);
                ran.push(c.buf);
                (next < 40).then(|| {
                    let offset = next * 4096;
                    next += 1;
                    pushed.push(offset);
                    read(c.buf, offset)
                })
            });
        }
        assert_eq!(ran.len(), pushed.len());
        // Buffers in turn: each re-armed one goes to the back.
        assert!(
            ran.iter().enumerate().all(|(i, &b)| b == (i % 3) as u32),
            "{ran:?}"
        );
    }

    #[test]
    fn a_buffer_in_flight_is_not_handed_out() {
        let (_f, mut e) = engine(&[1u8; 4096], 2);
        e.push(read(0, 0));
        assert!(e.buffer_mut(0).is_none());
        assert!(e.buffer_mut(1).is_some());
        assert!(e.buffer_mut(2).is_none(), "no such buffer");
        drain(&mut e);
        assert!(e.buffer_mut(0).is_some());
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_buffer_in_flight_cannot_be_pushed_again() {
        let (_f, mut e) = engine(&[1u8; 4096], 2);
        e.push(read(0, 0));
        e.push(read(0, 0));
    }

    #[test]
    #[should_panic(expected = "request refused")]
    fn a_request_longer_than_its_buffer_panics() {
        let (_f, mut e) = engine(&[1u8; 8192], 2);
        e.push(Request {
            len: 8192,
            ..read(0, 0)
        });
    }
}
