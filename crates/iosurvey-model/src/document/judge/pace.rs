//! `rate_not_reached`: a run capped by `--rate-iops` or `--rate` that
//! stayed below its cap (the device, or the workers, could not keep up),
//! so that its figures are read as the device's, not the cap's.

use crate::document::class::ClassReport;
use crate::document::evidence::{Evidence, RateNotReached};
use crate::document::warning::Warning;
use crate::{RateCap, RateUnit};

/// Share of the cap a run must reach not to be warned about: the schedule
/// lets it reach the cap exactly, and the first and last I/Os' times
/// cost it a little.
const REACHED_SHARE: f64 = 0.95;

/// The warning of a job capped at `cap` over `workers` workers whose
/// reads and writes in all are `read` and `write`, if it stayed below its
/// cap.
pub(super) fn rate_not_reached(
    cap: &RateCap,
    workers: u32,
    classes: &[&ClassReport],
) -> Option<Warning> {
    let asked = cap.total(workers);
    // Every direction counts toward the cap: reads, writes and trims.
    let (reached, what) = match cap.unit {
        RateUnit::Iops => (classes.iter().map(|c| c.iops).sum::<f64>(), "IOPS"),
        RateUnit::Bytes => (
            classes.iter().map(|c| c.bytes_per_sec).sum::<f64>(),
            "bytes/s",
        ),
    };
    if reached >= REACHED_SHARE * asked as f64 {
        return None;
    }
    Some(Warning::new(
        Evidence::RateNotReached(RateNotReached {
            unit: cap.unit,
            asked_per_sec: asked,
            reached_per_sec: reached,
        }),
        format!(
            "the run was asked for {asked} {what} in all (--rate{}) and reached {reached:.0}: the device (or the workers) could not keep up, so the figures are what it gives, not the cap; lower the rate, or raise --qd or --workers",
            if cap.unit == RateUnit::Iops { "-iops" } else { "" }
        ),
        "95% of the cap",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(ops: u64, secs: f64) -> ClassReport {
        ClassReport {
            ops,
            bytes: ops * 4096,
            iops: ops as f64 / secs,
            bytes_per_sec: (ops * 4096) as f64 / secs,
            ..ClassReport::idle()
        }
    }

    #[test]
    fn a_cap_not_reached_is_named_and_one_reached_is_not() {
        let cap = RateCap {
            unit: RateUnit::Iops,
            per_second: 250,
            per_worker: true,
        };
        let (read, write) = (class(700, 1.0), class(300, 1.0));
        // 250 per worker over 4 workers: 1000 asked, 1000 reached.
        assert!(rate_not_reached(&cap, 4, &[&read, &write]).is_none());
        let w = rate_not_reached(&cap, 5, &[&read, &write]).unwrap();
        assert_eq!(w.code(), "rate_not_reached");
        assert!(w.message.contains("asked for 1250 IOPS"), "{}", w.message);
        let bytes = RateCap {
            unit: RateUnit::Bytes,
            per_second: 4096 * 1000,
            per_worker: false,
        };
        assert!(rate_not_reached(&bytes, 3, &[&read, &write]).is_none());
        let more = RateCap {
            per_second: 4096 * 1100,
            ..bytes
        };
        assert!(rate_not_reached(&more, 3, &[&read, &write]).is_some());
        // Trims count too: 1000 trims a second reach a cap of 1000 IOPS.
        let trims = class(1000, 1.0);
        let idle = ClassReport::idle();
        assert!(rate_not_reached(&cap, 4, &[&idle, &idle, &trims]).is_none());
    }
}
