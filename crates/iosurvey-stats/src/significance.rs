//! Whether two sets of repeated measurements differ: the median with a
//! distribution-free confidence interval, the Mann-Whitney U test (exact),
//! the ratio of two medians with a bootstrap interval, and Holm's
//! correction of several p-values at once. Each sample is one whole repeat
//! of a run (never the intervals of one run, which are autocorrelated).

/// The fewest repeats per side for a verdict.
pub const MIN_REPEATS: usize = 4;

/// The median of `v`; NaN when empty.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// A confidence interval for the median from order statistics: the
/// narrowest symmetric pair `(x(j), x(n+1-j))` whose coverage, from the
/// binomial distribution, is at least 95%; with too few values for 95%,
/// the whole range. Returns (low, high, coverage).
pub fn median_ci(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return (f64::NAN, f64::NAN, 0.0);
    }
    // P(B < j) for B ~ Binomial(n, 1/2): the chance the median lies below
    // x(j); the pair (x(j), x(n+1-j)) covers it with 1 - 2 P(B < j).
    let below =
        |j: usize| -> f64 { (0..j).map(|k| binomial(n, k)).sum::<f64>() / 2f64.powi(n as i32) };
    let mut best = (s[0], s[n - 1], 1.0 - 2.0 * below(1));
    for j in 2..=n.div_ceil(2) {
        let cover = 1.0 - 2.0 * below(j);
        if cover < 0.95 {
            break;
        }
        best = (s[j - 1], s[n - j], cover);
    }
    best
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// The Mann-Whitney U test of `a` against `b`, two-sided: U of `a` (ties
/// count one half) and the exact p-value from the distribution of U over
/// every assignment of the ranks (without ties; with ties it is close and a
/// little conservative).
pub fn mann_whitney(a: &[f64], b: &[f64]) -> (f64, f64) {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return (f64::NAN, 1.0);
    }
    let u: f64 = a
        .iter()
        .map(|x| {
            b.iter()
                .map(|y| match x.total_cmp(y) {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Less => 0.0,
                })
                .sum::<f64>()
        })
        .sum();
    if n * m > 2500 {
        return (u, normal_p(u, n, m));
    }
    // counts[k]: the arrangements of n and m values with U = k, built up
    // one value at a time (c(n, m, k) = c(n-1, m, k-m) + c(n, m-1, k)).
    let max = n * m;
    let mut table = vec![vec![vec![0f64; max + 1]; m + 1]; n + 1];
    for (i, row) in table.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            if i == 0 || j == 0 {
                cell[0] = 1.0;
            }
        }
    }
    for i in 1..=n {
        for j in 1..=m {
            for k in 0..=i * j {
                let with_top_a = if k >= j { table[i - 1][j][k - j] } else { 0.0 };
                let with_top_b = table[i][j - 1][k];
                table[i][j][k] = with_top_a + with_top_b;
            }
        }
    }
    let counts = &table[n][m];
    let total: f64 = counts.iter().sum();
    // Two-sided: the chance of a U at least as far from its mean.
    let mean = max as f64 / 2.0;
    let far = (u - mean).abs();
    let p: f64 = counts
        .iter()
        .enumerate()
        .filter(|(k, _)| (*k as f64 - mean).abs() >= far - 1e-9)
        .map(|(_, c)| c)
        .sum::<f64>()
        / total;
    (u, p.min(1.0))
}

/// The smallest two-sided p-value [`mann_whitney`] can give with `n`
/// values against `m`, every one of one side above every one of the
/// other: 2 / C(n + m, n) (0.029 for four against four, 0.0079 for five).
pub fn smallest_p(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    (2.0 / binomial(n + m, n)).min(1.0)
}

/// The two-sided p-value of `u` from the normal approximation of U (with
/// a continuity correction), for samples too large to count exactly.
fn normal_p(u: f64, n: usize, m: usize) -> f64 {
    let (n, m) = (n as f64, m as f64);
    let mean = n * m / 2.0;
    let sd = (n * m * (n + m + 1.0) / 12.0).sqrt();
    let z = ((u - mean).abs() - 0.5).max(0.0) / sd;
    (2.0 * (1.0 - phi(z))).min(1.0)
}

/// The standard normal distribution function (Abramowitz and Stegun
/// 7.1.26, error below 1.5e-7).
fn phi(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    0.5 * (1.0 + erf.copysign(x))
}

