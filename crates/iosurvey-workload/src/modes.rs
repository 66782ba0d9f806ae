//! Every mode's pure `expand` function.

pub mod describe;
pub mod diskperf;
pub mod parallel;
pub mod quick;
pub mod run;
pub mod survey;
