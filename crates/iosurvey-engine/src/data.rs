//! What iosurvey writes: data that no compressor and no deduplicating store
//! can shrink, at every granularity a storage system works in.
//!
//! Every write is generated as it is issued, 512-byte sector by sector:
//! a sector is a slice of a random *base* (64 KiB drawn from the run's
//! nonce), every 8-byte word of it XORed with a key of its own. The key is
//! a bijection ([`mix`]) of a sector number that no other sector of the
//! process gets (each [`Stamper`] reserves a range of 2^40 from one
//! counter), whitened with the run's nonce. So:
//!
//! - two sectors of one run are distinct: at the same place in the base,
//!   their keys differ, so every word differs; at different places, the
//!   base's random words differ;
//! - two runs differ: the nonce ([`run_nonce`], recorded in the report as
//!   `data_nonce`) is drawn from the kernel for each process, whatever the
//!   `--seed`;
//! - no LZ compressor (lz4, zstd, zlib, as ZFS, btrfs, VDO and arrays use)
//!   finds a match: a repeat of the base under another key shares no 4
//!   bytes in a row but by chance, so any 128 KiB record saves under 1%;
//! - no sector holds a run of repeated bytes.
//!
//! The cost is one pass over the written bytes (a load of the base, an XOR,
//! a store), a copy's worth, measured in `bench/` (cases 8a to 8c). It runs
//! with the widest vectors the CPU has ([`Simd`], chosen at run time, every
//! build tested to give the portable build's bytes): per 512-byte sector,
//! the key and eight 64-byte XORs and stores with AVX-512, sixteen of 32
//! with AVX2 (`examples/data_cost.rs` compares them). Valgrind has no
//! AVX-512: callgrind counts the AVX2 build.
//!
//! With `--compressible PCT`, as fio's `buffer_compress_percentage`, only
//! the first `100 - PCT` percent of each 512-byte sector is generated, and
//! the rest is zeros: the data compresses by that much. At least
//! [`MIN_RANDOM`] bytes of each sector are generated, so that sectors stay
//! unique: from 97 on, the data compresses by 96.9%.

pub use iosurvey_model::DataFill;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The unit no two of which are equal, and of `--compressible`'s chunks:
/// the smallest sector a device has.
pub const SECTOR: usize = 512;

/// Words of a sector.
const SECTOR_WORDS: usize = SECTOR / 8;

/// Bytes of the random base the sectors are drawn from: it fits a core's
/// L2 cache beside the buffers being written.
const BASE_BYTES: usize = 64 << 10;

/// Sectors of the base.
const BASE_SECTORS: u64 = (BASE_BYTES / SECTOR) as u64;

/// Bytes of each sector generated whatever `--compressible` asks: two
/// words under the sector's key, so that even a sector of zeros but for
/// them is unique (at 97% and above the data compresses by 96.9%).
pub const MIN_RANDOM: usize = 16;

/// Sector numbers a stamper reserves at a time.
const RANGE: u64 = 1 << 40;

/// The next range of sector numbers, for the whole process.
static NEXT_RANGE: AtomicU64 = AtomicU64::new(0);

/// The run's data nonce: drawn from the kernel (the standard library's
/// hash keys) once per process, so that two runs never write the same
/// sector, whatever their seed.
pub fn run_nonce() -> u64 {
    static NONCE: OnceLock<u64> = OnceLock::new();
    *NONCE.get_or_init(|| RandomState::new().hash_one(0x10_5e_ed_u64))
}

/// A bijection of u64 (murmur3's finaliser): distinct inputs give distinct
/// keys, and neighbouring inputs keys with nothing in common.
#[inline(always)]
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Generates the data of writes, and their verify headers when the run
/// verifies.
pub struct Stamper {
    /// The run's nonce, mixed: whitens each sector number before [`mix`].
    key: u64,
    /// The next sector number, and the end of the range it is in.
    next: u64,
    end: u64,
    /// A fixed size, so that a sector's slice of it needs no bounds check.
    base: Box<[u64; BASE_BYTES / 8]>,
    /// Bytes generated at the start of each sector; the rest are zeros.
    random: usize,
    /// The widest vectors the CPU has, for [`Self::stamp`].
    #[cfg(target_arch = "x86_64")]
    simd: Simd,
    verify: Option<std::sync::Arc<crate::verify::WriteVerify>>,
}

impl Stamper {
    /// A stamper for this run ([`run_nonce`]) that fills as `fill` says.
    pub fn new(fill: DataFill) -> Self {
        Self::with_nonce(run_nonce(), fill)
    }

