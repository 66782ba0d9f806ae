//! The worker's slots: one per engine buffer, each holding the I/O that
//! buffer has in flight, and the one-byte kind that says which completion
//! handler takes it.

use iosurvey_engine::Op;

/// Which stream kind a slot's I/O belongs to, and so how its completion is
/// handled (see `complete.rs`). Set when the slot is first armed; a slot
/// keeps its kind for the whole run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(super) enum Kind {
    /// A block stream's I/O: counted, then its slot re-armed in the reap.
    Block,
    /// A block stream's I/O under `--verify`: a write's blocks take their
    /// new generation (and feed the backlog) before it is counted as a
    /// block I/O.
    Verified,
    /// A block stream's I/O of a size drawn from its block-size split:
    /// counted by size, in runs of one length, then re-armed with a new
    /// size (see `complete.rs`).
    Sized,
    /// A block stream's I/O under a rate cap: counted (its write
    /// committed under `--verify`), then its slot parked until its turn
    /// (see `pace.rs`).
    Paced,
    /// A piece of an I/O a striped array cut (see `split.rs`).
    Piece,
    /// One of the frame stream's operations, handed to its driver.
    Frame,
}

/// One slot: the I/O its buffer has in flight.
#[derive(Clone, Copy)]
pub(super) struct Slot {
    /// Index of the stream in the worker's list.
    pub stream: u32,
    pub len: u32,
    pub op: Op,
    /// Issued in the measured phase (after the ramp): only these are
    /// counted, and only these spend the byte budget.
    pub counted: bool,
    pub offset: u64,
    /// The submit batch that carried it (see `batches.rs`).
    pub batch: u64,
    /// Which completion handler takes it.
    pub kind: Kind,
    /// With [`Kind::Piece`]: the cut I/O it is a piece of (see `Group`).
    pub group: u32,
}

impl Slot {
    /// A slot of stream `stream` armed with `op` of `len` bytes at
    /// `offset`, for the batch `batch`.
    pub(super) fn new(
        stream: u32,
        op: Op,
        offset: u64,
        len: u32,
        counted: bool,
        batch: u64,
    ) -> Self {
        Slot {
            stream,
            len,
            op,
            counted,
            offset,
            batch,
            kind: Kind::Block,
            group: 0,
        }
    }
}
