//! The report crate's tests, in one test binary: every presenter from fixed
//! reports (no I/O), as snapshots of the text layouts, CSV, HTML whose SVG
//! parses, the schema the types generate, and `compare`'s verdicts.

mod fixtures;

mod compare;
mod diskperf;
mod html_diskperf_parallel_survey;
mod html_fit;
mod html_matrix_profile_video;
mod html_one_workload;
mod html_quick_card;
mod json_layout;
mod matrix;
mod parallel;
mod profile;
mod ranks;
mod run_text_and_json;
mod schema;
mod survey;
mod video;