    /// A stamper of a run whose nonce is `nonce`.
    pub fn with_nonce(nonce: u64, fill: DataFill) -> Self {
        let mut base = Box::new([0u64; BASE_BYTES / 8]);
        let mut x = mix(nonce ^ 0xba5e);
        for w in base.iter_mut() {
            // splitmix64: every word of the base is random.
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            *w = mix(x);
        }
        let pct = usize::from(fill.compressible_pct.min(100));
        let mut s = Stamper {
            key: mix(nonce),
            next: 0,
            end: 0,
            base,
            random: (SECTOR * (100 - pct) / 100).max(MIN_RANDOM),
            #[cfg(target_arch = "x86_64")]
            simd: Simd::detect(),
            verify: None,
        };
        s.reserve();
        s
    }

    /// A stamper that also writes verify headers (`--verify`), or plain
    /// data when `verify` is `None`.
    pub fn with_verify(
        fill: DataFill,
        verify: Option<std::sync::Arc<crate::verify::WriteVerify>>,
    ) -> Self {
        Stamper {
            verify,
            ..Stamper::new(fill)
        }
    }

    /// Generates with build `simd` from now on (to compare them, as
    /// `examples/data_cost.rs` does); false, and no change, when this CPU
    /// cannot run it.
    #[cfg(target_arch = "x86_64")]
    pub fn set_simd(&mut self, simd: Simd) -> bool {
        let ok = simd.available();
        if ok {
            self.simd = simd;
        }
        ok
    }

    /// Takes the next range of sector numbers (a write is far fewer than
    /// [`RANGE`] sectors).
    #[cold]
    fn reserve(&mut self) {
        self.next = NEXT_RANGE.fetch_add(RANGE, Ordering::Relaxed);
        self.end = self.next.wrapping_add(RANGE);
    }

    /// Generates write `buf` of file `file` at `offset`, with verify
    /// headers when the run verifies.
    #[inline]
    pub fn stamp_write(&mut self, buf: &mut [u8], file: u32, offset: u64) {
        self.stamp(buf, offset);
        if let Some(v) = &self.verify {
            v.stamp(buf, file, offset, realtime_ns());
        }
    }

    /// Generates write `buf` at `offset` of a file whose verify headers
    /// name `place` (a target and an offset in it, see
    /// [`crate::FileOp::Open`]).
    #[inline]
    pub fn stamp_file_write(&mut self, buf: &mut [u8], offset: u64, place: (u32, u64)) {
        self.stamp(buf, offset);
        if let Some(v) = &self.verify {
            v.stamp(buf, place.0, place.1, realtime_ns());
        }
    }

    /// Generates `buf`, about to be written at byte `offset`: each 512
    /// bytes of it a sector no other write of the run holds.
    #[inline]
    pub fn stamp(&mut self, buf: &mut [u8], _offset: u64) {
        #[cfg(target_arch = "x86_64")]
        match self.simd {
            // SAFETY: the CPU has AVX-512F: `simd` is only ever a build
            // `Simd::available` said this CPU runs (`detect`, `set_simd`).
            Simd::Avx512 => return unsafe { self.generate_avx512(buf) },
            // SAFETY: the CPU has AVX2, as above.
            Simd::Avx2 => return unsafe { self.generate_avx2(buf) },
            Simd::Portable => {}
        }
        self.generate_portable(buf);
    }

    /// [`Self::generate`] out of line, as the vector builds are: inlined
    /// into [`Self::stamp`], its loop's registers were saved and restored
    /// round every write's call of a vector build (some 25 instructions
    /// per write, callgrind).
    #[inline(never)]
    fn generate_portable(&mut self, buf: &mut [u8]) {
        self.generate(buf);
    }

