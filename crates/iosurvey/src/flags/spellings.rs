//! The classic tools' own spellings, rewritten into iosurvey's flags
//! before clap parses the line: ORION's `-run advanced`, IRIX diskperf's
//! `-W -r4k`, frametest's `-w 2k -n 100`, sgpdd-survey's environment
//! (`scsidevs=... size=8192`). The report records the line as typed.

pub mod frametest;
mod getopt;
pub mod irix;
pub mod orion;
pub mod sgpdd_env;

pub use orion::orion_command_line;
pub use sgpdd_env::{sgpdd_variables, Taken};

/// `args` (the command line as typed) as clap is to parse it, with
/// sgpdd-survey's variables read from `env` (what was taken, for the
/// survey's report); or the one line that says what is wrong.
pub fn rewrite(
    args: Vec<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Vec<String>, Taken), String> {
    let args = irix::irix_spellings(orion::orion_spellings(args))?;
    let args = frametest::frametest_spellings(args)?;
    let (args, taken) = sgpdd_variables(args, env)?;
    let args = crate::flags::common::join_negative_values(args);
    match orion::unknown_orion_option(&args) {
        Some(e) => Err(e),
        None => Ok((args, taken)),
    }
}
