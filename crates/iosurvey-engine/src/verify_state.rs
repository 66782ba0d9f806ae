//! What every verified run wrote last to a target, kept between runs: per
//! 4 KiB block, the run (by its random id) and the generation of the last
//! write of a verified run that completed, or that a write of it failed
//! (its content unknown). A read-only `--verify` checks each block against
//! it exactly; a verified write merges its generation map in at its end.
//!
//! The bytes (little-endian), as `iosurvey-run` keeps them in a file:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `iosVSTA1` |
//! | 8..12 | format version (1) |
//! | 12..16 | runs in the table (R) |
//! | 16..24 | size of the target it was recorded for, in bytes |
//! | 24..32 | blocks recorded (B) |
//! | 32..40 | ranges (N) |
//! | 40..56 | the target's identity (two numbers: see [`TargetState::ident`]) |
//! | then R × 16 | run id, seed |
//! | then N × 8 | blocks in the range (u32), entry (u32) |
//! | last 4 | crc32c of everything before |
//!
//! An entry is 0 for a block no verified run wrote, else the run's index
//! in the table plus one, shifted left 8, or'ed with the block's state
//! byte: its generation, with 0x40 when its content is unknown. The ranges
//! cover the B blocks in order, consecutive equal entries in one range.

use crate::gen_map::{GenMap, GEN, NEVER, UNKNOWN};

const MAGIC: &[u8; 8] = b"iosVSTA1";
const VERSION: u32 = 1;
const HEAD: usize = 56;

/// Bytes that are not a state this build reads.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StateError {
    #[error("it is not an iosurvey verify state (no iosVSTA1 magic)")]
    NotAState,
    #[error("it is a verify state of format version {0}, which this iosurvey does not read")]
    Version(u32),
    #[error("it is damaged (its checksum or its length does not match)")]
    Damaged,
}

/// What the last verified write of a block left there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Last {
    /// No verified run wrote it.
    Never,
    /// The last verified write of it, by run `run_id`, failed: it holds
    /// that write, what was there before, or a mix.
    Unknown { run_id: u64 },
    /// Generation `generation` of run `run_id`, exactly.
    Written { run_id: u64, generation: u8 },
}

/// The state of one target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetState {
    /// The size of the target it was recorded for.
    pub size: u64,
    /// Who the target was: a block device's number and 0, a file's
    /// device and inode (a file replaced since is another target).
    pub ident: (u64, u64),
    /// Runs that wrote a block: (run id, seed).
    pub runs: Vec<(u64, u64)>,
    /// Per block: 0 or (run index + 1) << 8 | state byte.
    blocks: Vec<u32>,
}

impl TargetState {
    /// Nothing written yet, of a target of `size` bytes.
    pub fn new(size: u64) -> Self {
        TargetState {
            size,
            ..Default::default()
        }
    }

    /// Nothing written yet, of a target of `size` bytes known as `ident`.
    pub fn of(size: u64, ident: (u64, u64)) -> Self {
        TargetState {
            size,
            ident,
            ..Default::default()
        }
    }

    /// Blocks recorded (every block past them was never written).
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// No block recorded.
    pub fn is_empty(&self) -> bool {
        self.blocks.iter().all(|&e| e == 0)
    }

    /// What block `block` should hold.
    pub fn last(&self, block: usize) -> Last {
        let e = self.blocks.get(block).copied().unwrap_or(0);
        if e == 0 {
            return Last::Never;
        }
        let run_id = self.runs[(e >> 8) as usize - 1].0;
        let s = (e & 0xff) as u8;
        if s & UNKNOWN != 0 {
            Last::Unknown { run_id }
        } else {
            Last::Written {
                run_id,
                generation: s & GEN,
            }
        }
    }

    /// Blocks in `range` a verified run wrote.
    pub fn count_written(&self, range: std::ops::Range<usize>) -> u64 {
        range
            .filter(|&b| self.blocks.get(b).is_some_and(|&e| e != 0))
            .count() as u64
    }

