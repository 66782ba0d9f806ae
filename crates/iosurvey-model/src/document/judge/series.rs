//! The warnings read from a point's interval series: `too_short` (too
//! little of it to judge), `unstable` (it varies more than counting
//! explains) and `write_cache_collapse` (a fast phase, then a cliff to a
//! slow one).

use crate::document::class::ClassReport;
use crate::document::evidence::*;
use crate::document::warning::Warning;
use crate::Op;

/// Fewest whole intervals, and least measured time, for a rate to be
/// judged steady: a short `--interval` does not make a short run long.
const MIN_INTERVALS: usize = 5;
const MIN_MEASURED_NS: u64 = 5_000_000_000;
/// Largest coefficient of variation of the interval rates.
const MAX_CV: f64 = 0.20;
/// Intervals of few I/Os vary by counting alone (as a Poisson count, by
/// about 1/sqrt(n)): the variation must also be more than counting gives,
/// by the index of dispersion of the I/Os per interval, at this
/// confidence and its normal quantile.
const DISPERSION_CONFIDENCE: f64 = 0.999;
const Z_999: f64 = 3.09;
/// Fewest intervals of a write cache's fast phase (the level judged
/// against) and of the slow phase after it (that it stayed).
const FAST_INTERVALS: usize = 3;
const SLOW_INTERVALS: usize = 2;
/// The share of the fast phase's rate under which the rate has collapsed.
const COLLAPSE_SHARE: f64 = 0.70;

