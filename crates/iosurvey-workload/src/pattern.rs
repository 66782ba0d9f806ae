//! Offset generators: forward, backward, random and regions, over a
//! resolved area, all aligned to the block size.

use crate::rng::Rng;
use crate::skew::Skew;
use crate::Pattern;
use iosurvey_model::{BsSplit, Dist};

/// The byte range a stream covers on its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Area {
    pub start: u64,
    pub len: u64,
}

/// Why an area does not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AreaError {
    #[error("--offset {offset} is at or past the end of the target ({size} bytes)")]
    OffsetPastEnd { offset: u64, size: u64 },
    #[error("the area ({span} bytes from offset {offset}) runs past the end of the target ({size} bytes); lower --span or --offset")]
    SpanPastEnd { offset: u64, span: u64, size: u64 },
    #[error("block size {bs} is larger than the area ({len} bytes)")]
    BlockLargerThanArea { bs: u64, len: u64 },
    #[error("{regions} regions of {bs}-byte blocks do not fit in {len} bytes; lower --regions")]
    TooManyRegions { regions: u32, bs: u64, len: u64 },
}

/// Resolves `offset`/`span` against a target of `size` bytes.
pub fn resolve_area(size: u64, offset: u64, span: Option<u64>, bs: u64) -> Result<Area, AreaError> {
    if offset >= size {
        return Err(AreaError::OffsetPastEnd { offset, size });
    }
    let len = match span {
        None => size - offset,
        Some(span) => {
            if offset.checked_add(span).is_none_or(|end| end > size) {
                return Err(AreaError::SpanPastEnd { offset, span, size });
            }
            span
        }
    };
    if bs > len {
        return Err(AreaError::BlockLargerThanArea { bs, len });
    }
    Ok(Area { start: offset, len })
}

/// One sequential region: `blocks` blocks from `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub base: u64,
    pub blocks: u64,
}

/// Splits `area` into `regions` regions of whole blocks, as equal as they
/// can be (the first `blocks mod regions` get one block more, so that
/// together they cover every whole block of the area), and returns the ones
/// worker `worker` of `workers` runs (region r goes to worker r mod
/// workers).
pub fn worker_regions(
    area: Area,
    bs: u64,
    regions: u32,
    worker: u32,
    workers: u32,
) -> Result<Vec<Region>, AreaError> {
    let total_blocks = area.len / bs;
    let n = u64::from(regions.max(1));
    let (per, extra) = (total_blocks / n, total_blocks % n);
    if per == 0 {
        return Err(AreaError::TooManyRegions {
            regions,
            bs,
            len: area.len,
        });
    }
    Ok((0..regions)
        .filter(|r| r % workers == worker)
        .map(|r| {
            let r = u64::from(r);
            Region {
                base: area.start + (r * per + r.min(extra)) * bs,
                blocks: per + u64::from(r < extra),
            }
        })
        .collect())
}

/// How a generator walks: the pattern, with a random one's law. The law
/// is boxed so that the tag is a plain byte: inline, its float fields
/// lent the tag their niche, and each draw decoded it (6 instructions per
/// I/O more on the uniform path, by callgrind).
#[derive(Clone, Debug)]
enum Walk {
    Forward,
    Backward,
    Uniform,
    Skewed(Box<Skew>),
}

/// Draws the offsets of one stream on one worker.
#[derive(Clone, Debug)]
pub struct OffsetGen {
    walk: Walk,
    bs: u64,
    area: Area,
    area_blocks: u64,
    regions: Vec<(Region, u64)>,
    next_region: usize,
    rng: Rng,
    /// With I/Os of several sizes ([`OffsetGen::sized`]): the smallest,
    /// in units of `bs` (which is then what every offset is a multiple
    /// of). A sequential region with less than this left is done for the
    /// pass.
    min_units: u64,
}

impl OffsetGen {
    /// A generator over `regions` (sequential patterns) or the whole `area`
    /// (random), seeded with `seed`.
    pub fn new(pattern: Pattern, bs: u64, area: Area, regions: Vec<Region>, seed: u64) -> Self {
        let regions = regions
            .into_iter()
            .map(|r| {
                let first = match pattern {
                    Pattern::Backward => r.blocks - 1,
                    _ => 0,
                };
                (r, first)
            })
            .collect();
        OffsetGen {
            walk: match pattern {
                Pattern::Forward => Walk::Forward,
                Pattern::Backward => Walk::Backward,
                Pattern::Random => Walk::Uniform,
            },
            bs,
            area,
            area_blocks: area.len / bs,
            regions,
            next_region: 0,
            rng: Rng::new(seed),
            min_units: 1,
        }
    }

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

    /// A random generator draws its blocks by `dist` instead of uniformly
    /// (`run --dist`); the hot blocks' places come from `seed`. A
    /// sequential one is left as it is (`expand` refuses a skewed one).
    pub fn with_dist(mut self, dist: Dist, seed: u64) -> Self {
        if !matches!(self.walk, Walk::Uniform) {
            return self;
        }
        if let Some(skew) = Skew::new(dist, self.area_blocks, seed) {
            self.walk = Walk::Skewed(Box::new(skew));
        }
        self
    }

