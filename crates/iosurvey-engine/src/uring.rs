//! The io_uring engine: registered files, fixed buffers, batched submit and
//! reap.

use crate::{
    BufferPool, Completion, Engine, EngineConfig, EngineError, EngineFeatures, Op, Request,
};
use io_uring::{opcode, squeue, types, IoUring};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// How long a batched wait may hold a completion that is already there
/// before returning it, in microseconds. It bounds what batching adds to a
/// measured latency.
pub const REAP_WINDOW_US: u32 = 10;

/// io_uring with registered files and (when the kernel allows) fixed
/// buffers.
///
/// Field order matters: the ring is dropped first, after [`Drop`] has
/// drained every in-flight I/O, then the buffers and the files.
pub struct UringEngine {
    ring: IoUring,
    pool: BufferPool,
    files: Vec<OwnedFd>,
    raw_fds: Vec<RawFd>,
    registered_files: bool,
    fixed_buffers: bool,
    /// Requests pushed to the SQ and not yet reaped.
    /// Requests pushed and not yet in the submission queue.
    queued: Vec<Request>,
    in_flight: usize,
    /// The kernel can bound a batched wait in time (6.12+).
    min_timeout: bool,
    sqpoll: bool,
    iopoll: bool,
}

/// A ring with the polling the user asked for, or an error naming it: no
/// quiet fallback to a ring without it.
fn asked_ring(cfg: &EngineConfig, entries: u32) -> Result<IoUring, EngineError> {
    let mut b = IoUring::builder();
    b.setup_cqsize(entries * 2);
    if let Some(sq) = cfg.sqpoll {
        b.setup_sqpoll(sq.idle_ms);
        if let Some(cpu) = sq.cpu {
            b.setup_sqpoll_cpu(cpu);
        }
    }
    if cfg.iopoll {
        b.setup_iopoll();
    }
    b.build(entries).map_err(|source| {
        let (asked, flag) = match (cfg.sqpoll.is_some(), cfg.iopoll) {
            (true, true) => ("SQPOLL and IOPOLL", "--sqpoll and --hipri"),
            (true, false) => ("SQPOLL", "--sqpoll"),
            _ => ("IOPOLL", "--hipri"),
        };
        EngineError::UringAsked {
            asked,
            flag,
            source,
        }
    })
}

impl UringEngine {
    /// Sets up a ring with room for `depth` I/Os in flight.
    pub fn new(cfg: EngineConfig, depth: u32, seed: u64) -> Result<Self, EngineError> {
        let pool = BufferPool::new(cfg.buffers, cfg.buffer_size, cfg.alignment, seed)?;
        let entries = depth.max(1).next_power_of_two().min(32768);
        let ring = if cfg.sqpoll.is_some() || cfg.iopoll {
            asked_ring(&cfg, entries)?
        } else {
            IoUring::builder()
                .setup_single_issuer()
                .setup_defer_taskrun()
                .setup_cqsize(entries * 2)
                .build(entries)
                .or_else(|_| IoUring::builder().setup_cqsize(entries * 2).build(entries))
                .map_err(EngineError::UringSetup)?
        };
        let raw_fds: Vec<RawFd> = cfg.files.iter().map(|f| f.as_raw_fd()).collect();
        let min_timeout = ring.params().is_feature_min_timeout();
        let registered_files = ring.submitter().register_files(&raw_fds).is_ok();
        let iovecs = pool.iovecs();
        // SAFETY: the iovecs describe the pool's buffers, which live as long
        // as the ring (the pool is dropped after the ring).
        let fixed_buffers =
            iovecs.len() <= 16384 && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        Ok(UringEngine {
            ring,
            pool,
            files: cfg.files,
            raw_fds,
            registered_files,
            fixed_buffers,
            queued: Vec::with_capacity(depth as usize),
            in_flight: 0,
            min_timeout,
            sqpoll: cfg.sqpoll.is_some(),
            iopoll: cfg.iopoll,
        })
    }

    /// Moves queued requests into the submission queue, syncing it once.
    fn flush_queued(&mut self) {
        let mut start = 0;
        while start < self.queued.len() {
            let mut sq = self.ring.submission();
            for req in &self.queued[start..] {
                let sqe = entry(
                    &self.pool,
                    &self.raw_fds,
                    self.registered_files,
                    self.fixed_buffers,
                    req,
                );
                // SAFETY: the buffer and the file belong to this engine and
                // outlive the I/O (drained in Drop); one request per buffer.
                if unsafe { sq.push(&sqe) }.is_err() {
                    break;
                }
                start += 1;
            }
            drop(sq);
            if start < self.queued.len() {
                // Queue full: hand what is queued to the kernel and go on.
                let _ = self.ring.submit();
            }
        }
        self.queued.clear();
    }
}

