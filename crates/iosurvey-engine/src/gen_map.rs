//! The generation map of a verified run: one byte per 4 KiB block, the
//! generation its last completed write gave it. A leaf shared by the
//! verify pass (verify.rs) and the state kept between runs
//! (verify_state.rs), so that neither imports the other.

use std::sync::atomic::{AtomicU8, Ordering};

/// The verify granularity: one header, one generation, one check.
pub const BLOCK: usize = 4096;

/// A generation map value: never written by this run.
pub(crate) const NEVER: u8 = 0;
/// With the generation of the last write that completed whole: a later
/// write of the block failed, and its content is unknown. The generation
/// stays, so that the next write's differs from it.
pub(crate) const UNKNOWN: u8 = 0x40;
/// A write of the block is in flight.
pub(crate) const BUSY: u8 = 0x80;
/// The generation bits.
pub(crate) const GEN: u8 = 0x3f;
/// Generations run 1..=LAST_GEN, then round again.
pub(crate) const LAST_GEN: u8 = GEN;

/// The generation a write of a block that holds `g` gives it.
pub(crate) fn next_gen(g: u8) -> u8 {
    match g {
        1..LAST_GEN => g + 1,
        _ => 1,
    }
}

/// One byte per 4 KiB block of a target: the generation the block holds
/// after the last write of this run that completed, [`NEVER`] or
/// [`UNKNOWN`], with [`BUSY`] while a write of it is in flight.
pub struct GenMap {
    states: Box<[AtomicU8]>,
}

impl GenMap {
    /// A map of a target of `size` bytes, nothing written yet.
    pub fn new(size: u64) -> Self {
        let n = (size / BLOCK as u64) as usize;
        GenMap {
            states: (0..n).map(|_| AtomicU8::new(NEVER)).collect(),
        }
    }

    fn blocks(offset: u64, len: u32) -> std::ops::Range<usize> {
        let first = (offset / BLOCK as u64) as usize;
        first..first + len as usize / BLOCK
    }

    /// Marks the blocks of a write of `len` bytes at `offset` in flight,
    /// unless one of them already is (then nothing changes and the caller
    /// picks another offset): no two writes of a block are ever in flight
    /// together, so what completes last is what the map expects.
    pub fn try_reserve(&self, offset: u64, len: u32) -> bool {
        let range = Self::blocks(offset, len);
        for i in range.clone() {
            let s = &self.states[i];
            let v = s.load(Ordering::Relaxed);
            if v & BUSY != 0
                || s.compare_exchange(v, v | BUSY, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
            {
                for j in range.start..i {
                    self.states[j].fetch_and(!BUSY, Ordering::Release);
                }
                return false;
            }
        }
        true
    }

    /// The generation a reserved block's write gives it.
    pub fn pending(&self, block: usize) -> u8 {
        next_gen(self.states[block].load(Ordering::Relaxed) & GEN)
    }

    /// The write reserved at `offset` completed: its blocks hold their new
    /// generation when it moved every byte (`ok`), else an unknown
    /// content.
    pub fn commit(&self, offset: u64, len: u32, ok: bool) {
        for i in Self::blocks(offset, len) {
            let s = &self.states[i];
            let v = s.load(Ordering::Relaxed) & GEN;
            let new = if ok { next_gen(v) } else { v | UNKNOWN };
            s.store(new, Ordering::Release);
        }
    }

    /// Marks every block still in flight unknown: a worker that stopped
    /// on an error may have left a write of it with the kernel, done or
    /// not. Called once no worker runs.
    pub fn settle(&self) {
        for s in &self.states {
            let v = s.load(Ordering::Acquire);
            if v & BUSY != 0 {
                s.store((v & GEN) | UNKNOWN, Ordering::Release);
            }
        }
    }

    /// Lets go of blocks [`Self::try_reserve`] held for a read-back: their
    /// generation does not change.
    pub fn release(&self, offset: u64, len: u32) {
        for i in Self::blocks(offset, len) {
            self.states[i].fetch_and(!BUSY, Ordering::Release);
        }
    }

    /// What block `block` holds after this run's writes so far: its
    /// generation, [`NEVER`] or with [`UNKNOWN`].
    pub(crate) fn last(&self, block: usize) -> u8 {
        self.expected(block)
    }

    /// What block `block` should hold.
    pub(crate) fn expected(&self, block: usize) -> u8 {
        self.states
            .get(block)
            .map_or(NEVER, |s| s.load(Ordering::Acquire) & !BUSY)
    }

    /// Blocks of the map.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// The map has no block.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// The blocks in `range` written by this run.
    pub fn count_written(&self, range: std::ops::Range<usize>) -> u64 {
        range
            .into_iter()
            .filter(|&b| self.expected(b) != NEVER)
            .count() as u64
    }

    /// Some block in `range` was written by this run.
    pub fn any_written(&self, range: std::ops::Range<usize>) -> bool {
        range.into_iter().any(|b| self.expected(b) != NEVER)
    }
}