    /// Records what run `run_id` (seed `seed`) left, as its generation map
    /// says: every block it wrote (or failed to write) is now its; the
    /// others keep what they had. Runs no block names any more leave the
    /// table.
    pub fn record(&mut self, map: &GenMap, run_id: u64, seed: u64) {
        if self.blocks.len() < map.len() {
            self.blocks.resize(map.len(), 0);
            // A frames directory grows with its frames: the state's size
            // covers its blocks (decode refuses more blocks than that).
            self.size = self
                .size
                .max(map.len() as u64 * crate::gen_map::BLOCK as u64);
        }
        self.runs.push((run_id, seed));
        let me = (self.runs.len() as u32) << 8;
        for (b, e) in self.blocks.iter_mut().enumerate().take(map.len()) {
            let s = map.last(b);
            if s != NEVER {
                *e = me | u32::from(s);
            }
        }
        self.compact();
    }

    /// Drops the runs no block names, renumbering the others.
    fn compact(&mut self) {
        let mut used = vec![false; self.runs.len()];
        for &e in &self.blocks {
            if e != 0 {
                used[(e >> 8) as usize - 1] = true;
            }
        }
        let mut new_index = vec![0u32; self.runs.len()];
        let mut runs = Vec::new();
        for (i, r) in self.runs.iter().enumerate() {
            if used[i] {
                runs.push(*r);
                new_index[i] = runs.len() as u32;
            }
        }
        for e in &mut self.blocks {
            if *e != 0 {
                *e = new_index[(*e >> 8) as usize - 1] << 8 | (*e & 0xff);
            }
        }
        self.runs = runs;
    }

