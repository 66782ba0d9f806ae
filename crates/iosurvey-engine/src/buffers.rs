//! The aligned buffer pool an engine owns: one contiguous allocation cut
//! into equal, aligned buffers, filled with pseudo-random data.

use crate::EngineError;
use std::alloc::{alloc, dealloc, Layout};
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

/// How much of the pool is filled between two looks at the stop flag:
/// about 50 ms of page faults and xorshift, so a stop during the set-up of
/// gigabytes of buffers is seen at once.
const FILL_STEP: usize = 64 << 20;

/// `count` buffers of `size` bytes, each aligned to `alignment`.
pub struct BufferPool {
    ptr: NonNull<u8>,
    layout: Layout,
    count: usize,
    stride: usize,
    size: usize,
    /// Never freed: an engine that could not drain its I/O leaves the
    /// memory to the kernel.
    leaked: bool,
}

// SAFETY: the pool is a plain heap allocation with no interior sharing; it
// is moved between threads as a whole and only touched through &mut self or
// by the kernel for I/Os the owning engine has in flight.
unsafe impl Send for BufferPool {}

impl BufferPool {
    /// Allocates the pool, filled from `seed` with pseudo-random data
    /// (never a zero page). What a write holds is generated as it is
    /// issued ([`crate::data`]); this fill only keeps fresh buffers from
    /// being zero pages. A `stop` set during the fill ends it with
    /// [`EngineError::Stopped`] (the memory is freed).
    pub fn new(
        count: usize,
        size: usize,
        alignment: usize,
        seed: u64,
        stop: Option<&AtomicBool>,
    ) -> Result<Self, EngineError> {
        // Every step checked: a size near usize::MAX must be an error, not
        // a stride that wraps to 0 (overflow checks are off in release).
        let too_big = EngineError::Alloc { bytes: usize::MAX };
        let alignment = alignment
            .max(4096)
            .checked_next_power_of_two()
            .ok_or(EngineError::Alloc { bytes: usize::MAX })?;
        let stride = size
            .max(1)
            .checked_next_multiple_of(alignment)
            .ok_or(EngineError::Alloc { bytes: usize::MAX })?;
        let bytes = stride.checked_mul(count.max(1)).ok_or(too_big)?;
        let layout =
            Layout::from_size_align(bytes, alignment).map_err(|_| EngineError::Alloc { bytes })?;
        assert!(layout.size() >= stride && stride > 0);
        // Not zeroed: the fill below writes every byte, and zeroing a large
        // aligned allocation (a memset of every page) took seconds that no
        // stop could cut short.
        // SAFETY: layout has a non-zero size: at least one stride, which is
        // at least one byte (checked just above).
        let raw = unsafe { alloc(layout) };
        let ptr = NonNull::new(raw).ok_or(EngineError::Alloc { bytes })?;
        let mut pool = BufferPool {
            ptr,
            layout,
            count: count.max(1),
            stride,
            size,
            leaked: false,
        };
        let stopped = || stop.is_some_and(|s| s.load(Ordering::Relaxed));
        let mut x = seed | 1;
        for step in pool.as_uninit_mut().chunks_mut(FILL_STEP) {
            if stopped() {
                return Err(EngineError::Stopped);
            }
            x = fill_random_from(step, x);
        }
        Ok(pool)
    }

    /// Number of buffers.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Usable bytes per buffer.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Start of buffer `idx`, for handing to the kernel.
    pub(crate) fn ptr(&self, idx: u32) -> *mut u8 {
        assert!((idx as usize) < self.count, "buffer index out of range");
        // SAFETY: idx < count, so the offset stays inside the allocation.
        unsafe { self.ptr.as_ptr().add(idx as usize * self.stride) }
    }