    /// [`Self::generate`] with 32-byte vectors: half the instructions.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn generate_avx2(&mut self, buf: &mut [u8]) {
        self.generate(buf);
    }

    /// [`Self::generate`] with 64-byte vectors: a whole sector is eight
    /// loads, XORs and stores.
    #[cfg(target_arch = "x86_64")]
    #[rustversion::since(1.89)]
    #[target_feature(enable = "avx512f")]
    fn generate_avx512(&mut self, buf: &mut [u8]) {
        self.generate(buf);
    }

    /// Built by a compiler before 1.89, which cannot enable AVX-512 for a
    /// function: never chosen ([`Simd::available`] says no).
    #[cfg(target_arch = "x86_64")]
    #[rustversion::before(1.89)]
    unsafe fn generate_avx512(&mut self, buf: &mut [u8]) {
        self.generate_portable(buf);
    }

    #[inline(always)]
    fn generate(&mut self, buf: &mut [u8]) {
        // The write's sector numbers come from one range: one check per
        // write, not per sector (the numbers a range had left are skipped;
        // none is used twice).
        let sectors = buf.len().div_ceil(SECTOR) as u64;
        if self.end - self.next < sectors {
            self.reserve();
        }
        let random = self.random;
        let mut sectors = buf.chunks_exact_mut(SECTOR);
        if random == SECTOR {
            for sector in &mut sectors {
                let (base, k) = self.next_sector();
                let sector: &mut [u8; SECTOR] = sector.try_into().expect("a whole sector");
                fill_sector(sector, base, k);
            }
        } else {
            for sector in &mut sectors {
                let (base, k) = self.next_sector();
                fill_part(sector, base, k, random);
            }
        }
        let tail = sectors.into_remainder();
        if !tail.is_empty() {
            let (base, k) = self.next_sector();
            fill_part(tail, base, k, random);
        }
    }

    /// The base words and the key of the next sector ([`Self::generate`]
    /// made sure its range has it).
    #[inline(always)]
    fn next_sector(&mut self) -> (&[u64; SECTOR_WORDS], u64) {
        let n = self.next;
        self.next += 1;
        let at = (n % BASE_SECTORS) as usize * SECTOR_WORDS;
        let base = self.base[at..at + SECTOR_WORDS]
            .try_into()
            .expect("a sector of the base");
        (base, mix(n ^ self.key))
    }
}

/// The widest vectors [`Stamper::stamp`] may use, chosen at run time. Each
/// generates the same bytes (tested below); they differ in instructions.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    Portable,
    Avx2,
    Avx512,
}

/// Whether this build has the AVX-512 generator: a compiler before 1.89
/// (the declared MSRV is 1.87) cannot enable AVX-512 for a function.
#[cfg(target_arch = "x86_64")]
#[rustversion::since(1.89)]
const AVX512_BUILT: bool = true;
#[cfg(target_arch = "x86_64")]
#[rustversion::before(1.89)]
const AVX512_BUILT: bool = false;

#[cfg(target_arch = "x86_64")]
impl Simd {
    /// Every build, narrowest first.
    pub const ALL: [Simd; 3] = [Simd::Portable, Simd::Avx2, Simd::Avx512];

    /// Whether this CPU can run the build.
    pub fn available(self) -> bool {
        match self {
            Simd::Portable => true,
            Simd::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            Simd::Avx512 => AVX512_BUILT && std::arch::is_x86_feature_detected!("avx512f"),
        }
    }

    /// The widest this CPU has and this build holds. (Under valgrind,
    /// which has no AVX-512: AVX2.)
    pub fn detect() -> Self {
        match [Simd::Avx512, Simd::Avx2]
            .into_iter()
            .find(|s| s.available())
        {
            Some(s) => s,
            None => Simd::Portable,
        }
    }
}

/// A whole random sector: the base's words under key `k`.
#[inline(always)]
fn fill_sector(out: &mut [u8; SECTOR], base: &[u64; SECTOR_WORDS], k: u64) {
    for (o, b) in out.chunks_exact_mut(8).zip(base) {
        o.copy_from_slice(&(b ^ k).to_le_bytes());
    }
}

