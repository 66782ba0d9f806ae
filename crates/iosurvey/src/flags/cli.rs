//! The command line (clap derive): iosurvey's modes, each with its own
//! flags. Nothing else in iosurvey parses it; flags are validated into a
//! Plan in each command's module.

use clap::{Parser, Subcommand};

pub const EXIT_CODES: &str =
    "Exit codes: 0 ok, 1 run failed (I/O errors), 2 bad usage or refused, 130 interrupted.";

/// `iosurvey --version`: the release and the commit it was built from.
pub static VERSION: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| match iosurvey_model::document::COMMIT {
        "" => format!(
            "{} (not built from a git checkout)",
            env!("CARGO_PKG_VERSION")
        ),
        commit => format!("{} (commit {commit})", env!("CARGO_PKG_VERSION")),
    });

#[derive(Parser, Debug)]
#[command(
    name = "iosurvey",
    version = VERSION.as_str(),
    about = "Storage surveys and fio-style workloads: what your storage really does.",
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// With no command, `iosurvey` runs `quick` on the current directory.
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one fio-style workload on files or block devices.
    #[command(after_help = EXIT_CODES)]
    Run(crate::run_cmd::RunArgs),
    /// A CrystalDiskMark-style card for the storage under DIR (the default command).
    #[command(after_help = EXIT_CODES)]
    Quick(crate::quick_cmd::QuickArgs),
    /// SGI diskperf: request sizes doubling, forward, backward and random, read (and write).
    #[command(after_help = EXIT_CODES, mut_arg("engine", |a| a.help("I/O engine [default: sync at --qd 1, like the original; uring above]")))]
    Diskperf(crate::diskperf_cmd::DiskperfArgs),
    /// Parallel dd: one sequential stream per device, rated over their common window; --scale finds the knee.
    #[command(after_help = EXIT_CODES)]
    Parallel(crate::parallel_cmd::ParallelArgs),
    /// Lustre sgpdd-survey: record size x concurrent regions x outstanding I/Os on raw devices.
    #[command(after_help = EXIT_CODES)]
    Survey(crate::survey_cmd::SurveyArgs),
    /// Oracle ORION: a matrix of small random and large I/O loads, with IOPS, MB/s and latency.
    #[command(after_help = EXIT_CODES)]
    Matrix(crate::matrix_cmd::MatrixArgs),
    /// HD Tune / zcav: read throughput across the device's surface, access time, burst rate.
    #[command(after_help = EXIT_CODES, mut_arg("engine", |a| a.help("I/O engine [default: sync, one request at a time as HD Tune reads]")))]
    Profile(crate::profile_cmd::ProfileArgs),
    /// frametest / AJA System Test: video frames written or read, one file per frame or one stream, against real time.
    #[command(after_help = EXIT_CODES, mut_arg("engine", |a| a.help("I/O engine [default: sync at --depth 1; uring with more pieces of a frame in flight]")))]
    Video(crate::video_cmd::VideoArgs),
    /// Present a saved report again: RUN.json (or an --html page) as a self-contained HTML report with plots.
    Report(crate::report_cmd::ReportArgs),
    /// Compare saved runs point by point: medians over the repeats (--repeat), B/A, and whether the difference is real.
    #[command(
        after_help = "Exit codes: 0 ok, 1 a run has no point in common with the first (one line says why) or --fail-if-slower failed, 2 bad usage or refused."
    )]
    Compare(crate::compare_cmd::CompareArgs),
    /// The history database that runs' --db fill: import saved runs (iosurvey's or fio's), a test's history, compare labels, find regressions, export JSON Lines.
    Db(crate::db_cmd::DbArgs),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(crate::shell_cmd::CompletionsArgs),
    /// Print the manual page (roff) of iosurvey or of one command: iosurvey man run | man -l -
    Man(crate::shell_cmd::ManArgs),
}

/// `iosurvey` with no arguments: `iosurvey quick` on the current directory.
pub fn quick_defaults() -> crate::quick_cmd::QuickArgs {
    match Cli::try_parse_from(["iosurvey", "quick"]) {
        Ok(Cli {
            command: Some(Command::Quick(q)),
        }) => q,
        _ => unreachable!("`iosurvey quick` parses"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// clap's own checks of every command's flags (two flags of one name,
    /// a conflict naming no flag, ...), which otherwise fire only when a
    /// debug build parses that command.
    #[test]
    fn every_commands_flags_pass_claps_checks() {
        Cli::command().debug_assert();
    }
}
