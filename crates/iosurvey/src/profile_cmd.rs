//! `iosurvey profile` (being written).

use crate::exit::{usage, Failure, Outcome};
use anyhow::anyhow;
use clap::Args;

#[derive(Args, Debug)]
pub struct ProfileArgs {}

pub fn profile(_a: ProfileArgs, _argv: &[String]) -> Result<Outcome, Failure> {
    usage(anyhow!("iosurvey profile is not built yet"))
}
