//! Every mode's pure `expand` function.

pub mod describe;
pub mod diskperf;
pub mod matrix;
pub mod parallel;
pub mod profile;
pub mod quick;
pub mod run;
pub mod survey;
pub mod video;
