//! `iosurvey diskperf` (being written).

use crate::exit::{usage, Failure, Outcome};
use anyhow::anyhow;
use clap::Args;

#[derive(Args, Debug)]
pub struct DiskperfArgs {}

pub fn diskperf(_a: DiskperfArgs, _argv: &[String]) -> Result<Outcome, Failure> {
    usage(anyhow!("iosurvey diskperf is not built yet"))
}
