//! `--rate-iops N[/worker]` and `--rate SIZE[/worker]` read into a
//! [`RateCap`]: the whole run's cap, or each worker's.

use crate::units::parse_size;
use iosurvey_model::{RateCap, RateUnit};

/// A rate cap that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    #[error("--rate-iops '{0}': give I/Os per second for the whole run (e.g. 500) or for each worker (e.g. 500/worker), greater than zero")]
    Iops(String),
    #[error("--rate '{0}': give bytes per second for the whole run (e.g. 200m, 200MB) or for each worker (e.g. 50m/worker), greater than zero")]
    Bytes(String),
}

/// Reads `s` as a cap in `unit`: a number (I/Os) or a size (bytes) per
/// second, with `/worker` for each worker's.
pub fn parse_rate(s: &str, unit: RateUnit) -> Result<RateCap, RateError> {
    let bad = || match unit {
        RateUnit::Iops => RateError::Iops(s.to_string()),
        RateUnit::Bytes => RateError::Bytes(s.to_string()),
    };
    let t = s.trim();
    let (num, per_worker) = match t.strip_suffix("/worker") {
        Some(n) => (n, true),
        None => (t, false),
    };
    let per_second = match unit {
        RateUnit::Iops => num.parse::<u64>().map_err(|_| bad())?,
        RateUnit::Bytes => parse_size(num).map_err(|_| bad())?,
    };
    if per_second == 0 {
        return Err(bad());
    }
    Ok(RateCap {
        unit,
        per_second,
        per_worker,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_run_and_per_worker_caps_are_read() {
        let c = parse_rate("500", RateUnit::Iops).unwrap();
        assert_eq!((c.per_second, c.per_worker), (500, false));
        let c = parse_rate("250/worker", RateUnit::Iops).unwrap();
        assert_eq!((c.per_second, c.per_worker), (250, true));
        let c = parse_rate("50m/worker", RateUnit::Bytes).unwrap();
        assert_eq!((c.per_second, c.per_worker), (50 << 20, true));
        let c = parse_rate("200MB", RateUnit::Bytes).unwrap();
        assert_eq!((c.per_second, c.unit), (200_000_000, RateUnit::Bytes));
    }

    #[test]
    fn bad_caps_are_refused_by_flag() {
        for s in ["0", "-5", "5k", "500/job", "", "/worker"] {
            assert_eq!(
                parse_rate(s, RateUnit::Iops),
                Err(RateError::Iops(s.into()))
            );
        }
        assert_eq!(
            parse_rate("0m", RateUnit::Bytes),
            Err(RateError::Bytes("0m".into()))
        );
        assert!(parse_rate("fast", RateUnit::Bytes).is_err());
    }
}
