//! `--verify`: every 4 KiB block a verified run writes starts with a
//! header that says what it is (the ideas of fio's and vdbench's verify),
//! a generation map in memory records what each block should hold, and a
//! check reads blocks back and names what is wrong with each.
//!
//! The header, 64 bytes at the start of the block, little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `iosVRFY1` |
//! | 8..10 | format version (1) |
//! | 10..12 | flags (0) |
//! | 12..16 | target index |
//! | 16..24 | offset of the block in the target |
//! | 24..32 | run id (random per run) |
//! | 32..40 | run seed |
//! | 40..44 | generation (1 to 63) |
//! | 44..46 | blocks of the write that carried it |
//! | 46..48 | index of the block in that write |
//! | 48..56 | nanoseconds (CLOCK_REALTIME) when the write was issued |
//! | 56..60 | crc32c of the 4 KiB block, this field taken as zero |
//! | 60..64 | zero |
//!
//! The rest of the block is the buffer's fill. The crc covers it all.

use iosurvey_model::verify::{FailureClass, VerifyFailure, VerifySummary};
use std::sync::atomic::{AtomicU8, Ordering};

/// The verify granularity: one header, one generation, one check.
pub const BLOCK: usize = 4096;
const MAGIC: u64 = u64::from_le_bytes(*b"iosVRFY1");
const VERSION: u16 = 1;
const CRC_AT: usize = 56;

/// A generation map value: never written by this run.
const NEVER: u8 = 0;
/// With the generation of the last write that completed whole: a later
/// write of the block failed, and its content is unknown. The generation
/// stays, so that the next write's differs from it.
const UNKNOWN: u8 = 0x40;
/// A write of the block is in flight.
const BUSY: u8 = 0x80;
/// The generation bits.
const GEN: u8 = 0x3f;
/// Generations run 1..=LAST_GEN, then round again.
const LAST_GEN: u8 = GEN;

/// The generation a write of a block that holds `g` gives it.
fn next_gen(g: u8) -> u8 {
    match g {
        1..LAST_GEN => g + 1,
        _ => 1,
    }
}

/// What a verified block says of itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub target: u32,
    pub offset: u64,
    pub run_id: u64,
    pub seed: u64,
    pub generation: u8,
    pub write_blocks: u16,
    pub write_index: u16,
    pub time_ns: u64,
}

