//! Every mode's pure `expand` function.

pub mod run;
