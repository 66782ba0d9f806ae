//! Presenters for iosurvey: pure functions from a saved run (the document,
//! [`iosurvey_model::document::RunReport`]) to bytes (text, each classic
//! tool's layout, CSV, JSON, HTML) and the comparison of two runs.
//!
//! Presenters never do I/O and never look at anything but the report, so the
//! same report always prints the same way, and saved reports can be
//! re-presented or merged later.
#![deny(unsafe_code)]

mod card;
pub mod compare;
mod csv_table;
pub mod diskperf;
pub mod html;
mod json;
pub mod matrix;
pub mod parallel;
pub mod profile;
mod ranks;
pub mod run_sweep;
mod summary;
pub mod survey;
mod text;
pub mod video;
mod visible;
mod warnings;

pub use card::render_card;
pub use csv_table::render_csv;
pub use html::{embedded_json, render_html};
pub use json::{
    compare_json_schema, from_json, json_head, json_point, json_schema, to_json,
    FIRST_SCHEMA_VERSION, JSON_TAIL, MODES, SCHEMA_VERSION,
};
pub use ranks::render_ranks;
pub use summary::render_text;
pub use text::{format_ns, format_rate, TextOptions};
pub use visible::{terminal_text, visible};
pub use warnings::judge_scaling;
