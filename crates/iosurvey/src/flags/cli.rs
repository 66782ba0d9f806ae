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

    /// Every flag with possible values in `cmd` and its commands: its long
    /// name (none for an operand) and its values.
    fn enum_flags(cmd: &clap::Command, out: &mut Vec<(String, Option<String>, Vec<String>)>) {
        for a in cmd.get_arguments() {
            let values: Vec<String> = a
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            if a.get_action().takes_values() && !values.is_empty() {
                let long = a.get_long().map(String::from);
                out.push((cmd.get_name().to_string(), long, values));
            }
        }
        for sub in cmd.get_subcommands() {
            enum_flags(sub, out);
        }
    }

    /// The words of `text`, split at anything a value cannot hold.
    fn tokens(text: &str) -> Vec<&str> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || "-_.,+".contains(c)))
            .filter(|t| !t.is_empty())
            .collect()
    }

    #[test]
    fn completions_offer_the_values_of_every_enum_flag() {
        use clap_complete::Shell;
        let mut flags = Vec::new();
        enum_flags(&Cli::command(), &mut flags);
        // Flags parsed later from a list of their own have it too.
        for (cmd, long) in [
            ("run", "rw"),
            ("video", "format"),
            ("survey", "actions"),
            ("history", "mode"),
        ] {
            assert!(
                flags
                    .iter()
                    .any(|(c, l, _)| c == cmd && l.as_deref() == Some(long)),
                "{cmd} --{long} has no values: {flags:?}"
            );
        }
        let rw = flags
            .iter()
            .find(|(c, l, _)| c == "run" && l.as_deref() == Some("rw"));
        let names: Vec<String> = iosurvey_workload::modes::run::Rw::NAMES
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(rw.map(|f| &f.2), Some(&names));
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let script =
                String::from_utf8(crate::shell_cmd::script(shell, Cli::command())).unwrap();
            for (cmd, long, values) in &flags {
                // The text that completes the flag: bash's case (the
                // line after `--rw)`), zsh's spec to its closing quote, fish's command;
                // an operand's values anywhere.
                let windows: Vec<&str> = match (long, shell) {
                    (None, _) => vec![&script[..]],
                    (Some(l), Shell::Bash) => script
                        .match_indices(&format!("--{l})"))
                        .map(|(i, _)| script[i..].splitn(3, '\n').take(2).last().unwrap_or(""))
                        .collect(),
                    (Some(l), Shell::Zsh) => script
                        .match_indices(&format!("--{l}=["))
                        .map(|(i, _)| script[i..].split("' \\\n").next().unwrap_or(""))
                        .collect(),
                    (Some(l), _) => script
                        .match_indices(&format!(" -l {l} "))
                        .map(|(i, _)| script[i..].split("\ncomplete ").next().unwrap_or(""))
                        .collect(),
                };
                assert!(
                    windows.iter().any(|w| {
                        let t = tokens(w);
                        values.iter().all(|v| t.contains(&v.as_str()))
                    }),
                    "{shell}: {cmd} {long:?} lacks some of {values:?}"
                );
            }
        }
    }
}
