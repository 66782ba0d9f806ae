//! Statistics for iosurvey: latency histograms, per-class counters and
//! non-cumulative interval series.
//!
//! Nothing here knows about I/O. Every type merges exactly and
//! associatively, so results from workers, jobs and (later) MPI ranks can be
//! combined in any grouping and give the same answer.
//!
//! ```
//! use iosurvey_stats::ClassStats;
//! let mut a = ClassStats::new();
//! a.record(0, 4096, 12_000);
//! let mut b = ClassStats::new();
//! b.record(0, 4096, 20_000);
//! a.merge(&b);
//! assert_eq!(a.ops, 2);
//! assert_eq!(a.bytes, 8192);
//! ```
#![deny(unsafe_code)]

mod buckets;
pub mod changepoint;
mod class;
mod cumulative;
mod histogram;
mod series;
pub mod significance;
mod since;

pub use class::{ClassStats, FirstError, SHORT_TRANSFER};
pub use histogram::{Histogram, HistogramData, LatencySummary, PERCENTILES};
pub use series::{IntervalSample, Series};
pub use since::Mark;
