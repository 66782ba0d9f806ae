//! `--verify-backlog N`: a worker reads back its last N writes after every
//! N, during the job, while its other I/Os stay in flight (the read-back
//! takes the worker's time, as fio's `verify_backlog` does: the job's rates
//! include it).

use crate::verify::read_and_check;
use crate::worker::now_ns;
use iosurvey_engine::verify::{Expect, WriteVerify};
use iosurvey_engine::BufferPool;
use iosurvey_model::verify::VerifySummary;
use iosurvey_target::target::{io_alignment, OpenTarget};
use std::os::fd::AsFd;

/// What the job gives the workers for their read-backs.
#[derive(Clone, Copy)]
pub(crate) struct BacklogSpec<'a> {
    /// Writes between read-backs.
    pub every: u32,
    pub targets: &'a [OpenTarget],
}

/// One worker's read-backs.
pub(super) struct Backlog<'a> {
    spec: BacklogSpec<'a>,
    verify: &'a WriteVerify,
    /// The writes completed since the last read-back: file, offset, length.
    done: Vec<(u32, u64, u32)>,
    buf: BufferPool,
    pub(super) summary: VerifySummary,
}

impl<'a> Backlog<'a> {
    /// Read-backs of writes of up to `max_len` bytes.
    pub(super) fn new(
        spec: BacklogSpec<'a>,
        verify: &'a WriteVerify,
        max_len: usize,
    ) -> std::io::Result<Self> {
        let align = io_alignment(spec.targets);
        let buf =
            BufferPool::new(1, max_len.max(4096), align, 0, None).map_err(std::io::Error::other)?;
        Ok(Backlog {
            spec,
            verify,
            done: Vec::with_capacity(spec.every as usize),
            buf,
            summary: VerifySummary {
                mode: "write".into(),
                run_id: Some(format!("{:016x}", verify.run_id)),
                run_seed: Some(verify.seed),
                ..Default::default()
            },
        })
    }

    /// A write of `len` bytes at `offset` of `file` completed whole.
    pub(super) fn written(&mut self, file: u32, offset: u64, len: u32) {
        self.done.push((file, offset, len));
    }

    /// Reads back the writes of the backlog once it holds N of them. A
    /// block a newer write has in flight is left to a later check.
    pub(super) fn check_if_due(&mut self) {
        if self.done.len() < self.spec.every as usize {
            return;
        }
        let t0 = now_ns();
        for &(file, offset, len) in &self.done {
            let map = &self.verify.maps[file as usize];
            if !map.try_reserve(offset, len) {
                continue;
            }
            let t = &self.spec.targets[file as usize];
            let buf = &mut self.buf.get_mut(0)[..len as usize];
            let mut expect = Expect::Map {
                map,
                run_id: self.verify.run_id,
            };
            read_and_check(
                t.fd.as_fd(),
                file as usize,
                buf,
                offset,
                offset,
                &mut expect,
                &mut self.summary,
            );
            map.release(offset, len);
        }
        self.done.clear();
        self.summary.backlog_checks += 1;
        self.summary.elapsed_ns += now_ns() - t0;
    }
}