    /// The next offset, in bytes from the start of the target. Inlined
    /// into the worker's completion handler: a call costs a tenth of it.
    #[inline(always)]
    pub fn next_offset(&mut self) -> u64 {
        match &self.walk {
            Walk::Uniform => self.area.start + self.rng.below(self.area_blocks) * self.bs,
            Walk::Skewed(skew) => self.area.start + skew.block(&mut self.rng) * self.bs,
            Walk::Forward => {
                let i = self.pick_region();
                let (r, cur) = &mut self.regions[i];
                let off = r.base + *cur * self.bs;
                *cur += 1;
                if *cur == r.blocks {
                    *cur = 0;
                }
                off
            }
            Walk::Backward => {
                let i = self.pick_region();
                let (r, cur) = &mut self.regions[i];
                let off = r.base + *cur * self.bs;
                *cur = if *cur == 0 { r.blocks - 1 } else { *cur - 1 };
                off
            }
        }
    }

    /// A roll in 0..100 for choosing the op of a mixed stream.
    #[inline]
    pub fn roll_percent(&mut self) -> u64 {
        self.rng.below(100)
    }

    #[inline]
    fn pick_region(&mut self) -> usize {
        let i = self.next_region;
        self.next_region += 1;
        if self.next_region == self.regions.len() {
            self.next_region = 0;
        }
        i
    }
}

