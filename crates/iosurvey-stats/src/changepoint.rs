//! Where a series of runs changed: e-divisive means (Matteson and James,
//! 2014), as Apache Otava (hunter) and MongoDB's signal processing use it
//! to find performance regressions in a history of runs.
//!
//! The series is split where the energy statistic between the two sides is
//! largest; the split is kept only when a permutation test finds it
//! significant (the values of each segment shuffled within it, the largest
//! statistic over every segment compared with the observed one), and then
//! each side is searched again, until no split is significant.
//!
//! The energy statistic of a split of `A | B` (|A| = m, |B| = k) with
//! exponent 1 is
//!
//! ```text
//! Q = m k / (m + k) * ( 2/(m k) sum |a - b| - 2/(m(m-1)) sum_{a<a'} |a - a'|
//!                                          - 2/(k(k-1)) sum_{b<b'} |b - b'| )
//! ```
//!
//! It needs no assumption on the distribution (no normality), and a shift
//! of the mean is what it sees best.

/// The parameters of a search, each documented where it is used.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// The fewest values on each side of a split (and so the newest change
    /// that can be seen is this many runs from the end).
    pub min_size: usize,
    /// The significance level of the permutation test: a split is kept
    /// when its p-value is at most this.
    pub alpha: f64,
    /// Permutations per test; the smallest p-value is 1 / (this + 1).
    pub permutations: usize,
    /// Seeds the permutations, so that a search gives the same answer
    /// every time.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            min_size: 3,
            alpha: 0.01,
            permutations: 199,
            seed: 0x6564_6976_6973_6976,
        }
    }
}

/// A change found: the series is different from `index` on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// The first value after the change.
    pub index: usize,
    /// The permutation test's p-value when the split was made.
    pub p: f64,
    /// The energy statistic of the split.
    pub q: f64,
}

/// Every significant change in `x`, by index, ascending.
pub fn changes(x: &[f64], opts: &Options) -> Vec<Change> {
    let min = opts.min_size.max(1);
    let mut rng = SplitMix(opts.seed);
    // Segment boundaries, ascending, 0 and n included.
    let mut bounds = vec![0, x.len()];
    let mut found = Vec::new();
    let mut work = x.to_vec();
    while let Some((at, q)) = best_split(x, &bounds, min) {
        // Permutation test: every segment shuffled within itself.
        let mut as_large = 0usize;
        for _ in 0..opts.permutations {
            work.copy_from_slice(x);
            for w in bounds.windows(2) {
                shuffle(&mut work[w[0]..w[1]], &mut rng);
            }
            if best_split(&work, &bounds, min).is_some_and(|(_, qp)| qp >= q) {
                as_large += 1;
            }
        }
        let p = (as_large + 1) as f64 / (opts.permutations + 1) as f64;
        if p > opts.alpha {
            break;
        }
        found.push(Change { index: at, p, q });
        let k = bounds.partition_point(|&b| b < at);
        bounds.insert(k, at);
    }
    found.sort_by_key(|c| c.index);
    found
}

/// The split of largest statistic over every segment of `x` between
/// `bounds`, each side at least `min` long: (index, statistic).
fn best_split(x: &[f64], bounds: &[usize], min: usize) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for w in bounds.windows(2) {
        if let Some((t, q)) = segment_split(&x[w[0]..w[1]], min) {
            if best.is_none_or(|(_, b)| q > b) {
                best = Some((w[0] + t, q));
            }
        }
    }
    best
}

/// The best split of one segment `y`: (index in `y`, statistic). The sums
/// of distances within the head and within the tail are built once each,
/// in O(L log L) for a segment of L values (see [`head_sums`]), so that a
/// history of thousands of runs is searched, with its permutations, in
/// seconds rather than hours.
fn segment_split(y: &[f64], min: usize) -> Option<(usize, f64)> {
    let n = y.len();
    if n < 2 * min || n < 2 {
        return None;
    }
    // head[t]: sum of |y_i - y_j| over i < j < t; tail[t]: over t <= i < j.
    let head = head_sums(y);
    let mut reversed = y.to_vec();
    reversed.reverse();
    let from_end = head_sums(&reversed);
    let tail: Vec<f64> = (0..=n).map(|t| from_end[n - t]).collect();
    let total = head[n];
    let mut best: Option<(usize, f64)> = None;
    for t in min..=n - min {
        let (m, k) = (t as f64, (n - t) as f64);
        let cross = total - head[t] - tail[t];
        let within = |sum: f64, c: f64| {
            if c > 1.0 {
                2.0 * sum / (c * (c - 1.0))
            } else {
                0.0
            }
        };
        let e = 2.0 * cross / (m * k) - within(head[t], m) - within(tail[t], k);
        let q = m * k / (m + k) * e;
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((t, q));
        }
    }
    best
}