/// `out` (a sector or the start of one): its first `random` bytes
/// generated, zeros after.
#[inline(always)]
fn fill_part(out: &mut [u8], base: &[u64; SECTOR_WORDS], k: u64, random: usize) {
    let r = random.min(out.len());
    let (head, zeros) = out.split_at_mut(r);
    let mut words = head.chunks_exact_mut(8);
    for (o, b) in (&mut words).zip(base) {
        o.copy_from_slice(&(b ^ k).to_le_bytes());
    }
    let tail = words.into_remainder();
    if !tail.is_empty() {
        let n = tail.len();
        tail.copy_from_slice(&(base[r / 8] ^ k).to_le_bytes()[..n]);
    }
    zeros.fill(0);
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

    fn sectors(buf: &[u8]) -> HashSet<&[u8]> {
        buf.chunks(SECTOR).collect()
    }

    /// The longest run of one byte value in `buf`.
    fn longest_run(buf: &[u8]) -> usize {
        let (mut best, mut cur) = (0, 0);
        for w in buf.windows(2) {
            cur = if w[0] == w[1] { cur + 1 } else { 0 };
            best = best.max(cur + 1);
        }
        best
    }

    #[test]
    fn every_sector_of_every_write_is_unique() {
        let mut buf = vec![0u8; 64 << 10];
        let mut s = Stamper::with_nonce(7, DataFill::default());
        let mut written = Vec::new();
        // The same buffer written forty times, as a run rewrites one slot:
        // more sectors than the base has, so the base is gone round.
        for k in 0..40 {
            let at = k * buf.len() as u64;
            s.stamp(&mut buf, at);
            written.extend_from_slice(&buf);
        }
        assert_eq!(sectors(&written).len(), written.len() / SECTOR);
        assert!(longest_run(&written) < 8, "{}", longest_run(&written));
    }

    #[test]
    fn two_runs_and_two_stampers_of_a_run_share_no_sector() {
        let write = |s: &mut Stamper| {
            let mut v = vec![0u8; 256 << 10];
            s.stamp(&mut v, 0);
            v
        };
        // One nonce, two stampers (two workers); and another run's.
        let (mut a, mut b) = (
            Stamper::with_nonce(1, DataFill::default()),
            Stamper::with_nonce(1, DataFill::default()),
        );
        let mut other = Stamper::with_nonce(2, DataFill::default());
        let (wa, wb, wo) = (write(&mut a), write(&mut b), write(&mut other));
        let sa = sectors(&wa);
        assert!(sa.is_disjoint(&sectors(&wb)));
        assert!(sa.is_disjoint(&sectors(&wo)));
    }

    #[test]
    fn a_stamper_that_uses_up_its_range_takes_another() {
        let mut s = Stamper::with_nonce(3, DataFill::default());
        s.next = s.end - 2;
        let old_end = s.end;
        let mut buf = vec![0u8; 4 * SECTOR];
        s.stamp(&mut buf, 0);
        // The two numbers left are skipped: the write takes all four of
        // the next range.
        assert!(s.end != old_end && s.next == s.end - RANGE + 4);
        assert_eq!(sectors(&buf).len(), 4);
    }

    #[test]
    fn a_write_not_a_whole_number_of_sectors_is_filled_to_its_end() {
        let mut buf = vec![0u8; 1000];
        Stamper::with_nonce(4, DataFill::default()).stamp(&mut buf, 0);
        assert!(longest_run(&buf) < 8);
        assert!(buf[990..].iter().any(|&b| b != 0));
    }

    #[test]
    fn compressible_sectors_are_random_then_zeros_and_still_unique() {
        let fill = |pct| DataFill {
            compressible_pct: pct,
        };
        let mut buf = vec![0xffu8; 8192];
        let mut s = Stamper::with_nonce(9, fill(75));
        s.stamp(&mut buf, 0);
        for chunk in buf.chunks(SECTOR) {
            assert!(chunk[..128].iter().filter(|&&b| b == 0).count() < 8);
            assert!(chunk[128..].iter().all(|&b| b == 0));
        }
        assert_eq!(sectors(&buf).len(), buf.len() / SECTOR);
        // 33%: 343 bytes, not a whole number of words.
        let mut buf = vec![0xffu8; 1024];
        Stamper::with_nonce(9, fill(33)).stamp(&mut buf, 0);
        for chunk in buf.chunks(SECTOR) {
            assert!(chunk[336..343].iter().any(|&b| b != 0));
            assert!(chunk[343..].iter().all(|&b| b == 0));
        }
        // 99 and 100: the sector's first 16 bytes still generated, so that
        // sectors stay unique (at 99, 5 bytes repeated within 2^20).
        for pct in [97, 99, 100] {
            let mut v = vec![1u8; 4096 * 64];
            Stamper::with_nonce(9, fill(pct)).stamp(&mut v, 0);
            for chunk in v.chunks(SECTOR) {
                assert!(chunk[..16].iter().filter(|&&b| b == 0).count() < 4);
                assert!(chunk[16..].iter().all(|&b| b == 0));
            }
            assert_eq!(sectors(&v).len(), v.len() / SECTOR, "{pct}");
        }
    }

    /// Every build this CPU can run generates what the portable one does,
    /// whole sectors and `--compressible` parts, at odd lengths.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_simd_build_generates_what_the_portable_one_does() {
        let builds: Vec<Simd> = Simd::ALL.into_iter().filter(|s| s.available()).collect();
        for pct in [0, 33, 75, 100] {
            let fill = DataFill {
                compressible_pct: pct,
            };
            let write = |simd| {
                let mut s = Stamper::with_nonce(5, fill);
                assert!(s.set_simd(simd));
                (s.next, s.end) = (1 << 20, (1 << 20) + RANGE);
                let mut out = Vec::new();
                for len in [12345, 4096, 131072, 512, 100] {
                    let mut v = vec![0xa5u8; len];
                    s.stamp(&mut v, 0);
                    out.extend_from_slice(&v);
                }
                out
            };
            let portable = write(Simd::Portable);
            for &simd in &builds[1..] {
                assert!(write(simd) == portable, "{simd:?} at {pct}%");
            }
        }
        println!("builds checked: {builds:?}");
    }

    #[test]
    fn mix_gives_distinct_keys_to_distinct_sector_numbers() {
        let keys: HashSet<u64> = (0..100_000u64).map(mix).collect();
        assert_eq!(keys.len(), 100_000);
    }
}
