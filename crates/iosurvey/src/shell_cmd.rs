//! `iosurvey completions SHELL` and the arguments of `iosurvey man
//! [COMMAND]` (its page is [`crate::man_page`]'s): what a shell and `man`
//! expect, generated from the flags themselves, on stdout.

use anyhow::anyhow;
use clap::Args;
use iosurvey_session::{Failure, Outcome};
use std::io::Write;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: source the script, or put it where the shell looks (bash:
    /// /etc/bash_completion.d/iosurvey; zsh: a directory of $fpath as
    /// _iosurvey; fish: ~/.config/fish/completions/iosurvey.fish).
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// A command's own page (run, quick, diskperf, ...); without it, the
    /// page of iosurvey itself. Read it with `iosurvey man run | man -l -`.
    pub command: Option<String>,
}

/// The completion script of `cmd`, iosurvey's whole command line.
pub fn completions(a: CompletionsArgs, cmd: clap::Command) -> Result<Outcome, Failure> {
    emit(&script(a.shell, cmd))
}

/// `shell`'s completion script of `cmd`: its commands, flags, and the
/// possible values of every flag that has them.
pub fn script(shell: clap_complete::Shell, mut cmd: clap::Command) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "iosurvey", &mut out);
    if shell == clap_complete::Shell::Fish {
        fish_operands(&cmd, &[], &mut out);
    }
    out
}

/// fish's lines for the values of operands (`iosurvey completions
/// SHELL`), which clap_complete gives bash and zsh but not fish.
fn fish_operands(cmd: &clap::Command, path: &[&str], out: &mut Vec<u8>) {
    if let Some((top, rest)) = path.split_first() {
        let mut when = format!("__fish_iosurvey_using_subcommand {top}");
        if let Some(last) = rest.last() {
            when.push_str(&format!("; and __fish_seen_subcommand_from {last}"));
        }
        for a in cmd.get_positionals() {
            let values: Vec<String> = a
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            if !values.is_empty() {
                out.extend(
                    format!(
                        "complete -c iosurvey -n \"{when}\" -f -a \"{}\"\n",
                        values.join(" ")
                    )
                    .bytes(),
                );
            }
        }
    }
    for sub in cmd.get_subcommands() {
        let mut p = path.to_vec();
        p.push(sub.get_name());
        fish_operands(sub, &p, out);
    }
}

/// Writes `bytes` to stdout; a reader that closed the pipe is not an error.
pub fn emit(bytes: &[u8]) -> Result<Outcome, Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Run(anyhow!("writing to stdout: {e}")))
        }
        _ => Ok(Outcome::Ok),
    }
}