/// `h[t]`, for t in 0..=n: the sum of |y_i - y_j| over i < j < t. Each
/// value's distances to those before it come from the count and sum of
/// the smaller and larger ones so far, kept in Fenwick trees over the
/// values' ranks: O(n log n).
fn head_sums(y: &[f64]) -> Vec<f64> {
    let n = y.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| y[a].total_cmp(&y[b]));
    let mut rank = vec![0usize; n];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    let mut count = vec![0u64; n + 1];
    let mut sum = vec![0.0f64; n + 1];
    let (mut all_count, mut all_sum) = (0u64, 0.0f64);
    let mut h = vec![0.0; n + 1];
    for t in 0..n {
        let v = y[t];
        // Those before t ranked below t's value: count and sum.
        let (mut c, mut s_) = (0u64, 0.0f64);
        let mut i = rank[t];
        while i > 0 {
            c += count[i];
            s_ += sum[i];
            i &= i - 1;
        }
        let below = c as f64 * v - s_;
        let above = (all_sum - s_) - (all_count - c) as f64 * v;
        h[t + 1] = h[t] + below + above;
        let mut i = rank[t] + 1;
        while i <= n {
            count[i] += 1;
            sum[i] += v;
            i += i & i.wrapping_neg();
        }
        all_count += 1;
        all_sum += v;
    }
    h
}

/// Fisher-Yates.
fn shuffle(v: &mut [f64], rng: &mut SplitMix) {
    for i in (1..v.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// splitmix64: enough for shuffles, and the same on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A normal value (Box-Muller) of mean `mu` and deviation `sd`.
    fn normal(rng: &mut SplitMix, mu: f64, sd: f64) -> f64 {
        let u = |r: &mut SplitMix| ((r.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (a, b) = (u(rng), u(rng));
        mu + sd * (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
    }

    /// 40 runs of 3% noise, the mean 10% lower from run 25 on (when
    /// `step`).
    fn series(seed: u64, step: bool) -> Vec<f64> {
        let mut rng = SplitMix(seed);
        (0..40)
            .map(|i| {
                let mu = if step && i >= 25 { 90.0 } else { 100.0 };
                normal(&mut rng, mu, 3.0)
            })
            .collect()
    }

    #[test]
    fn a_ten_percent_step_at_run_25_is_found_there_in_95_of_100_trials() {
        let mut hits = 0;
        for seed in 0..100 {
            let opts = Options {
                seed: seed ^ 0x55,
                ..Options::default()
            };
            let c = changes(&series(seed, true), &opts);
            if c.iter().any(|c| c.index.abs_diff(25) <= 1) {
                hits += 1;
            }
        }
        eprintln!("found at 25 +/- 1 in {hits} of 100 trials");
        assert!(hits >= 95, "found at 25 +/- 1 in {hits} of 100 trials");
    }

    #[test]
    fn forty_stationary_runs_raise_at_most_5_percent_false_alarms() {
        let alarms = (0..100)
            .filter(|&seed| {
                let opts = Options {
                    seed: seed ^ 0x55,
                    ..Options::default()
                };
                !changes(&series(1000 + seed, false), &opts).is_empty()
            })
            .count();
        eprintln!("{alarms} of 100 stationary series flagged");
        assert!(alarms <= 5, "{alarms} of 100 stationary series flagged");
    }

    #[test]
    fn two_steps_down_are_both_found_and_a_short_series_has_none() {
        let x: Vec<f64> = (0..30)
            .map(|i| match i {
                0..10 => 100.0,
                10..20 => 80.0,
                _ => 60.0,
            } + f64::from(i % 3))
            .collect();
        let at: Vec<usize> = changes(&x, &Options::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(at, vec![10, 20]);
        assert!(changes(&[1.0, 2.0, 50.0], &Options::default()).is_empty());
        assert!(changes(&[], &Options::default()).is_empty());
    }

    #[test]
    fn head_sums_are_the_sums_of_distances_taken_one_by_one() {
        let mut rng = SplitMix(7);
        for n in [0usize, 1, 2, 5, 40, 133] {
            // Ties included: values from a few levels.
            let y: Vec<f64> = (0..n).map(|_| (rng.next() % 9) as f64 * 1.5).collect();
            let h = head_sums(&y);
            assert_eq!(h.len(), n + 1);
            for (t, &ht) in h.iter().enumerate() {
                let direct: f64 = (0..t)
                    .flat_map(|j| (0..j).map(move |i| (i, j)))
                    .map(|(i, j)| (y[i] - y[j]).abs())
                    .sum();
                assert!((ht - direct).abs() <= 1e-9 * direct.max(1.0), "n {n} t {t}");
            }
        }
    }

    #[test]
    fn the_statistic_is_largest_at_the_step() {
        let y = [1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 5.0];
        assert_eq!(segment_split(&y, 1).unwrap().0, 4);
        assert!(segment_split(&y, 4).is_none());
    }
}
