//! I/Os that a striped array cuts into pieces: an I/O larger than the
//! stripe, or one that crosses a stripe, goes out as one request per stripe
//! it touches, each to the member that holds that stripe, as a real RAID 0
//! splits it. The pieces go out in one submit batch, each in its own
//! buffer; the I/O completes with its last piece, and is timed from the
//! submit of its first.

use super::request::next_op;
use super::slot::{Kind, Slot};
use super::{Arm, WorkerStream};
use iosurvey_engine::{Engine, Request};

/// One cut I/O in flight: its pieces are the buffers from `first` on.
#[derive(Clone, Copy, Debug)]
pub(super) struct Group {
    /// The buffer of its first piece; the others follow it. Its slot says
    /// the stream.
    pub first: u32,
    /// Pieces still in flight.
    pub left: u32,
    /// A piece failed: the I/O counts as one failure, and not as an I/O.
    pub failed: bool,
    /// Where the I/O starts in the array.
    pub offset: u64,
}

impl Group {
    pub(super) fn new(first: u32) -> Self {
        Group {
            first,
            left: 0,
            failed: false,
            offset: 0,
        }
    }
}

impl Arm<'_> {
    /// Arms group `gi` (`g`) with the next I/O of `st`, stream `stream`
    /// of the worker's list, and pushes its pieces; false once the
    /// stream's budget is spent.
    pub(super) fn group<E: Engine>(
        &mut self,
        engine: &mut E,
        g: &mut Group,
        gi: u32,
        stream: u32,
        st: &mut WorkerStream,
    ) -> bool {
        let Some((op, offset, _)) = next_op::<false>(st, None) else {
            return false;
        };
        let map = st.map.as_ref().expect("only an array's I/Os are cut");
        let batch = self.batches.current();
        let counted = self.counted;
        let mut buf = g.first;
        map.pieces(offset, u64::from(st.bs), |file, at, len| {
            // A piece is at most a stripe, which a buffer holds.
            let len = len as u32;
            self.slots[buf as usize] = Slot {
                kind: Kind::Piece,
                group: gi,
                ..Slot::new(stream, op, at, len, counted, batch)
            };
            engine.push(Request {
                file,
                op,
                offset: at,
                len,
                buf,
            });
            buf += 1;
        });
        debug_assert!(buf - g.first <= st.pieces, "more pieces than buffers");
        g.left = buf - g.first;
        g.failed = false;
        g.offset = offset;
        true
    }
}
