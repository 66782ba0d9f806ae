//! The JSON presenter. The layout is described by
//! `schema/run-report.schema.json`; bump [`SCHEMA_VERSION`] on any change
//! that is not a pure addition.

use crate::RunReport;

/// Version of the JSON layout.
pub const SCHEMA_VERSION: u32 = 1;

/// The report as pretty-printed JSON, newline-terminated.
pub fn to_json(report: &RunReport) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("reports always serialise");
    s.push('\n');
    s
}