impl Header {
    /// Writes the header into `block` (4 KiB) and seals it with the crc
    /// of the whole block.
    pub fn write(&self, block: &mut [u8]) {
        let b = &mut block[..BLOCK];
        b[0..8].copy_from_slice(&MAGIC.to_le_bytes());
        b[8..10].copy_from_slice(&VERSION.to_le_bytes());
        b[10..12].fill(0);
        b[12..16].copy_from_slice(&self.target.to_le_bytes());
        b[16..24].copy_from_slice(&self.offset.to_le_bytes());
        b[24..32].copy_from_slice(&self.run_id.to_le_bytes());
        b[32..40].copy_from_slice(&self.seed.to_le_bytes());
        b[40..44].copy_from_slice(&u32::from(self.generation).to_le_bytes());
        b[44..46].copy_from_slice(&self.write_blocks.to_le_bytes());
        b[46..48].copy_from_slice(&self.write_index.to_le_bytes());
        b[48..56].copy_from_slice(&self.time_ns.to_le_bytes());
        b[56..64].fill(0);
        let crc = crc32c::crc32c(b);
        b[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
    }

    /// The byte offset of the first block of the write that carried it.
    fn write_start(&self) -> u64 {
        self.offset
            .wrapping_sub(u64::from(self.write_index) * BLOCK as u64)
    }

    /// The write that carried it covers `offset`.
    fn covers(&self, offset: u64) -> bool {
        let start = self.write_start();
        offset >= start && offset - start < u64::from(self.write_blocks) * BLOCK as u64
    }
}

/// What a 4 KiB block read back holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    Zeros,
    /// Not a verified block (no magic, or a version this build does not
    /// read).
    Foreign,
    /// A header whose crc does not match the block.
    BadCrc(Header),
    Valid(Header),
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

/// Reads the header of `block` (4 KiB) and checks its crc.
pub fn parse(block: &[u8]) -> Parsed {
    let b = &block[..BLOCK];
    if u64_at(b, 0) != MAGIC || u16_at(b, 8) != VERSION {
        return if b.iter().all(|&x| x == 0) {
            Parsed::Zeros
        } else {
            Parsed::Foreign
        };
    }
    let h = Header {
        target: u32_at(b, 12),
        offset: u64_at(b, 16),
        run_id: u64_at(b, 24),
        seed: u64_at(b, 32),
        generation: u32_at(b, 40).min(255) as u8,
        write_blocks: u16_at(b, 44),
        write_index: u16_at(b, 46),
        time_ns: u64_at(b, 48),
    };
    let stored = u32_at(b, CRC_AT);
    let crc = crc32c::crc32c_append(crc32c::crc32c(&b[..CRC_AT]), &[0; 4]);
    let crc = crc32c::crc32c_append(crc, &b[CRC_AT + 4..]);
    if crc == stored {
        Parsed::Valid(h)
    } else {
        Parsed::BadCrc(h)
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

    /// Lets go of blocks [`Self::try_reserve`] held for a read-back: their
    /// generation does not change.
    pub fn release(&self, offset: u64, len: u32) {
        for i in Self::blocks(offset, len) {
            self.states[i].fetch_and(!BUSY, Ordering::Release);
        }
    }

    /// What block `block` should hold.
    fn expected(&self, block: usize) -> u8 {
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

/// What a verified run's writes carry, and the map of every target (by
/// its index in the engine's file table, which is the job's target index).
pub struct WriteVerify {
    pub run_id: u64,
    pub seed: u64,
    pub maps: Vec<GenMap>,
}

impl WriteVerify {
    /// Writes the headers of a reserved write of `buf.len()` bytes at
    /// `offset` of target `target`.
    pub fn stamp(&self, buf: &mut [u8], target: u32, offset: u64, time_ns: u64) {
        let map = &self.maps[target as usize];
        let blocks = buf.len() / BLOCK;
        let first = (offset / BLOCK as u64) as usize;
        for (k, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
            Header {
                target,
                offset: offset + (k * BLOCK) as u64,
                run_id: self.run_id,
                seed: self.seed,
                generation: map.pending(first + k),
                write_blocks: blocks.min(usize::from(u16::MAX)) as u16,
                write_index: k.min(usize::from(u16::MAX)) as u16,
                time_ns,
            }
            .write(block);
        }
    }
}

/// What the blocks of a check should hold.
pub enum Expect<'a> {
    /// The run's own writes, after the job: each block as the map says.
    Map { map: &'a GenMap, run_id: u64 },
    /// A previous kept run's blocks: of the run the first header read
    /// names, each consistent with the write that carried it.
    Kept { run: Option<(u64, u64)> },
}

impl Expect<'_> {
    /// A block is expected at byte `offset`: a read error there is a
    /// failure (else the block is not checked).
    pub fn wants(&self, offset: u64) -> bool {
        match self {
            Expect::Map { map, .. } => map.expected((offset / BLOCK as u64) as usize) != NEVER,
            Expect::Kept { .. } => true,
        }
    }

    /// What the block at byte `offset` should hold, in words.
    pub fn describe(&self, offset: u64) -> String {
        match self {
            Expect::Map { map, run_id } => match map.expected((offset / BLOCK as u64) as usize) {
                g if g & UNKNOWN != 0 => {
                    format!("a readable block of run {run_id:016x} for offset {offset}")
                }
                g => format!("generation {g} of run {run_id:016x} for offset {offset}"),
            },
            Expect::Kept { run: Some((r, _)) } => {
                format!("a block of run {r:016x} for offset {offset}")
            }
            Expect::Kept { run: None } => format!("a verified block for offset {offset}"),
        }
    }
}

fn describe(h: &Header) -> String {
    format!(
        "generation {} of run {:016x} for offset {} of target {} (block {} of a {}-block write)",
        h.generation, h.run_id, h.offset, h.target, h.write_index, h.write_blocks
    )
}

/// Checks the 4 KiB blocks of `chunk`, read at `offset` of target `target`,
/// into `out`.
pub fn check_chunk(
    chunk: &[u8],
    offset: u64,
    target: usize,
    expect: &mut Expect<'_>,
    out: &mut VerifySummary,
) {
    let parsed: Vec<Parsed> = chunk.chunks_exact(BLOCK).map(parse).collect();
    let at = |i: usize| offset + (i * BLOCK) as u64;
    if let Expect::Kept { run: run @ None } = expect {
        // The run of the newest intact header of the first chunk that has
        // one: a block left over from an older run is not taken for it.
        *run = parsed
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match p {
                Parsed::Valid(h) if h.offset == at(i) && h.target as usize == target => Some(h),
                _ => None,
            })
            .max_by_key(|h| h.time_ns)
            .map(|h| (h.run_id, h.seed));
        if let Some((id, seed)) = *run {
            out.run_id = Some(format!("{id:016x}"));
            out.run_seed = Some(seed);
        }
    }
    // For each block, the newest intact header (of a block in this chunk,
    // at its own offset) whose write covers it.
    let mut newest: Vec<Option<Header>> = vec![None; parsed.len()];
    for (j, p) in parsed.iter().enumerate() {
        let Parsed::Valid(h) = p else { continue };
        if h.offset != at(j) || h.target as usize != target {
            continue;
        }
        let end = h.write_start() + u64::from(h.write_blocks) * BLOCK as u64;
        let first = (h.write_start().saturating_sub(offset) / BLOCK as u64) as usize;
        let last = (end.saturating_sub(offset) / BLOCK as u64) as usize;
        for n in newest.iter_mut().take(last).skip(first) {
            if n.is_none_or(|o| h.time_ns > o.time_ns) {
                *n = Some(*h);
            }
        }
    }
    for (i, p) in parsed.iter().enumerate() {
        let o = at(i);
        let (want_gen, run_id) = match expect {
            Expect::Map { map, run_id } => match map.expected((o / BLOCK as u64) as usize) {
                NEVER => {
                    out.blocks_unwritten += 1;
                    continue;
                }
                g if g & UNKNOWN != 0 => {
                    // The last write of the block failed: it may hold
                    // that write, or what was there before. Only a header
                    // of this run that fails its crc is a finding.
                    match p {
                        Parsed::BadCrc(h) if h.run_id == *run_id => {}
                        _ => {
                            out.blocks_unwritten += 1;
                            continue;
                        }
                    }
                    (None, Some(*run_id))
                }
                g => (Some(g), Some(*run_id)),
            },
            Expect::Kept { run } => (None, run.map(|r| r.0)),
        };
        let mapped = matches!(expect, Expect::Map { .. });
        let cover = newest[i].filter(|h| h.covers(o));
        let expected = match (want_gen, run_id) {
            (Some(g), Some(r)) => format!("generation {g} of run {r:016x} for offset {o}"),
            (None, Some(r)) => format!("a block of run {r:016x} for offset {o}"),
            _ => format!("a verified block for offset {o}"),
        };
        let mut fail = |class: FailureClass, found: String| {
            out.fail(VerifyFailure {
                target,
                offset: o,
                file: None,
                class,
                errno: None,
                expected: expected.clone(),
                found,
            })
        };
        match p {
            Parsed::Zeros | Parsed::Foreign if !mapped && cover.is_none() => {
                out.blocks_unwritten += 1;
                continue;
            }
            Parsed::Zeros => fail(FailureClass::Unwritten, "zeros".into()),
            Parsed::Foreign => fail(
                FailureClass::Corruption,
                "no verify header (overwritten by something else)".into(),
            ),
            Parsed::BadCrc(h) => fail(
                FailureClass::Corruption,
                format!("a crc32c mismatch in {}", describe(h)),
            ),
            Parsed::Valid(h) if h.offset != o || h.target as usize != target => {
                fail(FailureClass::MisdirectedWrite, describe(h))
            }
            Parsed::Valid(h) => {
                let same_write = |c: &Header| {
                    c.run_id == h.run_id
                        && c.generation == h.generation
                        && c.write_start() == h.write_start()
                };
                let current = run_id.is_none_or(|r| r == h.run_id)
                    && want_gen.is_none_or(|g| g == h.generation)
                    && (mapped || cover.is_none_or(|c| same_write(&c)));
                if current {
                    out.blocks_checked += 1;
                    continue;
                }
                // A newer write covering this block left its mark on a
                // neighbour: this one missed it.
                let torn = cover.is_some_and(|c| {
                    !same_write(&c) && run_id.is_none_or(|r| r == c.run_id) && c.time_ns > h.time_ns
                });
                let class = if torn {
                    FailureClass::TornWrite
                } else {
                    FailureClass::LostOrStaleWrite
                };
                fail(class, describe(h));
            }
        }
        out.blocks_checked += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(offset: u64, generation: u8, blocks: u16, index: u16, t: u64) -> Header {
        Header {
            target: 0,
            offset,
            run_id: 0xabc,
            seed: 7,
            generation,
            write_blocks: blocks,
            write_index: index,
            time_ns: t,
        }
    }

    /// `n` blocks at offset 0, each written by a `per`-block write of
    /// generation `g`, with random fill.
    fn written(n: usize, per: u16, g: u8) -> Vec<u8> {
        let mut v = vec![0u8; n * BLOCK];
        crate::buffers::fill_random(&mut v, 5);
        for (i, b) in v.chunks_exact_mut(BLOCK).enumerate() {
            let idx = (i % usize::from(per)) as u16;
            header(
                (i * BLOCK) as u64,
                g,
                per,
                idx,
                100 + (i as u64 / u64::from(per)),
            )
            .write(b);
        }
        v
    }

    fn kept(chunk: &[u8]) -> VerifySummary {
        let mut out = VerifySummary::default();
        check_chunk(chunk, 0, 0, &mut Expect::Kept { run: None }, &mut out);
        out
    }

    fn classes(out: &VerifySummary) -> Vec<(u64, FailureClass)> {
        out.failures
            .iter()
            .map(|f| (f.offset / BLOCK as u64, f.class))
            .collect()
    }

    #[test]
    fn a_sealed_block_parses_back_and_any_flipped_byte_breaks_it() {
        let v = written(1, 1, 3);
        assert_eq!(parse(&v), Parsed::Valid(header(0, 3, 1, 0, 100)));
        for at in [0, 17, 57, 63, 64, 4095] {
            let mut w = v.clone();
            w[at] ^= 1;
            assert!(!matches!(parse(&w), Parsed::Valid(_)), "byte {at}");
        }
        assert_eq!(parse(&[0; BLOCK]), Parsed::Zeros);
    }

    #[test]
    fn intact_blocks_pass_and_each_class_is_named() {
        let good = written(16, 4, 2);
        let out = kept(&good);
        assert_eq!((out.blocks_checked, out.counts.total()), (16, 0));
        assert_eq!(out.run_id.as_deref(), Some("0000000000000abc"));

        // Corruption: a flipped byte.
        let mut v = good.clone();
        v[5 * BLOCK + 100] ^= 0xff;
        assert_eq!(classes(&kept(&v)), [(5, FailureClass::Corruption)]);
        // Misdirected: block 2's content at block 9.
        let mut v = good.clone();
        v.copy_within(2 * BLOCK..3 * BLOCK, 9 * BLOCK);
        assert_eq!(classes(&kept(&v)), [(9, FailureClass::MisdirectedWrite)]);
        // Lost allocation: zeros inside a write.
        let mut v = good.clone();
        v[6 * BLOCK..7 * BLOCK].fill(0);
        assert_eq!(classes(&kept(&v)), [(6, FailureClass::Unwritten)]);
        // Torn: one block of a write is an older generation.
        let mut v = good.clone();
        let mut old = vec![0u8; BLOCK];
        header(13 * BLOCK as u64, 1, 4, 1, 50).write(&mut old);
        v[13 * BLOCK..14 * BLOCK].copy_from_slice(&old);
        assert_eq!(classes(&kept(&v)), [(13, FailureClass::TornWrite)]);
        // Stale: a whole write of another run.
        let mut v = good.clone();
        for k in 0..4 {
            let mut b = vec![0u8; BLOCK];
            let mut h = header(((8 + k) * BLOCK) as u64, 2, 4, k as u16, 103);
            h.run_id = 0xdef;
            h.write(&mut b);
            v[(8 + k) * BLOCK..(9 + k) * BLOCK].copy_from_slice(&b);
        }
        let c = classes(&kept(&v));
        assert_eq!(c.len(), 4);
        assert!(
            c.iter().all(|&(_, k)| k == FailureClass::LostOrStaleWrite),
            "{c:?}"
        );
    }

    #[test]
    fn against_the_map_an_older_generation_is_a_lost_write_and_unwritten_blocks_are_skipped() {
        let map = GenMap::new(8 * BLOCK as u64);
        for off in [0u64, 4 * BLOCK as u64] {
            assert!(map.try_reserve(off, 4 * BLOCK as u32));
            assert!(!map.try_reserve(off, BLOCK as u32), "a block in flight");
            map.commit(off, 4 * BLOCK as u32, true);
        }
        // The first write went twice: the map expects generation 2 there.
        assert!(map.try_reserve(0, 4 * BLOCK as u32));
        map.commit(0, 4 * BLOCK as u32, true);
        let v = written(8, 4, 1);
        let mut out = VerifySummary::default();
        let mut e = Expect::Map {
            map: &map,
            run_id: 0xabc,
        };
        check_chunk(&v, 0, 0, &mut e, &mut out);
        let c = classes(&out);
        assert_eq!(
            c,
            (0..4)
                .map(|b| (b, FailureClass::LostOrStaleWrite))
                .collect::<Vec<_>>()
        );
        assert_eq!(out.blocks_checked, 8);

        let empty = GenMap::new(8 * BLOCK as u64);
        let mut out = VerifySummary::default();
        let mut e = Expect::Map {
            map: &empty,
            run_id: 0xabc,
        };
        check_chunk(&v, 0, 0, &mut e, &mut out);
        assert_eq!((out.blocks_checked, out.blocks_unwritten), (0, 8));
    }

    #[test]
    fn a_failed_write_leaves_its_blocks_unknown_and_only_their_integrity_is_checked() {
        let map = GenMap::new(4 * BLOCK as u64);
        assert!(map.try_reserve(0, 4 * BLOCK as u32));
        map.commit(0, 4 * BLOCK as u32, false);
        // What the failed write may have left: its blocks, zeros, another
        // run's block, and one of its own blocks damaged.
        let mut v = written(4, 4, 9);
        v[BLOCK..2 * BLOCK].fill(0);
        let mut other = vec![0u8; BLOCK];
        let mut h = header(2 * BLOCK as u64, 3, 1, 0, 5);
        h.run_id = 0xdef;
        h.write(&mut other);
        v[2 * BLOCK..3 * BLOCK].copy_from_slice(&other);
        v[3 * BLOCK + 99] ^= 1;
        let mut out = VerifySummary::default();
        let mut e = Expect::Map {
            map: &map,
            run_id: 0xabc,
        };
        check_chunk(&v, 0, 0, &mut e, &mut out);
        assert_eq!(classes(&out), [(3, FailureClass::Corruption)]);
        assert_eq!((out.blocks_checked, out.blocks_unwritten), (1, 3));
    }

    #[test]
    fn a_block_of_another_target_at_the_same_offset_is_misdirected() {
        let v = written(4, 4, 1);
        let mut out = VerifySummary::default();
        check_chunk(
            &v,
            0,
            1,
            &mut Expect::Kept {
                run: Some((0xabc, 7)),
            },
            &mut out,
        );
        assert_eq!(out.counts.misdirected_write, 4, "{:?}", out.failures);
    }

    #[test]
    fn the_kept_run_is_the_newest_of_the_first_chunk_not_its_first_block() {
        let mut v = written(8, 1, 2);
        let mut old = vec![0u8; BLOCK];
        let mut h = header(0, 1, 1, 0, 1);
        h.run_id = 0x01d;
        h.write(&mut old);
        v[..BLOCK].copy_from_slice(&old);
        let out = kept(&v);
        assert_eq!(out.run_id.as_deref(), Some("0000000000000abc"));
        assert_eq!(classes(&out), [(0, FailureClass::LostOrStaleWrite)]);
    }

    #[test]
    fn a_write_after_a_failed_one_never_reuses_the_last_good_generation() {
        let map = GenMap::new(BLOCK as u64);
        assert!(map.try_reserve(0, BLOCK as u32));
        map.commit(0, BLOCK as u32, true);
        assert_eq!(map.expected(0), 1);
        assert!(map.try_reserve(0, BLOCK as u32));
        map.commit(0, BLOCK as u32, false);
        assert_eq!(map.expected(0), 1 | UNKNOWN);
        assert!(map.try_reserve(0, BLOCK as u32));
        assert_eq!(map.pending(0), 2, "generation 1 is on the disk already");
        map.commit(0, BLOCK as u32, true);
        // That write lost: the disk still holds generation 1.
        let v = written(1, 1, 1);
        let mut out = VerifySummary::default();
        let mut e = Expect::Map {
            map: &map,
            run_id: 0xabc,
        };
        check_chunk(&v, 0, 0, &mut e, &mut out);
        assert_eq!(classes(&out), [(0, FailureClass::LostOrStaleWrite)]);
    }

    #[test]
    fn generations_skip_never_and_unknown() {
        let mut g = NEVER;
        for _ in 0..300 {
            g = next_gen(g);
            assert!((1..=LAST_GEN).contains(&g));
        }
    }
}
