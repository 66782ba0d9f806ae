//! ORION's load levels and the (small, large) cells each run level and
//! matrix type visits. Pure arithmetic, no I/O.
//!
//! # The load-level rule
//!
//! Derived from seed 004 (`-num_disks 24`: small columns 0, 1, 2, 3, 4, 5,
//! 6, 12, ..., 120 and large rows 0, 1, 2, 3, 4, 8, ..., 48) and from
//! ORION 11.1's `-run simple` on one LUN (small up to 5, large 0, 1, 2):
//!
//! - small (outstanding small random I/Os): 0, then every level from 1 to
//!   `s`, then every multiple of `s` up to `5 x num_disks`, where
//!   `s = ceil(num_disks / 4)` (24 disks: s = 6, 20 steps of 6 to 120);
//! - large (outstanding large I/Os, or sequential streams): 0, then 1 to
//!   `l`, then every multiple of `l` up to `2 x num_disks`, where
//!   `l = ceil(num_disks / 6)` (24 disks: l = 4, 12 steps of 4 to 48).
//!
//! When the maximum is not a multiple of the step it is added as the last
//! level, so the maximum load is always run.

/// Which cells of the small x large matrix are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixType {
    /// Row 0 (small varied, no large) and column 0 (large varied, no small).
    Basic,
    /// Every combination.
    Detailed,
    /// Large fixed at `--num-large`, small varied.
    Row,
    /// Small fixed at `--num-small`, large varied.
    Col,
    /// One cell: `--num-small` and `--num-large`.
    Point,
    /// Every combination of the levels up to `--num-small` and `--num-large`.
    Max,
}

impl MatrixType {
    pub fn name(self) -> &'static str {
        match self {
            MatrixType::Basic => "basic",
            MatrixType::Detailed => "detailed",
            MatrixType::Row => "row",
            MatrixType::Col => "col",
            MatrixType::Point => "point",
            MatrixType::Max => "max",
        }
    }
}

/// `0, 1..=step, 2 step, 3 step, ... max` with `step = ceil(disks / div)`.
fn levels(num_disks: u32, div: u32, mult: u32) -> Vec<u32> {
    let max = num_disks.saturating_mul(mult);
    let step = num_disks.div_ceil(div).max(1);
    let mut out: Vec<u32> = (0..=step.min(max)).collect();
    let mut v = 2 * step;
    while v <= max {
        out.push(v);
        v += step;
    }
    if out.last() != Some(&max) {
        out.push(max);
    }
    out
}

/// Small-I/O levels (matrix columns), 0 included.
pub fn small_levels(num_disks: u32) -> Vec<u32> {
    levels(num_disks, 4, 5)
}

/// Large-I/O levels (matrix rows), 0 included.
pub fn large_levels(num_disks: u32) -> Vec<u32> {
    levels(num_disks, 6, 2)
}

/// The levels up to `cap`, ending at `cap` itself.
fn capped(levels: &[u32], cap: u32) -> Vec<u32> {
    let mut out: Vec<u32> = levels.iter().copied().filter(|&v| v < cap).collect();
    out.push(cap);
    out
}

/// The (small, large) cells of a matrix, large outer and small inner, as
/// ORION's rows and columns; (0, 0) moves nothing and is never included.
pub fn cells(
    kind: MatrixType,
    num_disks: u32,
    num_small: Option<u32>,
    num_large: Option<u32>,
) -> Vec<(u32, u32)> {
    let small = small_levels(num_disks);
    let large = large_levels(num_disks);
    let ns = num_small.unwrap_or(0);
    let nl = num_large.unwrap_or(0);
    let grid = |s: &[u32], l: &[u32]| -> Vec<(u32, u32)> {
        l.iter()
            .flat_map(|&l| s.iter().map(move |&s| (s, l)))
            .collect()
    };
    let all = match kind {
        MatrixType::Basic => {
            let row0 = small.iter().map(|&s| (s, 0));
            row0.chain(large.iter().map(|&l| (0, l))).collect()
        }
        MatrixType::Detailed => grid(&small, &large),
        MatrixType::Row => grid(&small, &[nl]),
        MatrixType::Col => grid(&[ns], &large),
        MatrixType::Point => vec![(ns, nl)],
        MatrixType::Max => grid(&capped(&small, ns), &capped(&large, nl)),
    };
    all.into_iter().filter(|&c| c != (0, 0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_004_levels_for_24_disks() {
        let mut small = vec![0, 1, 2, 3, 4, 5, 6];
        small.extend((2..=20).map(|k| 6 * k));
        assert_eq!(small_levels(24), small);
        assert_eq!(small_levels(24).len(), 26);
        let mut large = vec![0, 1, 2, 3, 4];
        large.extend((2..=12).map(|k| 4 * k));
        assert_eq!(large_levels(24), large);
        assert_eq!(large_levels(24).len(), 16);
    }

    #[test]
    fn one_disk_gives_orion_simple_levels() {
        assert_eq!(small_levels(1), [0, 1, 2, 3, 4, 5]);
        assert_eq!(large_levels(1), [0, 1, 2]);
        // ORION 11.1 `-run simple` on one LUN: 8 data points (with 0,0).
        assert_eq!(cells(MatrixType::Basic, 1, None, None).len(), 7);
    }

    #[test]
    fn a_maximum_off_the_step_is_still_run() {
        // 7 disks: small step 2 up to 35, large step 2 up to 14.
        let s = small_levels(7);
        assert_eq!(&s[..5], [0, 1, 2, 4, 6]);
        assert_eq!(&s[s.len() - 2..], [34, 35]);
        assert_eq!(large_levels(7), [0, 1, 2, 4, 6, 8, 10, 12, 14]);
    }

    #[test]
    fn every_matrix_type_picks_its_cells() {
        use MatrixType::*;
        assert_eq!(
            cells(Basic, 1, None, None),
            [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (0, 1), (0, 2)]
        );
        let d = cells(Detailed, 1, None, None);
        assert_eq!(d.len(), 6 * 3 - 1);
        assert_eq!(d[0], (1, 0));
        assert_eq!(d[5], (0, 1));
        assert_eq!(d.last(), Some(&(5, 2)));
        assert_eq!(cells(Detailed, 24, None, None).len(), 26 * 16 - 1);
        assert_eq!(
            cells(Row, 1, None, Some(2)),
            (0..=5).map(|s| (s, 2)).collect::<Vec<_>>()
        );
        assert_eq!(cells(Col, 1, Some(3), None), [(3, 0), (3, 1), (3, 2)]);
        assert_eq!(cells(Point, 24, Some(12), Some(4)), [(12, 4)]);
        assert_eq!(
            cells(Max, 24, Some(8), Some(3)),
            grid_of(&[0, 1, 2, 3, 4, 5, 6, 8], &[0, 1, 2, 3])
        );
    }

    fn grid_of(s: &[u32], l: &[u32]) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for &l in l {
            for &s in s {
                if (s, l) != (0, 0) {
                    out.push((s, l));
                }
            }
        }
        out
    }
}
