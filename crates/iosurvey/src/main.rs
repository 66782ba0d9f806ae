//! The `iosurvey` binary, wiring only: the cluster it runs in, the command
//! line (the classic spellings rewritten, then clap), the mode, and the
//! exit code (0 ok, 1 run failed, 2 bad usage or refused, 130
//! interrupted).
#![deny(unsafe_code)]

// Every line for stderr in this crate goes through the session's `say`,
// which never panics on a closed stderr (std's macros do); defined before
// the modules so that theirs are these.
macro_rules! eprintln {
    () => {
        ::iosurvey_session::say::text(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        ::iosurvey_session::say::text(format_args!("{}\n", format_args!($($arg)*)))
    };
}
macro_rules! eprint {
    ($($arg:tt)*) => {
        ::iosurvey_session::say::text(format_args!($($arg)*))
    };
}

mod classic;
mod compare_cmd;
mod db_cmd;
mod diskperf_cmd;
mod exit;
mod flags;
mod man_page;
mod matrix_cmd;
mod parallel_cmd;
mod profile_cmd;
mod quick_cmd;
mod report_cmd;
mod run_cmd;
mod run_fio;
mod shell_cmd;
mod small_text;
mod survey_cmd;
mod video_cmd;

use clap::{CommandFactory, FromArgMatches};
use flags::cli::{Cli, Command};
use iosurvey_session::{Cluster, Failure, Outcome};
// The memory budget and the report files' rules live in iosurvey-target;
// the modes reach them by these names.
use iosurvey_target::budget;
use iosurvey_target::output::path as out_path;
use std::process::ExitCode;

fn main() -> ExitCode {
    // First of all: a SIGINT, SIGTERM or SIGHUP from now on is recorded,
    // not fatal. Before, the handler came only once the run's outputs were
    // judged, and a signal in the first milliseconds killed the run (exit
    // 143) with the trash directories of the judged outputs left behind.
    iosurvey_session::stop::install();
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
    let c = cluster.as_ref();
    // `std::env::args` panics on an argument that is not UTF-8 (a path
    // named in another encoding): said in one line instead.
    let args = match utf8_args(std::env::args_os()) {
        Ok(a) => a,
        Err(e) => {
            if c.is_root() {
                eprintln!("iosurvey: {e}");
            }
            return ExitCode::from(2);
        }
    };
    let env = |k: &str| std::env::var(k).ok();
    // Through a link named after a classic tool (`orion -run simple`), its
    // command; with nothing to run, that tool's usage.
    let line = match classic::invoked(&args, &env) {
        classic::Invoked::Line(line) => line,
        classic::Invoked::Usage(text) => {
            if c.is_root() {
                eprint!("{text}");
            }
            return ExitCode::from(2);
        }
    };
    // The classic tools' spellings become flags; the report records the
    // command line as typed.
    let (parsed, taken, fio) = match flags::spellings::rewrite(line, &env, &|f| {
        small_text::read_small_text(std::path::Path::new(f))
    }) {
        Ok(a) => a,
        Err(e) => {
            if c.is_root() {
                eprintln!("iosurvey: {e}");
            }
            return ExitCode::from(2);
        }
    };
    let cli = match documented_command()
        .try_get_matches_from(parsed)
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        // Under MPI every rank parses the same line: rank 0 says what is
        // wrong with it.
        Err(e) if !c.is_root() => return ExitCode::from(if e.use_stderr() { 2 } else { 0 }),
        Err(e) => return exit::clap_error(e),
    };
    let environment = survey_cmd::FromEnvironment {
        line: taken.line(),
        read: taken.read,
    };
    let outcome = run_command(cli.command, &args, c, environment, fio);
    exit::end_run(outcome, c)
}

/// iosurvey's whole command line, each classic tool's spellings in its
/// command's `--help`.
fn documented_command() -> clap::Command {
    classic::documented(Cli::command())
}

/// What `run --fio` read, as `run` takes it.
fn from_job_file(f: flags::spellings::FioRun) -> run_fio::FromJobFile {
    run_fio::FromJobFile {
        targets: f.targets.len(),
        job: iosurvey_model::document::FioJobFile {
            file: f.file,
            sections: f.sections.concat(),
            notes: f.notes,
            text: f.text,
        },
        points: f.sections,
        later: f.later,
    }
}

/// The command line as UTF-8 strings, or which argument is not UTF-8.
fn utf8_args(args: impl Iterator<Item = std::ffi::OsString>) -> Result<Vec<String>, String> {
    args.enumerate()
        .map(|(i, a)| {
            a.into_string().map_err(|a| {
                format!(
                    "argument {i} ({}) is not valid UTF-8; iosurvey takes UTF-8 arguments: give a path whose name is UTF-8 (rename or copy the file)",
                    a.to_string_lossy()
                )
            })
        })
        .collect()
}

/// The command the line names (`quick` when none).
fn run_command(
    command: Option<Command>,
    args: &[String],
    c: &dyn Cluster,
    environment: survey_cmd::FromEnvironment,
    fio: Option<flags::spellings::FioRun>,
) -> Result<Outcome, Failure> {
    if !runs_a_plan(command.as_ref()) {
        iosurvey_session::stop::at_once();
    }
    match command {
        Some(Command::Run(a)) => run_cmd::run(a, args, c, fio.map(from_job_file)),
        Some(Command::Quick(a)) => quick_cmd::quick(a, args, c),
        Some(Command::Diskperf(a)) => diskperf_cmd::diskperf(a, args, c),
        Some(Command::Parallel(a)) => parallel_cmd::parallel(a, args, c),
        Some(Command::Survey(a)) => survey_cmd::survey(a, args, c, environment),
        Some(Command::Matrix(a)) => matrix_cmd::matrix(a, args, c),
        Some(Command::Profile(a)) => profile_cmd::profile(a, args, c),
        Some(Command::Video(a)) => video_cmd::video(a, args, c),
        Some(Command::Report(a)) => report_cmd::report(a),
        Some(Command::Compare(a)) => compare_cmd::compare_runs(a),
        Some(Command::Db(a)) => db_cmd::db(a),
        Some(Command::Completions(a)) => shell_cmd::completions(a, documented_command()),
        Some(Command::Man(a)) => man_page::man(a, documented_command()),
        None => quick_cmd::quick(flags::cli::quick_defaults(), args, c),
    }
}

/// Whether `command` runs a plan through the session, which watches the
/// stop flag; the others never look at it, and a signal ends them at once.
fn runs_a_plan(command: Option<&Command>) -> bool {
    !matches!(
        command,
        Some(
            Command::Report(_)
                | Command::Compare(_)
                | Command::Db(_)
                | Command::Completions(_)
                | Command::Man(_)
        )
    )
}
