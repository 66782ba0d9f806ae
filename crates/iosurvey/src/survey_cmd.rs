//! `iosurvey survey` (being written).

use crate::exit::{usage, Failure, Outcome};
use anyhow::anyhow;
use clap::Args;

#[derive(Args, Debug)]
pub struct SurveyArgs {}

pub fn survey(_a: SurveyArgs, _argv: &[String]) -> Result<Outcome, Failure> {
    usage(anyhow!("iosurvey survey is not built yet"))
}
