//! When each submit batch went to the engine, without stamping every slot
//! of the batch: a slot keeps the key of its batch, and the batch's submit
//! time sits in a small ring. A slot still in flight when its batch is
//! about to leave the ring takes its submit time into its key.

use super::Slot;

/// Batches the ring holds; a slot is moved out of the ring when its batch
/// is half a ring old, so this bounds nothing but how often that happens.
const RING: u64 = 1024;
/// Half the ring, a power of two.
const HALF: u64 = RING / 2;
/// A key with this bit is a submit time, not a batch number.
const STAMPED: u64 = 1 << 63;

/// The submit times of the last [`RING`] batches.
pub(super) struct Batches {
    ts: Box<[u64; RING as usize]>,
    /// Number of the batch being armed, submitted next.
    seq: u64,
    /// The next batch number at which old slots take their time: a
    /// multiple of [`HALF`].
    keep_at: u64,
}

impl Batches {
    pub(super) fn new() -> Self {
        Batches {
            ts: Box::new([0; RING as usize]),
            seq: 0,
            keep_at: HALF,
        }
    }

    /// The key of a slot armed now, for the next submit.
    #[inline]
    pub(super) fn current(&self) -> u64 {
        self.seq
    }

    /// The key of a slot submitted alone at `ts` (one-at-a-time engines).
    #[inline]
    pub(super) fn stamped(ts: u64) -> u64 {
        STAMPED | ts
    }

    /// The batch being armed is submitted at `ts`. Every half ring, the
    /// slots of batches half a ring old take their time into their key
    /// first, before any of them can be overwritten.
    #[inline]
    pub(super) fn submit(&mut self, ts: u64, slots: &mut [Slot]) {
        if self.seq == self.keep_at {
            self.keep_old(slots);
            self.keep_at += HALF;
        }
        self.ts[(self.seq % RING) as usize] = ts;
        self.seq += 1;
    }

    #[cold]
    fn keep_old(&self, slots: &mut [Slot]) {
        for s in slots {
            if s.batch & STAMPED == 0 && self.seq - s.batch >= HALF {
                s.batch = STAMPED | self.ts[(s.batch % RING) as usize];
            }
        }
    }

    /// When the batch of key `key` was submitted.
    #[inline]
    pub(super) fn submitted_ns(&self, key: u64) -> u64 {
        if key & STAMPED != 0 {
            key & !STAMPED
        } else {
            self.ts[(key % RING) as usize]
        }
    }
}

/// What a completion was seen with: the batches' submit times, the
/// interval of the series and the time.
#[derive(Clone, Copy)]
pub(super) struct Seen<'a> {
    pub batches: &'a Batches,
    pub interval: usize,
    pub tc: u64,
}
