//! The offsets and sizes of a block-size split's I/Os (`--bs
//! 4k:70,64k:30`): random ones anywhere the largest size fits, sequential
//! ones one after another, tiling each region once per pass.

use super::{Area, OffsetGen, Region, Walk};
use crate::Pattern;
use iosurvey_model::BsSplit;

impl OffsetGen {
    /// A generator for the I/Os of a block-size split: offsets are
    /// multiples of the split's unit (the sizes' greatest common divisor)
    /// from the area's start (or a region's), and an I/O of the largest
    /// size fits at each random one. Sequential I/Os follow each other with
    /// no gap and tile their region once per pass (see
    /// [`OffsetGen::next_sized`]); every region must hold the largest size.
    pub fn sized(
        pattern: Pattern,
        split: &BsSplit,
        area: Area,
        regions: Vec<Region>,
        seed: u64,
    ) -> Self {
        let unit = split.align().max(1);
        let max_units = split.max_bs().div_ceil(unit).max(1);
        let mut g = OffsetGen::new(pattern, unit, area, regions, seed);
        // Random: every start from which the largest I/O fits.
        g.area_blocks = (area.len / unit).saturating_sub(max_units) + 1;
        g.min_units = (split.min_bs() / unit).max(1);
        // Backward: each region's cursor is the end of its next I/O.
        if pattern == Pattern::Backward {
            for (r, cur) in &mut g.regions {
                *cur = r.blocks;
            }
        }
        g
    }

    /// The offset and length of the next I/O of a generator made by
    /// [`OffsetGen::sized`], whose size `len` was drawn. Random: anywhere
    /// the largest size fits. Forward: just after the last I/O of its
    /// region; backward: just before it. As fio does with `bssplit`, a
    /// drawn size that would run past the region's end (or, backward,
    /// before its start) is drawn again, by `redraw` from a roll of 0..100,
    /// until one fits, so that each pass touches every unit of the region
    /// once; when not even the smallest size fits, the region is done for
    /// the pass (see [`OffsetGen::sized_region`]), and the next pass starts
    /// at its start (backward: its end). The region then ends on an I/O's
    /// end whenever every size is a multiple of the smallest; otherwise a
    /// tail shorter than the smallest size may be left, as fio leaves it.
    #[inline]
    pub fn next_sized(&mut self, len: u64, redraw: impl Fn(u64) -> u64) -> (u64, u64) {
        let bs = self.bs;
        let units = len / bs;
        match &self.walk {
            Walk::Uniform => (self.area.start + self.rng.below(self.area_blocks) * bs, len),
            Walk::Skewed(skew) => (self.area.start + skew.block(&mut self.rng) * bs, len),
            Walk::Forward => {
                let i = self.sized_region(false);
                let (r, cur) = self.regions[i];
                let units = self.fitting(units, r.blocks - cur, redraw);
                self.regions[i].1 = cur + units;
                (r.base + cur * bs, units * bs)
            }
            Walk::Backward => {
                let i = self.sized_region(true);
                let (r, end) = self.regions[i];
                let units = self.fitting(units, end, redraw);
                self.regions[i].1 = end - units;
                (r.base + (end - units) * bs, units * bs)
            }
        }
    }

    /// The region of the next I/O of a sequential split: the next in turn
    /// with room left for the smallest size. Its regions' sizes drawn
    /// apart, one can be done before another: it waits for the others, so
    /// that a pass does every region once. When none has room, the pass is
    /// over and every region starts again.
    #[inline]
    fn sized_region(&mut self, backward: bool) -> usize {
        let i = self.pick_region();
        if self.room(i, backward) >= self.min_units {
            i
        } else {
            self.next_open_region(i, backward)
        }
    }

    /// Room left in region `i` for its next I/O, in units: after its
    /// cursor (forward) or before it (backward).
    #[inline]
    fn room(&self, i: usize, backward: bool) -> u64 {
        let (r, cur) = self.regions[i];
        if backward {
            cur
        } else {
            r.blocks - cur
        }
    }

    /// The region after `i` (done for the pass) with room left, or, when
    /// every region is done, `i` at the start of a new pass.
    #[cold]
    fn next_open_region(&mut self, i: usize, backward: bool) -> usize {
        for _ in 1..self.regions.len() {
            let j = self.pick_region();
            if self.room(j, backward) >= self.min_units {
                return j;
            }
        }
        for (r, cur) in &mut self.regions {
            *cur = if backward { r.blocks } else { 0 };
        }
        self.next_region = (i + 1) % self.regions.len();
        i
    }

