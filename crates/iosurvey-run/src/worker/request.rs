//! The next request of a block stream: its op, its offset (drawn, and
//! reserved under `--verify`) and where an array puts it, or none once the
//! stream's budget is spent.

use super::WorkerStream;
use iosurvey_engine::verify::WriteVerify;
use iosurvey_engine::{Op, Request};
use iosurvey_workload::Mix;

/// The next request of `st` for slot `slot`, or `None` once its budget is
/// spent (during the ramp, a budget put aside is [`super::UNBOUNDED`]). With
/// `--verify`, a write's blocks are reserved in the generation map first:
/// an offset whose blocks a write already has in flight is drawn again.
#[inline(always)]
pub(super) fn next_request(
    st: &mut WorkerStream,
    slot: u32,
    verify: Option<&WriteVerify>,
) -> Option<Request> {
    let (op, offset) = next_op(st, verify)?;
    let (file, offset) = match &st.map {
        None => (st.file, offset),
        Some(m) => m.locate(offset),
    };
    Some(Request {
        file,
        op,
        offset,
        len: st.bs,
        buf: slot,
    })
}

/// The op and offset (in the stream's target, or its array) of the next
/// I/O of `st`, or `None` once its budget is spent; see [`next_request`].
#[inline(always)]
pub(super) fn next_op(st: &mut WorkerStream, verify: Option<&WriteVerify>) -> Option<(Op, u64)> {
    if st.budget == 0 {
        return None;
    }
    st.budget -= 1;
    let op = match st.mix {
        Mix::Read => Op::Read,
        Mix::Write => Op::Write,
        mixed => mixed.op(st.gen.roll_percent()),
    };
    let mut offset = st.gen.next_offset();
    if let (Some(v), Op::Write) = (verify, op) {
        offset = reserve(v, st, offset);
    }
    Some((op, offset))
}

/// Reserves the blocks of a write at `offset` (or at the next offsets the
/// stream draws, while a write of the same blocks is in flight).
#[cold]
fn reserve(v: &WriteVerify, st: &mut WorkerStream, mut offset: u64) -> u64 {
    let map = &v.maps[st.file as usize];
    // The job's checks leave each worker room for several times its
    // writes in flight: a free offset comes within a few draws.
    while !map.try_reserve(offset, st.bs) {
        std::hint::spin_loop();
        offset = st.gen.next_offset();
    }
    offset
}
