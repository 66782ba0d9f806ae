//! `iosurvey matrix` (being written).

use crate::exit::{usage, Failure, Outcome};
use anyhow::anyhow;
use clap::Args;

#[derive(Args, Debug)]
pub struct MatrixArgs {}

/// Rewrites ORION's single-dash spellings into iosurvey's flags.
pub fn orion_spellings(args: Vec<String>) -> Vec<String> {
    args
}

pub fn matrix(_a: MatrixArgs, _argv: &[String]) -> Result<Outcome, Failure> {
    usage(anyhow!("iosurvey matrix is not built yet"))
}
