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
/// `SIZED`: the stream has a block-size split (see [`next_op`]); the
/// build without it is the plain stream's, unchanged.
#[inline(always)]
pub(super) fn next_request<const SIZED: bool>(
    st: &mut WorkerStream,
    slot: u32,
    verify: Option<&WriteVerify>,
) -> Option<Request> {
    let (op, offset, len) = next_op::<SIZED>(st, verify)?;
    let (file, offset) = match &st.map {
        None => (st.file, offset),
        Some(m) => m.locate(offset),
    };
    Some(Request {
        file,
        op,
        offset,
        len,
        buf: slot,
    })
}

/// The op, offset (in the stream's target, or its array) and length of
/// the next I/O of `st`, or `None` once its budget is spent; see
/// [`next_request`]. `SIZED`: the length is drawn from the stream's
/// block-size split, the offset fits it, and the budget is of bytes.
#[inline(always)]
pub(super) fn next_op<const SIZED: bool>(
    st: &mut WorkerStream,
    verify: Option<&WriteVerify>,
) -> Option<(Op, u64, u32)> {
    if st.budget == 0 {
        return None;
    }
    let op = match st.mix {
        Mix::Read => Op::Read,
        Mix::Write => Op::Write,
        mixed => mixed.op(st.gen.roll_percent()),
    };
    let (len, mut offset) = match (SIZED, &st.sizes) {
        (true, Some(sizes)) => {
            // A sequential stream draws a size again where the one drawn
            // would run past its region's end: the budget pays for the
            // size done.
            let drawn = u64::from(sizes.len_at(st.gen.roll_percent()));
            let (offset, len) = st
                .gen
                .next_sized(drawn, |roll| u64::from(sizes.len_at(roll)));
            st.budget = st.budget.saturating_sub(len);
            (len as u32, offset)
        }
        _ => {
            st.budget -= 1;
            (st.bs, st.gen.next_offset())
        }
    };
    if let (Some(v), Op::Write) = (verify, op) {
        offset = reserve(v, st, offset);
    }
    Some((op, offset, len))
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