/// Bytes per second of each whole interval of `c`'s series.
fn interval_rates(c: &ClassReport, interval_ns: u64) -> Vec<f64> {
    let whole = if c.series_last_ns >= interval_ns {
        c.series.len()
    } else {
        c.series.len().saturating_sub(1)
    };
    c.series[..whole]
        .iter()
        .map(|s| s.bytes as f64 * 1e9 / interval_ns as f64)
        .collect()
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The largest index of dispersion (variance over mean) of `k` Poisson
/// counts at [`DISPERSION_CONFIDENCE`]: the chi-square quantile with
/// `k - 1` degrees of freedom over `k - 1` (Wilson and Hilferty's cube).
fn dispersion_limit(k: usize) -> f64 {
    let d = (k.max(2) - 1) as f64;
    let a = 2.0 / (9.0 * d);
    (1.0 - a + Z_999 * a.sqrt()).powi(3)
}

/// `too_short` or `unstable` for class `op`, when it moved anything.
pub(super) fn rate_checks(op: Op, c: &ClassReport, interval_ns: u64) -> Option<Warning> {
    if c.ops == 0 || interval_ns == 0 {
        return None;
    }
    let rates = interval_rates(c, interval_ns);
    let measured_ns = rates.len() as u64 * interval_ns;
    if rates.len() < MIN_INTERVALS || measured_ns < MIN_MEASURED_NS {
        return Some(Warning::new(
            Evidence::TooShort(TooShort {
                op,
                intervals: rates.len() as u64,
                interval_ns,
                measured_ns,
            }),
            format!(
                "the {op}s ran for {} whole intervals of {} ms ({:.1} s): too short to tell a steady rate from a burst, whatever the interval; run longer (--time)",
                rates.len(),
                interval_ns / 1_000_000,
                measured_ns as f64 / 1e9
            ),
            "at least 5 whole intervals and 5 s measured",
        ));
    }
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / rates.len() as f64;
    let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
    // Few I/Os per interval vary by counting alone (a disk's few writes of
    // a 95% read mix, 128 MiB blocks); a stall does not (its intervals
    // hold none while the others hold many).
    let whole = &c.series[..rates.len()];
    let ops: Vec<f64> = whole.iter().map(|s| s.ops as f64).collect();
    let ops_mean = ops.iter().sum::<f64>() / ops.len() as f64;
    let ops_var = ops.iter().map(|o| (o - ops_mean).powi(2)).sum::<f64>() / (ops.len() - 1) as f64;
    let dispersion = if ops_mean > 0.0 {
        ops_var / ops_mean
    } else {
        0.0
    };
    let limit = dispersion_limit(ops.len());
    let stalled = whole.iter().filter(|s| s.ops == 0).count();
    (cv > MAX_CV && dispersion > limit).then(|| {
        Warning::new(
            Evidence::Unstable(Unstable {
                op,
                cv: round3(cv),
                intervals: rates.len() as u64,
                stalled_intervals: stalled as u64,
                mean_bytes_per_sec: mean.round(),
                ops_per_interval: round3(ops_mean),
                dispersion: round3(dispersion),
                dispersion_limit: round3(limit),
                confidence: DISPERSION_CONFIDENCE,
            }),
            format!(
                "the {op} rate varied from interval to interval by {:.0}% (coefficient of variation), more than counting {:.0} I/Os per interval explains{}: the mean hides a changing device (caches filling, garbage collection, throttling, stalls) or a disturbed host; look at the series",
                cv * 100.0,
                ops_mean,
                match stalled {
                    0 => String::new(),
                    n => format!(", and {n} of {} intervals completed no I/O", rates.len()),
                }
            ),
            "a coefficient of variation of at most 20%, or one counting explains (an index of dispersion of the I/Os per interval under its Poisson limit at 99.9%)",
        )
    })
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn median(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The squared error of two levels fitted to `rates`, split at `at`.
fn step_error(rates: &[f64], at: usize) -> f64 {
    let err = |x: &[f64]| {
        let m = mean(x);
        x.iter().map(|r| (r - m).powi(2)).sum::<f64>()
    };
    err(&rates[..at]) + err(&rates[at..])
}

/// A write cache's fall, found in the interval rates of a series.
#[derive(Debug, PartialEq)]
struct Fall {
    /// The rates of the fast and the slow phase (their medians).
    fast: f64,
    slow: f64,
    /// Whole intervals of each.
    fast_intervals: usize,
    slow_intervals: usize,
    /// Intervals before the one the fall happened in, and the share of
    /// that interval still at the fast rate.
    before: usize,
    share: f64,
}

/// The fall in `rates` (bytes per second per interval), if there is one: the
/// step that fits the series best (two levels, least squares) has a slow
/// level under 70% of the fast one; the fall takes at most one interval on
/// either side of the step (a cliff, as a full cache makes, not a slope,
/// as a disk's zones make across its surface: one of the two intervals
/// beyond those is still near the fast level and one already near the
/// slow one); and every later interval stays below the middle of the two
/// levels.
fn find_fall(rates: &[f64]) -> Option<Fall> {
    let n = rates.len();
    if n < FAST_INTERVALS + SLOW_INTERVALS {
        return None;
    }
    let at = (FAST_INTERVALS..=n - SLOW_INTERVALS)
        .min_by(|&a, &b| step_error(rates, a).total_cmp(&step_error(rates, b)))?;
    let (fast, slow) = (median(&rates[..at]), median(&rates[at..]));
    if fast <= 0.0 || slow >= COLLAPSE_SHARE * fast {
        return None;
    }
    let upper = slow + 0.75 * (fast - slow);
    let lower = slow + 0.25 * (fast - slow);
    let middle = (fast + slow) / 2.0;
    // Either side of the step, leaving out the interval next to it (the
    // fall may be inside it), the nearer of the two intervals after that is
    // still within 15% of the fast level, and already within 15% of the
    // slow one: one dip of a busy host does not hide a cliff, and a slope
    // loses more than that over three intervals.
    let near_fast = slow + 0.85 * (fast - slow);
    let near_slow = slow + 0.15 * (fast - slow);
    let before_step = rates[at.saturating_sub(3)..at - 1]
        .iter()
        .copied()
        .fold(f64::MIN, f64::max);
    let after_step = &rates[(at + 1).min(n)..(at + 3).min(n)];
    let cliff = before_step >= near_fast
        && after_step.iter().copied().fold(f64::MAX, f64::min) <= near_slow;
    let stayed = rates[at + 1..].iter().all(|&r| r < middle);
    if !(cliff && stayed) {
        return None;
    }
    // The interval the fall happened in: the first slow one if it is above
    // the slow level, else the last fast one if it is below the fast level.
    let before = if rates[at] > lower {
        at
    } else if rates[at - 1] < upper {
        at - 1
    } else {
        at
    };
    if before < FAST_INTERVALS {
        return None;
    }
    let share = ((rates[before] - slow) / (fast - slow)).clamp(0.0, 1.0);
    Some(Fall {
        fast,
        slow,
        fast_intervals: at,
        slow_intervals: n - at,
        before,
        share,
    })
}

/// `write_cache_collapse`: the write rate fell from a fast phase of at
/// least 3 intervals to under 70% of it, at once, and stayed there (see
/// [`find_fall`]). The knee, the bytes written before the fall (those of
/// the interval it happened in counted at the fast rate for the share of
/// it the rate says), is the size of the cache that absorbed the start (an
/// SSD's SLC cache). Judged on any device: a disk's zones make a slope, not
/// a cliff, and a loop device's rotational flag is only copied.
pub(super) fn collapse(c: &ClassReport, interval_ns: u64) -> Option<Warning> {
    let rates = interval_rates(c, interval_ns);
    let f = find_fall(&rates)?;
    let written: u64 = c.series[..f.before].iter().map(|s| s.bytes).sum();
    let knee = written + (f.share * f.fast * interval_ns as f64 / 1e9) as u64;
    Some(Warning::new(
        Evidence::WriteCacheCollapse(WriteCacheCollapse {
            start_bytes_per_sec: f.fast.round(),
            after_bytes_per_sec: f.slow.round(),
            knee_bytes: knee,
            knee_gb: (knee as f64 / 1e7).round() / 100.0,
            fast_intervals: f.fast_intervals as u64,
            slow_intervals: f.slow_intervals as u64,
        }),
        format!(
            "the write rate fell from {:.0} MB/s to {:.0} MB/s after {:.2} GB written, and stayed there: a write cache (an SSD's SLC cache, a controller's) absorbed the first {:.2} GB; the sustained rate is the lower one",
            f.fast / 1e6,
            f.slow / 1e6,
            knee as f64 / 1e9,
            knee as f64 / 1e9
        ),
        "the rate under 70% of its fast phase (at least 3 intervals), falling within an interval of the step and staying below the middle of the two rates",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dispersion_limit_is_the_chi_square_quantile() {
        // chi-square 0.999 quantiles: 27.88 at 9 degrees, 58.30 at 29.
        assert!((dispersion_limit(10) * 9.0 - 27.88).abs() < 0.3);
        assert!((dispersion_limit(30) * 29.0 - 58.30).abs() < 0.3);
    }

    #[test]
    fn a_cliff_is_a_fall_at_its_interval_and_a_dip_before_it_does_not_move_it() {
        // 400 MB/s for 8 intervals, a quarter of the ninth, then 20 MB/s.
        let mut r = vec![400.0; 8];
        r.push(0.25 * 400.0 + 0.75 * 20.0);
        r.extend([20.0; 8]);
        let f = find_fall(&r).expect("a cliff");
        assert_eq!((f.fast, f.slow, f.before), (400.0, 20.0, 8));
        assert!((f.share - 0.25).abs() < 1e-9, "{f:?}");
        // A dip in the fast phase (a busy host) is not the knee, nor does
        // one just before the step hide the cliff.
        r[3] = 150.0;
        let f = find_fall(&r).expect("a cliff");
        assert_eq!((f.before, f.fast_intervals), (8, 8), "{f:?}");
        r[6] = 60.0;
        let f = find_fall(&r).expect("a cliff after a dip");
        assert_eq!(f.before, 8, "{f:?}");
    }

    #[test]
    fn a_slope_a_short_fall_and_a_recovery_are_no_collapse() {
        // A disk's zones: 100 down to 40 over 20 intervals.
        let slope: Vec<f64> = (0..20).map(|i| 100.0 - 3.0 * f64::from(i)).collect();
        assert_eq!(find_fall(&slope), None);
        // Fast for 2 intervals only: no level to judge against.
        assert_eq!(find_fall(&[400.0, 400.0, 20.0, 20.0, 20.0, 20.0]), None);
        // Back to fast after the fall: it did not stay.
        let back = [400.0, 400.0, 400.0, 20.0, 20.0, 20.0, 20.0, 390.0];
        assert_eq!(find_fall(&back), None);
        // Steady: nothing.
        assert_eq!(find_fall(&[400.0; 10]), None);
    }
}