    /// The units of the next I/O of a sequential split with `room` units
    /// left in its region (at least the smallest size): `units` if they
    /// fit, else a size drawn again (see [`OffsetGen::redrawn`]).
    #[inline]
    fn fitting(&mut self, units: u64, room: u64, redraw: impl Fn(u64) -> u64) -> u64 {
        if units <= room {
            units
        } else {
            self.redrawn(room, redraw)
        }
    }

    /// Sizes drawn again by `redraw` from rolls of 0..100 until one fits
    /// in `room` units, as fio draws again. Every size of a split has a
    /// share of at least 1%, so the smallest (which fits) comes within a
    /// few hundred rolls; past [`REDRAWS`] of them (a `redraw` that never
    /// gives a fitting size), the I/O is of the smallest size.
    #[cold]
    fn redrawn(&mut self, room: u64, redraw: impl Fn(u64) -> u64) -> u64 {
        for _ in 0..REDRAWS {
            let units = redraw(self.rng.below(100)) / self.bs;
            if units <= room {
                return units;
            }
        }
        self.min_units
    }
}

/// Draws of a size that fits before `OffsetGen::redrawn` gives up.
const REDRAWS: u32 = 10_000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::worker_regions;
    use proptest::prelude::*;

    fn split(parts: &[(u64, u8)]) -> BsSplit {
        BsSplit {
            shares: parts
                .iter()
                .map(|&(bs, pct)| iosurvey_model::SizeShare::new(bs, pct))
                .collect(),
        }
    }

    /// The (offset, length) of each of `lens` (drawn sizes) from `g`, a
    /// size that does not fit drawn again as the smallest, `min`.
    fn walk(g: &mut OffsetGen, lens: &[u64], min: u64) -> Vec<(u64, u64)> {
        lens.iter().map(|&l| g.next_sized(l, |_| min)).collect()
    }

    #[test]
    fn sized_ios_follow_each_other_and_a_size_past_the_end_is_drawn_again() {
        let area = Area {
            start: 4096,
            len: 10 * 4096,
        };
        let sp = split(&[(4096, 50), (16384, 50)]);
        let (k4, k16) = (4096u64, 16384u64);
        let lens = [k16, k16, k4, k16, k4];
        let r = worker_regions(area, 4096, 1, 0, 1).unwrap();
        let mut g = OffsetGen::sized(Pattern::Forward, &sp, area, r.clone(), 0);
        // 4096 + [0, 16k, 32k]; then 16k would run past the end (4k are
        // left): drawn again, 4k; then the pass is over and wraps.
        assert_eq!(
            walk(&mut g, &lens, k4),
            [
                (4096, k16),
                (20480, k16),
                (36864, k4),
                (40960, k4),
                (4096, k4)
            ]
        );
        let mut g = OffsetGen::sized(Pattern::Backward, &sp, area, r, 0);
        // From the end (44k) down; 16k would run below the start: drawn
        // again, 4k; then back to the end.
        assert_eq!(
            walk(&mut g, &lens, k4),
            [
                (28672, k16),
                (12288, k16),
                (8192, k4),
                (4096, k4),
                (40960, k4)
            ]
        );
        let mut g = OffsetGen::sized(Pattern::Random, &sp, area, Vec::new(), 3);
        for _ in 0..500 {
            let (o, l) = g.next_sized(k16, |_| k4);
            assert!(o.is_multiple_of(4096) && o >= area.start && o + l <= area.start + area.len);
            assert_eq!(l, k16, "a random I/O keeps its size");
        }
    }

    /// Bytes done on each 4 KiB block of `area` by `g`'s I/Os until
    /// `bytes` have been done, each I/O's size drawn by `split`'s table
    /// from rolls of a generator seeded with `seed`.
    fn coverage(g: &mut OffsetGen, sp: &BsSplit, area: Area, bytes: u64, seed: u64) -> Vec<u64> {
        let table = sp.table();
        let len_at = |roll: u64| sp.shares[usize::from(table[roll as usize % 100])].bs;
        let mut rolls = crate::rng::Rng::new(seed);
        let mut per_block = vec![0u64; (area.len / 4096) as usize];
        let mut done = 0;
        while done < bytes {
            let (off, len) = g.next_sized(len_at(rolls.below(100)), len_at);
            assert!(off >= area.start && off + len <= area.start + area.len);
            for b in (off - area.start) / 4096..(off - area.start + len) / 4096 {
                per_block[b as usize] += 4096;
            }
            done += len;
        }
        assert_eq!(done, bytes, "the pass ended on an I/O's end");
        per_block
    }

    #[test]
    fn a_sequential_pass_of_4k_and_64k_covers_each_4k_block_of_4m_once() {
        // The case that missed blocks: --bs 4k:50,64k:50 --span 4m, on
        // one worker and on two (two regions).
        let area = Area {
            start: 0,
            len: 4 << 20,
        };
        let sp = split(&[(4096, 50), (65536, 50)]);
        for (pattern, workers) in [
            (Pattern::Forward, 1),
            (Pattern::Forward, 2),
            (Pattern::Backward, 1),
        ] {
            let mut per_block = vec![0u64; 1024];
            for w in 0..workers {
                let r = worker_regions(area, 4096, workers, w, workers).unwrap();
                let bytes = r.iter().map(|r| r.blocks * 4096).sum();
                let mut g = OffsetGen::sized(pattern, &sp, area, r, u64::from(w));
                let mine = coverage(&mut g, &sp, area, bytes, 7 + u64::from(w));
                for (all, b) in per_block.iter_mut().zip(mine) {
                    *all += b;
                }
            }
            let wrong: Vec<usize> = (0..1024).filter(|&b| per_block[b] != 4096).collect();
            assert!(wrong.is_empty(), "{pattern:?} x{workers}: blocks {wrong:?}");
        }
    }

    #[test]
    fn sizes_not_multiples_of_the_smallest_leave_at_most_a_tail_shorter_than_it() {
        // 4k and 6k step by 2k: 9 units of 2k hold 4k + 4k + 6k + 4k or
        // such, and a 2k tail may be left; the pass then wraps, and no
        // block is done twice before it does.
        let area = Area {
            start: 0,
            len: 9 * 2048,
        };
        let sp = split(&[(4096, 50), (6144, 50)]);
        for seed in 0..50 {
            let r = worker_regions(area, 2048, 1, 0, 1).unwrap();
            let mut g = OffsetGen::sized(Pattern::Forward, &sp, area, r, seed);
            let mut rolls = crate::rng::Rng::new(seed);
            let table = sp.table();
            let len_at = |roll: u64| sp.shares[usize::from(table[roll as usize % 100])].bs;
            let mut end = 0;
            loop {
                let (off, len) = g.next_sized(len_at(rolls.below(100)), len_at);
                if off < end {
                    assert_eq!(off, 0, "a wrap goes back to the start");
                    assert!(
                        area.len - end < 4096,
                        "seed {seed}: {} left",
                        area.len - end
                    );
                    break;
                }
                assert_eq!(
                    off, end,
                    "seed {seed}: each I/O starts where the last ended"
                );
                end = off + len;
            }
        }
    }

    proptest! {
        #[test]
        fn a_sequential_split_pass_covers_each_unit_once(
            min_k in 1u64..5, factors in proptest::collection::vec(1u64..20, 1..4),
            blocks in 40u64..400, regions in 1u32..4, backward in any::<bool>(), seed in any::<u64>(),
        ) {
            // Sizes that are multiples of the smallest (4 KiB blocks of it),
            // in equal shares (the first takes what 100 leaves).
            let min = min_k * 4096;
            let mut sizes: Vec<u64> = factors.iter().map(|f| f * min).collect();
            sizes.push(min);
            sizes.sort_unstable();
            sizes.dedup();
            let n = sizes.len() as u8;
            let parts: Vec<(u64, u8)> = sizes
                .iter()
                .enumerate()
                .map(|(i, &bs)| (bs, 100 / n + if i == 0 { 100 % n } else { 0 }))
                .collect();
            let sp = split(&parts);
            let area = Area { start: 8192, len: blocks.max(sp.max_bs() / 4096 * u64::from(regions)) * 4096 };
            let r = worker_regions(area, sp.align(), regions, 0, 1).unwrap();
            prop_assume!(r.iter().all(|r| r.blocks * sp.align() >= sp.max_bs()));
            let bytes: u64 = r.iter().map(|r| r.blocks * sp.align()).sum();
            let pattern = if backward { Pattern::Backward } else { Pattern::Forward };
            let mut g = OffsetGen::sized(pattern, &sp, area, r, seed);
            let per_block = coverage(&mut g, &sp, area, bytes, seed);
            // Every whole unit of every region once; only what the regions
            // leave past their last whole unit untouched.
            let covered = per_block.iter().filter(|&&b| b == 4096).count() as u64;
            prop_assert!(per_block.iter().all(|&b| b == 0 || b == 4096));
            prop_assert_eq!(covered * 4096, bytes);
        }
    }
}
