//! A latency histogram in integer nanoseconds, 3 significant digits from
//! 1 ns to one hour, with the exact smallest and largest values beside the
//! buckets, an exact merge and a lossless encoding.

use crate::buckets::{self, index_of};
use serde::{Deserialize, Serialize};

/// Lowest value the histogram distinguishes, in nanoseconds.
pub const LOWEST_NS: u64 = 1;
/// Highest value the histogram holds, in nanoseconds (one hour). Larger
/// values are clamped to it, and counted in [`Histogram::clamped`].
pub const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept for every value.
pub const SIGFIG: u8 = 3;

/// The percentiles every summary carries.
pub const PERCENTILES: [f64; 6] = [50.0, 90.0, 99.0, 99.9, 99.99, 99.999];

/// Filled buckets an encoding makes room for at first: more than a run of
/// minutes fills.
const ENCODED_ROOM: usize = 4096;

/// A latency histogram. Its buckets (about 264 KiB, HdrHistogram's layout:
/// see [`buckets`]) are allocated at the first value, so the many classes
/// that record nothing (the writes of a read stream, hundreds of survey
/// regions) cost nothing. A histogram rebuilt from its encoding (another
/// MPI rank's) keeps only its non-empty buckets, until a value is recorded
/// into it or it fills: rank 0 holds every region of every rank. The
/// smallest and largest values are kept exactly, not as bucket edges.
#[derive(Clone)]
pub struct Histogram {
    /// Values per bucket; `None` until the first value.
    counts: Option<Box<[u64]>>,
    /// Without `counts`: the non-empty buckets as (index, count),
    /// ascending.
    pub(crate) sparse: Vec<(u32, u64)>,
    /// Values recorded: the sum of `counts`.
    pub(crate) total: u64,
    clamped: u64,
    /// Smallest value recorded, as measured; `u64::MAX` when empty.
    pub(crate) min: u64,
    /// Largest value recorded, as measured (above one hour too); 0 when
    /// empty.
    pub(crate) max: u64,
}

/// Non-empty buckets a histogram keeps as a list before it takes the
/// whole table.
const MAX_SPARSE: usize = 2048;

/// The whole table of buckets, holding the list `sparse` (emptied): at a
/// histogram's first value, or when a list grows.
#[cold]
fn dense(sparse: &mut Vec<(u32, u64)>) -> Box<[u64]> {
    let mut c = vec![0u64; buckets::LEN].into_boxed_slice();
    for (i, n) in std::mem::take(sparse) {
        c[i as usize] = c[i as usize].saturating_add(n);
    }
    c
}

/// Two ascending lists of (bucket, count) added into one.
fn merge_sparse(a: &[(u32, u64)], b: &[(u32, u64)]) -> Vec<(u32, u64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1.saturating_add(b[j].1)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for Histogram {
    fn eq(&self, other: &Self) -> bool {
        // An unallocated histogram equals an allocated empty one.
        self.total == other.total
            && self.clamped == other.clamped
            && self.min == other.min
            && self.max == other.max
            && match (&self.counts, &other.counts) {
                (Some(a), Some(b)) => a == b,
                _ => self.recorded().eq(other.recorded()),
            }
    }
}

impl std::fmt::Debug for Histogram {
    /// The non-empty buckets only, as the encoding lists them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("total", &self.total)
            .field("clamped", &self.clamped)
            .field("min", &self.min)
            .field("max", &self.max)
            .field("counts", &self.to_data().counts)
            .finish()
    }
}

