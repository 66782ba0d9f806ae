//! Reports for iosurvey: a serialisable [`RunReport`] built from what ran,
//! and pure presenters from it to bytes (text, JSON).
//!
//! Presenters never do I/O and never look at anything but the report, so the
//! same report always prints the same way, and saved reports can be
//! re-presented or merged later.
#![deny(unsafe_code)]

mod card;
pub mod compare;
mod csv_table;
pub mod diskperf;
mod errno;
pub mod html;
mod json;
pub mod matrix;
mod model;
pub mod parallel;
pub mod profile;
mod ranks;
pub mod survey;
mod text;
pub mod video;
mod visible;
mod warnings;

pub use card::render_card;
pub use csv_table::render_csv;
pub use errno::{errno_name, failure_text};
pub use html::{embedded_json, render_html};
pub use json::{json_schema, to_json, FIRST_SCHEMA_VERSION, MODES, SCHEMA_VERSION};
pub use model::{
    ArrayReport, ClassReport, CompressionReport, ErrorCount, FailureReport, FramesReport,
    LatencyReport, Percentile, PointReport, PointWindows, RankPoint, RankReport, RunReport,
    Settings, StreamReport, StreamTotals, TargetReport, ToolInfo, Window, COMMIT,
};
pub use ranks::render_ranks;
pub use text::{format_ns, format_rate, render_text, TextOptions};
pub use visible::{terminal_text, visible};
pub use warnings::{judge_scaling, Warning};
