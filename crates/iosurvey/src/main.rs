//! The `iosurvey` binary: parse the command line, run the mode, map the
//! outcome to an exit code (0 ok, 1 run failed, 2 bad usage or refused,
//! 130 interrupted).
#![deny(unsafe_code)]

mod cli;
mod diskperf_cmd;
mod execute;
mod exit;
mod matrix_cmd;
mod out_path;
mod output;
mod parallel_cmd;
mod profile_cmd;
mod progress;
mod quick_cmd;
mod run_cmd;
mod survey_cmd;
mod targets;
mod tuning;
mod video_cmd;

use clap::Parser;
use exit::Failure;
use std::process::ExitCode;

fn main() -> ExitCode {
    // ORION's own spellings (`-run advanced -num_disks 24`) become flags
    // for parsing; the report records the command line as typed.
    let args: Vec<String> = std::env::args().collect();
    let cli = match cli::Cli::try_parse_from(matrix_cmd::orion_spellings(args.clone())) {
        Ok(c) => c,
        Err(e) => return exit::clap_error(e),
    };
    let outcome = match cli.command {
        Some(cli::Command::Run(a)) => run_cmd::run(a, &args),
        Some(cli::Command::Quick(a)) => quick_cmd::quick(a, &args),
        Some(cli::Command::Diskperf(a)) => diskperf_cmd::diskperf(a, &args),
        Some(cli::Command::Parallel(a)) => parallel_cmd::parallel(a, &args),
        Some(cli::Command::Survey(a)) => survey_cmd::survey(a, &args),
        Some(cli::Command::Matrix(a)) => matrix_cmd::matrix(a, &args),
        Some(cli::Command::Profile(a)) => profile_cmd::profile(a, &args),
        Some(cli::Command::Video(a)) => video_cmd::video(a, &args),
        None => quick_cmd::quick(quick_cmd::QuickArgs::defaults(), &args),
    };
    match outcome {
        Ok(code) => code.into(),
        Err(Failure::Usage(e)) => {
            eprintln!("iosurvey: {e:#}");
            ExitCode::from(2)
        }
        Err(Failure::Run(e)) => {
            eprintln!("iosurvey: {e:#}");
            ExitCode::from(1)
        }
        Err(Failure::Interrupted(e)) => {
            eprintln!("iosurvey: {e:#}");
            ExitCode::from(130)
        }
    }
}