    /// Start of buffer `idx`, which the caller has checked.
    ///
    /// # Safety
    /// `idx` is below [`Self::count`].
    #[inline(always)]
    pub(crate) unsafe fn ptr_unchecked(&self, idx: u32) -> *mut u8 {
        debug_assert!((idx as usize) < self.count);
        // SAFETY: the caller's contract: the offset stays inside the
        // allocation.
        unsafe { self.ptr.as_ptr().add(idx as usize * self.stride) }
    }

    /// Buffer `idx`.
    pub fn get_mut(&mut self, idx: u32) -> &mut [u8] {
        let p = self.ptr(idx);
        // SAFETY: p points at `size` bytes inside our allocation, borrowed
        // mutably through &mut self.
        unsafe { std::slice::from_raw_parts_mut(p, self.size) }
    }

    /// Keeps the memory past the pool's drop, for I/O that may still use it.
    pub(crate) fn leak(&mut self) {
        self.leaked = true;
    }

    /// One `iovec` per buffer, for registering with io_uring.
    pub(crate) fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.count as u32)
            .map(|i| libc::iovec {
                iov_base: self.ptr(i).cast(),
                iov_len: self.size,
            })
            .collect()
    }

    /// The whole allocation, not yet initialised, for the fill.
    fn as_uninit_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        // SAFETY: the whole allocation, borrowed mutably through &mut self;
        // as MaybeUninit, nothing is read from it before it is written.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), self.layout.size()) }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        if self.leaked {
            return;
        }
        // SAFETY: allocated in `new` with this layout. Engines drain their
        // in-flight I/O before the pool drops (field order and Drop impls),
        // or mark it leaked when they cannot.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Fills `buf` with xorshift output: incompressible, and no zero blocks.
#[cfg(test)]
pub(crate) fn fill_random(buf: &mut [u8], seed: u64) {
    let (ptr, len) = (buf.as_mut_ptr(), buf.len());
    // SAFETY: MaybeUninit<u8> has the layout of u8, the slice is `buf`
    // (borrowed mutably), and the fill writes only initialised bytes.
    let buf = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<u8>>(), len) };
    fill_random_from(buf, seed | 1);
}

/// Fills `buf` with xorshift output from state `x` (non-zero), and returns
/// the state after it, so that a fill in steps continues one sequence.
fn fill_random_from(buf: &mut [MaybeUninit<u8>], mut x: u64) -> u64 {
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        for (d, b) in c.iter_mut().zip(x.to_le_bytes()) {
            d.write(b);
        }
    }
    for b in chunks.into_remainder() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b.write(x as u8 | 1);
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_filled() {
        let mut pool = BufferPool::new(3, 5000, 512, 7, None).unwrap();
        for i in 0..3 {
            assert_eq!(pool.ptr(i) as usize % 4096, 0);
            let b = pool.get_mut(i);
            assert_eq!(b.len(), 5000);
            assert!(b.chunks(512).all(|blk| blk.iter().any(|&x| x != 0)));
        }
        let first = pool.get_mut(0)[..64].to_vec();
        assert_ne!(first, pool.get_mut(1)[..64]);
    }

    #[test]
    fn a_stop_ends_the_fill_of_a_large_pool_without_touching_it_all() {
        let stop = AtomicBool::new(true);
        // 4 GiB: filling it takes seconds; a stop given before the first
        // step touches none of it.
        let r = BufferPool::new(256, 16 << 20, 4096, 1, Some(&stop));
        assert!(matches!(r, Err(EngineError::Stopped)));
    }

    #[test]
    fn a_fill_in_steps_is_one_sequence() {
        let mut whole = vec![0u8; 3 * 4096 + 5];
        fill_random(&mut whole, 9);
        let mut steps = vec![MaybeUninit::new(0u8); whole.len()];
        let (a, b) = steps.split_at_mut(4096);
        let x = fill_random_from(a, 9 | 1);
        fill_random_from(b, x);
        // SAFETY: every byte was written by the fill.
        let steps: Vec<u8> = steps.iter().map(|b| unsafe { b.assume_init() }).collect();
        assert_eq!(whole, steps);
    }
}
