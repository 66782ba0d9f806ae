//! The classic tools iosurvey speaks (sgpdd-survey, ORION, frametest, IRIX
//! diskperf): each command's `--help` and manual page tell the tool's own
//! spellings, and a link named after a tool runs its command.

mod diskperf;
mod frametest;
mod orion;
pub mod page;
mod sgpdd;

use crate::flags::spellings::sgpdd_env::DEVICES;
use iosurvey_model::document::invocation::classic_name;
use page::ToolDoc;

/// Every classic tool's page.
pub fn docs() -> [ToolDoc; 4] {
    [
        sgpdd::doc(),
        orion::doc(),
        frametest::doc(),
        diskperf::doc(),
    ]
}

/// The classic tool iosurvey's command `mode` runs, if any.
pub fn doc_of(mode: &str) -> Option<ToolDoc> {
    docs().into_iter().find(|d| d.mode == mode)
}

/// `cmd`, iosurvey's whole command line, with each classic tool's
/// spellings, variables, files and examples at the end of its command's
/// `--help` (`-h` keeps the short form).
pub fn documented(cmd: clap::Command) -> clap::Command {
    docs().into_iter().fold(cmd, |cmd, d| {
        cmd.mut_subcommand(d.mode, |s| {
            let after = s
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            s.after_long_help(d.help_text(&after))
        })
    })
}

/// What to do with the command line as typed.
#[derive(Debug, PartialEq, Eq)]
pub enum Invoked {
    /// Parse this line (`iosurvey MODE ...` when a link named after a
    /// classic tool ran iosurvey).
    Line(Vec<String>),
    /// A link named after a tool, with nothing to run: print the tool's
    /// usage.
    Usage(String),
}

/// The line to parse for `args` as typed: through a link named after a
/// classic tool (argv[0]'s file name), `iosurvey MODE` and the same
/// words; nothing after the tool's name (for sgpdd-survey: nor `scsidevs`
/// or `rawdevs` in `env`) is its usage. Any other name is iosurvey's own.
pub fn invoked(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Invoked {
    let Some((_, mode)) = args.first().and_then(|a| classic_name(a)) else {
        return Invoked::Line(args.to_vec());
    };
    let devices = DEVICES
        .iter()
        .any(|d| env(d).is_some_and(|v| !v.trim().is_empty()));
    if args.len() == 1 && !(mode == "survey" && devices) {
        let doc = doc_of(mode).expect("every classic name has its page");
        return Invoked::Usage(doc.usage());
    }
    let line = ["iosurvey", mode].into_iter().map(String::from);
    Invoked::Line(line.chain(args[1..].iter().cloned()).collect())
}

#[cfg(test)]
mod tests;