    /// The bytes of the state (see the module's table).
    pub fn encode(&self) -> Vec<u8> {
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for &e in &self.blocks {
            match ranges.last_mut() {
                Some((n, v)) if *v == e && *n < u32::MAX => *n += 1,
                _ => ranges.push((1, e)),
            }
        }
        let mut out = Vec::with_capacity(HEAD + self.runs.len() * 16 + ranges.len() * 8 + 4);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.runs.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
        out.extend_from_slice(&(self.blocks.len() as u64).to_le_bytes());
        out.extend_from_slice(&(ranges.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.ident.0.to_le_bytes());
        out.extend_from_slice(&self.ident.1.to_le_bytes());
        for (id, seed) in &self.runs {
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&seed.to_le_bytes());
        }
        for (n, v) in ranges {
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(&v.to_le_bytes());
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Whether `bytes` start as a state does (whatever its version).
    pub fn is_state(bytes: &[u8]) -> bool {
        bytes.starts_with(MAGIC)
    }

    /// The size of the target the state in `bytes` says it was recorded
    /// for, read from its head alone (nothing checked, nothing allocated):
    /// a caller refuses a state larger than its target before decoding it.
    pub fn recorded_size(bytes: &[u8]) -> Option<u64> {
        let b = bytes.get(16..24)?;
        Self::is_state(bytes).then(|| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// Reads a state from its bytes, checking everything.
    pub fn decode(bytes: &[u8]) -> Result<Self, StateError> {
        if !Self::is_state(bytes) {
            return Err(StateError::NotAState);
        }
        let u32_at = |at: usize| -> Result<u32, StateError> {
            let b = bytes.get(at..at + 4).ok_or(StateError::Damaged)?;
            Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
        };
        let u64_at = |at: usize| -> Result<u64, StateError> {
            let b = bytes.get(at..at + 8).ok_or(StateError::Damaged)?;
            Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
        };
        let version = u32_at(8)?;
        if version != VERSION {
            return Err(StateError::Version(version));
        }
        let nruns = u32_at(12)? as usize;
        let size = u64_at(16)?;
        let nblocks = u64_at(24)?;
        let nranges = u64_at(32)?;
        let ident = (u64_at(40)?, u64_at(48)?);
        let body = nruns
            .checked_mul(16)
            .and_then(|r| {
                usize::try_from(nranges)
                    .ok()?
                    .checked_mul(8)?
                    .checked_add(r)
            })
            .and_then(|b| b.checked_add(HEAD + 4))
            .ok_or(StateError::Damaged)?;
        // No more blocks than its target has: the blocks are allocated
        // before the ranges are checked.
        if bytes.len() != body || nblocks > size.div_ceil(crate::gen_map::BLOCK as u64) {
            return Err(StateError::Damaged);
        }
        let crc = u32_at(body - 4)?;
        if crc32c::crc32c(&bytes[..body - 4]) != crc {
            return Err(StateError::Damaged);
        }
        let runs: Vec<(u64, u64)> = (0..nruns)
            .map(|i| Ok((u64_at(HEAD + i * 16)?, u64_at(HEAD + i * 16 + 8)?)))
            .collect::<Result<_, StateError>>()?;
        let mut blocks = Vec::new();
        let at = HEAD + nruns * 16;
        for k in 0..nranges as usize {
            let n = u32_at(at + k * 8)? as usize;
            let v = u32_at(at + k * 8 + 4)?;
            if v != 0 && ((v >> 8) as usize == 0 || (v >> 8) as usize > nruns) {
                return Err(StateError::Damaged);
            }
            if blocks.len() + n > nblocks as usize {
                return Err(StateError::Damaged);
            }
            blocks.resize(blocks.len() + n, v);
        }
        if blocks.len() as u64 != nblocks {
            return Err(StateError::Damaged);
        }
        Ok(TargetState {
            size,
            ident,
            runs,
            blocks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen_map::BLOCK;

    fn write(map: &GenMap, first: u64, blocks: u32, ok: bool) {
        let (off, len) = (first * BLOCK as u64, blocks * BLOCK as u32);
        assert!(map.try_reserve(off, len));
        map.commit(off, len, ok);
    }

    #[test]
    fn runs_merge_block_by_block_and_the_bytes_read_back() {
        let mut s = TargetState::of(64 * BLOCK as u64, (5, 6));
        assert_eq!(s.last(3), Last::Never);
        let a = GenMap::new(64 * BLOCK as u64);
        write(&a, 0, 16, true);
        write(&a, 0, 4, true);
        s.record(&a, 0xa, 1);
        let b = GenMap::new(32 * BLOCK as u64);
        write(&b, 8, 4, true);
        write(&b, 20, 2, false);
        s.record(&b, 0xb, 2);
        let want = |blk| match blk {
            0..4 => Last::Written {
                run_id: 0xa,
                generation: 2,
            },
            8..12 => Last::Written {
                run_id: 0xb,
                generation: 1,
            },
            20..22 => Last::Unknown { run_id: 0xb },
            4..16 => Last::Written {
                run_id: 0xa,
                generation: 1,
            },
            _ => Last::Never,
        };
        for blk in 0..70 {
            assert_eq!(s.last(blk), want(blk), "block {blk}");
        }
        let back = TargetState::decode(&s.encode()).unwrap();
        assert_eq!(back, s);
        assert_eq!(s.count_written(0..64), 16 + 2);

        // A run that rewrites every block of another leaves it out.
        let c = GenMap::new(64 * BLOCK as u64);
        write(&c, 0, 64, true);
        s.record(&c, 0xc, 3);
        assert_eq!(s.runs, [(0xc, 3)]);
        assert_eq!(
            s.last(63),
            Last::Written {
                run_id: 0xc,
                generation: 1
            }
        );
        // One range: the file stays small.
        assert_eq!(s.encode().len(), HEAD + 16 + 8 + 4);
    }

    #[test]
    fn bytes_that_are_not_a_whole_state_are_refused() {
        let mut s = TargetState::new(8 * BLOCK as u64);
        let m = GenMap::new(8 * BLOCK as u64);
        write(&m, 2, 3, true);
        s.record(&m, 7, 7);
        let bytes = s.encode();
        assert_eq!(
            TargetState::decode(b"hello, world"),
            Err(StateError::NotAState)
        );
        for cut in [9, 20, bytes.len() - 1] {
            assert!(TargetState::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        for at in [12, 30, 45, bytes.len() - 6] {
            let mut b = bytes.clone();
            b[at] ^= 1;
            assert!(TargetState::decode(&b).is_err(), "byte {at}");
        }
    }
}
