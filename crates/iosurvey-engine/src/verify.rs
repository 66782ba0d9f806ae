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
//! The rest of the block is the write's generated data ([`crate::data`]),
//! written before the header. The crc covers it all.

use crate::verify_state::{Last, TargetState};
use iosurvey_model::verify::{FailureClass, VerifyFailure, VerifySummary};

pub use crate::gen_map::{GenMap, BLOCK};
use crate::gen_map::{NEVER, UNKNOWN};
const MAGIC: u64 = u64::from_le_bytes(*b"iosVRFY1");
const VERSION: u16 = 1;
const CRC_AT: usize = 56;

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
    /// What the verified runs before wrote, as their state records it.
    State { state: &'a TargetState },
}

/// What one block should hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    /// Nothing known: not checked.
    Nothing,
    /// The last write of it, by the run of this id, failed: only a block
    /// of that run that fails its crc is a finding.
    Unknown(u64),
    /// Exactly this generation of this run.
    Exact(u64, u8),
}

impl Expect<'_> {
    fn want(&self, offset: u64) -> Want {
        let block = (offset / BLOCK as u64) as usize;
        match self {
            Expect::Map { map, run_id } => match map.expected(block) {
                NEVER => Want::Nothing,
                g if g & UNKNOWN != 0 => Want::Unknown(*run_id),
                g => Want::Exact(*run_id, g),
            },
            Expect::State { state } => match state.last(block) {
                Last::Never => Want::Nothing,
                Last::Unknown { run_id } => Want::Unknown(run_id),
                Last::Written { run_id, generation } => Want::Exact(run_id, generation),
            },
        }
    }

    /// A block is expected at byte `offset`: a read error there is a
    /// failure (else the block is not checked).
    pub fn wants(&self, offset: u64) -> bool {
        self.want(offset) != Want::Nothing
    }

    /// What the block at byte `offset` should hold, in words.
    pub fn describe(&self, offset: u64) -> String {
        match self.want(offset) {
            Want::Nothing => format!("nothing known for offset {offset}"),
            Want::Unknown(r) => format!("a readable block of run {r:016x} for offset {offset}"),
            Want::Exact(r, g) => format!("generation {g} of run {r:016x} for offset {offset}"),
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
/// into `out`: each block whose content is known against exactly that
/// content, each failure at its own offset, in one class whatever the
/// block held before:
///
/// | what the block holds | class |
/// |---|---|
/// | the expected header, but a crc32c that does not match | corruption |
/// | any other header whose crc32c does not match | corruption |
/// | a valid block for another offset or target | misdirected write |
/// | a valid block of another run or generation, or data without a header | lost or stale write |
/// | zeros | unwritten |
pub fn check_chunk(
    chunk: &[u8],
    offset: u64,
    target: usize,
    expect: &mut Expect<'_>,
    out: &mut VerifySummary,
) {
    for (i, block) in chunk.chunks_exact(BLOCK).enumerate() {
        let o = offset + (i * BLOCK) as u64;
        let p = parse(block);
        let (run_id, generation) = match expect.want(o) {
            Want::Nothing => {
                out.blocks_unwritten += 1;
                continue;
            }
            Want::Unknown(r) => {
                // The last write of the block failed: it may hold that
                // write, or what was there before. Only a header of that
                // run for this block that fails its crc is a finding.
                match p {
                    Parsed::BadCrc(h) if h.run_id == r && h.offset == o => {
                        out.blocks_checked += 1;
                        out.fail(VerifyFailure {
                            target,
                            offset: o,
                            file: None,
                            class: FailureClass::Corruption,
                            errno: None,
                            expected: format!("a block of run {r:016x} for offset {o}"),
                            found: format!("a crc32c mismatch in {}", describe(&h)),
                        });
                    }
                    _ => out.blocks_unwritten += 1,
                }
                continue;
            }
            Want::Exact(r, g) => (r, g),
        };
        out.blocks_checked += 1;
        let (class, found) = match p {
            Parsed::Valid(h)
                if h.offset == o
                    && h.target as usize == target
                    && h.run_id == run_id
                    && h.generation == generation =>
            {
                continue;
            }
            Parsed::Zeros => (FailureClass::Unwritten, "zeros".to_string()),
            Parsed::Foreign => (
                FailureClass::LostOrStaleWrite,
                "data without a verify header".to_string(),
            ),
            Parsed::BadCrc(h) => (
                FailureClass::Corruption,
                format!("a crc32c mismatch in {}", describe(&h)),
            ),
            Parsed::Valid(h) if h.offset != o || h.target as usize != target => {
                (FailureClass::MisdirectedWrite, describe(&h))
            }
            Parsed::Valid(h) => (FailureClass::LostOrStaleWrite, describe(&h)),
        };
        out.fail(VerifyFailure {
            target,
            offset: o,
            file: None,
            class,
            errno: None,
            expected: format!("generation {generation} of run {run_id:016x} for offset {o}"),
            found,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen_map::{next_gen, LAST_GEN};

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
    /// generation `g` of run 0xabc, with random fill.
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

    /// A map of `n` blocks, each written `times` times whole by run 0xabc
    /// in writes of `per` blocks.
    fn map_of(n: usize, per: usize, times: usize) -> GenMap {
        let map = GenMap::new((n * BLOCK) as u64);
        for _ in 0..times {
            for w in (0..n).step_by(per) {
                let (off, len) = ((w * BLOCK) as u64, (per * BLOCK) as u32);
                assert!(map.try_reserve(off, len));
                map.commit(off, len, true);
            }
        }
        map
    }

    fn against_state(chunk: &[u8], state: &TargetState) -> VerifySummary {
        let mut out = VerifySummary::default();
        check_chunk(chunk, 0, 0, &mut Expect::State { state }, &mut out);
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
    fn against_the_state_each_class_means_one_thing_whatever_was_there_before() {
        let mut state = TargetState::new((16 * BLOCK) as u64);
        state.record(&map_of(16, 4, 2), 0xabc, 7);
        let good = written(16, 4, 2);
        let out = against_state(&good, &state);
        assert_eq!((out.blocks_checked, out.counts.total()), (16, 0));

        // Corruption: a flipped byte.
        let mut v = good.clone();
        v[5 * BLOCK + 100] ^= 0xff;
        assert_eq!(
            classes(&against_state(&v, &state)),
            [(5, FailureClass::Corruption)]
        );
        // Misdirected: block 2's content at block 9.
        let mut v = good.clone();
        v.copy_within(2 * BLOCK..3 * BLOCK, 9 * BLOCK);
        assert_eq!(
            classes(&against_state(&v, &state)),
            [(9, FailureClass::MisdirectedWrite)]
        );
        // Unwritten: zeros.
        let mut v = good.clone();
        v[6 * BLOCK..7 * BLOCK].fill(0);
        assert_eq!(
            classes(&against_state(&v, &state)),
            [(6, FailureClass::Unwritten)]
        );
        // A lost write is one class whatever the block held before: an
        // older generation of the same run, a block of another run, data
        // with no header, for one block of a write or a whole write.
        let mut v = good.clone();
        let older = written(16, 4, 1);
        v[13 * BLOCK..14 * BLOCK].copy_from_slice(&older[13 * BLOCK..14 * BLOCK]);
        for k in 0..4 {
            let mut h = header(((4 + k) * BLOCK) as u64, 2, 4, k as u16, 103);
            h.run_id = 0xdef;
            h.write(&mut v[(4 + k) * BLOCK..(5 + k) * BLOCK]);
        }
        crate::buffers::fill_random(&mut v[8 * BLOCK..12 * BLOCK], 9);
        let c = classes(&against_state(&v, &state));
        let lost: Vec<u64> = (4..12).chain([13]).collect();
        assert_eq!(
            c,
            lost.iter()
                .map(|&b| (b, FailureClass::LostOrStaleWrite))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn blocks_no_verified_run_wrote_are_not_checked() {
        let mut state = TargetState::new((8 * BLOCK) as u64);
        let map = GenMap::new((8 * BLOCK) as u64);
        assert!(map.try_reserve(0, 4 * BLOCK as u32));
        map.commit(0, 4 * BLOCK as u32, true);
        state.record(&map, 0xabc, 7);
        // Blocks 4..8: whatever is there, never written by a verified run.
        let mut v = written(8, 4, 1);
        v[5 * BLOCK..6 * BLOCK].fill(0);
        v[6 * BLOCK + 9] ^= 1;
        let out = against_state(&v, &state);
        assert_eq!((out.blocks_checked, out.blocks_unwritten), (4, 4));
        assert_eq!(out.counts.total(), 0, "{:?}", out.failures);
        let empty = TargetState::new((8 * BLOCK) as u64);
        let out = against_state(&v, &empty);
        assert_eq!((out.blocks_checked, out.blocks_unwritten), (0, 8));
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
        // The state keeps them unknown for a later check.
        let mut state = TargetState::new(4 * BLOCK as u64);
        state.record(&map, 0xabc, 7);
        let out = against_state(&v, &state);
        assert_eq!(classes(&out), [(3, FailureClass::Corruption)]);
    }

    #[test]
    fn a_block_of_another_target_at_the_same_offset_is_misdirected() {
        let v = written(4, 4, 1);
        let mut state = TargetState::new((4 * BLOCK) as u64);
        state.record(&map_of(4, 4, 1), 0xabc, 7);
        let mut out = VerifySummary::default();
        check_chunk(&v, 0, 1, &mut Expect::State { state: &state }, &mut out);
        assert_eq!(out.counts.misdirected_write, 4, "{:?}", out.failures);
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
    fn a_write_left_in_flight_is_unknown_once_settled() {
        let map = GenMap::new(4 * BLOCK as u64);
        assert!(map.try_reserve(0, 2 * BLOCK as u32));
        map.commit(0, 2 * BLOCK as u32, true);
        assert!(map.try_reserve(0, BLOCK as u32));
        assert!(map.try_reserve(3 * BLOCK as u64, BLOCK as u32));
        map.settle();
        assert_eq!(map.expected(0), 1 | UNKNOWN);
        assert_eq!(map.expected(1), 1);
        assert_eq!(map.expected(2), NEVER);
        assert_eq!(map.expected(3), UNKNOWN);
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
