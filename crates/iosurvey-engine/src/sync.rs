//! The synchronous engine: `pread`/`pwrite`, executed at submit time.

use crate::{BufferPool, Completion, Engine, EngineConfig, EngineError, Op, Request};
use std::os::fd::OwnedFd;

/// pread/pwrite, one request at a time in queue order.
pub struct SyncEngine {
    files: Vec<OwnedFd>,
    pool: BufferPool,
    queued: Vec<Request>,
    done: Vec<Completion>,
}

impl SyncEngine {
    pub fn new(cfg: EngineConfig, seed: u64) -> Result<Self, EngineError> {
        let pool = BufferPool::new(cfg.buffers, cfg.buffer_size, cfg.alignment, seed)?;
        Ok(SyncEngine {
            files: cfg.files,
            pool,
            queued: Vec::with_capacity(cfg.buffers),
            done: Vec::with_capacity(cfg.buffers),
        })
    }
}

impl Engine for SyncEngine {
    const ONE_AT_A_TIME: bool = true;

    #[inline]
    fn push(&mut self, req: Request) {
        self.queued.push(req);
    }

    #[inline]
    fn submit_and_wait(&mut self, _min_complete: usize) -> std::io::Result<()> {
        for req in self.queued.drain(..) {
            let fd = &self.files[req.file as usize];
            let len = req.len as usize;
            let res = match req.op {
                Op::Read => {
                    let buf = self.pool.get_mut(req.buf);
                    rustix::io::pread(fd, &mut buf[..len], req.offset)
                }
                Op::Write => rustix::io::pwrite(fd, self.pool.get(req.buf, len), req.offset),
            };
            let result = match res {
                Ok(n) => n as i32,
                Err(e) => -e.raw_os_error(),
            };
            self.done.push(Completion {
                tag: req.tag,
                result,
            });
        }
        Ok(())
    }

    #[inline]
    fn reap(&mut self, mut f: impl FnMut(Completion)) {
        for c in self.done.drain(..) {
            f(c);
        }
    }

    fn buffer_mut(&mut self, idx: u32) -> &mut [u8] {
        self.pool.get_mut(idx)
    }

    fn in_flight(&self) -> usize {
        self.queued.len() + self.done.len()
    }

    fn replace_file(&mut self, idx: u32, fd: OwnedFd) -> std::io::Result<OwnedFd> {
        if self.in_flight() > 0 {
            return Err(busy());
        }
        let slot = self.files.get_mut(idx as usize).ok_or_else(no_slot)?;
        Ok(std::mem::replace(slot, fd))
    }
}

pub(crate) fn busy() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ResourceBusy,
        "cannot replace a file with I/O in flight",
    )
}

pub(crate) fn no_slot() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, "no such file slot")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_back_what_the_file_holds_and_reports_errno() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&[7u8; 8192]).unwrap();
        let fd: OwnedFd = std::fs::File::open(f.path()).unwrap().into();
        let cfg = EngineConfig {
            files: vec![fd],
            buffers: 2,
            buffer_size: 4096,
            alignment: 4096,
            sqpoll: None,
            iopoll: false,
        };
        let mut e = SyncEngine::new(cfg, 1).unwrap();
        let req = Request {
            file: 0,
            op: Op::Read,
            offset: 4096,
            len: 4096,
            buf: 1,
            tag: 42,
        };
        e.push(req);
        e.push(Request {
            op: Op::Write,
            tag: 43,
            ..req
        });
        e.submit_and_wait(1).unwrap();
        let mut got = Vec::new();
        e.reap(|c| got.push(c));
        assert_eq!(
            got[0],
            Completion {
                tag: 42,
                result: 4096
            }
        );
        // The file is open read-only: the write fails with EBADF.
        assert_eq!(got[1].tag, 43);
        assert_eq!(got[1].result, -libc::EBADF);
        assert!(e.buffer_mut(1).iter().all(|&b| b == 7));
        assert_eq!(e.in_flight(), 0);
    }

    #[test]
    fn a_short_read_comes_back_as_the_bytes_it_moved() {
        // 6000 bytes: the second block is partial, the third past the end.
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&[3u8; 6000]).unwrap();
        let fd: OwnedFd = std::fs::File::open(f.path()).unwrap().into();
        let cfg = EngineConfig {
            files: vec![fd],
            buffers: 1,
            buffer_size: 4096,
            alignment: 4096,
            sqpoll: None,
            iopoll: false,
        };
        let mut e = SyncEngine::new(cfg, 1).unwrap();
        let mut got = Vec::new();
        for (tag, offset) in [(0, 0), (1, 4096), (2, 8192)] {
            e.push(Request {
                file: 0,
                op: Op::Read,
                offset,
                len: 4096,
                buf: 0,
                tag,
            });
            e.submit_and_wait(1).unwrap();
            e.reap(|c| got.push(c.result));
        }
        assert_eq!(got, [4096, 6000 - 4096, 0]);
    }
}