/// Draws of a size that fits before `OffsetGen::redrawn` gives up.
const REDRAWS: u32 = 10_000;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn gen(pattern: Pattern, bs: u64, area: Area, regions: u32, seed: u64) -> OffsetGen {
        let r = worker_regions(area, bs, regions, 0, 1).unwrap();
        OffsetGen::new(pattern, bs, area, r, seed)
    }

    #[test]
    fn backward_goes_down_block_by_block_and_wraps_once_per_pass() {
        let area = Area {
            start: 4096,
            len: 4 * 4096,
        };
        let mut g = gen(Pattern::Backward, 4096, area, 1, 0);
        let offs: Vec<u64> = (0..8).map(|_| g.next_offset()).collect();
        assert_eq!(offs, [16384, 12288, 8192, 4096, 16384, 12288, 8192, 4096]);
    }

    #[test]
    fn regions_are_evenly_spaced_sequential_streams() {
        let area = Area {
            start: 0,
            len: 8 * 512,
        };
        let mut g = gen(Pattern::Forward, 512, area, 2, 0);
        let offs: Vec<u64> = (0..4).map(|_| g.next_offset()).collect();
        assert_eq!(offs, [0, 2048, 512, 2560]);
    }

    #[test]
    fn regions_are_shared_out_among_workers() {
        let area = Area {
            start: 0,
            len: 1 << 20,
        };
        let w0 = worker_regions(area, 4096, 4, 0, 2).unwrap();
        let w1 = worker_regions(area, 4096, 4, 1, 2).unwrap();
        assert_eq!(
            w0.iter().map(|r| r.base).collect::<Vec<_>>(),
            [0, 512 << 10]
        );
        assert_eq!(
            w1.iter().map(|r| r.base).collect::<Vec<_>>(),
            [256 << 10, 768 << 10]
        );
        assert!(worker_regions(area, 4096, 1000, 0, 1).is_err());
    }

    #[test]
    fn area_must_fit_the_target() {
        assert_eq!(
            resolve_area(100, 0, None, 10),
            Ok(Area { start: 0, len: 100 })
        );
        assert!(resolve_area(100, 100, None, 10).is_err());
        assert!(resolve_area(100, 50, Some(60), 10).is_err());
        assert!(resolve_area(100, 0, Some(8), 10).is_err());
        assert!(resolve_area(100, 10, Some(u64::MAX), 10).is_err());
    }

    #[test]
    fn regions_cover_every_whole_block_whatever_the_count() {
        // 10 blocks over 3 workers: 4 + 3 + 3, end to end.
        let area = Area {
            start: 8192,
            len: 10 * 4096 + 100,
        };
        let all: Vec<Region> = (0..3)
            .flat_map(|w| worker_regions(area, 4096, 3, w, 3).unwrap())
            .collect();
        assert_eq!(
            all.iter().map(|r| (r.base, r.blocks)).collect::<Vec<_>>(),
            [(8192, 4), (8192 + 4 * 4096, 3), (8192 + 7 * 4096, 3)]
        );
    }

    proptest! {
        #[test]
        fn regions_of_all_workers_tile_the_area(
            blocks in 1u64..500, regions in 1u32..9, workers in 1u32..5, tail in 0u64..512,
        ) {
            let (blocks, bs) = (blocks.max(u64::from(regions)), 512u64);
            let area = Area { start: 4096, len: blocks * bs + tail };
            let mut all: Vec<Region> = (0..workers)
                .flat_map(|w| worker_regions(area, bs, regions, w, workers).unwrap())
                .collect();
            all.sort_by_key(|r| r.base);
            prop_assert_eq!(all.len() as u32, regions);
            let mut next = area.start;
            for r in &all {
                prop_assert_eq!(r.base, next);
                next += r.blocks * bs;
            }
            prop_assert_eq!(next, area.start + blocks * bs);
        }

        #[test]
        fn sequential_patterns_cover_the_area_exactly_once_per_pass(
            blocks in 1u64..300, bs_shift in 9u32..14, start_blocks in 0u64..50,
            backward in any::<bool>(), regions in 1u32..5,
        ) {
            let bs = 1u64 << bs_shift;
            let blocks = blocks.max(u64::from(regions));
            let area = Area { start: start_blocks * bs, len: blocks * bs };
            let pattern = if backward { Pattern::Backward } else { Pattern::Forward };
            let mut g = gen(pattern, bs, area, regions, 1);
            let pass = blocks;
            let mut seen: Vec<u64> = (0..pass).map(|_| g.next_offset()).collect();
            seen.sort_unstable();
            seen.dedup();
            prop_assert_eq!(seen.len() as u64, pass);
            for &o in &seen {
                prop_assert_eq!(o % bs, 0);
                prop_assert!(o >= area.start && o + bs <= area.start + area.len);
            }
        }

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

        #[test]
        fn random_offsets_are_aligned_inside_and_seeded(
            blocks in 1u64..10_000, bs_shift in 9u32..21, start_blocks in 0u64..50, seed in any::<u64>(),
        ) {
            let bs = 1u64 << bs_shift;
            let area = Area { start: start_blocks * bs, len: blocks * bs };
            let mut a = gen(Pattern::Random, bs, area, 1, seed);
            let mut b = gen(Pattern::Random, bs, area, 1, seed);
            for _ in 0..200 {
                let o = a.next_offset();
                prop_assert_eq!(o, b.next_offset());
                prop_assert_eq!(o % bs, 0);
                prop_assert!(o >= area.start && o + bs <= area.start + area.len);
            }
        }
    }

    /// Counts per block of `draws` offsets of a random generator over
    /// `blocks` 4 KiB blocks drawn by `dist` with `seed`, hottest first.
    fn histogram(dist: Dist, blocks: u64, draws: u32, seed: u64) -> Vec<u32> {
        let area = Area {
            start: 1 << 20,
            len: blocks * 4096,
        };
        let mut g = gen(Pattern::Random, 4096, area, 1, seed).with_dist(dist, seed);
        let mut hits = vec![0u32; blocks as usize];
        for _ in 0..draws {
            let o = g.next_offset();
            assert!(o.is_multiple_of(4096) && o >= area.start && o < area.start + area.len);
            hits[((o - area.start) / 4096) as usize] += 1;
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
        hits
    }

    #[test]
    fn skewed_offsets_give_the_hottest_tenth_its_share_by_the_formula() {
        let (blocks, draws) = (2000u64, 400_000u32);
        for dist in [
            Dist::Zipf { theta: 1.2 },
            Dist::Zipf { theta: 0.8 },
            Dist::Pareto { h: 0.2 },
            Dist::Uniform,
        ] {
            let hits = histogram(dist, blocks, draws, 11);
            let top: u32 = hits[..(blocks / 10) as usize].iter().sum();
            let got = f64::from(top) / f64::from(draws);
            let want = dist.hottest_share(0.1, blocks);
            assert!((got - want).abs() < 0.02, "{dist}: {got} vs {want}");
        }
        // Uniform stays uniform: no block far from the mean.
        let hits = histogram(Dist::Uniform, blocks, draws, 11);
        let mean = f64::from(draws) / blocks as f64;
        assert!(hits
            .iter()
            .all(|&h| (f64::from(h) - mean).abs() < mean * 0.35));
    }

    #[test]
    fn skewed_offsets_are_the_same_for_a_seed() {
        let area = Area {
            start: 0,
            len: 1000 * 512,
        };
        let d = Dist::Zipf { theta: 1.2 };
        let draw = |seed| {
            let mut g = gen(Pattern::Random, 512, area, 1, seed).with_dist(d, seed);
            (0..100).map(|_| g.next_offset()).collect::<Vec<_>>()
        };
        assert_eq!(draw(4), draw(4));
        assert_ne!(draw(4), draw(5));
        // A sequential generator ignores it.
        let mut f = gen(Pattern::Forward, 512, area, 1, 0).with_dist(d, 0);
        assert_eq!([f.next_offset(), f.next_offset()], [0, 512]);
    }

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

    #[test]
    fn random_offsets_reach_every_block() {
        let area = Area {
            start: 0,
            len: 64 * 4096,
        };
        let mut g = gen(Pattern::Random, 4096, area, 1, 9);
        let mut hit = [false; 64];
        for _ in 0..2000 {
            hit[(g.next_offset() / 4096) as usize] = true;
        }
        assert!(hit.iter().all(|&h| h));
    }
}
