//! Every mode's pure `expand` function.

pub mod quick;
pub mod run;