fn entry(
    pool: &BufferPool,
    raw_fds: &[RawFd],
    registered_files: bool,
    fixed_buffers: bool,
    req: &Request,
) -> squeue::Entry {
    {
        let ptr = pool.ptr(req.buf);
        let e = match (registered_files, fixed_buffers, req.op) {
            (true, true, Op::Read) => {
                opcode::ReadFixed::new(types::Fixed(req.file), ptr, req.len, req.buf as u16)
                    .offset(req.offset)
                    .build()
            }
            (true, true, Op::Write) => {
                opcode::WriteFixed::new(types::Fixed(req.file), ptr, req.len, req.buf as u16)
                    .offset(req.offset)
                    .build()
            }
            (true, false, Op::Read) => opcode::Read::new(types::Fixed(req.file), ptr, req.len)
                .offset(req.offset)
                .build(),
            (true, false, Op::Write) => opcode::Write::new(types::Fixed(req.file), ptr, req.len)
                .offset(req.offset)
                .build(),
            (false, _, Op::Read) => {
                let fd = types::Fd(raw_fds[req.file as usize]);
                opcode::Read::new(fd, ptr, req.len)
                    .offset(req.offset)
                    .build()
            }
            (false, _, Op::Write) => {
                let fd = types::Fd(raw_fds[req.file as usize]);
                opcode::Write::new(fd, ptr, req.len)
                    .offset(req.offset)
                    .build()
            }
        };
        e.user_data(req.tag)
    }
}

impl Engine for UringEngine {
    #[inline]
    fn push(&mut self, req: Request) {
        debug_assert!((req.buf as usize) < self.pool.count());
        debug_assert!((req.file as usize) < self.files.len());
        self.queued.push(req);
        self.in_flight += 1;
    }

