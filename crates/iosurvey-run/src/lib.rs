//! Running iosurvey's Jobs on targets `iosurvey-target` opened: spawning
//! workers that drive an engine, merging what they measured into a
//! [`JobResult`], and the verify pass.
//!
//! A plan runs one Point at a time. Workers are started at one barrier, stop
//! at the job's bound, at a stop signal or at the first failed I/O, and
//! publish live totals that an [`Observer`] sees about ten times a second.
#![deny(unsafe_code)]

mod alignment;
mod clock;
mod compression;
mod error;
#[cfg(test)]
mod fake_engine;
pub mod host;
pub mod intervals;
pub mod live;
pub mod observer;
pub mod result;
pub mod runner;
mod sample;
mod verify;
pub mod verify_state;
mod worker;

pub use error::Aligned;
pub use error::RunError;
pub use host::{HostInfo, HostProbe};
pub use intervals::IntervalRow;
pub use live::{LiveClass, LiveSnapshot, LIVE_BOUNDS_NS};
pub use observer::{NoObserver, Observer, Progress};
pub use result::{CpuTime, FrameRecord, FrameStatus, IoFailure, JobResult, StreamResult};
pub use runner::{run_point, validate};
pub use worker::now_ns;
