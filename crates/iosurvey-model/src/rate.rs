//! A cap on a job's rate (`run --rate-iops`, `--rate`): I/Os or bytes per
//! second, for the whole job or for each worker (fio's `rate_iops` and
//! `rate` are per job, that is per worker). Plain data, in the plan and
//! in the report's settings alike.

use serde::{Deserialize, Serialize};

/// What a rate cap counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RateUnit {
    /// I/Os per second (`--rate-iops`).
    Iops,
    /// Bytes per second (`--rate`).
    Bytes,
}

/// A cap on the rate: the workers issue their I/Os on a schedule (the
/// n-th of a worker may start at its start plus n over its rate, fio's
/// `rate_process=linear`), never faster; slower when the device cannot
/// keep up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RateCap {
    pub unit: RateUnit,
    /// I/Os or bytes per second (> 0).
    pub per_second: u64,
    /// Each worker's cap (`N/worker`); false: the whole job's, shared
    /// equally by its workers.
    pub per_worker: bool,
}

impl RateCap {
    /// The whole job's cap with `workers` workers, per second.
    pub fn total(&self, workers: u32) -> u64 {
        match self.per_worker {
            true => self.per_second.saturating_mul(u64::from(workers)),
            false => self.per_second,
        }
    }

    /// Each worker's cap with `workers` workers as a fraction
    /// (numerator, denominator) per second: exact, however the total
    /// divides.
    pub fn per_worker_fraction(&self, workers: u32) -> (u64, u64) {
        match self.per_worker {
            true => (self.per_second, 1),
            false => (self.per_second, u64::from(workers.max(1))),
        }
    }
}

/// `500 IOPS in all`, `50000000 bytes/s per worker`: as the text report
/// prints it.
impl std::fmt::Display for RateCap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = match self.unit {
            RateUnit::Iops => "IOPS",
            RateUnit::Bytes => "bytes/s",
        };
        let whose = if self.per_worker {
            "per worker"
        } else {
            "in all"
        };
        write!(f, "{} {unit} {whose}", self.per_second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_total_cap_is_shared_and_a_worker_cap_multiplied() {
        let total = RateCap {
            unit: RateUnit::Iops,
            per_second: 1000,
            per_worker: false,
        };
        assert_eq!(total.total(3), 1000);
        assert_eq!(total.per_worker_fraction(3), (1000, 3));
        assert_eq!(total.to_string(), "1000 IOPS in all");
        let each = RateCap {
            per_worker: true,
            ..total
        };
        assert_eq!(each.total(3), 3000);
        assert_eq!(each.per_worker_fraction(3), (1000, 1));
        assert_eq!(each.to_string(), "1000 IOPS per worker");
    }
}
