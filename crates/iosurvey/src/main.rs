//! The `iosurvey` binary: parse the command line, run the mode, map the
//! outcome to an exit code (0 ok, 1 run failed, 2 bad usage or refused,
//! 130 interrupted).
#![deny(unsafe_code)]

// Every line for stderr in this crate goes through `say`, which never
// panics on a closed stderr (std's macros do); defined before the modules
// so that theirs are these.
macro_rules! eprintln {
    () => {
        $crate::say::text(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::say::text(format_args!("{}\n", format_args!($($arg)*)))
    };
}
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::say::text(format_args!($($arg)*))
    };
}

mod budget;
mod cli;
mod compare_cmd;
mod diskperf_cmd;
mod execute;
mod exit;
mod getopt;
mod matrix_cmd;
mod out_file;
mod out_path;
mod out_symlinks;
mod output;
mod parallel_cmd;
mod presenter;
mod profile_cmd;
mod progress;
mod quick_cmd;
mod report_cmd;
mod run_cmd;
mod say;
mod shell_cmd;
mod survey_cmd;
mod targets;
mod tuning;
mod video_cmd;

use clap::Parser;
use exit::Failure;
use std::process::ExitCode;

fn main() -> ExitCode {
    // The classic tools' own spellings (ORION's `-run advanced`, IRIX
    // diskperf's `-W -r4k`, frametest's `-w 2k -n 100`, sgpdd-survey's
    // `scsidevs=... size=8192`) become flags for parsing; the report
    // records the command line as typed.
    let args: Vec<String> = std::env::args().collect();
    // Under mpirun: MPI up for the whole run (finalised when this drops),
    // or a refusal from a build without it.
    let cluster = match iosurvey_session::start() {
        Ok(c) => c,
        Err(e) => {
            // Every copy refuses; the first says why.
            if iosurvey_session::launched_rank() == 0 {
                eprintln!("iosurvey: {e}");
            }
            return ExitCode::from(2);
        }
    };
    let spelled = diskperf_cmd::irix_spellings(matrix_cmd::orion_spellings(args.clone()))
        .and_then(video_cmd::frametest_spellings)
        .and_then(|a| Ok(survey_cmd::sgpdd_variables(a, &|k| std::env::var(k).ok())?.0))
        .map(cli::join_negative_values)
        .and_then(|a| matrix_cmd::unknown_orion_option(&a).map_or(Ok(a), Err));
    let parsed = match spelled {
        Ok(a) => a,
        Err(e) => {
            if cluster.is_root() {
                eprintln!("iosurvey: {e}");
            }
            return ExitCode::from(2);
        }
    };
    let cli = match cli::Cli::try_parse_from(parsed) {
        Ok(c) => c,
        // Under MPI every rank parses the same line: rank 0 says what is
        // wrong with it.
        Err(e) if !cluster.is_root() => return ExitCode::from(if e.use_stderr() { 2 } else { 0 }),
        Err(e) => return exit::clap_error(e),
    };
    let c: &dyn iosurvey_session::Cluster = cluster.as_ref();
    let outcome = match cli.command {
        Some(cli::Command::Run(a)) => run_cmd::run(a, &args, c),
        Some(cli::Command::Quick(a)) => quick_cmd::quick(a, &args, c),
        Some(cli::Command::Diskperf(a)) => diskperf_cmd::diskperf(a, &args, c),
        Some(cli::Command::Parallel(a)) => parallel_cmd::parallel(a, &args, c),
        Some(cli::Command::Survey(a)) => survey_cmd::survey(a, &args, c),
        Some(cli::Command::Matrix(a)) => matrix_cmd::matrix(a, &args, c),
        Some(cli::Command::Profile(a)) => profile_cmd::profile(a, &args, c),
        Some(cli::Command::Video(a)) => video_cmd::video(a, &args, c),
        Some(cli::Command::Report(a)) => report_cmd::report(a),
        Some(cli::Command::Compare(a)) => compare_cmd::compare_runs(a),
        Some(cli::Command::Completions(a)) => shell_cmd::completions(a),
        Some(cli::Command::Man(a)) => shell_cmd::man(a),
        None => quick_cmd::quick(quick_cmd::QuickArgs::defaults(), &args, c),
    };
    let say = |e: &anyhow::Error| {
        // Under MPI, rank 0 prints every rank's failure; the others are
        // silent.
        let text = format!("{e:#}");
        if text != iosurvey_session::SILENT {
            eprintln!("iosurvey: {text}");
        }
    };
    if let (Err(f), true) = (&outcome, c.distributed()) {
        if !c.was_agreed() {
            // One rank failed alone: the others would wait for it in a
            // collective. It says why, and every rank ends.
            let v = exit::verdict(f);
            c.end_alone(v.code, &v.text);
        }
    }
    // The trash directories made ahead, empty by now, go.
    iosurvey_run::guard::trash::release_reserved();
    match outcome {
        Ok(exit::Outcome::Ok) if exit::anything_left_behind() => ExitCode::from(1),
        Ok(code) => code.into(),
        // A failure every rank reached together: rank 0 says it (each
        // rank's own refusals among them), the others end silently.
        Err(f) if !c.is_root() => ExitCode::from(exit::verdict(&f).code),
        Err(Failure::Usage(e)) => {
            say(&e);
            ExitCode::from(2)
        }
        Err(Failure::Run(e)) => {
            say(&e);
            ExitCode::from(1)
        }
        Err(Failure::Interrupted(e)) => {
            say(&e);
            ExitCode::from(130)
        }
    }
}