/// The ratio of the median of `b` to the median of `a`, with a 95%
/// percentile bootstrap interval from `rounds` resamplings of each side
/// (a fixed seed: the same data give the same interval).
pub fn median_ratio_ci(a: &[f64], b: &[f64], rounds: usize) -> (f64, f64, f64) {
    let ratio = median(b) / median(a);
    if a.is_empty() || b.is_empty() {
        return (ratio, f64::NAN, f64::NAN);
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: usize| -> usize {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    };
    let mut ratios = Vec::with_capacity(rounds);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    for _ in 0..rounds {
        for x in &mut ra {
            *x = a[next(a.len())];
        }
        for x in &mut rb {
            *x = b[next(b.len())];
        }
        let r = median(&rb) / median(&ra);
        if r.is_finite() {
            ratios.push(r);
        }
    }
    ratios.sort_by(f64::total_cmp);
    if ratios.is_empty() {
        return (ratio, f64::NAN, f64::NAN);
    }
    let at =
        |q: f64| ratios[((q * (ratios.len() - 1) as f64).round() as usize).min(ratios.len() - 1)];
    (ratio, at(0.025), at(0.975))
}

/// Holm's step-down adjustment of `p`, a family of p-values tested
/// together: the adjusted p-values, in the order given. Rejecting each
/// hypothesis whose adjusted p-value is below alpha holds the chance of
/// any false rejection in the family to alpha, whatever the tests'
/// dependence. The i-th smallest (from 0) is multiplied by `m - i`, capped
/// at 1, and never below the one before it.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut adjusted = vec![0.0; m];
    let mut floor = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        floor = floor.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = floor;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_interval_widens_to_reach_95_percent() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        // n = 10: (x(2), x(9)) covers 97.9%, (x(3), x(8)) only 89.1%.
        let (lo, hi, cover) = median_ci(&v);
        assert_eq!((lo, hi), (2.0, 9.0));
        assert!((cover - 0.978_515_625).abs() < 1e-9, "{cover}");
        // n = 4: no pair reaches 95%; the whole range covers 87.5%.
        let (lo, hi, cover) = median_ci(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!((lo, hi, cover), (1.0, 4.0, 0.875));
    }

    #[test]
    fn mann_whitney_is_exact_for_small_samples() {
        // Four against four, wholly apart: U = 16 of 16, and 2 of the 70
        // arrangements are as extreme: p = 0.0286.
        let (u, p) = mann_whitney(&[5.0, 6.0, 7.0, 8.0], &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(u, 16.0);
        assert!((p - 2.0 / 70.0).abs() < 1e-12, "{p}");
        // Interleaved: no evidence.
        let (u, p) = mann_whitney(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]);
        assert_eq!(u, 6.0);
        assert!(p > 0.5, "{p}");
        // Three against three can never reach 0.05 (2 of 20 = 0.1).
        let (_, p) = mann_whitney(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]);
        assert!((p - 0.1).abs() < 1e-12, "{p}");
        assert!((smallest_p(3, 3) - 0.1).abs() < 1e-12);
        assert!((smallest_p(4, 4) - 2.0 / 70.0).abs() < 1e-12);
        let (_, p) = mann_whitney(&[6.0, 7.0, 8.0, 9.0, 10.0], &[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert!((p - smallest_p(5, 5)).abs() < 1e-12 && (p - 2.0 / 252.0).abs() < 1e-12);
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let a: Vec<f64> = (0..60).map(f64::from).collect();
        let b: Vec<f64> = (0..60).map(|x| f64::from(x) + 0.5).collect();
        let (_, p) = mann_whitney(&a, &b);
        assert!(p > 0.8, "nearly the same: {p}");
        let c: Vec<f64> = (100..160).map(f64::from).collect();
        let (u, p) = mann_whitney(&c, &a);
        assert_eq!(u, 3600.0);
        assert!(p < 1e-9, "{p}");
    }

    #[test]
    fn the_ratio_of_medians_has_an_interval_around_it() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b = [50.0, 51.0, 49.0, 50.5, 49.5];
        let (r, lo, hi) = median_ratio_ci(&a, &b, 2000);
        assert!((r - 0.5).abs() < 1e-12);
        assert!(lo <= r && r <= hi && lo > 0.48 && hi < 0.52, "{lo} {hi}");
        assert_eq!(
            median_ratio_ci(&a, &b, 2000),
            (r, lo, hi),
            "the same every time"
        );
    }

    #[test]
    fn holm_matches_hand_computed_adjustments() {
        let close = |got: Vec<f64>, want: &[f64]| {
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 1e-12, "{got:?} against {want:?}");
            }
        };
        // Sorted 0.01, 0.02, 0.03, 0.04, 0.05 times 5, 4, 3, 2, 1: 0.05,
        // 0.08, 0.09, 0.08 (raised to 0.09, never below the one before),
        // 0.05 (raised to 0.09); given out of order, returned in it.
        close(
            holm(&[0.04, 0.01, 0.05, 0.03, 0.02]),
            &[0.09, 0.05, 0.09, 0.09, 0.08],
        );
        // The case: one p of 0.009 among five figures tested
        // (R's p.adjust(c(0.009, 0.2, 0.5, 0.7, 0.9), "holm")).
        close(
            holm(&[0.009, 0.2, 0.5, 0.7, 0.9]),
            &[0.045, 0.8, 1.0, 1.0, 1.0],
        );
        // Capped at 1; one test is left as it is; none gives none.
        close(holm(&[0.6, 0.7]), &[1.0, 1.0]);
        close(holm(&[0.03]), &[0.03]);
        assert!(holm(&[]).is_empty());
        // Ties: 3 x 0.02, then 2 x 0.02 raised to the 0.06 before it.
        close(holm(&[0.02, 0.02, 0.5]), &[0.06, 0.06, 0.5]);
    }
}