    #[inline]
    fn submit_and_wait(&mut self, min_complete: usize) -> std::io::Result<()> {
        self.flush_queued();
        let mut want = min_complete.min(self.in_flight);
        let args = types::SubmitArgs::new().min_wait_usec(REAP_WINDOW_US);
        if want > 1 && !self.min_timeout {
            // Without a time bound a batched wait could hold early
            // completions for long: wait for one.
            want = 1;
        }
        loop {
            let res = if want > 1 {
                self.ring.submitter().submit_with_args(want, &args)
            } else {
                self.ring.submit_and_wait(want)
            };
            match res {
                Ok(_) => return Ok(()),
                // The batch window closed: reap whatever is there.
                Err(e) if e.raw_os_error() == Some(libc::ETIME) => return Ok(()),
                Err(e)
                    if e.raw_os_error() == Some(libc::EINTR)
                        || e.raw_os_error() == Some(libc::EAGAIN)
                        || e.raw_os_error() == Some(libc::EBUSY) =>
                {
                    if !self.ring.completion().is_empty() {
                        return Ok(());
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    #[inline]
    fn reap(&mut self, mut f: impl FnMut(Completion)) {
        let mut n = 0;
        for cqe in self.ring.completion() {
            n += 1;
            f(Completion {
                tag: cqe.user_data(),
                result: cqe.result(),
            });
        }
        self.in_flight -= n;
    }

    fn buffer_mut(&mut self, idx: u32) -> &mut [u8] {
        self.pool.get_mut(idx)
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn replace_file(&mut self, idx: u32, fd: OwnedFd) -> std::io::Result<OwnedFd> {
        if self.in_flight > 0 {
            return Err(crate::sync::busy());
        }
        let i = idx as usize;
        if i >= self.files.len() {
            return Err(crate::sync::no_slot());
        }
        if self.registered_files {
            // A registered table keeps the kernel's own reference to each
            // file, so the caller's close would not be the last one: a
            // table that changes per unit of work goes unregistered.
            self.ring.submitter().unregister_files()?;
            self.registered_files = false;
        }
        self.raw_fds[i] = fd.as_raw_fd();
        Ok(std::mem::replace(&mut self.files[i], fd))
    }

    fn features(&self) -> EngineFeatures {
        EngineFeatures {
            registered_files: self.registered_files,
            fixed_buffers: self.fixed_buffers,
            reap_window_us: self.min_timeout.then_some(REAP_WINDOW_US),
            sqpoll: self.sqpoll,
            iopoll: self.iopoll,
        }
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // The kernel may still write into our buffers: wait for every
        // in-flight I/O before the pool is freed.
        while self.in_flight > 0 {
            if self.submit_and_wait(1).is_err() {
                break;
            }
            self.reap(|_| {});
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_dropped_engine_holds_no_file_a_lock_can_wait_on() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), [7u8; 4096]).unwrap();
        let fd: OwnedFd = std::fs::File::open(f.path()).unwrap().into();
        rustix::fs::flock(&fd, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
        let cfg = EngineConfig {
            files: vec![fd],
            buffers: 1,
            buffer_size: 4096,
            alignment: 4096,
            sqpoll: None,
            iopoll: false,
        };
        let e = match UringEngine::new(cfg, 1, 1) {
            Ok(e) => e,
            Err(err) => {
                eprintln!("skipping: io_uring unavailable here: {err}");
                return;
            }
        };
        let registered = e.registered_files;
        drop(e);
        // The lock goes with the last reference to the open file: once the
        // engine is dropped, a new open can take it at once.
        let again = std::fs::File::open(f.path()).unwrap();
        let got = rustix::fs::flock(&again, rustix::fs::FlockOperation::NonBlockingLockExclusive);
        assert!(
            got.is_ok() || !registered,
            "the ring still holds the file after drop: {got:?}"
        );
    }

    #[test]
    fn reads_and_writes_through_the_ring() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&[9u8; 16384]).unwrap();
        let fd: OwnedFd = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(f.path())
            .unwrap()
            .into();
        let cfg = EngineConfig {
            files: vec![fd],
            buffers: 4,
            buffer_size: 4096,
            alignment: 4096,
            sqpoll: None,
            iopoll: false,
        };
        let mut e = match UringEngine::new(cfg, 4, 3) {
            Ok(e) => e,
            Err(err) => {
                eprintln!("skipping: io_uring unavailable here: {err}");
                return;
            }
        };
        for i in 0..4u32 {
            e.push(Request {
                file: 0,
                op: if i == 3 { Op::Write } else { Op::Read },
                offset: u64::from(i) * 4096,
                len: 4096,
                buf: i,
                tag: u64::from(i) + 100,
            });
        }
        assert_eq!(e.in_flight(), 4);
        let mut got = Vec::new();
        while got.len() < 4 {
            e.submit_and_wait(1).unwrap();
            e.reap(|c| got.push(c));
        }
        got.sort_by_key(|c| c.tag);
        assert!(got.iter().all(|c| c.result == 4096), "{got:?}");
        assert_eq!(
            got.iter().map(|c| c.tag).collect::<Vec<_>>(),
            [100, 101, 102, 103]
        );
        assert!(e.buffer_mut(0).iter().all(|&b| b == 9));
        assert_eq!(e.in_flight(), 0);
        drop(e);
        let data = std::fs::read(f.path()).unwrap();
        assert!(
            data[12288..].iter().any(|&b| b != 9),
            "write reached the file"
        );
    }

    #[test]
    fn a_short_read_comes_back_as_the_bytes_it_moved() {
        // 6000 bytes: the second block is partial, the third past the end.
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&[4u8; 6000]).unwrap();
        let fd: OwnedFd = std::fs::File::open(f.path()).unwrap().into();
        let cfg = EngineConfig {
            files: vec![fd],
            buffers: 3,
            buffer_size: 4096,
            alignment: 4096,
            sqpoll: None,
            iopoll: false,
        };
        let mut e = match UringEngine::new(cfg, 3, 3) {
            Ok(e) => e,
            Err(err) => {
                eprintln!("skipping: io_uring unavailable here: {err}");
                return;
            }
        };
        for i in 0..3u32 {
            e.push(Request {
                file: 0,
                op: Op::Read,
                offset: u64::from(i) * 4096,
                len: 4096,
                buf: i,
                tag: u64::from(i),
            });
        }
        let mut got = Vec::new();
        while got.len() < 3 {
            e.submit_and_wait(1).unwrap();
            e.reap(|c| got.push(c));
        }
        got.sort_by_key(|c| c.tag);
        let results: Vec<i32> = got.iter().map(|c| c.result).collect();
        assert_eq!(results, [4096, 6000 - 4096, 0]);
    }

    #[test]
    fn a_replaced_file_takes_the_next_io_and_the_old_one_comes_back() {
        let mut a = tempfile::NamedTempFile::new().unwrap();
        a.write_all(&[1u8; 4096]).unwrap();
        let mut b = tempfile::NamedTempFile::new().unwrap();
        b.write_all(&[2u8; 4096]).unwrap();
        let open = |p: &std::path::Path| -> OwnedFd { std::fs::File::open(p).unwrap().into() };
        let cfg = EngineConfig {
            files: vec![open(a.path())],
            buffers: 1,
            buffer_size: 4096,
            alignment: 4096,
            sqpoll: None,
            iopoll: false,
        };
        let mut e = match UringEngine::new(cfg, 1, 3) {
            Ok(e) => e,
            Err(err) => {
                eprintln!("skipping: io_uring unavailable here: {err}");
                return;
            }
        };
        let read = |e: &mut UringEngine| {
            e.push(Request {
                file: 0,
                op: Op::Read,
                offset: 0,
                len: 4096,
                buf: 0,
                tag: 1,
            });
            let mut res = 0;
            while e.in_flight() > 0 {
                e.submit_and_wait(1).unwrap();
                e.reap(|c| res = c.result);
            }
            assert_eq!(res, 4096);
            e.buffer_mut(0)[0]
        };
        assert_eq!(read(&mut e), 1);
        let old = e.replace_file(0, open(b.path())).unwrap();
        assert!(!e.features().registered_files);
        assert_eq!(read(&mut e), 2);
        let back = e.replace_file(0, old).unwrap();
        assert_eq!(read(&mut e), 1);
        drop(back);
        assert!(e.replace_file(1, open(b.path())).is_err());
    }
}
