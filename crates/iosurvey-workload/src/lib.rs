//! The model every iosurvey mode builds: a [`Plan`] of [`Point`]s, each one
//! [`Job`] of targets, stream classes and bounds, plus the offset patterns
//! the workers draw from and each mode's pure `expand` function.
//!
//! A mode never does I/O: expanding is a pure function, so `--dry-run` can
//! print any plan and tests can check any expansion.
//!
//! ```
//! use iosurvey_workload::{modes::run::{expand, RunSpec}, units::parse_size};
//! let mut spec = RunSpec::new(vec!["/dev/zram1".into()]);
//! spec.bs = parse_size("4k").unwrap();
//! spec.rw = "randread".parse().unwrap();
//! let plan = expand(&spec).unwrap();
//! assert_eq!(plan.points.len(), 1);
//! assert_eq!(plan.points[0].job.streams[0].bs, 4096);
//! ```
#![deny(unsafe_code)]

pub mod array;
pub mod engine_flags;
pub mod memory;
pub mod model;
pub mod modes;
pub mod pattern;
pub mod rate;
pub mod rng;
pub mod skew;
pub mod units;

pub use array::{ArrayMap, ArraySpec, Layout};
pub use engine_flags::EngineFlags;

/// Most I/Os one worker's ring keeps in flight: every mode's bound on its
/// outstanding I/Os, and the runner's on the requests of cut I/Os.
pub const MAX_OUTSTANDING: u64 = 65536;
pub use iosurvey_model::{PointParams, ProfilePosition};
pub use model::{
    frames_dir, Bounds, Fps, FrameJob, FrameLayout, FrameOrder, Job, Mix, Pattern, Plan, Point,
    StreamClass, TargetSpec,
};
