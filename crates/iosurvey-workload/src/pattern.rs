//! Offset generators: forward, backward, random and regions, over a
//! resolved area, all aligned to the block size.

use crate::rng::Rng;
use crate::skew::Skew;
use crate::Pattern;
use iosurvey_model::Dist;

mod sized;

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
