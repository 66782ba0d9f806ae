//! The classic tools' own spellings, rewritten into iosurvey's flags
//! before clap parses the line: ORION's `-run advanced`, IRIX diskperf's
//! `-W -r4k`, frametest's `-w 2k -n 100`, sgpdd-survey's environment
//! (`scsidevs=... size=8192`), and fio's on `run`: its option names
//! (`--iodepth=32`) and its job files (`--fio JOB.fio`). The report
//! records the line as typed.

mod fio_file;
mod fio_job;
mod fio_jobfile;
mod fio_names;
mod fio_option;
mod fio_points;
mod fio_units;
pub mod frametest;
mod getopt;
pub mod irix;
pub mod orion;
pub mod sgpdd_env;

pub use fio_jobfile::FioRun;
pub use orion::orion_command_line;
pub use sgpdd_env::{sgpdd_variables, Taken};

/// `args` (the command line as typed) as clap is to parse it, with
/// sgpdd-survey's variables read from `env` (what was taken, for the
/// survey's report) and a fio job file read by `read` (what ran, for the
/// run's report); or the one line that says what is wrong.
pub fn rewrite(
    args: Vec<String>,
    env: &dyn Fn(&str) -> Option<String>,
    read: &dyn Fn(&str) -> std::io::Result<String>,
) -> Result<(Vec<String>, Taken, Option<FioRun>), String> {
    let args = irix::irix_spellings(orion::orion_spellings(args))?;
    let args = frametest::frametest_spellings(args)?;
    let (args, taken) = sgpdd_variables(args, env)?;
    let args = fio_names::fio_names(args)?;
    let (args, fio) = fio_jobfile::fio_job_file(args, read)?;
    let args = crate::flags::common::join_negative_values(args);
    match orion::unknown_orion_option(&args) {
        Some(e) => Err(e),
        None => Ok((args, taken, fio)),
    }
}
