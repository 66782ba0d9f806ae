//! Every mode's pure `expand` function.

pub mod describe;
pub mod quick;
pub mod run;