impl Histogram {
    /// An empty histogram covering 1 ns to one hour.
    pub fn new() -> Self {
        Histogram {
            counts: None,
            sparse: Vec::new(),
            total: 0,
            clamped: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Records one value in nanoseconds.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        self.record_n(ns, 1);
    }

    /// Records `n` equal values in nanoseconds at the cost of one: the I/Os
    /// of one batch that are reaped together took the same time. Inline,
    /// and with the bucket a few instructions: two compares for the exact
    /// minimum and maximum, one for the range, two adds.
    #[inline(always)]
    pub fn record_n(&mut self, ns: u64, n: u64) {
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        // One compare: 1..=HIGHEST_NS is the buckets' range.
        let v = if ns.wrapping_sub(LOWEST_NS) < HIGHEST_NS {
            ns
        } else {
            self.out_of_range(ns, n)
        };
        let sparse = &mut self.sparse;
        self.counts.get_or_insert_with(|| dense(sparse))[index_of(v)] += n;
        self.total += n;
    }

    /// A value outside the buckets: clamped to them, and counted (`n`
    /// times) when above one hour.
    #[cold]
    fn out_of_range(&mut self, ns: u64, n: u64) -> u64 {
        if ns > HIGHEST_NS {
            self.clamped += n;
        }
        ns.clamp(LOWEST_NS, HIGHEST_NS)
    }

    /// Adds every count of `other` into `self`. Exact and associative.
    pub fn merge(&mut self, other: &Histogram) {
        if let Some(o) = &other.counts {
            let sparse = &mut self.sparse;
            match &mut self.counts {
                Some(c) => {
                    for (a, b) in c.iter_mut().zip(o.iter()) {
                        *a = a.saturating_add(*b);
                    }
                }
                None if sparse.is_empty() => self.counts = Some(o.clone()),
                None => {
                    let mut c = o.clone();
                    for (i, n) in std::mem::take(sparse) {
                        c[i as usize] = c[i as usize].saturating_add(n);
                    }
                    self.counts = Some(c);
                }
            }
        } else if !other.sparse.is_empty() {
            match &mut self.counts {
                Some(c) => {
                    for &(i, n) in &other.sparse {
                        c[i as usize] = c[i as usize].saturating_add(n);
                    }
                }
                None => {
                    self.sparse = merge_sparse(&self.sparse, &other.sparse);
                    if self.sparse.len() > MAX_SPARSE {
                        // A sum of many: the buckets cost less from here.
                        let d = dense(&mut self.sparse);
                        self.counts = Some(d);
                    }
                }
            }
        }
        self.total = self.total.saturating_add(other.total);
        self.clamped += other.clamped;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Every non-empty bucket, ascending, with its count. Of the whole
    /// table only the buckets from the smallest value's to the largest's
    /// are looked at (a few thousand of its 33,000, mostly).
    pub(crate) fn recorded(&self) -> impl Iterator<Item = (usize, u64)> + Clone + '_ {
        let (lo, hi) = match self.total {
            0 => (0, 0),
            _ => (
                index_of(self.min.clamp(LOWEST_NS, HIGHEST_NS)),
                index_of(self.max.clamp(LOWEST_NS, HIGHEST_NS)) + 1,
            ),
        };
        self.counts
            .iter()
            .flat_map(move |c| c[lo.min(c.len())..hi.min(c.len())].iter().enumerate())
            .map(move |(i, n)| (i + lo, n))
            .filter(|&(_, &n)| n != 0)
            .filter(|&(_, &n)| n != 0)
            .map(|(i, &n)| (i, n))
            .chain(
                self.sparse
                    .iter()
                    .filter(|&&(_, n)| n != 0)
                    .map(|&(i, n)| (i as usize, n)),
            )
    }

    /// For each of `cuts` (bucket indices, ascending), how many values are
    /// in the buckets below it: the table summed slice by slice (a few
    /// thousand instructions for the whole table), not bucket by bucket.
    pub(crate) fn below_cuts(&self, cuts: &[usize]) -> Vec<u64> {
        let mut out = Vec::with_capacity(cuts.len());
        match &self.counts {
            Some(c) => {
                let (mut acc, mut from) = (0u64, 0usize);
                for &k in cuts {
                    let k = k.min(c.len());
                    if k > from {
                        acc += c[from..k].iter().sum::<u64>();
                        from = k;
                    }
                    out.push(acc);
                }
            }
            None => {
                for &k in cuts {
                    let n = self.sparse.iter().filter(|&&(i, _)| (i as usize) < k);
                    out.push(n.map(|&(_, n)| n).sum());
                }
            }
        }
        out
    }

    /// Values that were above one hour and were clamped to it.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// The value at percentile `p` (0..=100), in nanoseconds, as the highest
    /// value equivalent to the bucket that holds it, but never outside the
    /// measured minimum and maximum.
    pub fn percentile(&self, p: f64) -> u64 {
        let mut v = [0];
        self.percentiles_into(self.recorded(), &[p], &mut v);
        v[0]
    }

    /// The rank of percentile `p` (0..=100): how many values are at or
    /// below it, at least one.
    fn rank(&self, p: f64) -> u64 {
        let q = (p / 100.0).min(1.0);
        ((q * self.total as f64).ceil() as u64).max(1)
    }

    /// The values at `percentiles` (in any order) into `out`, in one walk
    /// over the non-empty buckets `filled` (ascending), each as
    /// [`Histogram::percentile`] gives it.
    fn percentiles_into(
        &self,
        filled: impl Iterator<Item = (usize, u64)>,
        percentiles: &[f64],
        out: &mut [u64],
    ) {
        // The rank of each percentile: the values at or below it.
        let mut order: Vec<(u64, usize)> = percentiles
            .iter()
            .enumerate()
            .map(|(k, &p)| (self.rank(p), k))
            .collect();
        order.sort_unstable();
        let mut pending = order.iter().peekable();
        let mut seen = 0u64;
        out.fill(0);
        for (i, n) in filled {
            seen = seen.saturating_add(n);
            while let Some(&(_, k)) = pending.next_if(|&&(r, _)| r <= seen) {
                out[k] = buckets::highest(i);
            }
        }
        for v in out.iter_mut() {
            // max/min, not clamp: a hand-made encoding may hold min > max.
            *v = (*v).max(self.min()).min(self.max());
        }
    }

    /// Smallest recorded value, exactly as measured.
    pub fn min(&self) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        self.min
    }

