//! What iosurvey writes. Every 4 KiB block of every write is unique, within
//! a run and across runs, so that no deduplicating store (VDO, ZFS dedup,
//! a dedup array) can keep one copy and report the speed of many: each
//! block starts with a stamp, a nonce drawn at random for the writer and a
//! count of the blocks it has stamped. The rest of the block is the
//! buffer's fill: pseudo-random (incompressible), or, with
//! `--compressible PCT`, random for the first `100 - PCT` percent of each
//! 512-byte chunk and zeros after, as fio's `buffer_compress_percentage`
//! fills its buffers.

pub use iosurvey_model::DataFill;
use std::hash::{BuildHasher, RandomState};

/// The unit no two of which are equal: the block size of dedup engines
/// (VDO, most arrays) and of most file systems.
pub const UNIQUE_BLOCK: u64 = 4096;

/// Bytes of a stamp: the nonce, then the count, little-endian.
pub const STAMP_LEN: usize = 16;

/// The granularity of `--compressible`: each chunk is random data, then
/// zeros (fio's `buffer_compress_chunk` default).
pub const COMPRESS_CHUNK: usize = 512;

/// Fills `buf` as `fill` says, from `seed`: pseudo-random bytes (never a
/// zero block), or with `compressible_pct` percent of each 512-byte chunk
/// zeros, at its end.
pub fn fill_buffer(buf: &mut [u8], seed: u64, fill: DataFill) {
    crate::buffers::fill_random(buf, seed);
    let pct = usize::from(fill.compressible_pct.min(100));
    if pct == 0 {
        return;
    }
    let random = COMPRESS_CHUNK * (100 - pct) / 100;
    for chunk in buf.chunks_mut(COMPRESS_CHUNK) {
        let from = random.min(chunk.len());
        chunk[from..].fill(0);
    }
}

/// Stamps the blocks of writes so that each is unique: with a plain
/// stamp, or with `--verify` with the headers of [`crate::verify`].
pub struct Stamper {
    nonce: u64,
    count: u64,
    verify: Option<std::sync::Arc<crate::verify::WriteVerify>>,
}

impl Stamper {
    /// A stamper whose nonce is drawn at random (the process's hash keys,
    /// which the standard library seeds from the kernel), mixed with
    /// `salt`: two stampers of one run, or of two runs, never share one
    /// but by a 2^-64 chance.
    pub fn new(salt: u64) -> Self {
        Stamper {
            nonce: RandomState::new().hash_one(salt),
            count: 0,
            verify: None,
        }
    }

    /// A stamper that writes verify headers (`--verify`), or plain stamps
    /// when `verify` is `None`.
    pub fn with_verify(
        salt: u64,
        verify: Option<std::sync::Arc<crate::verify::WriteVerify>>,
    ) -> Self {
        Stamper {
            verify,
            ..Stamper::new(salt)
        }
    }

    /// Stamps write `buf` of file `file` at `offset`: verify headers when
    /// the run verifies, else [`Self::stamp`].
    #[inline]
    pub fn stamp_write(&mut self, buf: &mut [u8], file: u32, offset: u64) {
        match &self.verify {
            None => self.stamp(buf, offset),
            Some(v) => v.stamp(buf, file, offset, realtime_ns()),
        }
    }

    /// Stamps write `buf` at `offset` of a file whose verify headers name
    /// `place` (a target and an offset in it, see
    /// [`crate::FileOp::Open`]): plain stamps still fall on the file's own
    /// 4 KiB boundaries.
    #[inline]
    pub fn stamp_file_write(&mut self, buf: &mut [u8], offset: u64, place: (u32, u64)) {
        match &self.verify {
            None => self.stamp(buf, offset),
            Some(v) => v.stamp(buf, place.0, place.1, realtime_ns()),
        }
    }

    /// The nonce of this stamper.
    pub fn nonce(&self) -> u64 {
        self.nonce
    }

    /// Stamps `buf`, about to be written at byte `offset`: at its start and
    /// at every 4 KiB boundary of the target inside it, so that every 4 KiB
    /// block of the target the write touches holds a stamp no other block
    /// has. Two 8-byte stores per block.
    #[inline]
    pub fn stamp(&mut self, buf: &mut [u8], offset: u64) {
        let (len, p) = (buf.len(), buf.as_mut_ptr());
        let mut at = 0usize;
        // `at` stays below the length plus one block: no overflow.
        while at + STAMP_LEN <= len {
            let stamp = [self.nonce.to_le(), self.count.to_le()];
            // SAFETY: `at + STAMP_LEN <= len`: the 16 bytes are inside
            // `buf`, which is borrowed mutably; unaligned writes need no
            // alignment.
            unsafe { p.add(at).cast::<[u64; 2]>().write_unaligned(stamp) };
            self.count += 1;
            // On to the next block boundary of the target.
            at += (UNIQUE_BLOCK - (offset.wrapping_add(at as u64) % UNIQUE_BLOCK)) as usize;
        }
    }
}

/// Nanoseconds since the epoch, for verify headers.
fn realtime_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn blocks(buf: &[u8]) -> HashSet<&[u8]> {
        buf.chunks(UNIQUE_BLOCK as usize).collect()
    }

    #[test]
    fn every_block_of_every_write_is_unique() {
        let mut buf = vec![0u8; 64 << 10];
        fill_buffer(&mut buf, 7, DataFill::default());
        let mut s = Stamper::new(1);
        let mut written = Vec::new();
        // The same buffer written ten times, as a run rewrites one slot.
        for k in 0..10 {
            let at = k * buf.len() as u64;
            s.stamp(&mut buf, at);
            written.extend_from_slice(&buf);
        }
        assert_eq!(blocks(&written).len(), written.len() / 4096);
    }

    #[test]
    fn an_unaligned_write_stamps_each_target_block_it_touches() {
        let mut buf = vec![0u8; 8192];
        let mut s = Stamper::new(2);
        s.stamp(&mut buf, 1024);
        // At the start, then at target offsets 4096 and 8192.
        assert_eq!(s.count, 3);
        assert_eq!(&buf[3072..3080], &s.nonce.to_le_bytes());
        assert_eq!(&buf[7168..7176], &s.nonce.to_le_bytes());
        assert_eq!(buf[7184..7200], [0; 16], "nothing between stamps");
    }

    #[test]
    fn two_stampers_have_different_nonces() {
        assert_ne!(Stamper::new(3).nonce(), Stamper::new(3).nonce());
    }

    #[test]
    fn compressible_chunks_are_random_then_zeros() {
        let mut buf = vec![0u8; 4096];
        fill_buffer(
            &mut buf,
            9,
            DataFill {
                compressible_pct: 75,
            },
        );
        for chunk in buf.chunks(COMPRESS_CHUNK) {
            assert!(chunk[..128].iter().filter(|&&b| b == 0).count() < 8);
            assert!(chunk[128..].iter().all(|&b| b == 0));
        }
        let mut all = vec![1u8; 1000];
        fill_buffer(
            &mut all,
            9,
            DataFill {
                compressible_pct: 100,
            },
        );
        assert!(all.iter().all(|&b| b == 0));
    }
}
