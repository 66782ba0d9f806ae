//! Plain data shared by every iosurvey layer: the [`Plan`] of [`Point`]s,
//! each one [`Job`] of targets, stream classes and bounds; the engine
//! kinds and operations a job names; virtual arrays. A leaf crate: no I/O,
//! no file descriptors, no host probing, only serde.
//!
//! ```
//! use iosurvey_model::{Mix, Op};
//! assert_eq!(Mix::Write.op(0), Op::Write);
//! ```
#![deny(unsafe_code)]

pub mod array;
pub mod bs_split;
pub mod dist;
pub mod document;
pub mod engine;
pub mod host;
pub mod params;
pub mod pattern;
pub mod plan;
pub mod profile;
pub mod rate;
pub mod result;
pub mod rng;
pub mod target;
pub mod units;
pub mod verify;
pub mod video;

pub use array::{ArraySpec, Layout};
pub use bs_split::{BsSplit, SizeReport, SizeShare};
pub use dist::{Dist, DistError};
pub use engine::{EngineFeatures, EngineKind, Op, SqPoll};
pub use host::HostInfo;
pub use params::{PointParams, ProfilePosition};
pub use pattern::Pattern;
pub use plan::{
    frames_dir, Bounds, DataFill, Fps, FrameJob, FrameLayout, FrameOrder, Job, Mix, Plan, Point,
    StreamClass, TargetSpec,
};
pub use rate::{RateCap, RateUnit};
pub use result::{
    CachedPages, CompressionCheck, CpuTime, FrameRecord, FrameStatus, IoFailure, JobResult,
    ReadSample, StreamResult,
};
pub use target::TargetKind;