    /// Largest recorded value, exactly as measured.
    pub fn max(&self) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        self.max
    }

    /// The mean of the buckets `filled`, each taken at its middle, as
    /// HdrHistogram takes it (not held inside the measured values).
    fn bucket_mean(&self, filled: impl Iterator<Item = (usize, u64)>) -> f64 {
        let total = self.total as f64;
        filled.fold(0.0, |sum, (i, n)| {
            sum + buckets::median(i) as f64 * n as f64 / total
        })
    }

    /// Mean of the recorded values, in nanoseconds (from the buckets, so
    /// held inside the measured minimum and maximum).
    pub fn mean(&self) -> f64 {
        self.held_mean(self.recorded())
    }

    fn held_mean(&self, filled: impl Iterator<Item = (usize, u64)>) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let mean = self.bucket_mean(filled);
        mean.max(self.min() as f64).min(self.max() as f64)
    }

    /// Standard deviation of the recorded values, in nanoseconds.
    pub fn stdev(&self) -> f64 {
        self.stdev_of(self.recorded())
    }

    fn stdev_of(&self, filled: impl Iterator<Item = (usize, u64)> + Clone) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let mean = self.bucket_mean(filled.clone());
        let squares = filled.fold(0.0, |sum, (i, n)| {
            let dev = buckets::median(i) as f64 - mean;
            sum + (dev * dev) * n as f64
        });
        (squares / self.total as f64).sqrt()
    }

    /// The summary that reports print: one walk over the buckets for every
    /// figure.
    pub fn summary(&self) -> LatencySummary {
        let mut values = [0; PERCENTILES.len()];
        let (mut mean, mut stdev) = (0.0, 0.0);
        if self.total > 0 {
            // The percentiles' ranks, ascending as PERCENTILES is.
            let total = self.total as f64;
            let ranks = PERCENTILES.map(|p| self.rank(p));
            let mut next = 0;
            let mut seen = 0u64;
            // The mean first, with the percentiles; the deviations from it
            // in a second walk (summed as `bucket_mean` and `stdev_of` do,
            // to the last bit).
            for (i, n) in self.recorded() {
                seen = seen.saturating_add(n);
                while next < ranks.len() && ranks[next] <= seen {
                    values[next] = buckets::highest(i);
                    next += 1;
                }
                mean += buckets::median(i) as f64 * n as f64 / total;
            }
            let squares = self.recorded().fold(0.0, |sum, (i, n)| {
                let dev = buckets::median(i) as f64 - mean;
                sum + (dev * dev) * n as f64
            });
            stdev = (squares / total).sqrt();
            for v in &mut values {
                // max/min, not clamp: a hand-made encoding may hold min > max.
                *v = (*v).max(self.min()).min(self.max());
            }
        }
        LatencySummary {
            min_ns: self.min(),
            mean_ns: mean.max(self.min() as f64).min(self.max() as f64),
            stdev_ns: stdev,
            max_ns: self.max(),
            percentiles_ns: PERCENTILES.into_iter().zip(values).collect(),
        }
    }

    /// The lossless encoding: every non-empty bucket as `[value, count]`,
    /// where `value` is the highest value equivalent to that bucket.
    pub fn to_data(&self) -> HistogramData {
        let filled = self.count() > 0;
        HistogramData {
            lowest_ns: LOWEST_NS,
            highest_ns: HIGHEST_NS,
            significant_digits: SIGFIG,
            clamped: self.clamped,
            min_ns: filled.then_some(self.min),
            max_ns: filled.then_some(self.max),
            counts: {
                // Room for the buckets a long run fills, given back at once
                // (a shrink in place): no copy after copy as it grows.
                let mut counts = Vec::with_capacity(ENCODED_ROOM);
                counts.extend(self.recorded().map(|(i, n)| [buckets::highest(i), n]));
                counts.shrink_to_fit();
                counts
            },
        }
    }

    /// Rebuilds a histogram from its encoding; `to_data` of the result equals
    /// the input. An encoding without `min_ns`/`max_ns` (from before they
    /// were kept) falls back to its lowest and highest buckets.
    pub fn from_data(data: &HistogramData) -> Histogram {
        let mut h = Histogram::new();
        h.sparse.reserve(data.counts.len());
        let (mut lo, mut hi) = (u64::MAX, 0);
        for &[v, n] in &data.counts {
            let v = v.clamp(LOWEST_NS, HIGHEST_NS);
            let i = index_of(v) as u32;
            // Kept sparse: ascending as encoded (appended), a repeated or
            // unordered bucket (a hand-made encoding) put in its place.
            match h.sparse.last() {
                Some(&(last, _)) if last >= i => {
                    match h.sparse.binary_search_by_key(&i, |&(k, _)| k) {
                        Ok(at) => h.sparse[at].1 = h.sparse[at].1.saturating_add(n),
                        Err(at) => h.sparse.insert(at, (i, n)),
                    }
                }
                _ => h.sparse.push((i, n)),
            }
            h.total = h.total.saturating_add(n);
            if n > 0 {
                lo = lo.min(v);
                hi = hi.max(buckets::highest(index_of(v)));
            }
        }
        h.clamped = data.clamped;
        if h.total > 0 {
            h.min = data.min_ns.unwrap_or(lo);
            h.max = data.max_ns.unwrap_or(hi);
        }
        h
    }
}

