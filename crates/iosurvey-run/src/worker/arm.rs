//! Arming the frame stream's slots outside the reap: a leaf beside the
//! slots and the batches it writes into.

use super::batches::Batches;
use super::slot::{Kind, Slot};
use iosurvey_engine::{Engine, FileOp, Op, Request};

/// Arms the frame stream's slots outside the reap: each push takes the
/// key of the batch it goes out in as the block streams' do (on
/// one-at-a-time engines, its own submit time once its turn comes).
pub(super) struct Arm<'a> {
    pub slots: &'a mut [Slot],
    pub batches: &'a Batches,
    /// Pushed in the measured phase.
    pub counted: bool,
}

impl Arm<'_> {
    fn set(&mut self, stream: u32, op: Op, offset: u64, len: u32, buf: u32) {
        self.slots[buf as usize] = Slot {
            kind: Kind::Frame,
            ..Slot::new(
                stream,
                op,
                offset,
                len,
                self.counted,
                self.batches.current(),
            )
        };
    }

    /// Pushes a piece of a frame for stream `stream`: a block request, or
    /// with `open_file` the same I/O on the engine's open file.
    pub(super) fn piece<E: Engine>(
        &mut self,
        engine: &mut E,
        stream: u32,
        req: Request,
        open_file: bool,
    ) {
        self.set(stream, req.op, req.offset, req.len, req.buf);
        if open_file {
            let io = FileOp::Io {
                op: req.op,
                offset: req.offset,
                len: req.len,
            };
            engine.push_file(req.buf, io);
        } else {
            engine.push(req);
        }
    }

    /// Pushes a file operation (open, sync, close) on buffer `buf`.
    pub(super) fn file_op<E: Engine>(&mut self, engine: &mut E, buf: u32, stream: u32, op: FileOp) {
        self.set(stream, Op::Read, 0, 0, buf);
        engine.push_file(buf, op);
    }
}
