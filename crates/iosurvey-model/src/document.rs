//! The saved document of a run (`RunReport`): what ran, where, and what it
//! measured, in the plan's own types. Raw counts in bytes and nanoseconds,
//! lossless histograms, a few derived rates, and the warnings judged when
//! each point was built. Presenters (text, CSV, HTML, compare) only read it.

mod class;
mod defaults;
pub mod errno;
pub mod evidence;
mod fps;
pub mod frames;
mod from_result;
pub mod invocation;
mod judge;
pub mod modes;
mod mpi;
mod point;
mod run;
mod totals;
mod warning;

pub use class::{
    ArrayReport, ClassReport, ErrorCount, LatencyReport, Percentile, Rw, StreamReport, StreamTotals,
};
pub use errno::{errno_name, failure_text};
pub use evidence::Evidence;
pub use frames::{FramesLayout, FramesReport, FramesSummary, WindowSums};
pub use modes::{Cache, DiskperfSettings, MatrixSettings, QuickSettings};
pub use mpi::{PointWindows, RankPoint, Window};
pub use point::{
    CompressionReport, DeviceReport, FailureReport, PointReport, Settings, StreamDetail,
    TargetReport,
};
pub use run::{FioJobFile, RankReport, RunReport, ToolInfo, COMMIT};
pub use warning::Warning;