/// A histogram travels (between MPI ranks) as its lossless encoding.
impl Serialize for Histogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_data().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Histogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        HistogramData::deserialize(d).map(|data| Histogram::from_data(&data))
    }
}

/// The lossless, serialisable form of a [`Histogram`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistogramData {
    pub lowest_ns: u64,
    pub highest_ns: u64,
    pub significant_digits: u8,
    pub clamped: u64,
    /// Smallest value recorded, exactly; `None` when empty.
    #[serde(default)]
    pub min_ns: Option<u64>,
    /// Largest value recorded, exactly; `None` when empty.
    #[serde(default)]
    pub max_ns: Option<u64>,
    /// `[bucket value in ns, count]` for every non-empty bucket, ascending.
    pub counts: Vec<[u64; 2]>,
}

impl HistogramData {
    /// The encoding of an empty histogram, without the room `to_data`
    /// reserves.
    pub fn empty() -> Self {
        HistogramData {
            lowest_ns: LOWEST_NS,
            highest_ns: HIGHEST_NS,
            significant_digits: SIGFIG,
            clamped: 0,
            min_ns: None,
            max_ns: None,
            counts: Vec::new(),
        }
    }
}

/// Latency figures for one class.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencySummary {
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub max_ns: u64,
    /// `(percentile, nanoseconds)`, ascending by percentile.
    pub percentiles_ns: Vec<(f64, u64)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hist(values: &[u64]) -> Histogram {
        let mut h = Histogram::new();
        for &v in values {
            h.record(v);
        }
        h
    }

    #[test]
    fn an_unordered_or_repeated_encoding_reads_as_the_ordered_one() {
        let ordered = hist(&[1_000, 5_000, 5_000, 90_000]).to_data();
        let mut hand = ordered.clone();
        hand.counts.reverse();
        let back = Histogram::from_data(&hand);
        assert_eq!(back.to_data(), ordered);
        let mut split = ordered.clone();
        let five = split.counts[1];
        split.counts[1][1] = 1;
        split.counts.push([five[0], five[1] - 1]);
        assert_eq!(Histogram::from_data(&split).to_data(), ordered);
    }

    #[test]
    fn the_empty_encoding_is_an_empty_histogram_s() {
        assert_eq!(HistogramData::empty(), Histogram::new().to_data());
        let mut h = Histogram::new();
        h.record(1_000);
        assert_ne!(HistogramData::empty(), h.to_data());
    }

    #[test]
    fn three_significant_digits_across_the_range() {
        for &v in &[1u64, 999, 1_234, 98_765, 12_345_678, 3_000_000_000_000] {
            let h = hist(&[v]);
            let got = h.percentile(50.0) as f64;
            assert!((got - v as f64).abs() / v as f64 <= 0.001, "{v} -> {got}");
        }
    }

    #[test]
    fn values_beyond_an_hour_are_clamped_and_counted() {
        let h = hist(&[HIGHEST_NS * 2, 5]);
        assert_eq!(h.count(), 2);
        assert_eq!(h.clamped(), 1);
        assert!(h.max() >= HIGHEST_NS);
    }

    #[test]
    fn an_empty_histogram_allocates_nothing_and_equals_an_emptied_one() {
        let lazy = Histogram::new();
        assert!(lazy.counts.is_none());
        let mut allocated = Histogram::new();
        allocated.merge(&Histogram::from_data(&Histogram::new().to_data()));
        allocated.counts = Some(dense(&mut Vec::new()));
        assert_eq!(lazy, allocated);
        let mut merged = Histogram::new();
        merged.merge(&hist(&[5, 7]));
        assert_eq!(merged, hist(&[5, 7]));
    }

    #[test]
    fn min_and_max_are_the_measured_values_not_bucket_edges() {
        // 86_213 and 86_270 share no edge with their buckets' ends.
        let one = hist(&[86_213]);
        assert_eq!((one.min(), one.max()), (86_213, 86_213));
        assert_eq!(one.percentile(50.0), 86_213);
        assert_eq!(one.mean(), 86_213.0);
        let mut a = hist(&[86_270, 1_234_567]);
        let b = hist(&[86_213, 999_999_999]);
        assert_eq!((a.min(), a.max()), (86_270, 1_234_567));
        a.merge(&b);
        assert_eq!((a.min(), a.max()), (86_213, 999_999_999));
        let s = a.summary();
        assert_eq!((s.min_ns, s.max_ns), (86_213, 999_999_999));
        assert!(s.percentiles_ns.iter().all(|&(_, v)| v <= 999_999_999));
        // Above an hour the buckets clamp, the maximum does not.
        let long = hist(&[HIGHEST_NS + 7]);
        assert_eq!(long.max(), HIGHEST_NS + 7);
        // Kept through the encoding.
        let back = Histogram::from_data(&a.to_data());
        assert_eq!((back.min(), back.max()), (86_213, 999_999_999));
        assert_eq!(back, a);
    }

    #[test]
    fn an_encoding_without_min_and_max_falls_back_to_its_buckets() {
        let mut data = hist(&[1_000, 5_000]).to_data();
        data.min_ns = None;
        data.max_ns = None;
        let h = Histogram::from_data(&data);
        assert_eq!(h.min(), 1_000);
        assert!(h.max() >= 5_000 && h.max() <= 5_005);
    }

    #[test]
    fn a_sum_of_many_decoded_histograms_takes_the_whole_table_once_it_is_long() {
        let mut total = Histogram::new();
        let mut want = Histogram::new();
        for k in 0..3000i32 {
            // Each in a bucket of its own: 0.3% apart, buckets are 0.1% wide
            // at most.
            let h = hist(&[(1_000.0 * 1.003f64.powi(k)) as u64]);
            want.merge(&h);
            total.merge(&Histogram::from_data(&h.to_data()));
            assert_eq!(total.counts.is_some(), k as usize >= MAX_SPARSE, "{k}");
        }
        assert_eq!(total, want);
        assert_eq!(total.count(), 3000);
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let h = Histogram::new();
        assert_eq!(h.percentile(99.0), 0);
        assert_eq!(h.min(), 0);
        assert_eq!(h.max(), 0);
        assert_eq!(h.mean(), 0.0);
    }

    /// The summary and the encoding of `values` (each `(ns, times)`) as
    /// they were when the `hdrhistogram` crate held the buckets.
    fn reference(values: &[(u64, u64)]) -> (LatencySummary, Vec<[u64; 2]>) {
        let mut h =
            hdrhistogram::Histogram::<u64>::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGFIG).unwrap();
        for &(v, n) in values {
            h.record_n(v.clamp(LOWEST_NS, HIGHEST_NS), n).unwrap();
        }
        let min = values.iter().map(|v| v.0).min().unwrap();
        let max = values.iter().map(|v| v.0).max().unwrap();
        let summary = LatencySummary {
            min_ns: min,
            mean_ns: h.mean().max(min as f64).min(max as f64),
            stdev_ns: h.stdev(),
            max_ns: max,
            percentiles_ns: PERCENTILES
                .iter()
                .map(|&p| {
                    (
                        p,
                        h.highest_equivalent(h.value_at_percentile(p))
                            .max(min)
                            .min(max),
                    )
                })
                .collect(),
        };
        let counts = h
            .iter_recorded()
            .map(|v| [v.value_iterated_to(), v.count_at_value()])
            .collect();
        (summary, counts)
    }

    proptest! {
        #[test]
        fn summaries_and_encodings_are_what_hdrhistogram_gave(
            v in proptest::collection::vec((0u64..5_000_000_000_000, 1u64..40), 1..300),
        ) {
            let mut h = Histogram::new();
            for &(ns, n) in &v {
                h.record_n(ns, n);
            }
            let (summary, counts) = reference(&v);
            prop_assert_eq!(h.summary(), summary);
            prop_assert_eq!(h.to_data().counts, counts);
            for (p, ns) in h.summary().percentiles_ns {
                prop_assert_eq!(h.percentile(p), ns);
            }
        }

        #[test]
        fn percentiles_in_any_order_are_each_ones_own(
            v in proptest::collection::vec(1u64..100_000_000, 1..300),
            mut ps in proptest::collection::vec(0.0f64..=100.0, 1..8),
        ) {
            let h = hist(&v);
            ps.push(100.0);
            let mut out = vec![0; ps.len()];
            h.percentiles_into(h.recorded(), &ps, &mut out);
            for (&p, &got) in ps.iter().zip(&out) {
                prop_assert_eq!(got, h.percentile(p));
            }
            prop_assert_eq!(*out.last().unwrap(), h.max());
        }

        #[test]
        fn merge_is_associative_and_commutative(

            a in proptest::collection::vec(1u64..10_000_000_000, 0..200),
            b in proptest::collection::vec(1u64..10_000_000_000, 0..200),
            c in proptest::collection::vec(1u64..10_000_000_000, 0..200),
        ) {
            let (ha, hb, hc) = (hist(&a), hist(&b), hist(&c));
            let mut left = ha.clone();
            left.merge(&hb);
            left.merge(&hc);
            let mut bc = hb.clone();
            bc.merge(&hc);
            let mut right = ha.clone();
            right.merge(&bc);
            let mut swapped = hc.clone();
            swapped.merge(&hb);
            swapped.merge(&ha);
            prop_assert_eq!(&left, &right);
            prop_assert_eq!(&left, &swapped);
            let all: Vec<u64> = a.iter().chain(&b).chain(&c).copied().collect();
            prop_assert_eq!(left.min(), all.iter().copied().min().unwrap_or(0));
            prop_assert_eq!(left.max(), all.iter().copied().max().unwrap_or(0));
            prop_assert_eq!(left, hist(&all));
        }

        #[test]
        fn a_value_recorded_n_times_at_once_is_n_records(
            v in proptest::collection::vec((0u64..5_000_000_000_000, 1u64..40), 0..100),
        ) {
            let mut one_by_one = Histogram::new();
            let mut at_once = Histogram::new();
            for &(ns, n) in &v {
                for _ in 0..n {
                    one_by_one.record(ns);
                }
                at_once.record_n(ns, n);
            }
            prop_assert_eq!(at_once.count(), v.iter().map(|p| p.1).sum::<u64>());
            prop_assert_eq!(&at_once, &one_by_one);
            prop_assert_eq!(at_once.to_data(), one_by_one.to_data());
        }

        #[test]
        fn percentiles_are_monotonic(v in proptest::collection::vec(1u64..100_000_000_000, 1..500)) {
            let h = hist(&v);
            let s = h.summary();
            let mut last = h.min();
            for (_, x) in &s.percentiles_ns {
                prop_assert!(*x >= last);
                last = *x;
            }
            prop_assert!(h.max() >= last);
        }

        #[test]
        fn a_decoded_histogram_merges_and_records_as_the_one_it_came_from(
            a in proptest::collection::vec(1u64..10_000_000_000, 0..200),
            b in proptest::collection::vec(1u64..10_000_000_000, 0..200),
            more in proptest::collection::vec(1u64..10_000_000_000, 0..20),
        ) {
            let (ha, hb) = (hist(&a), hist(&b));
            // Decoded: kept as a list of its non-empty buckets.
            let (sa, sb) = (
                Histogram::from_data(&ha.to_data()),
                Histogram::from_data(&hb.to_data()),
            );
            prop_assert!(sa.counts.is_none());
            let all = hist(&a.iter().chain(&b).copied().collect::<Vec<_>>());
            for (x, y) in [(&sa, &sb), (&sa, &hb), (&ha, &sb), (&ha, &hb)] {
                let mut m = x.clone();
                m.merge(y);
                prop_assert_eq!(&m, &all);
                prop_assert_eq!(m.to_data(), all.to_data());
                prop_assert_eq!(m.summary(), all.summary());
            }
            // A value recorded into a decoded one takes the whole table.
            let mut r = sa.clone();
            let mut want = ha.clone();
            for &v in &more {
                r.record(v);
                want.record(v);
            }
            prop_assert_eq!(&r, &want);
            prop_assert_eq!(r.to_data(), want.to_data());
        }

        #[test]
        fn encoding_is_lossless(v in proptest::collection::vec(1u64..5_000_000_000_000, 0..300)) {
            let h = hist(&v);
            let data = h.to_data();
            let json = serde_json::to_string(&data).unwrap();
            let back: HistogramData = serde_json::from_str(&json).unwrap();
            let h2 = Histogram::from_data(&back);
            prop_assert_eq!(&h, &h2);
            prop_assert_eq!(h2.min(), v.iter().copied().min().unwrap_or(0));
            prop_assert_eq!(h2.max(), v.iter().copied().max().unwrap_or(0));
            prop_assert_eq!(h2.to_data(), data);
        }
    }
}
